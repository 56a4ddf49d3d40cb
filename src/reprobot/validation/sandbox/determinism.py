"""What every sandboxed run pins so that its outcome does not depend on the moment or the draw:
the hash seed, the time zone and the locale.

Python draws a new hash seed for every process, so the order of a set of strings, and of
whatever iterates one, changes from run to run: a test asserting such an order fails under one
seed and passes under another. Every run is given a seed, the same for both sides of a verdict,
so base and head draw alike; drafting confirms a reproduction under a second seed, so a test
whose failure is the seed's and not the bug's never leaves drafting. The time zone and locale are
those of a CI runner, whatever the host's.
"""

from __future__ import annotations

# The seed of every run unless a caller names another; both sides of a verdict use it.
HASH_SEED = 0
# The seed a drafted test must fail under as well before it counts as reproducing.
SECOND_HASH_SEED = 1


def pinned_environment(hash_seed: int = HASH_SEED) -> dict[str, str]:
    """The variables a run starts with, before the project's own (which may set them)."""
    return {"PYTHONHASHSEED": str(hash_seed), "TZ": "UTC", "LC_ALL": "C.UTF-8"}


def describe(hash_seed: int = HASH_SEED) -> str:
    """The pinned variables as a report says them."""
    return ", ".join(f"{k}={v}" for k, v in pinned_environment(hash_seed).items())
