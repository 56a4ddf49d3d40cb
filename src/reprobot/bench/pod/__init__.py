"""``bench pod``: Reprobot's verdicts as a filter of labelled candidate fixes (precision,
MCC, the effort to the first correct fix against random selection)."""
