import pytest

from durations import format_duration, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86400)])
def test_single_unit(text, seconds):
    assert parse_duration(text) == seconds


def test_plain_number_is_seconds():
    assert parse_duration("42") == 42


def test_unknown_unit():
    with pytest.raises(ValueError, match="unknown unit"):
        parse_duration("3w")


def test_format():
    assert format_duration(5400) == "1h30m"
    assert format_duration(0) == "0s"
