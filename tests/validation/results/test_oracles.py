"""What a test checks, read from its source: expected, crash or weak, and its words."""

from __future__ import annotations

import pytest

from reprobot.validation.results.oracles import OracleKind, module_oracles, oracle_of

MODULE = """
import pytest

def test_weak_membership():
    result = median([1, 2, 3, 4])
    assert '3' not in (str(result), repr(result)), 'still'

def test_expected_value():
    result = median([1, 2, 3, 4])
    assert result == pytest.approx(2.5)

def test_runs_only():
    median([])

def test_expected_exception():
    with pytest.raises(ValueError, match="empty"):
        median([])

def test_strongest_wins():
    assert median([1]) != 0
    assert median([1]) == 1

def test_negated():
    assert not median([1, 2]) == 2

def helper():
    assert False

class TestUnittestStyle:
    def test_not_equal(self):
        self.assertNotEqual(median([1, 2]), 2)

    def test_allclose(self):
        np.testing.assert_allclose(median([1.0, 2.0]), 1.5)

    def test_nested_function_does_not_count(self):
        def check():
            assert median([1]) == 1
        median([1])
"""


@pytest.mark.parametrize(
    ("test", "kind", "assertion"),
    [
        (
            "test_weak_membership",
            OracleKind.WEAK,
            "'3' not in (str(median([1, 2, 3, 4])), repr(median([1, 2, 3, 4])))",
        ),
        ("test_expected_value", OracleKind.EXPECTED, "median([1, 2, 3, 4]) == pytest.approx(2.5)"),
        ("test_runs_only", OracleKind.CRASH, ""),
        (
            "test_expected_exception",
            OracleKind.EXPECTED,
            "pytest.raises(ValueError, match='empty')",
        ),
        ("test_strongest_wins", OracleKind.EXPECTED, "median([1]) == 1"),
        ("test_negated", OracleKind.WEAK, "not median([1, 2]) == 2"),
        (
            "TestUnittestStyle::test_not_equal",
            OracleKind.WEAK,
            "self.assertNotEqual(median([1, 2]), 2)",
        ),
        (
            "TestUnittestStyle::test_allclose",
            OracleKind.EXPECTED,
            "np.testing.assert_allclose(median([1.0, 2.0]), 1.5)",
        ),
        ("TestUnittestStyle::test_nested_function_does_not_count", OracleKind.CRASH, ""),
    ],
)
def test_kinds_and_words(test: str, kind: OracleKind, assertion: str) -> None:
    oracles = module_oracles("tests/test_m.py", MODULE)
    oracle = oracles[f"tests/test_m.py::{test}"]
    assert oracle.kind is kind
    assert oracle.assertion == assertion
    assert oracle.checks


def test_only_tests_are_read_and_parametrised_ids_find_theirs() -> None:
    oracles = module_oracles("t.py", MODULE)
    assert "t.py::helper" not in oracles
    assert (
        oracle_of("t.py::test_expected_value[1-2]", oracles) is oracles["t.py::test_expected_value"]
    )
    assert oracle_of("t.py::test_unknown", oracles) is None


@pytest.mark.parametrize(
    "source",
    [
        "def test_x(:\n",
        "x = " + "(" * 100_000 + ")" * 100_000,
        "\x00",
        "def test_x():\n    return " + "(" * 5000 + ")" * 5000,
        "def test_x():\n    pass\n" * 200_000,
    ],
    ids=["syntax", "deep-module", "nul", "deep-test", "huge"],
)
def test_sources_that_cannot_be_read_give_no_oracle(source: str) -> None:
    assert module_oracles("t.py", source) == {}
