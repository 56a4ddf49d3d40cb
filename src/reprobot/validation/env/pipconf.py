"""The host's package-index settings, carried into environment builds.

Environment builds run in a container that sees none of the host's files, so index URLs and the
CA bundle are handed in explicitly: a container does not trust the host's CA by default.
"""

from __future__ import annotations

import ssl
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from reprobot.settings import Settings


@dataclass(frozen=True)
class IndexSettings:
    index_url: str = ""
    extra_index_urls: tuple[str, ...] = ()
    trusted_hosts: tuple[str, ...] = ()
    ca_bundle: bytes | None = field(default=None, repr=False)
    timeout: str = ""

    def environment(self, ca_path: str) -> dict[str, str]:
        """PIP_* variables for a container in which the CA bundle sits at ``ca_path``."""
        env: dict[str, str] = {"PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        if self.index_url:
            env["PIP_INDEX_URL"] = self.index_url
        if self.extra_index_urls:
            env["PIP_EXTRA_INDEX_URL"] = " ".join(self.extra_index_urls)
        if self.trusted_hosts:
            env["PIP_TRUSTED_HOST"] = " ".join(self.trusted_hosts)
        if self.timeout:
            env["PIP_DEFAULT_TIMEOUT"] = self.timeout
        if self.ca_bundle:
            env.update(
                {"PIP_CERT": ca_path, "SSL_CERT_FILE": ca_path, "REQUESTS_CA_BUNDLE": ca_path}
            )
        return env


# pip's own precedence: environment variables over site, user and global config files.
_SCOPE_RANK = {":env:": 3, "site": 2, "user": 1, "global": 0}


def parse_pip_config_list(text: str) -> dict[str, str]:
    """Parse ``pip config list`` output (``scope.key='value'`` lines) into key -> value, the
    value of the scope pip itself would use winning."""
    values: dict[str, tuple[int, str]] = {}
    for line in text.splitlines():
        if "=" not in line:
            continue
        name, _, raw = line.partition("=")
        scope, _, key = name.strip().rpartition(".")
        rank = _SCOPE_RANK.get(scope, 0)
        if key not in values or rank >= values[key][0]:
            values[key] = (rank, raw.strip().strip("'\""))
    return {k: v for k, (_, v) in values.items()}


def _remote_only(urls: str) -> tuple[str, ...]:
    # A multi-line value (several URLs in pip.conf) comes back with literal "\n" separators.
    words = urls.replace("\\n", " ").split()
    # file:// indexes and plain folders are host paths a container cannot (and must not) see.
    return tuple(u for u in words if u.startswith(("http://", "https://")))


def host_index_settings(settings: Settings) -> IndexSettings:
    """Index settings from Reprobot's settings, falling back to the host's pip configuration."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    conf = parse_pip_config_list(proc.stdout) if proc.returncode == 0 else {}
    index = settings.pip_index_url or next(iter(_remote_only(conf.get("index-url", ""))), "")
    extras = tuple(settings.pip_extra_index_urls) or _remote_only(conf.get("extra-index-url", ""))
    ca_path = settings.pip_ca_bundle or (Path(conf["cert"]) if conf.get("cert") else None)
    if ca_path is None and ssl.get_default_verify_paths().cafile:
        # The system bundle is what the host trusts; it may hold a local CA the container lacks.
        ca_path = Path(str(ssl.get_default_verify_paths().cafile))
    ca = ca_path.read_bytes() if ca_path and ca_path.is_file() else None
    return IndexSettings(
        index_url=index,
        extra_index_urls=extras,
        trusted_hosts=tuple(conf.get("trusted-host", "").split()),
        ca_bundle=ca,
        timeout=conf.get("timeout", conf.get("default-timeout", "")),
    )
