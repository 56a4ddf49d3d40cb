"""The LLM methods: the OpenAI-compatible client, retrieval, zero-shot drafting and the agent."""
