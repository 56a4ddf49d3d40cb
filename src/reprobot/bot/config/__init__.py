"""Per-repository settings: ``.github/reprobot.yml`` and what the CI workflows tell."""
