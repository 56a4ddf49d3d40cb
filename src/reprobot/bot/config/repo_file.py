"""Per-repository settings from ``.github/reprobot.yml``, read whole, with a message per error."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError, field_validator

from reprobot.validation import CONFIG_PATH, MAX_CONFIG_BYTES, EnvSettings, load_yaml

# GitHub refuses label names longer than 50 characters.
LabelName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=50)]
AuthorAssociation = Literal["OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR"]


class LabelNames(BaseModel):
    """The labels Reprobot puts on reproduced issues and on pull requests it verified."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reproduced: LabelName = "reproduced"
    verified: LabelName = "fix-verified"


class EventSwitches(BaseModel):
    """Which kinds of events Reprobot acts on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    issues: bool = True
    pull_requests: bool = True
    commands: bool = True


class RepoConfig(EnvSettings):
    """The settings a repository may give; every one is optional. The environment's settings
    (Python, setup steps, install and test commands, system packages, warm-up commands) are
    ``EnvSettings``: the detection every path shares reads them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    test_paths: tuple[str, ...] = ()
    labels: LabelNames = LabelNames()
    events: EventSwitches = EventSwitches()
    commands_from: tuple[AuthorAssociation, ...] = ("OWNER", "MEMBER", "COLLABORATOR")
    comment_on_failure: bool = False
    # At a pull request, draft a test for a linked issue that has no reproduction, knowing the
    # change: one that fails on the base for the issue's reason and passes on the head.
    draft_at_pull_request: bool = True

    @field_validator("commands_from", mode="before")
    @classmethod
    def _upper_case(cls, value: Any) -> Any:
        # GitHub spells author associations in capitals; "member" means the same thing.
        if isinstance(value, list | tuple):
            return [v.upper() if isinstance(v, str) else v for v in value]
        return value

    @field_validator("test_paths")
    @classmethod
    def _relative_paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = []
        for raw in value:
            path = raw.strip()
            if not path:
                raise ValueError("a test path is empty")
            if path.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", path):
                raise ValueError(f"{path!r} is not relative to the repository root")
            parts = re.split(r"[\\/]+", path)
            if ".." in parts:
                raise ValueError(f"{path!r} leads out of the repository ('..')")
            cleaned.append("/".join(p for p in parts if p not in ("", ".")) or ".")
        return tuple(cleaned)


@dataclass(frozen=True)
class ConfigResult:
    """The settings in force and what was wrong with the file.

    ``source`` is "file" when the settings come from the file; "default" when there is no
    file or it has errors (then the whole file is ignored).
    """

    config: RepoConfig
    errors: tuple[str, ...]
    source: Literal["file", "default"]


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return _short(out)


def _validation_messages(error: ValidationError, keys: list[object]) -> list[str]:
    """One message per problem, in the order of the settings in the file."""

    def position(item: Any) -> int:
        loc = item["loc"]
        return keys.index(loc[0]) if loc and loc[0] in keys else len(keys)

    messages = []
    for item in sorted(error.errors(), key=position):
        loc = tuple(item["loc"])
        if item["type"] == "extra_forbidden":
            name = _location(loc)
            known = _known_settings(loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            messages.append(f"{CONFIG_PATH}: unknown setting '{name}'{hint}")
            continue
        if item["type"] == "invalid_key":
            found = _short(repr(loc[-1] if loc else None), 40)
            messages.append(f"{CONFIG_PATH}: setting names must be text, found {found}")
            continue
        # Pydantic speaks of tuples; in YAML they are lists.
        message = str(item["msg"]).removeprefix("Value error, ").replace("a valid tuple", "a list")
        value = item.get("input")
        if item["type"] != "value_error" and isinstance(value, str | int | float | bool):
            message += f", found {_short(repr(value), 40)}"
        where = _location(loc)
        messages.append(f"{CONFIG_PATH}: {where}: {message}" if where else message)
    return messages


def _known_settings(parent: tuple[int | str, ...]) -> list[str]:
    models: dict[tuple[int | str, ...], type[BaseModel]] = {
        (): RepoConfig,
        ("labels",): LabelNames,
        ("events",): EventSwitches,
    }
    model = models.get(parent)
    return list(model.model_fields) if model else []


def _yaml_message(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        parts = [p for p in (error.context, error.problem) if p]
        problem = ", ".join(parts) or "not valid YAML"
        return f"{CONFIG_PATH}: line {error.problem_mark.line + 1}: {problem}"
    return f"{CONFIG_PATH}: not valid YAML ({_short(str(error), 200)})"


def _refused(*errors: str) -> ConfigResult:
    return ConfigResult(config=RepoConfig(), errors=tuple(errors), source="default")


def parse_repo_config(text: str | bytes | None) -> ConfigResult:
    """The settings of a ``.github/reprobot.yml`` text (None: the repository has no such file).

    Any error (a file over 64 KiB, text that is not UTF-8, invalid YAML, a top level that is
    not a mapping, an unknown setting, a wrong value) makes the whole file ignored: the result
    holds the defaults and one human-readable message per problem, each starting with the
    file's path. An empty file is a file of defaults, without errors.
    """
    if text is None:
        return ConfigResult(config=RepoConfig(), errors=(), source="default")
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if len(raw) > MAX_CONFIG_BYTES:
        return _refused(
            f"{CONFIG_PATH}: the file is {len(raw)} bytes long; Reprobot reads files of at most "
            f"{MAX_CONFIG_BYTES} bytes"
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            return _refused(f"{CONFIG_PATH}: line {line}: not UTF-8 text")
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        return _refused(_yaml_message(exc))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"the value {_short(repr(data), 40)}"
        return _refused(
            f"{CONFIG_PATH}: expected a mapping of settings (name: value), found {kind}"
        )
    try:
        config = RepoConfig.model_validate(data)
    except ValidationError as exc:
        return _refused(*_validation_messages(exc, list(data)))
    return ConfigResult(config=config, errors=(), source="file")
