"""Per-test outcomes from pytest's JUnit XML (family xunit1, with ``file`` attributes).

The report comes out of a sandbox that ran untrusted code. It is parsed with defusedxml (no
DTDs, so no entity tricks), in time linear in its size (a dotted name is never split more ways
than the repository's deepest path has parts), and anything that is not a JUnit report is a
``JUnitError``, never another exception.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from reprobot.validation.errors import ReprobotError
from reprobot.validation.results.testrun import Outcome

_RANK = {Outcome.PASSED: 0, Outcome.SKIPPED: 1, Outcome.ERROR: 2, Outcome.FAILED: 3}
_DETAIL_LIMIT = 4000
_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


class JUnitError(ReprobotError):
    """A report that is not pytest's JUnit XML."""


def _depth(repo_files: Collection[str]) -> int:
    """Parts of the repository's deepest file path (at least one)."""
    return max((path.count("/") + 1 for path in repo_files), default=1)


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
    """Rebuild pytest's node id from a JUnit test case."""
    depth = _depth(repo_files) if depth is None else depth
    if not classname:
        # A collection error: pytest reports the module's node id with "/" turned into ".";
        # the file attribute, when there, says which dots were slashes.
        if file and file.endswith(".py"):
            return file
        found = _module_file(name, repo_files, depth)
        return found[0] if found else name.replace(".", "/") + ".py"
    if file and file.endswith(".py"):
        module = file[:-3].replace("/", ".").replace("\\", ".")
        if classname == module:
            return f"{file}::{name}"
        if classname.startswith(module + "."):
            classes = classname[len(module) + 1 :].split(".")
            return "::".join([file, *classes, name])
    found = _module_file(classname, repo_files, depth)
    if found:
        return "::".join([found[0], *found[1], name])
    return f"{classname}::{name}"


def _parse(data: bytes) -> Element:
    # Bytes first: the document declares its own encoding. Output that is not valid in that
    # encoding (a test printed raw bytes) is read again as text with the bad bytes replaced.
    try:
        root: Element = SafeET.fromstring(data, forbid_dtd=True)
        return root
    except DefusedXmlException as exc:
        raise JUnitError(f"the report uses forbidden XML ({type(exc).__name__})") from exc
    except ParseError:
        pass
    text = _DECLARATION.sub("", data.decode("utf-8", "replace"))
    try:
        root = SafeET.fromstring(text, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise JUnitError(f"the report uses forbidden XML ({type(exc).__name__})") from exc
    except ParseError as exc:
        raise JUnitError(f"the report is not XML ({exc})") from exc
    return root


def _cases(root: Element) -> Iterator[Element]:
    if root.tag == "testsuite":
        suites = [root]
    elif root.tag == "testsuites":
        suites = [s for s in root if s.tag == "testsuite"]
    else:
        raise JUnitError(f"the report's root is <{root.tag[:50]}>, not a test suite")
    for suite in suites:
        yield from (case for case in suite if case.tag == "testcase")


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
            outcome = Outcome.PASSED if is_xfail else Outcome.SKIPPED
            detail = f"{'xfail' if is_xfail else 'skipped'}: {child.get('message') or ''}"
    return outcome, detail


def parse_junit(
    data: bytes, repo_files: Collection[str]
) -> tuple[dict[str, Outcome], dict[str, str]]:
    """Outcomes and failure details per node id. A test reported twice (a failing call and an
    erroring teardown) keeps its worst outcome. xfail counts as passed, as pytest's exit status
    and the SWE-bench harness count it."""
    root = _parse(data)
    depth = _depth(repo_files)
    outcomes: dict[str, Outcome] = {}
    details: dict[str, str] = {}
    for case in _cases(root):
        test_id = node_id(
            case.get("classname") or "", case.get("name") or "", case.get("file"), repo_files, depth
        )
        outcome, detail = _result(case)
        previous = outcomes.get(test_id)
        if previous is None or _RANK[outcome] > _RANK[previous]:
            outcomes[test_id] = outcome
            if detail.strip():
                details[test_id] = _clip(detail.strip())
    return outcomes, details
