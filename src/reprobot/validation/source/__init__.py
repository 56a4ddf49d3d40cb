"""The code under test: commit snapshots, patches and workspaces."""
