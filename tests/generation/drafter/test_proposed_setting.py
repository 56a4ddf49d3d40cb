"""A module constant whose value an issue shows and proposes to change."""

from __future__ import annotations

from reprobot.generation.drafter.proposed_setting import (
    ProposedSetting,
    proposed_setting,
    proposed_setting_sources,
)
from reprobot.generation.issue.report import parse_issue
from reprobot.validation.results.oracles import OracleKind, module_oracles

_MODULES = {"tally.log": "src/tally/log.py", "tally": "src/tally/__init__.py"}
_SOURCES = {
    "src/tally/__init__.py": "",
    "src/tally/log.py": (
        'DEFAULT_FORMAT = "%(filename)s %(message)s"\n'
        "DEFAULT_WIDTH = 80\n"
        "if True:\n"
        "    NESTED = 1\n"
        "LEVELS = compute()\n"
    ),
}


def _issue(body: str, title: str = "Improve the default log format") -> ProposedSetting | None:
    return proposed_setting(parse_issue(title, body), _MODULES, _SOURCES)


def test_the_value_shown_beside_the_current_one_is_the_proposal() -> None:
    body = (
        "Currently it is:\n\n"
        '> DEFAULT_FORMAT = "%(filename)s %(message)s"\n\n'
        "The module name would help. Using "
        '`DEFAULT_FORMAT = "%(levelname)s %(name)s %(message)s"` instead:\n'
    )
    assert _issue(body) == ProposedSetting(
        "tally.log",
        "DEFAULT_FORMAT",
        "%(filename)s %(message)s",
        "%(levelname)s %(name)s %(message)s",
    )


def test_the_values_may_come_in_code_blocks() -> None:
    body = (
        "Now:\n```python\nDEFAULT_WIDTH = 80\n```\nbetter:\n```python\nDEFAULT_WIDTH = 100\n```\n"
    )
    setting = _issue(body)
    assert setting is not None and (setting.current, setting.proposed) == (80, 100)


def test_a_reporters_own_settings_never_showing_the_current_value_give_nothing() -> None:
    # A reporter's settings module: neither value is the project's own default.
    body = "```python\nDEFAULT_WIDTH = 120\n```\nand in the other one `DEFAULT_WIDTH = 100`.\n"
    assert _issue(body) is None


def test_two_proposals_or_none_give_nothing() -> None:
    two = "`DEFAULT_WIDTH = 80` now; `DEFAULT_WIDTH = 100` or `DEFAULT_WIDTH = 120`?\n"
    assert _issue(two) is None
    same = "It is `DEFAULT_WIDTH = 80`, which is too narrow.\n"
    assert _issue(same) is None


def test_only_top_level_literal_constants_of_the_code_count() -> None:
    assert _issue("`NESTED = 1` should be `NESTED = 2`\n") is None
    assert _issue("`LEVELS = (1, 2)` should be `LEVELS = (1, 2, 3)`\n") is None


def test_the_test_asserts_the_proposed_value_by_its_kind() -> None:
    setting = ProposedSetting("tally.log", "DEFAULT_WIDTH", 80, 100)
    [source] = proposed_setting_sources(setting)
    assert source.method == "issue-expected"
    assert source.imports == ("from tally.log import DEFAULT_WIDTH",)
    assert "result == 100" in source.body
    body = "\n".join("    " + line for line in source.body.splitlines())
    oracles = module_oracles("tests/test_width.py", f"def test_width():\n{body}\n")
    assert [o.kind for o in oracles.values()] == [OracleKind.EXPECTED]
    assert proposed_setting_sources(None) == []
