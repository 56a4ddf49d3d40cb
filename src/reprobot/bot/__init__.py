"""The GitHub App: webhooks, jobs, GitHub access, the store, rendering and per-repository
configuration. It sits on top of ``generation`` and ``validation``; nothing below imports it."""
