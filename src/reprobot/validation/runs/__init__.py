"""Test runs of a tree in an environment: one sandboxed run, and the pair of runs before and
after a change."""
