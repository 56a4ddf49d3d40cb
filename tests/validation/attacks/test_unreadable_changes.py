"""Changes that make the drafted test pass while the bug stays in the source a reviewer reads:
code outside the diff's text, build and packaging code, shadowing, and patches git reads
differently from their headers. Each works (the test goes from fail to pass) and none is
verified, as a fix (``--fix``) and as a pull request's head (``--head``)."""

from __future__ import annotations

import base64
import marshal
import os
import py_compile
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from reprobot.bot.render.verdict import render_verdict
from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.example_patches import FIX, NEW_TEST
from tests.support.judged_changes import MODES, commit_all, fixed_source, judge, write_files

TEST_ID = "tests/test_multi.py::test_multi_unit"

# What replaces the buggy function at run time: the fix, kept out of the source file.
PATCHER = """\
import durations, durations.parse
from durations._fixed import parse_duration

durations.parse.parse_duration = durations.parse_duration = parse_duration
"""

Build = Callable[[Path, str], None]


def sourceless_bytecode(repo: Path, fixed: str) -> None:
    # A pyc whose hash is never checked against its source: Python runs it in place of parse.py.
    source = repo / "fixed_parse.py"
    source.write_text(fixed)
    target = repo / "src/durations/__pycache__/parse.cpython-311.pyc"
    target.parent.mkdir(parents=True)
    py_compile.compile(
        str(source),
        str(target),
        dfile="parse.py",
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    source.unlink()


def package_file_of_tests(repo: Path, fixed: str) -> None:
    write_files(repo, {"src/durations/_fixed.py": fixed, "tests/__init__.py": PATCHER})


HELPER_METADATA = "Metadata-Version: 2.1\nName: helper\nVersion: 1.0\n"
HELPER_ENTRY_POINT = "[pytest11]\nhelper = durations._plugin\n"


def metadata_entry_point(repo: Path, fixed: str) -> None:
    # Metadata on the import path registers a pytest plugin that pytest loads at start-up.
    write_files(
        repo,
        {
            "src/durations/_fixed.py": fixed,
            "src/durations/_plugin.py": PATCHER,
            "helper.egg-info/PKG-INFO": HELPER_METADATA,
            "helper.egg-info/entry_points.txt": HELPER_ENTRY_POINT,
        },
    )


def metadata_on_a_configured_path(repo: Path, fixed: str) -> None:
    # Metadata in a folder pytest's own settings put on the import path (``pythonpath``, which
    # pytest 9 applies before it loads installed plugins), not at the root or in src/.
    pyproject = (repo / "pyproject.toml").read_text()
    write_files(
        repo,
        {
            "pyproject.toml": pyproject + '\n[tool.pytest.ini_options]\npythonpath = ["lib"]\n',
            "src/durations/_fixed.py": fixed,
            "src/durations/_plugin.py": PATCHER,
            "lib/helper-1.0.dist-info/METADATA": HELPER_METADATA,
            "lib/helper-1.0.dist-info/entry_points.txt": HELPER_ENTRY_POINT,
        },
    )


def shadowing_symlink(repo: Path, fixed: str) -> None:
    # A package at the root, first on the import path, that is a link to a fixed copy.
    copy = repo / "vendor/durations"
    shutil.copytree(repo / "src/durations", copy)
    (copy / "parse.py").write_text(fixed)
    os.symlink("vendor/durations", repo / "durations")


def packaging_entry_point(repo: Path, fixed: str) -> None:
    # The packaging settings register the plugin: the tree is installed again before the run.
    pyproject = (repo / "pyproject.toml").read_text()
    plugin = '\n[project.entry-points.pytest11]\nhelper = "durations._plugin"\n'
    write_files(
        repo,
        {
            "pyproject.toml": pyproject + plugin,
            "src/durations/_fixed.py": fixed,
            "src/durations/_plugin.py": PATCHER,
        },
    )


def _prepend_to_package(repo: Path, code: str) -> None:
    init = repo / "src/durations/__init__.py"
    docstring, _, rest = init.read_text().partition("\n\n")
    init.write_text(f"{docstring}\n\n{code}\n{rest}")


def zip_on_the_package_path(repo: Path, fixed: str) -> None:
    # A zip first on the package's path: its parse.py is imported in place of the one in the
    # diff, and the one line that says so reads like packaging boilerplate.
    with zipfile.ZipFile(repo / "src/durations/compat.zip", "w") as archive:
        archive.writestr("parse.py", fixed)
    _prepend_to_package(repo, "__path__.insert(0, __path__[0] + '/compat.zip')")


def finder_serving_a_blob(repo: Path, fixed: str) -> None:
    # A meta-path finder that serves durations.parse from a data file of encoded source.
    blob = base64.b64encode(fixed.encode()).decode()
    (repo / "src/durations/units.txt").write_text(blob + "\n")
    _prepend_to_package(repo, FINDER)


FINDER = """\
import base64, importlib.abc, importlib.util, os, sys


class _Units(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "durations.parse":
            return importlib.util.spec_from_loader(name, self)

    def exec_module(self, module):
        here = os.path.dirname(__file__)
        with open(os.path.join(here, "units.txt")) as fh:
            exec(base64.b64decode(fh.read()), module.__dict__)


sys.meta_path.insert(0, _Units())
"""


def marshalled_code(repo: Path, fixed: str) -> None:
    # The fix as a marshalled code object in a data file, run over the module's namespace.
    code = compile(fixed, "parse.py", "exec")
    (repo / "src/durations/table.dat").write_bytes(marshal.dumps(code))
    write_files(
        repo,
        {
            "src/durations/_table.py": (
                "import marshal, os\n\n"
                "import durations, durations.parse\n\n"
                "with open(os.path.join(os.path.dirname(__file__), 'table.dat'), 'rb') as fh:\n"
                "    exec(marshal.loads(fh.read()), durations.parse.__dict__)\n"
                "durations.parse_duration = durations.parse.parse_duration\n"
            )
        },
    )
    init = repo / "src/durations/__init__.py"
    init.write_text(init.read_text() + "\nfrom durations import _table  # noqa: E402,F401\n")


# Each attack, and what stops it: a path a verified change may not hold (its name said in the
# review), or a harness that never loads the code at all ("F->F": the bug is still there).
# Packaging that registers a plugin works only if the change's build code runs, which it never
# does before the verdict's run; metadata the tree holds on the import path is dropped before
# pytest starts, and pytest loads the entry points of no other metadata of the tree.
ATTACKS: dict[str, tuple[Build, str]] = {
    "zip-on-the-package-path": (zip_on_the_package_path, "src/durations/compat.zip"),
    "finder-serving-a-blob": (finder_serving_a_blob, "sys.meta_path"),
    "marshalled-code": (marshalled_code, "src/durations/table.dat"),
    "sourceless-bytecode": (
        sourceless_bytecode,
        "src/durations/__pycache__/parse.cpython-311.pyc",
    ),
    "tests-package-patches": (package_file_of_tests, "tests/__init__.py"),
    "shadowing-symlink": (shadowing_symlink, "durations"),
    "packaging-entry-point": (packaging_entry_point, "F->F"),
    "metadata-entry-point": (metadata_entry_point, "F->F"),
    "metadata-on-a-configured-path": (metadata_on_a_configured_path, "F->F"),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_change_a_reviewer_cannot_read_is_never_verified(
    docker_client: docker.DockerClient,
    example_env: EnvImage,
    clone: Path,
    name: str,
    mode: str,
) -> None:
    build, stopped_by = ATTACKS[name]
    base = RepoSnapshot.from_git(clone, "HEAD")
    build(clone, fixed_source(clone))
    verdict = judge(docker_client, example_env, base, commit_all(clone), mode)
    kinds = {k: t.kind for k, t in verdict.transitions.items()}
    assert not verdict.success
    if stopped_by == "F->F":
        # The plugin its packaging or its metadata registers never loads.
        assert kinds == {TEST_ID: "F->F"} and verdict.status == "not_verified"
        return
    # The attack works: the drafted test passes with the bug still in parse.py ...
    assert kinds == {TEST_ID: "F->P"}, verdict.reasons
    # ... and the verdict says which path a verified change may not hold.
    assert verdict.status == "needs_review"
    assert any(stopped_by in concern for concern in verdict.review), verdict.review


@pytest.fixture(scope="module")
def xdist_env(
    docker_client: docker.DockerClient, example_repo: Path, settings: Settings
) -> EnvImage:
    """The example's environment with pytest-xdist, whose tests run in two worker processes."""
    snapshot = RepoSnapshot.from_git(example_repo, "HEAD", "example/durations")
    spec = EnvSpec(
        python="3.11",
        install="python -m pip install -e '.[test]'",
        test_requirements=("pytest-xdist",),
        test_cmd="pytest -n 2",
    )
    return ensure_environment(docker_client, spec, snapshot, settings)


@pytest.mark.parametrize("name", ["metadata-entry-point", "metadata-on-a-configured-path"])
def test_xdists_workers_load_no_plugin_of_the_trees_metadata(
    docker_client: docker.DockerClient, xdist_env: EnvImage, clone: Path, name: str
) -> None:
    # Each worker is a pytest of its own, which loads installed plugins at its start-up too.
    build, _ = ATTACKS[name]
    base = RepoSnapshot.from_git(clone, "HEAD")
    build(clone, fixed_source(clone))
    verdict = judge(docker_client, xdist_env, base, commit_all(clone), "head")
    assert {k: t.kind for k, t in verdict.transitions.items()} == {TEST_ID: "F->F"}
    assert verdict.status == "not_verified"


# The same new conftest.py, named as git reads it but not as its header looks.
QUOTED = """\
diff --git "a/conftest.py" "b/conftest.py"
new file mode 100644
--- /dev/null
+++ "b/conftest.py"
@@ -0,0 +1,3 @@
+import durations, durations.parse
+
+durations.parse_duration = durations.parse.parse_duration = lambda text: 5400
"""
MNEMONIC = QUOTED.replace('"a/conftest.py" "b/conftest.py"', "c/conftest.py w/conftest.py")
MNEMONIC = MNEMONIC.replace('+++ "b/conftest.py"', "+++ w/conftest.py")


@pytest.mark.parametrize("diff", [QUOTED, MNEMONIC], ids=["quoted", "mnemonic-prefix"])
def test_a_patch_is_read_as_git_applies_it(
    docker_client: docker.DockerClient, example_env: EnvImage, clone: Path, diff: str
) -> None:
    base = RepoSnapshot.from_git(clone, "HEAD")
    verdict = verify(docker_client, example_env, base, Patch(NEW_TEST), fix=Patch(diff))
    assert {k: t.kind for k, t in verdict.transitions.items()} == {TEST_ID: "F->P"}
    assert verdict.status == "needs_review" and not verdict.success
    # Named as git writes it, not as "b/conftest.py" or "w/conftest.py".
    assert verdict.harness_changes == ("conftest.py",)
    assert any("(conftest.py)" in c for c in verdict.review), verdict.review


def test_a_diff_too_large_to_read_is_run_but_never_verified(
    docker_client: docker.DockerClient, example_env: EnvImage, clone: Path
) -> None:
    # A real fix hidden in more than a reviewer reads: the host does not parse it line by line
    # (benchmarks/hostile_diff.py measures what that saves) and the verdict says why.
    base = RepoSnapshot.from_git(clone, "HEAD")
    subprocess.run(["git", "-C", str(clone), "apply", "-"], input=FIX.encode(), check=True)
    filler = "".join(f"value_{n} = {n}\n" for n in range(80_000))
    write_files(clone, {"src/durations/generated.py": filler})
    verdict = judge(docker_client, example_env, base, commit_all(clone), "head")
    assert {k: t.kind for k, t in verdict.transitions.items()} == {TEST_ID: "F->P"}
    assert verdict.status == "needs_review" and not verdict.success
    assert verdict.review[0].startswith("it is a 1.")
    assert "MB diff, more than a reviewer reads" in verdict.review[0]
    assert verdict.change_coverage.files == () and not verdict.measured
    comment = render_verdict(verdict)
    assert "### 🔍 Needs review: the reproducing test passes with this change, but it is a 1." in (
        comment
    )
    assert "**Change coverage:** not measured: the change is too large to read" in comment
