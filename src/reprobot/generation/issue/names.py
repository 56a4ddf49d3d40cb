"""Names (dotted identifiers, calls, imports) and file paths an issue mentions."""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable, Iterator

_MAX_NAMES = 300
_CODE_TOKEN = re.compile(
    r"#[^\n]*"
    r"|'''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)"
    r'|"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)'
    r"|'(?:[^'\\\n]|\\.)*'?"
    r'|"(?:[^"\\\n]|\\.)*"?'
    r"|\d[\w.]*"
    r"|(?P<name>[^\W\d]\w*(?:[ \t]*\.[ \t]*[^\W\d]\w*)*)(?P<call>[ \t]*\()?",
    re.DOTALL,
)
_FROM_IMPORT = re.compile(r"[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w \t,]+)")
_IMPORT = re.compile(r"[ \t]*import[ \t]+([\w. \t,]+)")
_BACKTICKS = re.compile(r"`+")
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/~+@:")
_BARE_FILE_EXTENSIONS = frozenset(
    {"py", "pyi", "pyx", "pxd", "ipynb", "toml", "cfg", "ini", "txt", "md", "rst", "json"}
    | {"yaml", "yml"}
)
_FILE_EXTENSIONS = _BARE_FILE_EXTENSIONS | {"c", "h", "cpp", "cc", "hpp", "js", "ts", "html", "sh"}
_NOT_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins))


def unique(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item)
        if len(seen) >= _MAX_NAMES:
            break
    return tuple(seen)


def spans(line: str) -> list[str]:
    """Inline code spans on one line: a backtick run closed by the next run of equal length."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    following = [-1] * len(runs)
    latest: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        size = runs[k][1] - runs[k][0]
        following[k] = latest.get(size, -1)
        latest[size] = k
    spans: list[str] = []
    k = 0
    while k < len(runs):
        close = following[k]
        if close < 0:
            k += 1
            continue
        spans.append(line[runs[k][1] : runs[close][0]].strip())
        k = close + 1
    return spans


def code_names(code: str) -> Iterator[str]:
    """Dotted names, called names and imported modules in a piece of Python."""
    for line in code.split("\n"):
        if (match := _FROM_IMPORT.match(line)) and (module := match.group(1).lstrip(".")):
            yield module
            for name in match.group(2).replace("\t", " ").split(","):
                words = name.split()
                if words:
                    yield f"{module}.{words[0]}"
        elif match := _IMPORT.match(line):
            for name in match.group(1).split(","):
                words = name.split()
                if words:
                    yield words[0]
    for match in _CODE_TOKEN.finditer(code):
        chain = match.group("name")
        if chain is None:
            continue
        parts = [part.strip() for part in chain.split(".")]
        if parts[0] in ("self", "cls") and len(parts) > 1:
            parts = parts[1:]
        if len(parts) > 1 and parts[0] not in keyword.kwlist:
            yield ".".join(parts)
        elif match.group("call") and parts[0] not in _NOT_NAMES:
            yield parts[0]


def as_path(token: str) -> str | None:
    """The file path in a token (``pkg/mod.py:12:4``, a GitHub blob URL), or None."""
    text = token.rstrip(".,:;!?").lstrip(",:;!?").replace("\\", "/")
    if "://" in text:
        at = text.find("/blob/")
        if at < 0:
            return None
        text = text[at + 6 :].partition("/")[2]
    text = text.partition("#")[0]
    while (cut := text.rpartition(":"))[1] and cut[2].isdigit():
        text = cut[0]
    if (colon := text.rfind(":")) > 1 or (colon == 1 and text[2:3] != "/"):
        text = text[colon + 1 :]  # "logger.name:utils.py" in a log line; keep "C:/x.py"
    text = text.removeprefix("./")
    if text.startswith(("a/", "b/")):
        text = text[2:]  # diff headers
    name = text.rpartition("/")[2]
    stem, dot, extension = name.rpartition(".")
    extension = extension.lower()
    if not dot or not stem.strip(".") or extension not in _FILE_EXTENSIONS:
        return None
    if "/" not in text and extension not in _BARE_FILE_EXTENSIONS:
        return None
    return text if _PATH_CHARS.issuperset(text) else None
