"""What the project's own test modules import, by the name each import binds, and the names
they make by a factory from their own name (``f = Function('f')``).

A reporter's session leaves out what their shell had already imported (``t`` from
``sympy.abc``, ``np`` for ``numpy``). When neither the packages of the tree nor the most related
test files bind such a name, the import the project's tests use for it most often is the best
guess of what the reporter meant: it is how the project itself spells that name. Read with a
regular expression over the module-level import lines only, not with ``name_resolution``'s
``module_bindings``: parsing SymPy's 630 test modules takes 3.1 s per issue, the expression
0.12 s. Relative imports are left out, since a drafted module lives elsewhere.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence

# "from a.b import x, y as z" (one line, or in parentheses over several) and "import a.b as c".
_FROM = re.compile(
    r"^from\s+(?P<module>[A-Za-z_][\w.]*)\s+import\s+(?P<names>\([^)]*\)|[^\n#;]+)", re.M
)
_IMPORT = re.compile(r"^import\s+(?P<names>[^\n#;()]+)", re.M)
_ALIAS = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?:\s+as\s+(?P<asname>[A-Za-z_]\w*))?$")
_MAX_FILES = 5000
_MAX_FILE_CHARS = 400_000


def _aliases(text: str) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for part in text.strip().strip("()").replace("\\\n", " ").split(","):
        match = _ALIAS.match(" ".join(part.split()))
        if match:
            out.append((match.group("name"), match.group("asname")))
    return out


def imports_in_tests(test_files: Sequence[str], sources: Mapping[str, str]) -> dict[str, str]:
    """Name to the import statement binding it that the test modules use most often (ties to
    the shorter statement), from the module-level imports of ``test_files``."""
    counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for text in _texts(test_files, sources):
        for match in _FROM.finditer(text):
            module = match.group("module")
            for name, asname in _aliases(match.group("names")):
                if name == "*" or "." in name:
                    continue
                bound = asname or name
                as_part = f" as {asname}" if asname else ""
                counts[bound][f"from {module} import {name}{as_part}"] += 1
        for match in _IMPORT.finditer(text):
            for name, asname in _aliases(match.group("names")):
                bound = asname or name.split(".")[0]
                statement = f"import {name} as {asname}" if asname else f"import {name}"
                if asname or "." not in name:
                    counts[bound][statement] += 1
    return _most_common(counts)


def _texts(test_files: Sequence[str], sources: Mapping[str, str]) -> Iterator[str]:
    for path in test_files[:_MAX_FILES]:
        text = sources.get(path)
        if text and len(text) <= _MAX_FILE_CHARS:
            yield text


def _most_common(counts: Mapping[str, Counter[str]]) -> dict[str, str]:
    """Name to its most frequent statement, ties to the shorter one."""
    return {
        name: min(found.items(), key=lambda item: (-item[1], len(item[0]), item[0]))[0]
        for name, found in counts.items()
    }


# A name made by a factory from its own name, anywhere in a test module: "f = Function('f')",
# "T = TypeVar('T')". One argument, the name itself, so the statement stands alone.
_FACTORY = re.compile(
    r"^[ \t]*(?P<name>[A-Za-z_]\w*)[ \t]*=[ \t]*(?P<call>[A-Za-z_][\w.]*)\("
    r"(?P<quote>['\"])(?P=name)(?P=quote)\)[ \t]*$",
    re.M,
)


def factories_in_tests(test_files: Sequence[str], sources: Mapping[str, str]) -> dict[str, str]:
    """Name to the binding that makes it by a factory from its own name, as the test modules
    write it most often (``f = Function('f')``). What a reporter calls as ``f(x)`` without
    defining it is, in such a project, made this way: a name ``sympy.abc`` binds to a symbol
    would not be callable."""
    counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for text in _texts(test_files, sources):
        for match in _FACTORY.finditer(text):
            name = match.group("name")
            counts[name][f"{name} = {match.group('call')}('{name}')"] += 1
    return _most_common(counts)
