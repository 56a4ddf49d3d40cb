"""Drafting reproducing tests: drafters, diff formats, retrieval, LLM client, selection."""
