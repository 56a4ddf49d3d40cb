"""What a benchmark run stood on: which instances ran (and why the others did not, one line
each, per repository), and the environment images it used with what they weigh and which it
built. Pure functions over the unit results and the image cache's records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from reprobot.validation import CachedImage, created_epoch, unique_bytes

_MB = 1024**2


def repo_of(instance_id: str) -> str:
    """``owner__name-123`` → ``owner/name``."""
    owner, _, rest = instance_id.partition("__")
    return f"{owner}/{rest.rsplit('-', 1)[0]}"


def not_runnable(result: Mapping[str, Any]) -> str | None:
    """Why an instance did not run with a golden test going F→P, in one line; None when it did
    (whether it also succeeded, with no test failing after the fix, is S's business). An error
    first (the environment, the tree, the sandbox), then what the gold runs said."""
    error = result.get("error")
    if error:
        return str(error).strip().splitlines()[0][:300]
    flags = result.get("flags") or {}
    if flags.get("fail_to_pass"):
        return None
    problems = [str(p) for p in result.get("problems") or [] if "golden tests" in str(p)]
    if problems:
        return problems[0].splitlines()[0][:300]
    added = result.get("added") or {}
    base = result.get("base") or {}
    stuck = added.get("F->F") or base.get("F->F") or []
    if stuck:
        return f"golden tests fail after the fix too (F→F), e.g. {stuck[0]}"
    return "golden tests are not F→P (they pass before the fix)"


def runnable_rows(results: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per repository: instances, and how many ran with their golden tests going F→P."""
    rows: dict[str, dict[str, int]] = {}
    for instance_id, result in sorted(results.items()):
        row = rows.setdefault(repo_of(instance_id), {"instances": 0, "runnable": 0})
        row["instances"] += 1
        row["runnable"] += not_runnable(result) is None
    return rows


def environment_summary(
    results: Mapping[str, Mapping[str, Any]],
    images: Sequence[CachedImage],
    started_epoch: float,
) -> dict[str, Any]:
    """The images the run used: each one's tag, what it adds to its base in MB, the moment its
    packages resolved at, how long it took to build and whether it was made during this run;
    their total; how many were built; and per repository, its images' disk and build time."""
    by_tag = {c.tag: c for c in images}
    used = sorted({str(r["environment"]) for r in results.values() if r.get("environment")})
    repos = {str(r["environment"]): repo_of(i) for i, r in results.items() if r.get("environment")}
    rows: list[dict[str, Any]] = []
    for tag in used:
        image = by_tag.get(tag)
        rows.append(
            {
                "tag": tag,
                "mb": round(image.own_bytes / _MB) if image else None,
                "as_of": image.as_of if image else "",
                "build_s": image.build_s if image else None,
                "built_this_run": bool(image and created_epoch(image.created) >= started_epoch),
            }
        )
    per_repo: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = per_repo.setdefault(repos[row["tag"]], {"images": 0, "mb": 0, "build_s": 0.0})
        entry["images"] += 1
        entry["mb"] += row["mb"] or 0
        entry["build_s"] += row["build_s"] or 0.0
    present = [by_tag[t] for t in used if t in by_tag]
    return {
        "images": rows,
        "total_mb": round(unique_bytes(present) / _MB),
        "built": sum(r["built_this_run"] for r in rows),
        "repositories": {
            repo: dict(entry, build_s=round(entry["build_s"], 1))
            for repo, entry in sorted(per_repo.items())
        },
    }


def hand_written_pins(overlay: Mapping[str, Any]) -> list[str]:
    """The requirements ``env_overrides.json`` adds by hand (``repo version: requirement``)."""
    pins = []
    for repo, versions in sorted((overlay.get("specs") or {}).items()):
        for version, record in sorted(versions.items()):
            for key in ("pip_packages", "replace_pins", "constraints"):
                pins += [f"{repo} {version}: {p}" for p in record.get(key) or []]
    return pins


def runnable_markdown(results: Mapping[str, Mapping[str, Any]]) -> str:
    """The runnable instances per repository, and each other instance with its cause."""
    total = Counter[str]()
    lines = ["## Runnable instances", "", "| repository | instances | runnable |", "|---|---|---|"]
    for repo, row in runnable_rows(results).items():
        total.update(row)
        lines.append(f"| {repo} | {row['instances']} | {row['runnable']} |")
    share = total["runnable"] / total["instances"] if total["instances"] else 0.0
    lines.append(f"| all | {total['instances']} | {total['runnable']} ({share:.0%}) |")
    lines += ["", "Not runnable, with the cause:", ""]
    for instance_id, result in sorted(results.items()):
        cause = not_runnable(result)
        if cause:
            lines.append(f"- `{instance_id}`: {cause}")
    return "\n".join(lines) + "\n"


def images_markdown(summary: Mapping[str, Any], pins: Sequence[str] = ()) -> str:
    """The environment images a run used (``environment_summary``), their cost per repository,
    and the requirements still written by hand (``hand_written_pins``)."""
    lines = [
        "## Environment images",
        "",
        f"{len(summary['images'])} images, {summary['total_mb']} MB beyond the base images; "
        f"{summary['built']} built during this run.",
        "",
        "| repository | images | MB | build time |",
        "|---|---|---|---|",
    ]
    for repo, entry in summary.get("repositories", {}).items():
        lines.append(
            f"| {repo} | {entry['images']} | {entry['mb']} | {entry['build_s'] / 60:.1f} min |"
        )
    lines += [
        "",
        "| image | MB | packages as of | build time | built this run |",
        "|---|---|---|---|---|",
    ]
    for row in summary["images"]:
        mb = "gone" if row["mb"] is None else str(row["mb"])
        as_of = row.get("as_of") or "newest"
        took = "" if row.get("build_s") is None else f"{row['build_s']:.0f} s"
        built = "yes" if row["built_this_run"] else ""
        lines.append(f"| `{row['tag']}` | {mb} | {as_of} | {took} | {built} |")
    lines += ["", f"Requirements written by hand (`env_overrides.json`): {len(pins)}", ""]
    lines += [f"- {pin}" for pin in pins]
    return "\n".join(lines) + "\n"
