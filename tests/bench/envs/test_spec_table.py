"""The environment table's pure conversions, on small hand-made records (no Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprobot.bench.data.instances import DatasetError
from reprobot.bench.envs.spec_table import (
    SpecTable,
    env_spec_for,
    load_env_specs,
    merge_spec_tables,
    pytest_test_command,
    scm_pretend_version,
    to_env_spec,
)


def test_non_pytest_command_becomes_pytest_keeping_assignments() -> None:
    converted = pytest_test_command("FOO='a b' BAR=1 bin/runtests --verbose -C")
    assert converted == "'FOO=a b' BAR=1 pytest -rA"
    assert pytest_test_command("tox -e py39") == "pytest -rA"


@pytest.mark.parametrize(
    "command",
    ["pytest -x", "py.test", "/usr/bin/pytest -rA", "X=1 python -m pytest -q", "python3 -m pytest"],
)
def test_pytest_commands_stay(command: str) -> None:
    assert pytest_test_command(command) == command


def test_scm_version_is_padded_to_three_parts() -> None:
    assert scm_pretend_version("5") == "5.0.0"
    assert scm_pretend_version("5.4") == "5.4.0"
    assert scm_pretend_version("2.0.1") == "2.0.1"


def test_env_spec_conversion() -> None:
    spec = to_env_spec(
        {
            "python": "3.9",
            "pip_packages": ["a==1"],
            "constraints": ["pytest<8"],
            "requirements": ["req/dev.txt"],
            "install": "pip install .",
            "test_cmd": "make test",
            "env": {"X": 1},
            "observed": "free text is ignored",
        },
        "0.3",
    )
    assert spec.python == "3.9"
    assert spec.pip_packages == ("a==1",)
    # Constraints bound every install of the build, the project's own included.
    assert spec.constraints == ("pytest<8",)
    assert spec.requirements == ("req/dev.txt",)
    assert spec.install == "pip install ."
    assert spec.test_cmd == "pytest -rA"
    assert spec.env == {"SETUPTOOLS_SCM_PRETEND_VERSION": "0.3.0", "X": "1"}


def test_env_spec_rejects_unsupported_python() -> None:
    with pytest.raises(DatasetError):
        to_env_spec({"python": "2.7"}, "1.0")


def test_env_spec_takes_known_python_behaviours_and_names_unknown_ones() -> None:
    spec = to_env_spec({"python": "3.9", "python_compat": ["collections-abc-aliases"]}, "1.3")
    assert spec.python_compat == ("collections-abc-aliases",)
    assert to_env_spec({"python": "3.9"}, "1.3").python_compat == ()
    with pytest.raises(DatasetError, match="time-travel"):
        to_env_spec({"python": "3.9", "python_compat": ["time-travel"]}, "1.3")


def test_overlay_extends_lists_and_adds_records(tmp_path: Path) -> None:
    base: SpecTable = {"o/r": {"1.0": {"python": "3.9", "pip_packages": ["a"]}}}
    overlay: SpecTable = {
        "o/r": {"1.0": {"pip_packages": ["b"], "constraints": ["c<2"]}, "2.0": {"python": "3.11"}}
    }
    merged = merge_spec_tables(base, overlay)
    assert merged["o/r"]["1.0"] == {
        "python": "3.9",
        "pip_packages": ["a", "b"],
        "constraints": ["c<2"],
    }
    assert merged["o/r"]["2.0"] == {"python": "3.11"}
    assert base["o/r"]["1.0"]["pip_packages"] == ["a"]

    specs = tmp_path / "specs.json"
    specs.write_text(json.dumps({"about": "x", "specs": base, "observed": {"all": "note"}}))
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"specs": overlay}))
    table = load_env_specs(specs, extra)
    overlaid = env_spec_for(table, "o/r", "1.0")
    assert (overlaid.pip_packages, overlaid.constraints) == (("a", "b"), ("c<2",))
    with pytest.raises(DatasetError):
        env_spec_for(table, "o/r", "9.9")


def test_replace_pins_swaps_the_harness_pin_of_the_same_project() -> None:
    record = {
        "python": "3.9",
        "pip_packages": ["hypothesis==3.44.2", "Py_Yaml==3.12", "numpy==1.16.0"],
        "replace_pins": ["hypothesis>=4,<5", "py-yaml>=5"],
    }
    spec = to_env_spec(record, "1.3")
    assert spec.pip_packages == ("hypothesis>=4,<5", "py-yaml>=5", "numpy==1.16.0")
    with pytest.raises(DatasetError, match="does not pin"):
        to_env_spec({**record, "replace_pins": ["pytest<4"]}, "1.3")
    with pytest.raises(DatasetError, match="not a requirement"):
        to_env_spec({**record, "replace_pins": ["hypothesis=>4"]}, "1.3")
