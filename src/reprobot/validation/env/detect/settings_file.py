"""The environment settings a repository declares in ``.github/reprobot.yml``.

The App reads the whole file (labels, events, ...) in ``bot/config``; its model extends this one,
so that the App, the command line and the benchmark read the environment settings the same way.
Read here on their own (``read_env_settings``), only these keys count and a file with any error
among them counts as absent, as the App ignores a file with errors.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError, field_validator

from reprobot.validation.env.envspec import DebianPackage
from reprobot.validation.env.test_commands import runner_family
from reprobot.validation.source.snapshot import RepoSnapshot

CONFIG_PATH = ".github/reprobot.yml"
MAX_CONFIG_BYTES = 64 * 1024
_FLOAT_TAG = "tag:yaml.org,2002:float"

Command = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]


class _DecimalsAsTextLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that leaves decimal numbers as the text they were written as."""


# YAML reads ``python-version: 3.10`` as the float 3.1; without the float resolver the scalar
# stays the string "3.10", which is what every workflow and settings author means.
_DecimalsAsTextLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _FLOAT_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, except that decimal numbers stay text (``3.10`` → ``"3.10"``).

    Raises ``yaml.YAMLError`` as ``yaml.safe_load`` does.
    """
    # A SafeLoader subclass: it builds plain data only, as yaml.safe_load does.
    return yaml.load(text, Loader=_DecimalsAsTextLoader)


class EnvSettings(BaseModel):
    """What a repository may say of its environment; every setting is optional (None: detect)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    python: Literal["3.9", "3.11", "3.13"] | None = None
    # Commands that set the project up for its tests, run in order in the environment's build
    # (with network), like a coding agent's setup-steps file; they replace the detected install.
    setup_steps: tuple[Command, ...] = ()
    install: Command | None = None  # one shell command; None: detect
    # pytest, or the unittest family: python -m unittest, Django's manage.py test /
    # python -m django test / django-admin test, and a tests/runtests.py on Django.
    test_command: Command | None = None
    # Debian packages the build of the project's extensions needs (g++, gfortran, libxyz-dev);
    # added to what is detected, installed in the environment image only.
    system_packages: tuple[DebianPackage, ...] = ()
    # Commands that fetch what the tests download at start-up (data files, caches), run once
    # in the environment's build with network; the offline runs start with what they fetched.
    warm_commands: tuple[Command, ...] = ()

    @field_validator("python", mode="before")
    @classmethod
    def _number_as_text(cls, value: Any) -> Any:
        # ``python: 3`` is an int; decimals already arrive as the text they were written as.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("test_command")
    @classmethod
    def _reported_runner(cls, value: str | None) -> str | None:
        if value is not None and runner_family(value) is None:
            raise ValueError(
                f"{value!r} is not a runner Reprobot reads outcomes from: use pytest, "
                "python -m unittest, python manage.py test, python -m django test or a "
                "tests/runtests.py on Django"
            )
        return value

    def declares_setup(self) -> bool:
        """Whether the settings say how to install the project."""
        return bool(self.setup_steps or self.install)


NO_SETTINGS = EnvSettings()


def env_settings_of(text: bytes | None) -> EnvSettings:
    """The environment settings of a ``.github/reprobot.yml``'s bytes; the defaults when there
    is none or it cannot be read (too large, not UTF-8, not YAML, not a mapping, a wrong value)."""
    if text is None or len(text) > MAX_CONFIG_BYTES:
        return NO_SETTINGS
    try:
        data = load_yaml(text.decode("utf-8-sig"))
    except (UnicodeDecodeError, yaml.YAMLError):
        return NO_SETTINGS
    if not isinstance(data, dict):
        return NO_SETTINGS
    try:
        return EnvSettings.model_validate(data)
    except ValidationError:
        return NO_SETTINGS


def read_env_settings(snapshot: RepoSnapshot) -> EnvSettings:
    return env_settings_of(snapshot.read_file(CONFIG_PATH))
