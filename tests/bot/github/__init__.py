"""The App's GitHub access against the local GitHub server."""
