"""The GitHub App and the command line: the top of the layers; nothing below imports it."""
