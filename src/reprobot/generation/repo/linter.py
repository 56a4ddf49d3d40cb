"""The project's own linter and its settings, and a drafted test checked against them.

A maintainer merges a test that passes the project's linter. The settings are read where the
tools read them: flake8's ``[flake8]`` section of ``.flake8``, ``setup.cfg`` or ``tox.ini``; Ruff's
``ruff.toml``, ``.ruff.toml`` or ``[tool.ruff]`` of ``pyproject.toml``. The check runs the tool
itself (flake8, Ruff, from Reprobot's own environment, so with no plugin of the project's) on the
host, in a scratch folder holding the test at its path and a settings file Reprobot writes: only
the settings that say which rules apply to which files are copied from the project's, since
others make the tools write or read files (flake8's ``output-file``, Ruff's ``cache-dir`` and
``extend``), and the project's settings are untrusted input.
"""

from __future__ import annotations

import configparser
import re
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import tomli_w

from reprobot.validation import Patch, RepoSnapshot, SnapshotError, patched_sources

# flake8's settings that choose rules and the files they apply to, and nothing else.
_FLAKE8_KEYS = frozenset(
    {
        "max-line-length",
        "max_line_length",
        "max-doc-length",
        "max-complexity",
        "select",
        "extend-select",
        "ignore",
        "extend-ignore",
        "extend_ignore",
        "per-file-ignores",
        "per_file_ignores",
        "exclude",
        "extend-exclude",
        "filename",
        "hang-closing",
        "indent-size",
        "builtins",
        "doctests",
    }
)
# Ruff's, at the top level and under ``lint`` (older releases had the rules at the top level).
_RUFF_TOP = frozenset(
    {"line-length", "indent-width", "target-version", "exclude", "extend-exclude"}
)
_RUFF_LINT = frozenset(
    {
        "select",
        "extend-select",
        "ignore",
        "extend-ignore",
        "per-file-ignores",
        "extend-per-file-ignores",
    }
)
_FINDING = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<text>.*)$"
)
TIMEOUT_S = 60


class LintError(Exception):
    """The linter could not check the file with the project's settings."""


@dataclass(frozen=True)
class Linter:
    """The project's linter, and the settings Reprobot runs it with (as the file's text)."""

    tool: Literal["flake8", "ruff"]
    # The file of the tree the settings come from.
    source: str
    settings: str
    # The longest line the settings allow (the tool's default when they say nothing).
    line_length: int = 79


@dataclass(frozen=True)
class Finding:
    """One thing the linter says of the test."""

    line: int
    code: str
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.code} {self.text}"


def project_linter(snapshot: RepoSnapshot) -> Linter | None:
    """The linter the tree's settings configure (flake8 first, as the older convention), or
    None when it configures none."""
    for name in (".flake8", "setup.cfg", "tox.ini"):
        section = _flake8_section(snapshot.read_file(name))
        if section is not None:
            length = section.get("max-line-length") or section.get("max_line_length") or ""
            return Linter("flake8", name, _flake8_settings(section), _number(length, 79))
    for name in ("ruff.toml", ".ruff.toml", "pyproject.toml"):
        table = _ruff_table(snapshot.read_file(name), name == "pyproject.toml")
        if table is not None:
            return Linter(
                "ruff", name, _ruff_settings(table), _number(table.get("line-length"), 88)
            )
    return None


def lint(linter: Linter, path: str, text: str) -> tuple[Finding, ...]:
    """What ``linter`` says of ``text`` as the tree's file ``path``; raises ``LintError`` when it
    cannot check it (settings it rejects, a path outside the tree)."""
    relative = PurePosixPath(path)
    if relative.is_absolute() or ".." in relative.parts:
        raise LintError(f"not a path of the tree: {path}")
    with tempfile.TemporaryDirectory(prefix="reprobot-lint-") as scratch:
        root = Path(scratch)
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        if linter.tool == "flake8":
            config = root / ".flake8"
            command = [sys.executable, "-m", "flake8", "--config", str(config), str(relative)]
        else:
            config = root / "ruff.toml"
            command = [
                *(sys.executable, "-m", "ruff", "check", "--no-cache", "--no-fix"),
                *("--output-format", "concise", "--config", str(config), str(relative)),
            ]
        config.write_text(linter.settings, encoding="utf-8")
        try:
            done = subprocess.run(
                command, cwd=root, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise LintError(f"{linter.tool} did not finish in {TIMEOUT_S} s") from exc
    findings = tuple(
        Finding(int(m["line"]), m["code"], m["text"].strip())
        for m in map(_FINDING.match, done.stdout.splitlines())
        if m is not None
    )
    if done.returncode not in (0, 1) or (done.returncode == 1 and not findings):
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise LintError(f"{linter.tool} could not check the file: {' '.join(tail)[:300]}")
    return findings


# What ``lint_summary`` says of a test patch with no linter to check it.
NO_LINTER_SETTINGS = "no linter settings"
LINT_PASSES = "passes"


def lint_summary(snapshot: RepoSnapshot, test_patch: str) -> str:
    """One line on what the project's linter says of the modules a test patch writes:
    ``LINT_PASSES``, "N finding(s): the first", ``NO_LINTER_SETTINGS``, or "not checked: why"."""
    linter = project_linter(snapshot)
    if linter is None:
        return NO_LINTER_SETTINGS
    patch = Patch(test_patch)
    try:
        texts = patched_sources(snapshot, [patch], list(patch.files))
    except SnapshotError as exc:
        return f"not checked: {str(exc)[:200]}"
    findings: list[str] = []
    for path, data in texts.items():
        if data is None:
            continue
        try:
            findings += [f"{path} {f}" for f in lint(linter, path, data.decode("utf-8", "replace"))]
        except LintError as exc:
            return f"not checked: {exc}"
    return f"{len(findings)} finding(s): {findings[0]}" if findings else LINT_PASSES


def _number(value: object, default: int) -> int:
    text = str(value).split("#", 1)[0].strip() if value is not None else ""
    return int(text) if text.isdigit() and 0 < int(text) < 1000 else default


def _flake8_section(data: bytes | None) -> dict[str, str] | None:
    if data is None:
        return None
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(data.decode("utf-8", "replace"))
    except configparser.Error:
        return None
    if not parser.has_section("flake8"):
        return None
    return dict(parser.items("flake8"))


def _flake8_settings(section: dict[str, str]) -> str:
    kept = {k: v for k, v in section.items() if k in _FLAKE8_KEYS}
    lines = ["[flake8]"]
    for key, value in kept.items():
        # A value spread over lines keeps its lines, indented as configparser reads them, but
        # not their comments, which flake8 before 6 let stand after the codes and today's
        # rejects.
        parts = [p.split("#", 1)[0].rstrip() for p in value.splitlines()]
        lines.append(f"{key} = " + "\n    ".join(p for p in parts if p.strip()))
    return "\n".join(lines) + "\n"


def _ruff_table(data: bytes | None, in_pyproject: bool) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        document = tomllib.loads(data.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError:
        return None
    if in_pyproject:
        table = document.get("tool", {}).get("ruff")
        return table if isinstance(table, dict) else None
    return document


def _ruff_settings(table: dict[str, Any]) -> str:
    settings: dict[str, Any] = {k: v for k, v in table.items() if k in _RUFF_TOP}
    rules = {k: v for k, v in table.items() if k in _RUFF_LINT}
    nested = table.get("lint")
    if isinstance(nested, dict):
        rules.update({k: v for k, v in nested.items() if k in _RUFF_LINT | {"exclude"}})
    if rules:
        settings["lint"] = rules
    return tomli_w.dumps(settings)
