"""Per-test outcomes from pytest's JUnit XML (family xunit1, with ``file`` attributes).

The report comes out of a sandbox that ran untrusted code. It is parsed with defusedxml (no
DTDs, so no entity tricks), incrementally and in bounded memory (each test case is read and let
go; a report nested deeper than pytest's, or a case with more elements, is refused), in time
linear in its size (a dotted name is never split more ways
than the repository's deepest path has parts), and anything that is not a JUnit report is a
``JUnitError``, never another exception.
"""

from __future__ import annotations

import io
import re
from collections.abc import Collection
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from reprobot.errors import ReprobotError
from reprobot.validation.results.testrun import Outcome

_RANK = {
    Outcome.PASSED: 0,
    Outcome.XPASSED: 1,
    Outcome.SKIPPED: 2,
    Outcome.XFAILED: 3,
    Outcome.ERROR: 4,
    Outcome.FAILED: 5,
}
_DETAIL_LIMIT = 4000
_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_PY_SUFFIX = re.compile(r"\.py$")


class JUnitError(ReprobotError):
    """A report that is not pytest's JUnit XML."""


def _depth(repo_files: Collection[str]) -> int:
    """Parts of the repository's deepest file path (at least one)."""
    return max((path.count("/") + 1 for path in repo_files), default=1)


def _dotted_path(path: str) -> str:
    """A file path as pytest's JUnit writer puts it in a class name: folders joined by dots,
    ``.py`` dropped (any other suffix, ``.rst`` or ``.yaml``, stays)."""
    dotted = path.replace("/", ".").replace("\\", ".")
    return dotted[:-3] if dotted.endswith(".py") else dotted


def junit_address(test_id: str) -> tuple[str, str]:
    """The ``classname`` and ``name`` pytest's JUnit writer gives the test ``test_id`` (its
    ``mangle_test_address``): the file dotted, every part but the last joined with dots, the
    parameters kept with the name. The address loses which dots were ``/`` or ``::``, so an id
    is found from its address, never rebuilt from it, whenever the collected ids are known."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    names[0] = _PY_SUFFIX.sub("", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def collected_addresses(collected: Collection[str]) -> dict[tuple[str, str], str]:
    """Each collected id by its JUnit address, for every kind of item pytest collects (a
    doctest of a text file, ``docs/usage.rst::usage.rst``; of a module, ``pkg/mod.py::pkg.mod.f``;
    a plugin's item of a ``.yaml`` file). An address two collected ids share names neither."""
    found: dict[tuple[str, str], str] = {}
    shared: set[tuple[str, str]] = set()
    for test_id in collected:
        address = junit_address(test_id)
        if found.setdefault(address, test_id) != test_id:
            shared.add(address)
    for address in shared:
        del found[address]
    return found


def _module_file(
    dotted: str, repo_files: Collection[str], depth: int
) -> tuple[str, list[str]] | None:
    """Split a dotted ``classname`` into the longest prefix naming a file and the rest."""
    parts = dotted.split(".")
    for cut in range(min(len(parts), depth), 0, -1):
        candidate = "/".join(parts[:cut]) + ".py"
        if candidate in repo_files:
            return candidate, parts[cut:]
    return None


def node_id(
    classname: str,
    name: str,
    file: str | None,
    repo_files: Collection[str],
    depth: int | None = None,
) -> str:
    """Rebuild pytest's node id from a JUnit test case, for a test whose id the collected ids
    do not give (a collection error, or a report of an older runner)."""
    depth = _depth(repo_files) if depth is None else depth
    if not classname:
        # A collection error: pytest reports the collector's node id (a module, a text file, a
        # folder) with "/" turned into "."; the file attribute, when there, is that node id.
        if file:
            return file
        found = _module_file(name, repo_files, depth)
        return found[0] if found else name.replace(".", "/") + ".py"
    if file:
        module = _dotted_path(file)
        if classname == module:
            return f"{file}::{name}"
        if classname.startswith(module + "."):
            classes = classname[len(module) + 1 :].split(".")
            return "::".join([file, *classes, name])
    found = _module_file(classname, repo_files, depth)
    if found:
        return "::".join([found[0], *found[1], name])
    return f"{classname}::{name}"


# pytest's report nests testsuites > testsuite > testcase > failure, properties > property: a
# report much deeper, or a test case with many more elements, is not one, and reading it whole
# would cost the host memory in proportion to what the code under test chose to write.
_MAX_DEPTH = 16
_MAX_CASE_ELEMENTS = 1000
_SUITE_PATHS = (("testsuite", "testcase"), ("testsuites", "testsuite", "testcase"))


# A test case as the host keeps it: class name, name, file, outcome and clipped detail.
_Case = tuple[str, str, str | None, Outcome, str]


def _parse(data: bytes) -> list[_Case]:
    """The test cases of the report, read incrementally; each is kept as a small record."""
    # Bytes first: the document declares its own encoding. Output that is not valid in that
    # encoding (a test printed raw bytes) is read again as text with the bad bytes replaced;
    # a pass that fails half-way hands on nothing.
    try:
        return _read_cases(data)
    except ParseError:
        pass
    text = _DECLARATION.sub("", data.decode("utf-8", "replace"))
    try:
        return _read_cases(text.encode("utf-8"))
    except ParseError as exc:
        raise JUnitError(f"the report is not XML ({exc})") from exc


def _read_cases(data: bytes) -> list[_Case]:
    cases: list[_Case] = []
    path: list[str] = []
    in_case = 0
    try:
        events = SafeET.iterparse(io.BytesIO(data), events=("start", "end"), forbid_dtd=True)
        for event, element in events:
            if event == "start":
                path.append(element.tag)
                if len(path) == 1 and element.tag not in ("testsuite", "testsuites"):
                    raise JUnitError(f"the report's root is <{element.tag[:50]}>, not a test suite")
                if len(path) > _MAX_DEPTH:
                    raise JUnitError(f"the report nests elements over {_MAX_DEPTH} deep")
                if in_case:
                    in_case += 1
                    if in_case > _MAX_CASE_ELEMENTS:
                        raise JUnitError(
                            f"a test case of the report holds over {_MAX_CASE_ELEMENTS} elements"
                        )
                elif tuple(path) in _SUITE_PATHS:
                    in_case = 1
                continue
            if in_case and tuple(path) in _SUITE_PATHS:
                outcome, detail = _result(element)
                cases.append(
                    (
                        element.get("classname") or "",
                        element.get("name") or "",
                        element.get("file"),
                        outcome,
                        _clip(detail.strip()),
                    )
                )
                in_case = 0
            if not in_case:
                # Nothing of the tree is kept: the case is a record now, and what a suite
                # holds besides its cases (properties, output) is never read.
                element.clear()
            path.pop()
    except DefusedXmlException as exc:
        raise JUnitError(f"the report uses forbidden XML ({type(exc).__name__})") from exc
    return cases


def _clip(text: str) -> str:
    """Head and tail of a long failure: the summary comes first and the final exception last."""
    if len(text) <= _DETAIL_LIMIT:
        return text
    marker = "\n[...]\n"
    head = _DETAIL_LIMIT // 3
    return f"{text[:head]}{marker}{text[-(_DETAIL_LIMIT - head - len(marker)) :]}"


def _result(case: Element) -> tuple[Outcome, str]:
    outcome, detail = Outcome.PASSED, ""
    for child in case:
        text = f"{child.get('message') or ''}\n{child.text or ''}"
        if child.tag == "failure":
            outcome, detail = Outcome.FAILED, text
        elif child.tag == "error":
            outcome, detail = Outcome.ERROR, text
        elif child.tag == "skipped":
            is_xfail = (child.get("type") or "") == "pytest.xfail"
            outcome = Outcome.XFAILED if is_xfail else Outcome.SKIPPED
            detail = f"{'xfail' if is_xfail else 'skipped'}: {child.get('message') or ''}"
    return outcome, detail


def parse_junit(
    data: bytes, repo_files: Collection[str], collected: Collection[str] = ()
) -> tuple[dict[str, Outcome], dict[str, str]]:
    """Outcomes and failure details per node id: the collected id whose JUnit address a test
    case has, else the id rebuilt from the case. A test reported twice (a failing call and an
    erroring teardown) keeps its worst outcome. An expected failure is ``XFAILED``; an
    unexpected pass looks like any pass in JUnit, and the plugin names those (``XPASSED``)."""
    depth = _depth(repo_files)
    known = collected_addresses(collected)
    outcomes: dict[str, Outcome] = {}
    details: dict[str, str] = {}
    for classname, name, file, outcome, detail in _parse(data):
        test_id = known.get((classname, name)) or node_id(classname, name, file, repo_files, depth)
        previous = outcomes.get(test_id)
        if previous is None or _RANK[outcome] > _RANK[previous]:
            outcomes[test_id] = outcome
            if detail:
                details[test_id] = detail
    return outcomes, details
