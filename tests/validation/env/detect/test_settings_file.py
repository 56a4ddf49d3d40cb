"""The environment settings of ``.github/reprobot.yml``, read on their own."""

from __future__ import annotations

import pytest

from reprobot.validation.env.detect.settings_file import EnvSettings, env_settings_of


def test_environment_settings_are_read_and_other_settings_ignored() -> None:
    text = (
        b"python: 3.9\nsetup_steps:\n  - pip install -e .[test]\n  - pip install trio\n"
        b"labels:\n  reproduced: yes\n"
    )
    settings = env_settings_of(text)
    assert settings.python == "3.9"
    assert settings.setup_steps == ("pip install -e .[test]", "pip install trio")
    assert settings.declares_setup()


@pytest.mark.parametrize(
    "text",
    [
        None,
        b"python: [",  # not YAML
        b"- a list",
        b"\xff\xfe",  # not UTF-8
        b"test_command: make test\n",  # no runner Reprobot reads
        b"python: '3.8'\n",
        b"x" * (64 * 1024 + 1),
    ],
)
def test_a_file_with_errors_counts_as_absent(text: bytes | None) -> None:
    assert env_settings_of(text) == EnvSettings()
