"""The local GitHub answers real HTTP clients (httpx, githubkit, git) as GitHub does."""
