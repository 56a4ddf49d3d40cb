"""Containers and test runs inside them, with the limits and the in-container scripts."""
