"""The Debian mirror the host's apt uses: where a registry-less base image is bootstrapped from.

Reading it from the host keeps image builds on the same package source (and proxy rules) the
machine is set up for, instead of a mirror written into Reprobot.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

APT_FILES = (Path("/etc/apt/sources.list.d"), Path("/etc/apt/sources.list"))


def mirror_from_sources(texts: Iterable[str]) -> str | None:
    """The first ``deb`` URI of the main Debian archive in apt sources texts (deb822 ``.sources``
    or one-line ``sources.list`` format); security and update archives are skipped."""
    for text in texts:
        for uri in _uris(text):
            if uri.rstrip("/").endswith("/debian"):
                return uri.rstrip("/")
    return None


def _uris(text: str) -> list[str]:
    uris: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("URIs:"):
            uris += line[len("URIs:") :].split()
        elif line.startswith("deb "):
            words = [w for w in line.split()[1:] if not w.startswith("[")]
            # "deb [options] URI suite components": the options may span several words.
            words = [w for w in words if not w.endswith("]") and "=" not in w]
            if words:
                uris.append(words[0])
    return uris


def host_mirror(paths: Iterable[Path] = APT_FILES) -> str | None:
    """The host's Debian mirror, or None when its apt configuration names none."""
    texts: list[str] = []
    for path in paths:
        if path.is_dir():
            texts += [p.read_text(errors="replace") for p in sorted(path.iterdir()) if p.is_file()]
        elif path.is_file():
            texts.append(path.read_text(errors="replace"))
    return mirror_from_sources(texts)
