"""Talking to GitHub: App auth and tokens, REST and GraphQL access, rate limits, the git mirror,
registration, the typed views of webhook events, and linked issues."""
