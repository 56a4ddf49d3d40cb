"""The ``reprobot`` command: one module per command family, on top of every layer."""
