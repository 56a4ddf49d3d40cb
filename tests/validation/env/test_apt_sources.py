"""mirror_from_sources on hand-written apt configurations (both formats)."""

from __future__ import annotations

from pathlib import Path

from reprobot.validation.env.apt_sources import host_mirror, mirror_from_sources

DEB822 = """\
Types: deb
# an old snapshot: http://snapshot.example/archive/debian/20250520T000000Z
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
"""
ONE_LINE = """\
# deb http://commented.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] https://other.example/debian/ bookworm main
deb https://other.example/debian-security bookworm-security main
"""


def test_deb822_sources_give_the_main_archive() -> None:
    assert mirror_from_sources([DEB822]) == "http://mirror.example/debian"


def test_one_line_sources_skip_options_comments_and_security() -> None:
    assert mirror_from_sources([ONE_LINE]) == "https://other.example/debian"


def test_no_debian_archive_is_none() -> None:
    assert mirror_from_sources(["deb http://x.example/ubuntu jammy main\n", ""]) is None


def test_host_mirror_reads_a_sources_folder_and_a_list(tmp_path: Path) -> None:
    folder = tmp_path / "sources.list.d"
    folder.mkdir()
    (folder / "debian.sources").write_text(DEB822)
    (tmp_path / "sources.list").write_text(ONE_LINE)
    assert host_mirror([folder, tmp_path / "sources.list"]) == "http://mirror.example/debian"
    assert host_mirror([tmp_path / "missing"]) is None
