"""Sandboxed test runs: snapshots, environments, containers, outcomes, coverage and verdicts.

This layer imports neither ``reprobot.generation`` nor ``reprobot.bot``.
"""
