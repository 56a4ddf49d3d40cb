"""Reproductions through a documentation build: the project files a Sphinx issue shows, built,
and the warning it reports no longer printed.

Sphinx's own issues, and its extensions', show a small project rather than code: "# conf.py",
"# index.rst", "# example.py" blocks (the first line names the file, or the line before the
block does), or one reStructuredText block that is the page, and the warning the build printed
("WARNING: Malformed option description ..."). The test writes those files into a temporary
directory, adds a ``conf.py`` when the issue shows none (with the extensions its directives
need), runs ``python -m sphinx`` with the builder the issue names, and asserts that the warning
is gone. That is a weak oracle: it says the reported warning is gone, not what the page shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath

from reprobot.generation.drafter.command_line import CliCase, cli_case, cli_test_body
from reprobot.generation.drafter.methods import Method
from reprobot.generation.drafter.project_tools import Tool
from reprobot.generation.drafter.reading import NOTHING, Produced, Reading
from reprobot.generation.drafter.sources import TestSource
from reprobot.generation.issue.build_report import (
    named_builder,
    named_extensions,
    reported_warnings,
)
from reprobot.generation.issue.prose import caption
from reprobot.generation.issue.report import CodeBlock, IssueReport
from reprobot.generation.repo.test_layout import TestLayout

_SPHINX = Tool("sphinx", ("-m", "sphinx"))
# "# conf.py", "# in conf.py", ".. index.rst", "# _templates/autosummary/module.rst"
_HEADER = re.compile(
    r"^\s*(?:#|\.\.|//)\s*(?:(?:in|file|contents\s+of)\s+)?`?(?P<name>[\w.-]+(?:/[\w.-]+)*"
    r"\.(?:py|rst|txt|md|cfg|css|html|inc))`?\s*:?\s*$",
    re.I,
)
# A line of prose that ends naming the next block's file: "Simple `index.rst`", "index.rst:".
_LABEL = re.compile(
    r"`?(?P<name>[\w.-]+(?:/[\w.-]+)*\.(?:py|rst|txt|md|cfg|css|html|inc))`?\s*:?\s*$", re.I
)
# Words before a block saying it is what the build wrote, not a file of the project.
_OUTPUT_WORDS = re.compile(r"\b(?:output|result|got|generated|produces?|built|renders?)\b", re.I)
_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w:-]+::", re.M)
_TITLE = re.compile(r"^(?P<title>\S.*)\n(?P<rule>[=\-~^\"'`#*+]{3,})\s*$", re.M)
# Directives of Sphinx's own extensions, and the extension each needs.
_AUTODOC = r"auto(?:module|class|function|method|attribute|data|exception)"
_EXTENSIONS = (
    (re.compile(rf"^\s*\.\.\s+{_AUTODOC}::", re.M), "sphinx.ext.autodoc"),
    (re.compile(r"^\s*\.\.\s+autosummary::", re.M), "sphinx.ext.autosummary"),
    (re.compile(r"^\s*\.\.\s+(?:doctest|testcode|testoutput)::", re.M), "sphinx.ext.doctest"),
    (re.compile(r"^\s*\.\.\s+(?:todo|todolist)::", re.M), "sphinx.ext.todo"),
    (re.compile(r"^\s*\.\.\s+(?:graphviz|graph|digraph)::", re.M), "sphinx.ext.graphviz"),
    (re.compile(r"^\s*\.\.\s+inheritance-diagram::", re.M), "sphinx.ext.inheritance_diagram"),
    (re.compile(r"^\s*\.\.\s+ifconfig::", re.M), "sphinx.ext.ifconfig"),
)  # fmt: skip
_MAX_FILES = 12
_MAX_LABEL_CHARS = 200


def offers_sphinx(layout: TestLayout, manifests: Mapping[str, str]) -> bool:
    """Whether the project is Sphinx, or names it among its requirements (an extension)."""
    if "sphinx" in layout.packages:
        return True
    return any(re.search(r"""["'\s,=]sphinx\s*(?:[<>=!~;"',\]\n]|$)""", text, re.I)
               for text in manifests.values())  # fmt: skip


def _named(issue: IssueReport, block: CodeBlock) -> tuple[str, str] | None:
    """(file name, text) of a block that names its file, in its first line or the prose line
    before it; None otherwise."""
    first, _, rest = block.text.lstrip("\n").partition("\n")
    header = _HEADER.match(first)
    if header:
        return header.group("name"), rest.strip("\n") + "\n"
    # The end of the line only: the name closes it, and a long line of words and dots would
    # make the search quadratic.
    label = _LABEL.search(caption(issue, block)[-_MAX_LABEL_CHARS:])
    if label:
        return label.group("name"), block.text.strip("\n") + "\n"
    return None


def _is_rst(text: str) -> bool:
    return bool(_DIRECTIVE.search(text) or _TITLE.search(text))


def _safe(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and path.parts[:1] != ("_build",)


def project_files(issue: IssueReport) -> dict[str, str]:
    """The documentation project the issue shows: its named files (a block the words before
    call output is left out), and an unnamed reStructuredText block as ``index.rst`` when no
    page is named so."""
    files: dict[str, str] = {}
    unnamed: list[str] = []
    for block in issue.code_blocks:
        if block.is_session or block.is_traceback:
            continue
        prose = caption(issue, block)
        named = _named(issue, block)
        if named is not None:
            name, text = named
            if _OUTPUT_WORDS.search(prose) and not name.endswith((".py", ".cfg")):
                continue
            if _safe(name):
                files.setdefault(name, text)
        elif _is_rst(block.text) and not _OUTPUT_WORDS.search(prose):
            unnamed.append(block.text.strip("\n") + "\n")
    if "index.rst" not in files and unnamed:
        files["index.rst"] = unnamed[0]
    pages = [n for n in files if n.endswith(".rst") and n != "index.rst"]
    if "index.rst" not in files and pages:
        entries = "".join(f"   {n[: -len('.rst')]}\n" for n in pages)
        files["index.rst"] = f"Index\n=====\n\n.. toctree::\n\n{entries}"
    return dict(list(files.items())[:_MAX_FILES])


def _extensions(issue: IssueReport, files: Mapping[str, str]) -> list[str]:
    pages = "\n".join(text for name, text in files.items() if name.endswith(".rst"))
    found = [name for pattern, name in _EXTENSIONS if pattern.search(pages)]
    found += named_extensions(issue)
    return list(dict.fromkeys(found))


def _with_conf(issue: IssueReport, files: dict[str, str]) -> dict[str, str]:
    """``files`` with a ``conf.py`` that loads the extensions the pages and the issue need: the
    issue's own (a fragment most of the time: "# in conf.py") after the extensions when it sets
    none itself."""
    wanted = _extensions(issue, files)
    conf = files.get("conf.py", "")
    if re.search(r"^\s*extensions\s*[+]?=", conf, re.M):
        return files
    head = f"extensions = {wanted!r}\n" if wanted else ""
    return {**files, "conf.py": head + conf}


def doc_case(
    issue: IssueReport, layout: TestLayout, manifests: Mapping[str, str]
) -> CliCase | None:
    """The documentation build an issue shows and the warning it reports, as a command-line
    case (``python -m sphinx -b BUILDER . _build``); None when the project has no Sphinx, the
    issue shows no page, or it quotes no warning."""
    if not offers_sphinx(layout, manifests):
        return None
    warnings = reported_warnings(issue)
    files = project_files(issue)
    if not warnings or not any(name.endswith(".rst") for name in files):
        return None
    builder = named_builder(issue) or "html"
    args = ("-b", builder, ".", f"_build/{builder}")
    return CliCase(_SPHINX, args, _with_conf(issue, files), tuple(warnings), ())


def command_variants(reading: Reading) -> Produced:
    """``issue-command``: the files the issue shows and the project's command run on them; else,
    for a Sphinx issue, its documentation built. Each keeps out the output lines the issue
    reports as wrong."""
    tree = reading.tree
    case = cli_case(reading.issue, tree.layout, tree.manifests)
    if case is not None:
        imports, body = cli_test_body(case)
        note = f"runs `{case.tool.name}` on the issue's files"
        source = TestSource(Method.ISSUE_COMMAND, tuple(imports), body, note, True, True)
        return Produced((source,), tuple(case.absent))
    docs = doc_case(reading.issue, tree.layout, tree.manifests)
    if docs is None:
        return NOTHING
    imports, body = cli_test_body(docs)
    note = f"builds the documentation the issue shows with `sphinx -b {docs.args[1]}`"
    source = TestSource(Method.ISSUE_COMMAND, tuple(imports), body, note, True, True)
    return Produced((source,), tuple(docs.absent))
