"""Test layout of a tree given its file list, and where a new reproducing test goes."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.report import IssueReport, parse_issue
from reprobot.generation.repo.test_layout import (
    detect_layout,
    is_test_file,
    issue_modules,
    new_test_path,
    pytest_list_setting,
    python_files_setting,
    related_test_files,
    words,
)

# --- detect_layout -------------------------------------------------------------------------------


def test_detect_layout_of_a_src_layout() -> None:
    layout = detect_layout(
        [
            "pyproject.toml",
            "src/geo/__init__.py",
            "src/geo/core.py",
            "src/geo/shapes/__init__.py",
            "src/geo/shapes/polygon.py",
            "src/geo/shapes/2d-helpers.py",
            "src/geo/tests/test_inner.py",
            "tests/__init__.py",
            "tests/conftest.py",
            "tests/test_core.py",
            "tests/test_grid.py",
            "tests/shapes/test_polygon.py",
            "tests/helpers.py",
        ]
    )
    assert layout.packages == ("geo",)
    assert layout.modules == {
        "geo": "src/geo/__init__.py",
        "geo.core": "src/geo/core.py",
        "geo.shapes": "src/geo/shapes/__init__.py",
        "geo.shapes.polygon": "src/geo/shapes/polygon.py",
    }
    assert layout.test_files == (
        "src/geo/tests/test_inner.py",
        "tests/shapes/test_polygon.py",
        "tests/test_core.py",
        "tests/test_grid.py",
    )
    # Most test files first, then by name.
    assert layout.test_dirs == ("tests", "src/geo/tests", "tests/shapes")
    assert layout.main_dir == "tests"


def test_detect_layout_of_a_flat_layout_with_tests_inside_the_package() -> None:
    layout = detect_layout(
        [
            "setup.py",
            "geo/__init__.py",
            "geo/core.py",
            "geo/tests/__init__.py",
            "geo/tests/test_core.py",
            "geo/tests/test_more.py",
            "testing/__init__.py",
            "testing/test_plugin.py",
            "tests/test_y.py",
        ]
    )
    # Directories named for tests are no packages of the code under test.
    assert layout.packages == ("geo",)
    assert layout.test_dirs == ("geo/tests", "testing", "tests")
    assert "geo.tests" in layout.modules and "testing" not in layout.modules


def test_detect_layout_of_a_single_module_project() -> None:
    layout = detect_layout(
        ["requests.py", "setup.py", "conftest.py", "noxfile.py", "test_requests.py", "README.md"]
    )
    assert layout.packages == ("requests",)
    assert layout.modules == {"requests": "requests.py"}
    assert layout.test_files == ("test_requests.py",)
    assert layout.test_dirs == ("",)


def test_detect_layout_skips_docs_examples_and_hidden_dirs() -> None:
    layout = detect_layout(
        [
            "geo/__init__.py",
            "docs/conf.py",
            "docs/test_docs.py",
            "examples/test_example.py",
            "benchmarks/test_speed.py",
            ".github/scripts/test_release.py",
            "build/lib/geo/__init__.py",
            "tests/data/test_fixture_file.py",
            "tests/test_geo.py",
        ]
    )
    assert layout.test_files == ("tests/test_geo.py",)
    assert layout.packages == ("geo",)
    assert layout.modules == {"geo": "geo/__init__.py"}


def test_detect_layout_without_tests() -> None:
    layout = detect_layout(["geo/__init__.py"])
    assert (layout.test_files, layout.test_dirs, layout.main_dir) == ((), (), "tests")


def test_detect_layout_with_custom_patterns() -> None:
    layout = detect_layout(["geo/__init__.py", "t/check_geo.py", "t/test_old.py"], ("check_*.py",))
    assert layout.test_files == ("t/check_geo.py",)
    assert "t.test_old" not in layout.modules  # t/ is no package


def test_detect_layout_leaves_out_what_pytest_does_not_collect() -> None:
    files = [
        "astropy/__init__.py",
        "astropy/cosmology/tests/test_core.py",
        # A fixture package kept inside a test folder: data, not the project's tests.
        "astropy/cosmology/tests/mypackage/io/tests/test_io.py",
        "sympy/testing/tests/test_pytest.py",
        "testing/test_main.py",
        "testing/example_scripts/issue_519.py",
        "testing/example_scripts/acceptance/test_fixture_mock_integration.py",
        "testing/python/test_collect.py",
    ]
    layout = detect_layout(files, norecurse=("testing/example_scripts", "*.egg"))
    assert layout.test_files == (
        "astropy/cosmology/tests/test_core.py",
        "sympy/testing/tests/test_pytest.py",
        "testing/python/test_collect.py",
        "testing/test_main.py",
    )
    assert "testing/example_scripts/acceptance/test_fixture_mock_integration.py" in (
        detect_layout(files).test_files
    )
    assert detect_layout(files, norecurse=("python",)).test_files[-1] == "testing/test_main.py"
    config = {"tox.ini": "[pytest]\nnorecursedirs = testing/example_scripts .git\n"}
    assert pytest_list_setting(config, "norecursedirs") == ("testing/example_scripts", ".git")
    assert pytest_list_setting(config, "testpaths") == ()


# --- python_files_setting ------------------------------------------------------------------------


DEFAULTS = ("test_*.py", "*_test.py")
INI = "[pytest]\npython_files = {}\n"
SETTINGS = [
    ({"pytest.ini": INI.format("check_*.py test_*.py")}, ("check_*.py", "test_*.py")),
    (
        {"pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["check_*.py", "*_spec.py"]'},
        ("check_*.py", "*_spec.py"),
    ),
    ({"tox.ini": "[tox]\nenvlist = py311\n\n" + INI.format("tests.py")}, ("tests.py",)),
    ({"setup.cfg": "[tool:pytest]\npython_files = *_tests.py\n"}, ("*_tests.py",)),
    ({"pytest.ini": INI.format("testing/python/*.py")}, ("testing/python/*.py",)),
    # The first file that sets it wins, in pytest's order of configuration files.
    ({"pytest.ini": "[pytest]\naddopts = -q\n", "tox.ini": INI.format("t_*.py")}, ("t_*.py",)),
    ({"pyproject.toml": "[tool.black]\nline-length = 100\n"}, DEFAULTS),
    ({}, DEFAULTS),
]


@pytest.mark.parametrize(("manifests", "patterns"), SETTINGS)
def test_python_files_setting(manifests: dict[str, str], patterns: tuple[str, ...]) -> None:
    assert python_files_setting(manifests) == patterns


@pytest.mark.parametrize(
    "manifests",
    [
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n"
            'python_files = [\n    "test_*.py",\n    "check_*.py",\n]\n'
        },
        {"tox.ini": "[pytest]\npython_files =\n    test_*.py\n    check_*.py\n"},
    ],
)
def test_python_files_setting_over_several_lines(manifests: dict[str, str]) -> None:
    assert python_files_setting(manifests) == ("test_*.py", "check_*.py")


# --- is_test_file --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_core.py", True),
        ("pkg/core_test.py", True),
        ("test_top.py", True),
        ("tests/conftest.py", False),
        ("tests/helpers.py", False),
        ("tests/testcore.py", False),
        ("tests/test_core.pyc", False),
        ("tests/test_data.json", False),
    ],
)
def test_is_test_file_default_patterns(path: str, expected: bool) -> None:
    assert is_test_file(path) is expected


def test_is_test_file_patterns_with_a_directory() -> None:
    patterns = ("testing/python/*.py",)
    assert is_test_file("testing/python/collect.py", patterns)
    assert is_test_file("repo/testing/python/collect.py", patterns)
    assert not is_test_file("testing/other/collect.py", patterns)
    assert not is_test_file("testing/python/data.txt", patterns)


# --- related_test_files --------------------------------------------------------------------------

FLAT_FILES = [
    "geo/__init__.py",
    "geo/core.py",
    "geo/units.py",
    "geo/shapes/__init__.py",
    "geo/shapes/polygon.py",
    "tests/test_core.py",
    "tests/test_units.py",
    "tests/test_misc.py",
    "tests/shapes/test_circle.py",
    "tests/shapes/test_polygon.py",
]
TRACEBACK_ISSUE = """\
```
Traceback (most recent call last):
  File "repro.py", line 3, in <module>
    p.area()
  File "/home/u/.venv/lib/python3.11/site-packages/geo/shapes/polygon.py", line 88, in area
    return _shoelace(self.points)
ZeroDivisionError: division by zero
```
"""


def traceback_issue() -> IssueReport:
    return parse_issue("Area of a degenerate shape crashes", TRACEBACK_ISSUE)


def test_words_of_identifiers_and_paths() -> None:
    assert words("parse_durationError in src/geo/HTTPAdapter.py") == {
        "parse",
        "duration",
        "error",
        "src",
        "geo",
        "httpadapter",
    }


def test_related_test_files_by_the_module_of_a_traceback_frame() -> None:
    layout = detect_layout(FLAT_FILES)
    assert issue_modules(traceback_issue(), layout) == ["geo/shapes/polygon.py"]
    related = related_test_files(traceback_issue(), layout)
    assert related[0] == "tests/shapes/test_polygon.py"


def test_related_test_files_by_a_traceback_frame_in_a_src_layout() -> None:
    layout = detect_layout(["src/" + f if f.startswith("geo/") else f for f in FLAT_FILES])
    assert issue_modules(traceback_issue(), layout) == ["src/geo/shapes/polygon.py"]
    assert related_test_files(traceback_issue(), layout)[0] == "tests/shapes/test_polygon.py"


def test_related_test_files_by_words_of_the_title() -> None:
    layout = detect_layout(FLAT_FILES)
    issue = parse_issue("Converting units loses precision", "Feet to metres drops digits.")
    assert related_test_files(issue, layout) == ["tests/test_units.py"]


def test_related_test_files_by_the_issue_names_their_code_uses() -> None:
    layout = detect_layout(FLAT_FILES)
    issue = parse_issue("Something odd", "Calling `convert_length(3, 'm')` gives 0.")
    assert related_test_files(issue, layout) == []
    texts = {
        "tests/test_misc.py": "from geo import convert_length\n\n\ndef test_it():\n"
        "    assert convert_length(1, 'km') == 1000\n",
        "tests/test_core.py": "def test_core():\n    pass\n",
    }
    assert related_test_files(issue, layout, texts=texts) == ["tests/test_misc.py"]


def test_related_test_files_limit_and_no_tests() -> None:
    layout = detect_layout(FLAT_FILES)
    assert len(related_test_files(traceback_issue(), layout, limit=1)) == 1
    assert related_test_files(traceback_issue(), detect_layout(["geo/__init__.py"])) == []


# --- new_test_path -------------------------------------------------------------------------------


def test_new_test_path_next_to_the_most_related_test() -> None:
    layout = detect_layout(FLAT_FILES)
    assert new_test_path(traceback_issue(), layout, "degenerate_area") == (
        "tests/shapes/test_degenerate_area.py"
    )


def test_new_test_path_in_the_main_dir_without_a_related_test() -> None:
    layout = detect_layout(FLAT_FILES)
    issue = parse_issue("Something odd", "It crashes.")
    assert new_test_path(issue, layout, "odd") == "tests/test_odd.py"
    assert new_test_path(issue, detect_layout(["geo.py"]), "odd") == "tests/test_odd.py"


def test_new_test_path_takes_a_free_name() -> None:
    layout = detect_layout(FLAT_FILES)
    issue = traceback_issue()
    # An existing test file of the same name is never overwritten.
    assert new_test_path(issue, layout, "polygon") == "tests/shapes/test_polygon_2.py"
    taken = ["tests/shapes/test_area.py", "tests/shapes/test_area_2.py"]
    assert new_test_path(issue, layout, "area", taken) == "tests/shapes/test_area_3.py"


def test_new_test_path_with_given_related_tests() -> None:
    layout = detect_layout(FLAT_FILES)
    issue = traceback_issue()
    assert new_test_path(issue, layout, "x", related=["test_top.py"]) == "test_x.py"
    assert new_test_path(issue, layout, "x", related=[]) == "tests/test_x.py"
