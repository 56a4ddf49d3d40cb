"""The benchmark dataset's pure conversions, on small hand-made records (no Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprobot.bench.dataset import (
    DatasetError,
    SpecTable,
    env_spec_for,
    load_env_specs,
    load_instances,
    merge_spec_tables,
    parse_id_list,
    parse_instance,
    pytest_test_command,
    scm_pretend_version,
    to_env_spec,
)
from reprobot.bench.test_ids import combined_outcome, defined_tests, fails, map_test_ids
from reprobot.validation.results.testrun import Outcome

TEST_PATCH = """\
diff --git a/pkg/tests/test_things.py b/pkg/tests/test_things.py
--- a/pkg/tests/test_things.py
+++ b/pkg/tests/test_things.py
@@ -1,2 +1,5 @@
 def test_old():
     pass
+
+def test_new():
+    assert 1
diff --git a/data/sample.toml b/data/sample.toml
new file mode 100644
--- /dev/null
+++ b/data/sample.toml
@@ -0,0 +1 @@
+x = 1
"""


def record(**overrides: object) -> dict[str, object]:
    base: dict[str, object] = {
        "instance_id": "acme__widgets-7",
        "repo": "acme/widgets",
        "base_commit": "a" * 40,
        "environment_setup_commit": "b" * 40,
        "version": "1.2",
        "patch": "",
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": '["test_new"]',
        "PASS_TO_PASS": json.dumps(["test_old"]),
    }
    base.update(overrides)
    return base


def test_instance_decodes_json_encoded_id_lists() -> None:
    instance = parse_instance(record())
    assert instance.fail_to_pass == ("test_new",)
    assert instance.pass_to_pass == ("test_old",)
    assert instance.test_files == ("pkg/tests/test_things.py",)


def test_instance_without_setup_commit_uses_base_commit() -> None:
    instance = parse_instance(record(environment_setup_commit=None))
    assert instance.environment_setup_commit == "a" * 40


def test_malformed_records_raise() -> None:
    with pytest.raises(DatasetError):
        parse_id_list("[not json")
    with pytest.raises(DatasetError):
        parse_id_list('{"a": 1}')
    bad = record()
    del bad["repo"]
    with pytest.raises(DatasetError):
        parse_instance(bad)


def test_load_instances_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(record()) + "\n\n" + json.dumps(record(instance_id="x-1")) + "\n")
    assert [i.instance_id for i in load_instances(path)] == ["acme__widgets-7", "x-1"]


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


def test_defined_tests_lists_functions_and_methods() -> None:
    source = "def test_a():\n    pass\n\nclass TestB:\n    def test_c(self):\n        pass\n"
    assert defined_tests(source) == ["test_a", "TestB::test_c"]
    assert defined_tests("def test_x(:\n  pass\ndef test_y():\n") == ["test_x", "test_y"]


SOURCES = {
    "pkg/tests/test_things.py": "def test_old():\n    pass\n\ndef test_new():\n    assert 1\n",
    "pkg/tests/test_more.py": "class TestMore:\n    def test_new(self):\n        pass\n",
}
FILES = {*SOURCES, "pkg/tests/test_other.py"}


def test_node_ids_pass_through_when_their_file_exists() -> None:
    mapping = map_test_ids(
        ["pkg/tests/test_other.py::TestK::test_p[1-2]", "pkg/tests/gone.py::test_q"],
        SOURCES,
        FILES,
    )
    assert mapping.node_ids == {
        "pkg/tests/test_other.py::TestK::test_p[1-2]": (
            "pkg/tests/test_other.py::TestK::test_p[1-2]",
        )
    }
    assert list(mapping.unmappable) == ["pkg/tests/gone.py::test_q"]


def test_bare_names_match_functions_in_the_patched_files() -> None:
    mapping = map_test_ids(["test_old", "test_new", "test_absent", "test_old[x]"], SOURCES, FILES)
    assert mapping.node_ids["test_old"] == ("pkg/tests/test_things.py::test_old",)
    assert mapping.node_ids["test_new"] == (
        "pkg/tests/test_more.py::TestMore::test_new",
        "pkg/tests/test_things.py::test_new",
    )
    assert mapping.node_ids["test_old[x]"] == ("pkg/tests/test_things.py::test_old[x]",)
    assert "test_absent" in mapping.unmappable
    assert mapping.selection[0] == "pkg/tests/test_things.py::test_old"
    assert len(mapping.selection) == len(set(mapping.selection))


def test_console_fragments_are_unmappable_not_dropped() -> None:
    junk = ["[100%]", "[", "=====", "PASSED foo"]
    mapping = map_test_ids(["test_old", *junk], SOURCES, FILES)
    assert set(mapping.unmappable) == set(junk)
    assert list(mapping.node_ids) == ["test_old"]


def test_id_cut_at_a_space_selects_its_function_and_matches_by_prefix() -> None:
    cut = 'pkg/tests/test_other.py::test_p[f("a",'
    mapping = map_test_ids([cut], SOURCES, FILES)
    assert mapping.node_ids[cut] == ("pkg/tests/test_other.py::test_p",)
    outcomes = {
        'pkg/tests/test_other.py::test_p[f("a", "b")-1]': Outcome.PASSED,
        'pkg/tests/test_other.py::test_p[f("a", "b", )-1]': Outcome.FAILED,
        'pkg/tests/test_other.py::test_p[f("a",)-1]': Outcome.ERROR,
    }
    assert mapping.outcome(cut, outcomes) is Outcome.FAILED
    assert mapping.outcome(cut, {}) is Outcome.MISSING


def test_outcome_of_an_id_is_the_worst_of_its_nodes() -> None:
    mapping = map_test_ids(["test_new"], SOURCES, FILES)
    both_pass = dict.fromkeys(mapping.node_ids["test_new"], Outcome.PASSED)
    assert mapping.outcome("test_new", both_pass) is Outcome.PASSED
    one_missing = {"pkg/tests/test_things.py::test_new": Outcome.PASSED}
    assert mapping.outcome("test_new", one_missing) is Outcome.MISSING
    assert combined_outcome([Outcome.SKIPPED, Outcome.PASSED]) is Outcome.SKIPPED
    assert combined_outcome([]) is Outcome.MISSING
    assert fails(Outcome.MISSING)
    assert fails(Outcome.ERROR)
    assert not fails(Outcome.SKIPPED)
