"""Environments: specs, detection, sandbox base images and per-repository environment images."""
