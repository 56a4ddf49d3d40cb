"""The no-LLM drafter: the issue's own examples turned into tests in the repository's layout."""
