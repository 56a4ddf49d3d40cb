"""Instance test ids resolved to node ids, on small hand-made sources (no Docker)."""

from __future__ import annotations

from reprobot.bench.data.test_ids import combined_outcome, defined_tests, fails, map_test_ids
from reprobot.validation.results.testrun import Outcome


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
