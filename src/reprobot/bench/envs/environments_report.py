"""What a benchmark run stood on: which instances ran (and why the others did not, one line
each, per repository), and the environment images it used with what they weigh and which it
built. Pure functions over what each instance's run came to (its image, the cause that kept it
from running, as the job reads its results) and the image cache's records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from reprobot.validation import CachedImage, created_epoch, unique_bytes

_MB = 1024**2


def repo_of(instance_id: str) -> str:
    """``owner__name-123`` → ``owner/name``."""
    owner, _, rest = instance_id.partition("__")
    return f"{owner}/{rest.rsplit('-', 1)[0]}"


def runnable_rows(causes: Mapping[str, str | None]) -> dict[str, dict[str, int]]:
    """Per repository: instances, and how many ran (``causes``: instance id to why it did not
    run, None when it did)."""
    rows: dict[str, dict[str, int]] = {}
    for instance_id, cause in sorted(causes.items()):
        row = rows.setdefault(repo_of(instance_id), {"instances": 0, "runnable": 0})
        row["instances"] += 1
        row["runnable"] += cause is None
    return rows


@dataclass(frozen=True)
class ImageRow:
    """One image a run used: what it adds to its base in MB (None: removed since), the moment
    its packages resolved at, its build time and whether this run made it."""

    tag: str
    mb: int | None
    as_of: str
    build_s: float | None
    built_this_run: bool


@dataclass(frozen=True)
class RepoImages:
    """A repository's images: how many, their MB and their build time."""

    images: int
    mb: int
    build_s: float


@dataclass(frozen=True)
class EnvironmentSummary:
    """The images a run used, their total, how many it built, and per repository."""

    images: tuple[ImageRow, ...]
    total_mb: int
    built: int
    repositories: Mapping[str, RepoImages]

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: report.json's "environments".
        return {
            "images": [asdict(row) for row in self.images],
            "total_mb": self.total_mb,
            "built": self.built,
            "repositories": {repo: asdict(entry) for repo, entry in self.repositories.items()},
        }


def environment_summary(
    environments: Mapping[str, str],
    images: Sequence[CachedImage],
    started_epoch: float,
) -> EnvironmentSummary:
    """The images the run used (``environments``: instance id to its image's tag): each one's
    tag, what it adds to its base in MB, the moment its packages resolved at, how long it took
    to build and whether it was made during this run; their total; how many were built; and per
    repository, its images' disk and build time."""
    by_tag = {c.tag: c for c in images}
    used = sorted(set(environments.values()))
    repos = {tag: repo_of(i) for i, tag in environments.items()}
    rows: list[ImageRow] = []
    for tag in used:
        image = by_tag.get(tag)
        rows.append(
            ImageRow(
                tag=tag,
                mb=round(image.own_bytes / _MB) if image else None,
                as_of=image.as_of if image else "",
                build_s=image.build_s if image else None,
                built_this_run=bool(image and created_epoch(image.created) >= started_epoch),
            )
        )
    per_repo: dict[str, RepoImages] = {}
    for row in rows:
        entry = per_repo.get(repos[row.tag], RepoImages(0, 0, 0.0))
        per_repo[repos[row.tag]] = RepoImages(
            entry.images + 1, entry.mb + (row.mb or 0), entry.build_s + (row.build_s or 0.0)
        )
    present = [by_tag[t] for t in used if t in by_tag]
    return EnvironmentSummary(
        images=tuple(rows),
        total_mb=round(unique_bytes(present) / _MB),
        built=sum(r.built_this_run for r in rows),
        repositories={
            repo: RepoImages(entry.images, entry.mb, round(entry.build_s, 1))
            for repo, entry in sorted(per_repo.items())
        },
    )


def hand_written_pins(overlay: Mapping[str, Any]) -> list[str]:
    """The requirements ``env_overrides.json`` adds by hand (``repo version: requirement``);
    ``overlay`` is that file's JSON document."""
    pins = []
    for repo, versions in sorted((overlay.get("specs") or {}).items()):
        for version, record in sorted(versions.items()):
            for key in ("pip_packages", "replace_pins", "constraints"):
                pins += [f"{repo} {version}: {p}" for p in record.get(key) or []]
    return pins


def runnable_markdown(causes: Mapping[str, str | None]) -> str:
    """The runnable instances per repository, and each other instance with its cause."""
    total = Counter[str]()
    lines = ["## Runnable instances", "", "| repository | instances | runnable |", "|---|---|---|"]
    for repo, row in runnable_rows(causes).items():
        total.update(row)
        lines.append(f"| {repo} | {row['instances']} | {row['runnable']} |")
    share = total["runnable"] / total["instances"] if total["instances"] else 0.0
    lines.append(f"| all | {total['instances']} | {total['runnable']} ({share:.0%}) |")
    lines += ["", "Not runnable, with the cause:", ""]
    for instance_id, cause in sorted(causes.items()):
        if cause:
            lines.append(f"- `{instance_id}`: {cause}")
    return "\n".join(lines) + "\n"


def images_markdown(summary: EnvironmentSummary, pins: Sequence[str] = ()) -> str:
    """The environment images a run used (``environment_summary``), their cost per repository,
    and the requirements still written by hand (``hand_written_pins``)."""
    lines = [
        "## Environment images",
        "",
        f"{len(summary.images)} images, {summary.total_mb} MB beyond the base images; "
        f"{summary.built} built during this run.",
        "",
        "| repository | images | MB | build time |",
        "|---|---|---|---|",
    ]
    for repo, entry in summary.repositories.items():
        lines.append(f"| {repo} | {entry.images} | {entry.mb} | {entry.build_s / 60:.1f} min |")
    lines += [
        "",
        "| image | MB | packages as of | build time | built this run |",
        "|---|---|---|---|---|",
    ]
    for row in summary.images:
        mb = "gone" if row.mb is None else str(row.mb)
        as_of = row.as_of or "newest"
        took = "" if row.build_s is None else f"{row.build_s:.0f} s"
        built = "yes" if row.built_this_run else ""
        lines.append(f"| `{row.tag}` | {mb} | {as_of} | {took} | {built} |")
    lines += ["", f"Requirements written by hand (`env_overrides.json`): {len(pins)}", ""]
    lines += [f"- {pin}" for pin in pins]
    return "\n".join(lines) + "\n"
