"""Pure functions of the in-container scripts: runner.split_command, runner.pytest_argv,
env_build.build_requires, and the build-result line env_image reads back."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from reprobot.validation.env.env_image import parse_build_result
from tests.support.scripts import load_script

runner = load_script("runner")
env_build = load_script("env_build")

TAIL = [
    "--junitxml=/work/out/junit.xml",
    "-o",
    "junit_family=xunit1",
    "--tb=short",
    "-o",
    "cache_dir=/work/out/pytest-cache",
    "--continue-on-collection-errors",
    "-p",
    runner.PLUGIN_MODULE,
]
COVERAGE_HEAD = [
    sys.executable,
    "/work/.runner/cov.py",
    "run",
    "--rcfile=/work/.runner/coveragerc",
    "-m",
    "pytest",
]


# --- split_command --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "env", "words"),
    [
        ("pytest", {}, ["pytest"]),
        ("pytest -x tests", {}, ["pytest", "-x", "tests"]),
        (
            "DJANGO_SETTINGS_MODULE=app.settings PYTHONHASHSEED=0 pytest tests",
            {"DJANGO_SETTINGS_MODULE": "app.settings", "PYTHONHASHSEED": "0"},
            ["pytest", "tests"],
        ),
        ("FOO='a b' pytest -k 'not slow'", {"FOO": "a b"}, ["pytest", "-k", "not slow"]),
        ('FOO="x=y" python -m pytest', {"FOO": "x=y"}, ["python", "-m", "pytest"]),
        ("EMPTY= pytest", {"EMPTY": ""}, ["pytest"]),
        # Assignments after the command are the command's own arguments.
        ("pytest A=1", {}, ["pytest", "A=1"]),
        ("pytest --rootdir=/x", {}, ["pytest", "--rootdir=/x"]),
        # Not names of variables: left in place.
        ("1X=2 pytest", {}, ["1X=2", "pytest"]),
        ("--opt=1 pytest", {}, ["--opt=1", "pytest"]),
        ("A-B=1 pytest", {}, ["A-B=1", "pytest"]),
        ("A=1", {"A": "1"}, []),
        ("", {}, []),
    ],
)
def test_split_command(command: str, env: dict[str, str], words: list[str]) -> None:
    assert runner.split_command(command) == (env, words)


def test_split_command_later_assignment_wins() -> None:
    assert runner.split_command("A=1 A=2 pytest") == ({"A": "2"}, ["pytest"])


def test_split_command_rejects_unbalanced_quotes() -> None:
    with pytest.raises(ValueError, match="quotation"):
        runner.split_command("pytest -k 'oops")


# --- pytest_argv ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "rest"),
    [
        (["pytest"], []),
        (["pytest", "-x", "tests/unit"], ["-x", "tests/unit"]),
        (["py.test", "-q"], ["-q"]),
        (["/usr/local/bin/pytest", "-q"], ["-q"]),
        (["python", "-m", "pytest", "-k", "not slow"], ["-k", "not slow"]),
        (["python3.11", "-m", "pytest"], []),
        (["/opt/venv/bin/python", "-m", "pytest", "tests"], ["tests"]),
    ],
)
def test_pytest_argv_without_coverage(words: list[str], rest: list[str]) -> None:
    assert runner.pytest_argv(words, None) == [sys.executable, "-m", "pytest", *rest, *TAIL]


@pytest.mark.parametrize(
    ("words", "rest"),
    [
        (["pytest", "-x"], ["-x"]),
        (["python", "-m", "pytest", "tests"], ["tests"]),
    ],
)
def test_pytest_argv_with_coverage(words: list[str], rest: list[str]) -> None:
    assert runner.pytest_argv(words, "/work/.runner/coveragerc") == [*COVERAGE_HEAD, *rest, *TAIL]


def test_coverage_rc_is_ours_and_asks_for_contexts_only_when_told() -> None:
    plain = runner.coverage_rc(False)
    assert plain.splitlines() == [
        "[run]",
        "data_file = /work/out/.coverage",
        "include =",
        "    /work/repo/*",
    ]
    assert "dynamic_context = test_function" in runner.coverage_rc(True).splitlines()


def test_coverage_rc_narrowed_to_given_files() -> None:
    text = runner.coverage_rc(True, ["pkg/b.py", "pkg/a.py", "pkg/a.py"])
    assert text.splitlines()[2:5] == [
        "include =",
        "    /work/repo/pkg/a.py",
        "    /work/repo/pkg/b.py",
    ]


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd.py",
        "../x.py",
        "a//b.py",
        "a/./b.py",
        "a,b.py",
        "*.py",
        "a/[x].py",
        "a.py\ndata_file = /tmp/x",
        " a.py",
        "a\\b.py",
        "a\tb.py",
    ],
)
def test_a_path_that_is_not_plain_measures_the_whole_tree(path: str) -> None:
    # The list comes from a patch's paths: none of them may widen, break or add to the rc file.
    assert runner.coverage_include(["ok.py", path]) == ["/work/repo/*"]
    assert runner.coverage_rc(False, ["ok.py", path]).count("\n") == 4


def test_pytest_argv_ours_come_last() -> None:
    # The project's own --tb=no and junit_family must lose against ours.
    argv = runner.pytest_argv(["pytest", "--tb=no", "-o", "junit_family=xunit2"], None)
    assert argv.index("--tb=short") > argv.index("--tb=no")
    assert argv.index("junit_family=xunit1") > argv.index("junit_family=xunit2")


def test_pytest_cache_lives_outside_the_tree_unless_the_command_turns_it_off() -> None:
    argv = runner.pytest_argv(["pytest"], None)
    assert "cache_dir=/work/out/pytest-cache" in argv and "no:cacheprovider" not in argv
    # The benchmark's commands (SWE-bench's harness) turn the cache off: no setting for it then.
    argv = runner.pytest_argv(["pytest", "-p", "no:cacheprovider"], None)
    assert not any(a.startswith("cache_dir=") for a in argv)


def test_pytest_argv_does_not_change_its_input() -> None:
    words = ["pytest", "-x"]
    runner.pytest_argv(words, "/work/.runner/coveragerc")
    assert words == ["pytest", "-x"]


@pytest.mark.parametrize(
    "words",
    [
        [],
        ["tox"],
        ["python", "-m", "unittest"],
        ["python", "runtests.py"],
        ["nosetests"],
        ["pytest-3"],
        ["python", "-m"],
        ["make", "test"],
    ],
)
def test_pytest_argv_unsupported(words: list[str]) -> None:
    with pytest.raises(SystemExit, match="unsupported test command"):
        runner.pytest_argv(words, None)


def test_split_then_argv_round_trip() -> None:
    env, words = runner.split_command("CI=1 python -m pytest -p no:randomly 'tests/a b.py'")
    assert env == {"CI": "1"}
    assert runner.pytest_argv(words, None) == [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:randomly",
        "tests/a b.py",
        *TAIL,
    ]


# --- env_build.build_requires ---------------------------------------------------------------


@pytest.fixture
def repo_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(env_build, "REPO", str(tmp_path))
    return tmp_path


def test_build_requires_without_pyproject(repo_dir: Path) -> None:
    assert env_build.build_requires() == ["setuptools", "wheel"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[build-system]\nrequires = ["setuptools>=61", "wheel"]\n'
            'build-backend = "setuptools.build_meta"\n',
            ["setuptools>=61", "wheel"],
        ),
        (
            "[project]\nname = 'x'\ndependencies = ['requests']\n\n"
            "[build-system]\nrequires = [\n    'hatchling>=1.21',\n    \"hatch-vcs\",\n]\n"
            "build-backend = 'hatchling.build'\n\n[tool.hatch.version]\nsource = 'vcs'\n",
            ["hatchling>=1.21", "hatch-vcs"],
        ),
        (
            '[build-system]\nrequires = ["flit_core >=3.2,<4"]\n'
            'build-backend = "flit_core.buildapi"\n',
            ["flit_core >=3.2,<4"],
        ),
        (
            "[build-system]\nrequires = []\n",
            [],
        ),
        # A build-system table without requires: nothing to install.
        (
            '[build-system]\nbuild-backend = "setuptools.build_meta"\n\n'
            '[tool.other]\nrequires = ["not-this"]\n',
            [],
        ),
        # No build-system table: pip's legacy default.
        (
            '[project]\nname = "x"\n\n[tool.black]\nline-length = 100\n',
            ["setuptools", "wheel"],
        ),
        # A requires of another table before the build-system table does not count.
        (
            '[tool.poetry]\nrequires = ["decoy"]\n\n'
            '[build-system]\nrequires = ["poetry-core>=1.0.0"]\n'
            'build-backend = "poetry.core.masonry.api"\n',
            ["poetry-core>=1.0.0"],
        ),
        (
            '[build-system]\nrequires=["maturin>=1.4,<2.0"]\nbuild-backend="maturin"\n',
            ["maturin>=1.4,<2.0"],
        ),
    ],
)
def test_build_requires(repo_dir: Path, text: str, expected: list[str]) -> None:
    (repo_dir / "pyproject.toml").write_text(text)
    assert env_build.build_requires() == expected


def test_build_requires_with_extras(repo_dir: Path) -> None:
    # The usual setuptools_scm form (pytest's own pyproject.toml has it): the brackets of an
    # extra sit inside the requires list.
    (repo_dir / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools>=61", "setuptools_scm[toml]>=6.2.3", "wheel"]\n'
        'build-backend = "setuptools.build_meta"\n'
    )
    assert env_build.build_requires() == ["setuptools>=61", "setuptools_scm[toml]>=6.2.3", "wheel"]


# --- the build's last line, as env_image reads it --------------------------------------------


def test_finish_line_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    result: dict[str, object] = {
        "ok": True,
        "skipped": ["requirements.txt: bad==1"],
        "editable": True,
    }
    print("+ python -m pip install -e .")
    env_build.finish(result)
    out = capsys.readouterr().out.encode()
    assert parse_build_result(out) == result


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        (b"", None),
        (b"+ pip install\nCollecting x\n", None),
        (b'REPROBOT-RESULT {"ok": false}\nlater noise\n', {"ok": False}),
        (b'REPROBOT-RESULT {"ok": false}\nREPROBOT-RESULT {"ok": true}\n', {"ok": True}),
        (b"REPROBOT-RESULT not json\n", None),
        (b"REPROBOT-RESULT [1, 2]\n", None),
        (b'pip\r\nREPROBOT-RESULT {"ok": true, "error": null}\r\n', {"ok": True, "error": None}),
    ],
)
def test_parse_build_result(log: bytes, expected: dict[str, object] | None) -> None:
    assert parse_build_result(log) == expected


# --- the report channel -------------------------------------------------------------------------


def _lines(*records: object) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_parse_report_of_a_whole_run() -> None:
    data = _lines(
        {"collected": ["t.py::a", "t.py::b"]},
        {"finished": True, "exitstatus": 1, "junit": "<testsuites/>", "xpassed": ["t.py::b"]},
    )
    assert runner.parse_report(data) == {
        "collected": ["t.py::a", "t.py::b"],
        "junit": "<testsuites/>",
        "exitstatus": 1,
        "problem": None,
        "xpassed": ["t.py::b"],
    }


def test_parse_report_of_a_run_that_died_before_finishing() -> None:
    report = runner.parse_report(_lines({"collected": []}))
    assert report == {
        "collected": [],
        "junit": None,
        "exitstatus": None,
        "problem": None,
        "xpassed": [],
    }
    assert runner.parse_report(b"") == {
        "collected": None,
        "junit": None,
        "exitstatus": None,
        "problem": None,
        "xpassed": [],
    }


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"not json\n", "not JSON"),
        (b"[" * 200_000 + b"\n", "not JSON"),
        (b"[1, 2]\n", "not an object"),
        (_lines({"collected": "t.py::a"}), "not a list of strings"),
        (_lines({"finished": True, "xpassed": [1]}), "unexpected passes are not a list"),
        (_lines({"collected": []}, {"collected": ["forged"]}), "never writes"),
        (_lines({"finished": True}, {"finished": True}), "never writes"),
        (_lines({"collected": []}, {"anything": 1}), "never writes"),
        # Collected ids after the session finished are not the plugin's.
        (_lines({"finished": True, "junit": ""}, {"collected": []}), "never writes"),
    ],
)
def test_parse_report_refuses_what_the_plugin_never_writes(data: bytes, problem: str) -> None:
    assert problem in (runner.parse_report(data)["problem"] or "")


def test_report_channel_keeps_only_what_the_named_process_sent() -> None:
    channel = runner.ReportChannel()
    channel.start(os.getpid())
    fd = channel.theirs.fileno()
    os.write(fd, b'{"collected": []}\n')
    child = os.fork()
    if child == 0:  # pragma: no cover - the child only writes and leaves
        os.write(fd, b'{"finished": true, "exitstatus": 0, "junit": null}\n')
        os._exit(0)
    os.waitpid(child, 0)
    channel.close_ours()
    own, foreign = channel.read()
    assert own == b'{"collected": []}\n'
    assert foreign == len(b'{"finished": true, "exitstatus": 0, "junit": null}\n')


# --- the pytest plugin's ids ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodeid", "expected"),
    [
        # pytest before 4 names a test method with its class's instance.
        (
            "pkg/test_m.py::TestMaps::()::test_consistency",
            "pkg/test_m.py::TestMaps::test_consistency",
        ),
        ("t.py::TestA::()::TestB::()::test_x[1-()]", "t.py::TestA::TestB::test_x[1-()]"),
        ("pkg/test_m.py::TestMaps::test_consistency", "pkg/test_m.py::TestMaps::test_consistency"),
        ("t.py::test_f[()]", "t.py::test_f[()]"),
        ("t.py::TestA::()::test_f[a::()]", "t.py::TestA::test_f[a::()]"),
    ],
)
def test_the_plugin_reports_ids_as_pytest_4_and_the_junit_report_write_them(
    nodeid: str, expected: str
) -> None:
    plugin = load_script("reprobot_report")
    assert plugin._node_id(nodeid) == expected


def test_the_report_plugin_has_a_name_new_in_every_run() -> None:
    # No file of a tree fixed before the run can be named for it.
    again = load_script("runner")
    assert runner.PLUGIN_MODULE.startswith("reprobot_report_")
    assert len(runner.PLUGIN_MODULE) == len("reprobot_report_") + 16
    assert again.PLUGIN_MODULE != runner.PLUGIN_MODULE
