"""Candidates from every drafter, run in the sandbox, matched against the issue's failure,
ranked; ``reproduce`` ties it together."""
