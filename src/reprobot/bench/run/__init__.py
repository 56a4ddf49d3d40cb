"""How a benchmark command runs: what its units share, the resumable parallel executor, what a
stored result keeps of a sandbox run, and the report with its provenance, written once."""
