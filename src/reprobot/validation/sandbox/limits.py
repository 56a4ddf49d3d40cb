"""Resource limits of one sandboxed test run."""

from __future__ import annotations

from dataclasses import dataclass

from reprobot.settings import Settings


@dataclass(frozen=True)
class RunLimits:
    """Caps a sandboxed run is held to; exceeding one is reported in ``TestRun.limits_hit``."""

    memory_mb: int = 4096
    cpus: float = 1.0
    pids: int = 512
    timeout_s: float = 900.0
    output_cap_bytes: int = 64 * 1024 * 1024
    workdir_mb: int = 2048
    tmp_mb: int = 512

    @classmethod
    def from_settings(cls, settings: Settings) -> RunLimits:
        return cls(
            memory_mb=settings.run_memory_mb,
            cpus=settings.run_cpus,
            pids=settings.run_pids,
            timeout_s=settings.run_timeout_s,
            output_cap_bytes=settings.run_output_cap_bytes,
            workdir_mb=settings.run_workdir_mb,
        )
