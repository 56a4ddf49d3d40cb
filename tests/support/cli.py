"""The ``reprobot`` command run as a real subprocess, with a test's settings."""

from __future__ import annotations

import os
import subprocess
import sys

from reprobot.settings import Settings


def reprobot(
    *args: str, settings: Settings, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "REPROBOT_CACHE_DIR": str(settings.cache_dir), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "reprobot.cli.main", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
        check=False,
    )
