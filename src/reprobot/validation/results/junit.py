"""Per-test outcomes from pytest's JUnit XML (family xunit1, with ``file`` attributes)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Any

from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite

from reprobot.validation.results.testrun import Outcome

_RANK = {Outcome.PASSED: 0, Outcome.SKIPPED: 1, Outcome.ERROR: 2, Outcome.FAILED: 3}
_DETAIL_LIMIT = 4000


def _module_file(dotted: str, repo_files: Collection[str]) -> tuple[str, list[str]] | None:
    """Split a dotted ``classname`` into the longest prefix naming a file and the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = "/".join(parts[:cut]) + ".py"
        if candidate in repo_files:
            return candidate, parts[cut:]
    return None


def node_id(classname: str, name: str, file: str | None, repo_files: Collection[str]) -> str:
    """Rebuild pytest's node id from a JUnit test case."""
    if not classname:
        # A collection error: pytest reports the module's node id with "/" turned into ".";
        # the file attribute, when there, says which dots were slashes.
        if file and file.endswith(".py"):
            return file
        found = _module_file(name, repo_files)
        return found[0] if found else name.replace(".", "/") + ".py"
    if file and file.endswith(".py"):
        module = file[:-3].replace("/", ".").replace("\\", ".")
        if classname == module:
            return f"{file}::{name}"
        if classname.startswith(module + "."):
            classes = classname[len(module) + 1 :].split(".")
            return "::".join([file, *classes, name])
    found = _module_file(classname, repo_files)
    if found:
        return "::".join([found[0], *found[1], name])
    return f"{classname}::{name}"


def _cases(xml: JUnitXml | TestSuite) -> Iterator[Any]:
    if isinstance(xml, TestSuite):
        yield from xml
        return
    for suite in xml:
        yield from suite


def _load(data: bytes) -> JUnitXml | TestSuite:
    # Bytes first: the document declares its own encoding, which lxml refuses in a str. Output
    # that is not valid in that encoding is read again as text with the bad bytes replaced.
    try:
        return JUnitXml.fromstring(data)
    except SyntaxError:  # xml.etree's ParseError and lxml's XMLSyntaxError both derive from it
        text = data.decode("utf-8", "replace")
        return JUnitXml.fromstring(re.sub(r"^\s*<\?xml[^>]*\?>", "", text))


def _clip(text: str) -> str:
    """Head and tail of a long failure: the summary comes first and the final exception last."""
    if len(text) <= _DETAIL_LIMIT:
        return text
    marker = "\n[...]\n"
    head = _DETAIL_LIMIT // 3
    return f"{text[:head]}{marker}{text[-(_DETAIL_LIMIT - head - len(marker)) :]}"


def parse_junit(
    data: bytes, repo_files: Collection[str]
) -> tuple[dict[str, Outcome], dict[str, str]]:
    """Outcomes and failure details per node id. A test reported twice (a failing call and an
    erroring teardown) keeps its worst outcome. xfail counts as passed, as pytest's exit status
    and the SWE-bench harness count it."""
    xml = _load(data)
    outcomes: dict[str, Outcome] = {}
    details: dict[str, str] = {}
    for case in _cases(xml):
        test_id = node_id(case.classname or "", case.name or "", case._elem.get("file"), repo_files)
        outcome, detail = Outcome.PASSED, ""
        for result in case.result:
            if isinstance(result, Failure):
                outcome, detail = Outcome.FAILED, f"{result.message or ''}\n{result.text or ''}"
            elif isinstance(result, Error):
                outcome, detail = Outcome.ERROR, f"{result.message or ''}\n{result.text or ''}"
            elif isinstance(result, Skipped):
                is_xfail = (result._elem.get("type") or "") == "pytest.xfail"
                outcome = Outcome.PASSED if is_xfail else Outcome.SKIPPED
                detail = f"{'xfail' if is_xfail else 'skipped'}: {result.message or ''}"
        previous = outcomes.get(test_id)
        if previous is None or _RANK[outcome] > _RANK[previous]:
            outcomes[test_id] = outcome
            if detail.strip():
                details[test_id] = _clip(detail.strip())
    return outcomes, details
