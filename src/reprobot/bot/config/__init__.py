"""Per-repository settings: ``.github/reprobot.yml`` (its environment settings are read by
the detection every path shares, ``validation.detect_environment``)."""
