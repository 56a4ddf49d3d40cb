"""What a run yields: outcomes from JUnit, coverage, test runs and verdicts."""
