"""The harness's environment table converted without conda."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprobot.bench.envs.harness_table import (
    conda_requirement,
    exported_environment,
    harness_record,
    is_harness_document,
)
from reprobot.bench.envs.spec_table import default_overlay, env_spec_for, load_env_specs

PYTHONS = {"3.6": "3.9", "3.10": "3.9"}

# Records in the shape of harness_specs.json (made up here; the real table is benchmark data).
TABLE = {
    "owner/lib": {
        "1.0": {
            "python": "3.6",
            "packages": "numpy=1.16 scipy",
            "pip_packages": ["pytest==3.3.1"],
            "install": "python -m pip install -e .[test]",
            "pre_install": ["sed -i 's/a/b/' setup.py"],
            "eval_commands": ["export LANG=en_US.UTF-8", "locale-gen"],
            "test_cmd": "pytest -rA",
            "requirements_paths": [],
            "environment_yml_paths": [],
        },
        "2.0": {
            "python": "3.10",
            "packages": "environment.yml",
            "environment_yml_paths": ["ci/environment.yml", "environment.yml"],
            "pip_packages": ["numpy==1.23.0"],
            "install": "python -m pip install -e .",
            "test_cmd": "pytest",
        },
        "3.0": {
            "python": "3.11",
            "packages": "requirements.txt",
            "requirements_paths": ["requirements/dev.txt"],
            "install": "python -m pip install -e .",
            "test_cmd": "tox -epy39 -v --",
        },
    }
}


def test_a_harness_document_is_told_from_an_env_specs_document() -> None:
    assert is_harness_document(TABLE)
    assert not is_harness_document({"specs": {"owner/lib": {"1.0": {"python": "3.9"}}}})
    assert not is_harness_document({"owner/lib": {"1.0": {"python": "3.9"}}})


@pytest.mark.parametrize(
    ("word", "requirement"),
    [
        ("numpy", "numpy"),
        ("numpy=1.16", "numpy==1.16"),
        ("numpy==1.16", "numpy==1.16"),
        ("numpy=1.16=py36_0", "numpy==1.16"),
        ("setuptools>=40", "setuptools>=40"),
        ("pytables", "tables"),
    ],
)
def test_conda_words_become_pip_requirements(word: str, requirement: str) -> None:
    assert conda_requirement(word, {"pytables": "tables"}) == requirement


def test_only_exports_become_environment() -> None:
    env = exported_environment(["export LANG=en_US.UTF-8", "locale-gen", "export Q='a b'"])
    assert env == {"LANG": "en_US.UTF-8", "Q": "a b"}


def test_an_old_python_is_substituted_and_says_why() -> None:
    record = harness_record(TABLE["owner/lib"]["1.0"], PYTHONS, {})
    assert record["python"] == "3.9"
    assert record["notes"] == [
        "the harness runs Python 3.6; the nearest Python these sandboxes have is 3.9"
    ]
    assert record["pip_packages"] == ["numpy==1.16", "scipy", "pytest==3.3.1"]
    assert record["pre_install"] == ["sed -i 's/a/b/' setup.py"]
    assert record["env"] == {"LANG": "en_US.UTF-8"}


def test_files_named_by_packages_become_requirements() -> None:
    yml = harness_record(TABLE["owner/lib"]["2.0"], PYTHONS, {})
    assert yml["binary_requirements"] == ["ci/environment.yml", "environment.yml"]
    assert yml["requirements"] == []
    txt = harness_record(TABLE["owner/lib"]["3.0"], PYTHONS, {})
    assert txt["requirements"] == ["requirements/dev.txt"]
    assert txt["python"] == "3.11" and txt["notes"] == []


def test_a_harness_file_loads_as_env_specs(tmp_path: Path) -> None:
    path = tmp_path / "harness_specs.json"
    path.write_text(json.dumps(TABLE))
    table = load_env_specs(path, default_overlay())
    spec = env_spec_for(table, "owner/lib", "1.0")
    assert spec.python == "3.9"
    assert spec.pre_install == ("sed -i 's/a/b/' setup.py",)
    assert spec.notes and "3.6" in spec.notes[0]
    # A runner other than pytest is replaced by pytest, which writes the report.
    assert env_spec_for(table, "owner/lib", "3.0").test_cmd.startswith("pytest")
    assert env_spec_for(table, "owner/lib", "2.0").binary_requirements == (
        "ci/environment.yml",
        "environment.yml",
    )


def test_fields_added_later_hash_only_when_set() -> None:
    from reprobot.validation.env.envspec import EnvSpec

    plain = EnvSpec(python="3.9", install="pip install -e .")
    assert "notes" not in plain.canonical_json()
    assert "system_packages" not in plain.canonical_json()
    noted = plain.model_copy(update={"notes": ("why",)})
    assert noted.canonical_json() != plain.canonical_json()


def test_system_packages_must_be_debian_names() -> None:
    from pydantic import ValidationError

    from reprobot.validation.env.envspec import EnvSpec

    assert EnvSpec(system_packages=("g++", "gfortran", "libhdf5-dev")).system_packages
    with pytest.raises(ValidationError):
        EnvSpec(system_packages=("gcc; rm -rf /",))
