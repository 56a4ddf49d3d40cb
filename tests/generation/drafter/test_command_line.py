"""Command-line reproductions: the project's commands, the issue's files, and output patterns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reprobot.generation.drafter.command_line import (
    CliCase,
    cli_case,
    cli_test_body,
    loose_pattern,
    says_something,
    split_command,
)
from reprobot.generation.drafter.directory_tree import listed_files
from reprobot.generation.drafter.project_tools import Tool, console_scripts, project_tools
from reprobot.generation.issue.report import parse_issue
from reprobot.generation.repo.test_layout import TestLayout, detect_layout

PYPROJECT = """\
[project]
name = "lintr"
version = "0.4.0"

[project.scripts]
lintr = "lintr.cli:main"
lintr-fmt = "lintr.fmt:run"
"""
SETUP_CFG = """\
[metadata]
name = lintr

[options.entry_points]
console_scripts =
    lintr-legacy = lintr.legacy:main
    lintr = lintr.other:main
"""
SETUP_PY = """\
from setuptools import setup

setup(
    name="lintr",
    entry_points={
        "console_scripts": [
            "lintr = lintr.cli:main",
        ],
    },
)
"""
MANIFESTS = {"pyproject.toml": '[project.scripts]\nlintr = "lintr.cli:main"\n'}
LAYOUT_FILES = ["src/lintr/__init__.py", "src/lintr/cli.py", "tests/test_cli.py"]
CLI_CODE = "import sys; from lintr.cli import main as main; sys.exit(main())"


@pytest.fixture
def layout() -> TestLayout:
    return detect_layout(LAYOUT_FILES)


# --- console_scripts and project_tools -----------------------------------------------------------


def test_console_scripts_from_pyproject() -> None:
    assert console_scripts({"pyproject.toml": PYPROJECT}) == {
        "lintr": "lintr.cli:main",
        "lintr-fmt": "lintr.fmt:run",
    }


def test_console_scripts_from_setup_cfg_and_setup_py() -> None:
    assert console_scripts({"setup.cfg": SETUP_CFG}) == {
        "lintr-legacy": "lintr.legacy:main",
        "lintr": "lintr.other:main",
    }
    assert console_scripts({"setup.py": SETUP_PY}) == {"lintr": "lintr.cli:main"}


def test_console_scripts_pyproject_wins_and_bad_toml_is_ignored() -> None:
    both = console_scripts({"pyproject.toml": PYPROJECT, "setup.cfg": SETUP_CFG})
    assert both["lintr"] == "lintr.cli:main"
    assert both["lintr-legacy"] == "lintr.legacy:main"
    assert console_scripts({"pyproject.toml": "[project\nname = "}) == {}
    assert console_scripts({}) == {}


def test_project_tools_run_console_scripts_with_the_interpreter(layout: TestLayout) -> None:
    manifests = {
        "pyproject.toml": '[project.scripts]\nlintr = "lintr.cli:main"\n'
        'lintr-app = "lintr.cli:App.run"\n'
    }
    tools = project_tools(layout, manifests)
    # A method of a class is no function to import and call.
    assert tools == {"lintr": Tool("lintr", ("-c", CLI_CODE))}


def test_project_tools_package_with_main_module_runs_with_dash_m() -> None:
    layout = detect_layout(["src/lintr/__init__.py", "src/lintr/__main__.py", "src/lintr/cli.py"])
    assert project_tools(layout, {}) == {"lintr": Tool("lintr", ("-m", "lintr"))}


# --- loose_pattern -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shown", "printed"),
    [
        (
            "example.py:1:11: U100 unused argument 'name'",
            "example.py:2:5: U100 unused argument 'name'",
        ),
        ("Found 2 errors in 1 file", "Found   13 errors in 4 file"),
        (
            "/home/me/proj/example.py:3: unused import 'os'",
            "/tmp/pytest-of-root/pytest-7/test_x0/example.py:12: unused import 'os'",
        ),
        ("/home/me/proj/example.py:3: unused import 'os'", "example.py:3: unused import 'os'"),
        ("E501 line too long (82 > 79 characters)", "E501 line too long (101 > 88 characters)"),
    ],
)
def test_loose_pattern_lets_numbers_spaces_and_path_prefixes_vary(shown: str, printed: str) -> None:
    assert re.search(loose_pattern(shown), printed)


@pytest.mark.parametrize(
    ("shown", "printed"),
    [
        ("example.py:1:11: U100 unused argument 'name'", "example.py:1:11: U100 unused arg 'name'"),
        ("/home/me/proj/example.py:3: unused", "/home/me/proj/other.py:3: unused"),
        ("a.b(c) [x]", "aXb(c) [x]"),  # regex characters are escaped
        ("Found 2 errors", "Found two errors"),
    ],
)
def test_loose_pattern_keeps_the_words(shown: str, printed: str) -> None:
    assert not re.search(loose_pattern(shown), printed)


# --- cli_case ------------------------------------------------------------------------------------

FILE_BLOCK = """\
`example.py`:

```python
def greet(name="world"):
    return "hello " + name
```
"""


def test_cli_case_command_and_its_output_in_one_block(layout: TestLayout) -> None:
    body = (
        FILE_BLOCK
        + "\n```console\n$ lintr check --select U example.py\n"
        + "example.py:1:11: U100 unused argument 'name'\nFound 1 error.\n```\n"
    )
    case = cli_case(parse_issue("default argument reported as unused", body), layout, MANIFESTS)
    assert case == CliCase(
        tool=Tool("lintr", ("-c", CLI_CODE)),
        args=("check", "--select", "U", "example.py"),
        files={"example.py": 'def greet(name="world"):\n    return "hello " + name\n'},
        absent=("example.py:1:11: U100 unused argument 'name'", "Found 1 error."),
        present=(),
    )


CRASH_BODY = """\
### Configuration

.lintrrc:

```ini
[lintr]
name-rgx=[\\p{Han}a-z_]+$
```

### Command used

```shell
lintr
```

### Output

```shell
(venv) laptop:project me$ lintr
Traceback (most recent call last):
  File "/venv/bin/lintr", line 8, in <module>
    sys.exit(main())
re.error: bad escape \\p at position 1
```

### Version

```shell
lintr 0.4.0
Python 3.9.13
```
"""


def test_cli_case_a_command_that_crashes_on_a_named_configuration_file(
    layout: TestLayout,
) -> None:
    case = cli_case(parse_issue("lintr crashes on a regex", CRASH_BODY), layout, MANIFESTS)
    assert case == CliCase(
        tool=Tool("lintr", ("-c", CLI_CODE)),
        args=(),
        files={".lintrrc": "[lintr]\nname-rgx=[\\p{Han}a-z_]+$\n"},
        absent=("re.error: bad escape \\p at position 1",),
        present=(),
    )
    # "lintr 0.4.0" in a block of several lines is the version's output, not a command.
    assert case.args != ("0.4.0",)


@pytest.mark.parametrize(
    ("name", "shown", "written"),
    [
        (".pylintrc", "function-rgx=[a-z_]+$", "[MAIN]\nfunction-rgx=[a-z_]+$\n"),
        ("pytest.ini", "addopts = -rs", "[pytest]\naddopts = -rs\n"),
        # A file with its section, or of a tool with no single section, is written as shown.
        (".pylintrc", "[BASIC]\nfunction-rgx=x", "[BASIC]\nfunction-rgx=x\n"),
        ("setup.cfg", "addopts = -rs", "addopts = -rs\n"),
    ],
)
def test_cli_case_a_bare_option_line_goes_under_its_tools_section(
    name: str, shown: str, written: str, layout: TestLayout
) -> None:
    body = CRASH_BODY.replace(".lintrrc", name).replace("[lintr]\nname-rgx=[\\p{Han}a-z_]+$", shown)
    case = cli_case(parse_issue("lintr crashes on a regex", body), layout, MANIFESTS)
    assert case is not None
    assert case.files == {name: written}


def test_cli_case_command_in_a_code_span(layout: TestLayout) -> None:
    body = (
        FILE_BLOCK
        + "\nRunning `lintr check example.py` prints\n\n"
        + "```\nexample.py:1:11: U100 unused argument 'name'\n```\n"
    )
    case = cli_case(parse_issue("t", body), layout, MANIFESTS)
    assert case is not None
    assert case.args == ("check", "example.py")
    assert case.absent == ("example.py:1:11: U100 unused argument 'name'",)


def test_cli_case_expected_block_then_the_wrong_one(layout: TestLayout) -> None:
    body = (
        "Expected:\n\n```\nAll checks passed!\n```\n\nBut with\n\n"
        + FILE_BLOCK
        + "\n```console\n$ lintr check example.py\n"
        + "example.py:1:11: U100 unused argument 'name'\n```\n"
    )
    case = cli_case(parse_issue("t", body), layout, MANIFESTS)
    assert case is not None
    assert case.absent == ("example.py:1:11: U100 unused argument 'name'",)
    assert case.present == ("All checks passed!",)


def test_cli_case_actual_output_then_expected_output(layout: TestLayout) -> None:
    body = (
        FILE_BLOCK
        + "\n```console\n$ lintr check example.py\n```\n\n"
        + "### Actual output\n\n```\nexample.py:1:11: U100 unused argument 'name'\n"
        + "Found 1 error.\n```\n\n"
        + "### Expected output\n\n```\nAll checks passed!\n```\n"
    )
    case = cli_case(parse_issue("default argument reported as unused", body), layout, MANIFESTS)
    assert case is not None
    assert case.absent == ("example.py:1:11: U100 unused argument 'name'", "Found 1 error.")
    assert case.present == ("All checks passed!",)


def test_cli_case_names_the_file_after_the_output_when_the_command_does_not(
    layout: TestLayout,
) -> None:
    body = (
        "```python\nimport os\n```\n\n```console\n$ lintr check .\n"
        "mod.py:1:1: U101 unused import 'os'\n```\n"
    )
    case = cli_case(parse_issue("t", body), layout, MANIFESTS)
    assert case is not None
    assert case.files == {"mod.py": "import os\n"}


def test_cli_case_a_directory_tree_and_another_commands_output_are_not_the_right_output(
    layout: TestLayout,
) -> None:
    body = (
        "Given\n\n```\n.\n|-- pkg\n|   |-- a.py\n|   `-- b.py\n`-- r.py\n```\n\n"
        + "```\n$ lintr --version\nlintr 0.4.0\n```\n\n"
        + FILE_BLOCK
        + "\nRunning `lintr check example.py` fails:\n\n"
        + "```\nexample.py:1:11: U100 unused argument 'name'\n```\n"
    )
    case = cli_case(parse_issue("t", body), layout, MANIFESTS)
    assert case is not None
    assert case.args == ("check", "example.py")
    assert case.absent == ("example.py:1:11: U100 unused argument 'name'",)
    # Neither the tree nor the version line is what `lintr check` should print.
    assert case.present == ()
    # A tree drawn with box characters is no output either.
    tree = "```\n.\n├── example.py\n└── b.py\n```\n"
    boxes = FILE_BLOCK + "\nRunning `lintr check example.py` in\n\n" + tree
    assert cli_case(parse_issue("t", boxes), layout, MANIFESTS) is None


@pytest.mark.parametrize(
    ("tree", "files"),
    [
        (".\n`-- pkg/\n    |-- a.py\n    `-- b.py\n", ["pkg/a.py", "pkg/b.py"]),
        (".\n|-- pkg\n|   |-- a.py\n|   `-- b.py\n`-- r.py\n", ["pkg/a.py", "pkg/b.py", "r.py"]),
        (".\n├── pkg\n│   └── a.py\n└── setup.cfg\n", ["pkg/a.py", "setup.cfg"]),
        # Dashes for depth, comments after the names, a directory never entered left out.
        (
            "root/\n|--src/\n|----project/ # no __init__.py\n|------file.py # may be empty\n"
            "|----__init__.py\n|--docs\n",
            ["root/src/project/file.py", "root/src/__init__.py"],
        ),
        # Nothing that climbs out of the project.
        (".\n|-- ../evil.py\n`-- ok.py\n", ["ok.py"]),
    ],
)
def test_listed_files_reads_directory_trees(tree: str, files: list[str]) -> None:
    (block,) = parse_issue("t", f"```\n{tree}```\n").code_blocks
    assert listed_files(block) == files


def test_cli_case_creates_the_files_a_tree_shows(layout: TestLayout) -> None:
    body = (
        "Given (all files empty):\n\n```\nroot_dir/\n|--src/\n|----project/\n"
        "|------file.py\n|----__init__.py\n```\n\nRunning `lintr check src/project` fails:\n\n"
        "```\nsrc\\project\\__init__.py:1:0: F0010: Unable to load file\n```\n"
    )
    case = cli_case(parse_issue("t", body), layout, MANIFESTS)
    assert case is not None
    # The tree is drawn from the directory the command runs in, which the command never names.
    assert case.files == {"src/project/file.py": "", "src/__init__.py": ""}
    _, test = cli_test_body(case)
    assert "(tmp_path / 'src/project/file.py').parent.mkdir(parents=True, exist_ok=True)" in test
    # A Windows path in the output matches the same file printed with slashes.
    (pattern,) = [loose_pattern(line) for line in case.absent]
    assert re.search(pattern, "src/project/__init__.py:1:0: F0010: Unable to load file")


def test_cli_case_takes_the_first_output_called_wrong_the_later_ones_being_variants(
    layout: TestLayout,
) -> None:
    body = (
        FILE_BLOCK
        + "\nRunning `lintr check example.py` fails:\n\n"
        + "```\nexample.py:1:11: U100 unused argument 'name'\n```\n\n"
        + "However, renaming it works:\n\n```\n$ mv example.py ok.py\n$ lintr check ok.py\n```\n\n"
        + "It also breaks `lintr check --strict example.py`:\n\n"
        + "```\nexample.py:1:1: S001 strict mode\n```\n"
    )
    case = cli_case(parse_issue("t", body), layout, MANIFESTS)
    assert case is not None
    assert case.args == ("check", "example.py")
    assert case.absent == ("example.py:1:11: U100 unused argument 'name'",)


def test_cli_case_none_without_a_project_command_output_or_file(layout: TestLayout) -> None:
    other_tool = (
        FILE_BLOCK + "\n```console\n$ flake8 example.py\nexample.py:1:1: F401 unused\n```\n"
    )
    no_output = FILE_BLOCK + "\nI run `lintr check example.py` and it complains.\n"
    no_file = "```console\n$ lintr check example.py\nexample.py:1:11: U100 unused\n```\n"
    for body in (other_tool, no_output, no_file):
        assert cli_case(parse_issue("t", body), layout, MANIFESTS) is None
    # Without the console script the command is nobody's.
    assert cli_case(parse_issue("t", other_tool.replace("flake8", "lintr")), layout, {}) is None


# --- cli_test_body -------------------------------------------------------------------------------

TOOL = Tool("lintr", ("-c", CLI_CODE))
FILES = {"example.py": 'def greet(name="world"):\n    return "hello " + name\n'}


def echo_case(printed: str, absent: tuple[str, ...], present: tuple[str, ...] = ()) -> CliCase:
    """A case whose 'tool' prints ``printed`` and the file it was given, as a real process."""
    code = f"import sys; print({printed!r}); print(open(sys.argv[-1]).read())"
    return CliCase(Tool("echo", ("-c", code)), ("check", "example.py"), FILES, absent, present)


def test_cli_test_body_compiles() -> None:
    case = CliCase(
        TOOL,
        ("check", "--select", "U", "example.py"),
        {"example.py": "print('''it''s \"quoted\"''')\n", "b.py": "x = '\\n'\n"},
        ("example.py:1:11: U100 unused argument 'name'",),
        ("All checks passed!",),
    )
    imports, body = cli_test_body(case, timeout_s=30)
    assert imports == ["import re", "import subprocess", "import sys"]
    source = (
        "\n".join(imports)
        + "\n\ndef test_cli(tmp_path):\n"
        + "\n".join("    " + line for line in body.split("\n"))
    )
    compile(source, "test_cli.py", "exec")
    assert "timeout=30" in body and "cwd=tmp_path" in body
    # The sandbox's interpreter is the one with the project installed.
    assert "[sys.executable, '-c', 'import sys; from lintr.cli import main as main;" in body


def run_body(case: CliCase, tmp_path: Path) -> None:
    imports, body = cli_test_body(case, timeout_s=60)
    exec("\n".join([*imports, body]), {"tmp_path": tmp_path})


def test_cli_test_body_fails_while_the_wrong_line_is_printed(tmp_path: Path) -> None:
    case = echo_case(
        "example.py:1:11: U100 unused argument 'name'",
        absent=("/home/me/example.py:1:11: U100 unused argument 'name'",),
    )
    with pytest.raises(AssertionError, match="the output still shows"):
        run_body(case, tmp_path)
    assert (tmp_path / "example.py").read_text() == FILES["example.py"]


def test_cli_test_body_passes_once_the_output_is_right(tmp_path: Path) -> None:
    case = echo_case(
        "All checks passed!",
        absent=("example.py:1:11: U100 unused argument 'name'",),
        present=("All checks passed!",),
    )
    run_body(case, tmp_path)


def test_cli_test_body_fails_when_the_right_line_is_missing(tmp_path: Path) -> None:
    case = echo_case("Nothing to check.", absent=("U100",), present=("All checks passed!",))
    with pytest.raises(AssertionError, match="the output lacks"):
        run_body(case, tmp_path)


# --- text piped into a command --------------------------------------------------------------------

PIPED_BODY = """\
## Observed Behaviour
```console
(.venv) ?master ~/src/lintr> echo "select id from tbl;;" | lintr check -
Traceback (most recent call last):
  File "/home/me/lintr/cli.py", line 12, in main
    parse(sys.stdin.read())
RuntimeError: Dropped elements in sequence matching! 'select id from tbl;;' != ';'
```
## Steps to Reproduce
```console
echo "select id from tbl;;" | lintr check -
```
"""


@pytest.mark.parametrize(
    ("command", "split"),
    [
        ("lintr check -x a.py", (["lintr", "check", "-x", "a.py"], None)),
        ("echo 'select 1;;' | lintr check -", (["lintr", "check", "-"], "select 1;;\n")),
        ('echo "a  b" c | lintr -', (["lintr", "-"], "a  b c\n")),
        # What the test could not run as the shell would: a redirect, a second pipe, a quote.
        ("lintr check a.py > out.txt", None),
        ("echo a | lintr - | grep E", None),
        ("lintr 'open", None),
    ],
)
def test_split_command_reads_the_text_echo_pipes_in(
    command: str, split: tuple[list[str], str | None] | None
) -> None:
    assert split_command(command) == split


def test_cli_case_a_crash_on_piped_text_behind_a_git_prompt(layout: TestLayout) -> None:
    case = cli_case(parse_issue("Dropped elements", PIPED_BODY), layout, MANIFESTS)
    assert case == CliCase(
        tool=Tool("lintr", ("-c", CLI_CODE)),
        args=("check", "-"),
        files={},
        absent=(
            "RuntimeError: Dropped elements in sequence matching! 'select id from tbl;;' != ';'",
        ),
        present=(),
        stdin="select id from tbl;;\n",
    )


def test_cli_test_body_writes_the_piped_text_to_the_commands_input(tmp_path: Path) -> None:
    code = "import sys; print(sys.stdin.read().upper())"
    case = CliCase(Tool("up", ("-c", code)), (), {}, ("SELECT 1;;",), (), stdin="select 1;;\n")
    with pytest.raises(AssertionError, match="the output still shows"):
        run_body(case, tmp_path)
    run_body(
        CliCase(case.tool, (), {}, ("DROP TABLE",), ("SELECT 1;;",), stdin="select 1;;\n"), tmp_path
    )


# --- a test module and the runner's crash, with no command ---------------------------------------

RUNNER_ISSUE = """\
Minimal code to reproduce the issue:
```python
class SomeClass:
    def __repr__(self):
        raise
def test():
    SomeClass().attr
```
Session traceback:
```
platform linux -- Python 3.8.1, lintr-5.4.1
test_repr.py::test
INTERNALERROR> Traceback (most recent call last):
INTERNALERROR>   File "/usr/lib/lintr/main.py", line 191, in wrap_session
INTERNALERROR>     raise RuntimeError("No active exception to reraise")
INTERNALERROR> RuntimeError: No active exception to reraise

=========== no tests ran in 0.09s ===========
```
"""


def test_cli_case_a_test_module_and_the_crash_its_runner_printed(layout: TestLayout) -> None:
    case = cli_case(
        parse_issue("INTERNALERROR when __repr__ raises", RUNNER_ISSUE), layout, MANIFESTS
    )
    assert case is not None
    assert case.tool.name == "lintr" and case.args == ("test_repr.py",)
    assert list(case.files) == ["test_repr.py"] and "def test():" in case.files["test_repr.py"]
    assert case.absent == ("INTERNALERROR> RuntimeError: No active exception to reraise",)
    assert case.at_line_start
    # Code that defines no tests, or output that names no tool of the project, is no such case.
    no_tests = RUNNER_ISSUE.replace("def test():", "def check():")
    other_runner = RUNNER_ISSUE.replace("lintr-5.4.1", "nose-1.0")
    for body in (no_tests, other_runner):
        assert cli_case(parse_issue("t", body), layout, MANIFESTS) is None


def _printing(text: str) -> Tool:
    return Tool("echo", ("-c", f"print({text!r})"))


def test_a_runner_crash_line_must_go_while_the_same_error_may_fail_a_test(tmp_path: Path) -> None:
    line = "INTERNALERROR> RuntimeError: No active exception to reraise"
    crashed = CliCase(_printing(line), (), {}, (line,), (), at_line_start=True)
    with pytest.raises(AssertionError, match="the output still shows"):
        run_body(crashed, tmp_path)
    # Fixed: the runner reports the test's failure, with the same exception inside it.
    failed = CliCase(_printing(f"E   >  {line}"), (), {}, (line,), (), at_line_start=True)
    run_body(failed, tmp_path)


@pytest.mark.parametrize(
    "line",
    [
        "$",
        ">>>",
        "Python 3.10.2 (main, Feb  2 2022, 06:19:27) [Clang 13.0.0 (clang-1300.0.29.3)] on darwin",
        "run at 2022-02-02 06:19:27",
        "<Gizmo object at 0x7f3a2c1d9e80>",
    ],
)
def test_lines_only_the_reporters_machine_prints_are_not_asserted(line: str) -> None:
    assert not says_something(line)


@pytest.mark.parametrize(
    "line",
    [
        "a.py:1:0: C0114: Missing module docstring (missing-module-docstring)",
        "ValueError: bad escape \\p at position 1",
        "SKIPPED [1] test_it.py:3: unconditional skip",
        r"C:\Users\jane\proj\a.py:1:0: C0114: Missing module docstring",
    ],
)
def test_lines_about_the_project_are_asserted(line: str) -> None:
    assert says_something(line)
