"""Reproductions through a documentation build: reading the project and the warning a Sphinx
issue shows, then an issue of a Sphinx extension reproduced on a repository made here, with its
fix judged by the weak oracle such a test is."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from reprobot.generation.drafter.doc_build import (
    doc_case,
    offers_sphinx,
    project_files,
)
from reprobot.generation.issue.build_report import reported_warnings
from reprobot.generation.issue.file import read_issue
from reprobot.generation.pool.reproduce import reproduce
from reprobot.generation.repo.test_layout import TestLayout
from reprobot.settings import Settings
from reprobot.validation.env.env_image import ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.repos import make_repo, pyproject

FENCE = "```"


def _layout(*packages: str) -> TestLayout:
    return TestLayout(("tests/test_a.py",), ("tests",), packages, {})


TEMPLATE_ISSUE = f"""\
autodoc: option ignored for overloaded functions

**To Reproduce**

{FENCE}
# in conf.py
autodoc_typehints = 'none'
{FENCE}
{FENCE}
# index.rst
.. automodule:: example
   :members:
{FENCE}
{FENCE}
# example.py
def foo(x: int) -> int:
    return x
{FENCE}

As a result, I got following output:
{FENCE}
# generated/example.rst
example
=======
{FENCE}

The build says:
{FENCE}
index.rst:1: WARNING: duplicate object description of example.foo
{FENCE}
"""


def test_the_project_a_report_shows_is_its_named_blocks_and_no_output() -> None:
    files = project_files(read_issue(TEMPLATE_ISSUE))
    assert set(files) == {"conf.py", "index.rst", "example.py"}
    assert files["conf.py"] == "autodoc_typehints = 'none'\n"
    assert files["index.rst"].startswith(".. automodule:: example")


def test_a_case_adds_the_extensions_the_pages_need_and_the_warning_must_go() -> None:
    case = doc_case(read_issue(TEMPLATE_ISSUE), _layout("sphinx"), {})
    assert case is not None
    assert case.args == ("-b", "html", ".", "_build/html")
    conf = case.files["conf.py"]
    assert conf == "extensions = ['sphinx.ext.autodoc']\nautodoc_typehints = 'none'\n"
    assert case.absent == ("duplicate object description of example.foo",)
    # Without Sphinx in the project, or without a warning to lose, there is no case.
    assert doc_case(read_issue(TEMPLATE_ISSUE), _layout("numpy"), {}) is None
    quiet = TEMPLATE_ISSUE.split("The build says:", maxsplit=1)[0]
    assert doc_case(read_issue(quiet), _layout("sphinx"), {}) is None


def test_an_unnamed_page_is_the_index_and_a_treated_as_error_warning_is_read() -> None:
    text = f"""\
Sphinx 3.2 complains about option:: syntax

The documentation includes this:
{FENCE}
.. option:: [enable=]PATTERN

   Immediately enable events matching *PATTERN*
{FENCE}

but when we build `singlehtml` Sphinx complains:

{FENCE}
Warning, treated as error:
../../docs/qemu-option-trace.rst.inc:4:Malformed option description '[enable=]PATTERN'
{FENCE}
"""
    issue = read_issue(text)
    assert project_files(issue)["index.rst"].startswith(".. option:: [enable=]PATTERN")
    assert reported_warnings(issue) == ["Malformed option description '[enable=]PATTERN'"]
    case = doc_case(issue, _layout("sphinx"), {})
    assert case is not None and case.args[1] == "singlehtml"
    assert case.files["conf.py"] == ""


@pytest.mark.parametrize(
    ("manifests", "offers"),
    [
        ({"pyproject.toml": 'dependencies = ["sphinx>=4", "docutils"]'}, True),
        ({"setup.py": "install_requires=['Sphinx']"}, True),
        ({"setup.py": "install_requires=['sphinx-rtd-theme']"}, False),
        ({}, False),
    ],
)
def test_an_extension_offers_sphinx_through_its_requirements(
    manifests: dict[str, str], offers: bool
) -> None:
    assert offers_sphinx(_layout("shout"), manifests) is offers


def test_a_warning_quoted_in_a_sentence_is_read_and_paths_stay_inside_the_project() -> None:
    text = f"""\
Wrong warning

I get `WARNING: undefined label: intro` with this:

{FENCE}
# ../../etc/index.rst
Title
=====
{FENCE}
"""
    issue = read_issue(text)
    assert reported_warnings(issue) == ["undefined label: intro"]
    assert project_files(issue) == {}


SHOUT = """\
from docutils import nodes
from docutils.parsers.rst import Directive


class Shout(Directive):
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True

    def run(self):
        text = " ".join(self.content)
        if not text:
            self.state.document.reporter.warning("shout needs some text", line=self.lineno)
            return []
        return [nodes.paragraph(text=text.upper())]


def setup(app):
    app.add_directive("shout", Shout)
    return {"parallel_read_safe": True}
"""
SHOUT_FIX = """\
--- a/shout/__init__.py
+++ b/shout/__init__.py
@@ -8,7 +8,7 @@
     has_content = True

     def run(self):
-        text = " ".join(self.content)
+        text = " ".join([*self.arguments, *self.content])
         if not text:
             self.state.document.reporter.warning("shout needs some text", line=self.lineno)
             return []
"""
SHOUT_ISSUE = f"""\
shout ignores the text given as its argument

{FENCE}
# conf.py
extensions = ["shout"]
{FENCE}

{FENCE}
# index.rst
Title
=====

.. shout:: hello world
{FENCE}

Building it prints:

{FENCE}
index.rst:4: WARNING: shout needs some text
{FENCE}
"""


def test_a_sphinx_extension_issue_is_reproduced_by_building_its_pages(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "shout",
        {
            "pyproject.toml": pyproject("shout", 'dependencies = ["sphinx>=7"]\n'),
            "shout/__init__.py": SHOUT,
            "tests/__init__.py": "",
            "tests/test_shout.py": "import shout\n\n\ndef test_setup():\n    assert shout.setup\n",
        },
    )
    base = RepoSnapshot.from_git(repo, "HEAD", "test/shout")
    env = ensure_environment(docker_client, EnvSpec(python="3.11"), base, settings)
    result = reproduce(read_issue(SHOUT_ISSUE), base, env, settings, client=docker_client)
    assert result.reproduced, [c.reason for c in result.candidates]
    assert result.chosen is not None and result.chosen.draft.method == "issue-command"
    assert "shout needs some text" in result.failure_excerpt
    verdict = verify(docker_client, env, base, Patch(result.test_patch), fix=Patch(SHOUT_FIX))
    # The warning is gone with the fix: fail to pass, but all the test knows is that, so the
    # fix is not called verified.
    assert verdict.status == "weak", verdict.to_json()
    assert {t.kind for t in verdict.transitions.values()} == {"F->P"}
    assert any("reported wrong value is gone" in reason for reason in verdict.reasons)
