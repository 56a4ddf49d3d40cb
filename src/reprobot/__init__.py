"""Reprobot: drafts tests that reproduce reported bugs and verifies fixes against them."""

__version__ = "0.1.0"
