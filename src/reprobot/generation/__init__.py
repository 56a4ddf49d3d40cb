"""Drafting reproducing tests: reading the issue, the no-LLM drafter, edit formats, the LLM
methods, and the pool that runs, matches and selects candidates (``pool.reproduce``)."""
