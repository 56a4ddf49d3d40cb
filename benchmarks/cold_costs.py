"""Cold costs: base image bootstrap per Python version, environment builds, image sizes.

Base bootstrap times come from one of two sources:

- default: the base images' own build logs (``~/.cache/reprobot/logs/base-pyX.Y.log``), from
  the log file's creation to its last write; that covers the registry attempt, debootstrap (when
  the root filesystem was not already there), ``docker import`` and the set-up script;
- ``--measure``: a fresh bootstrap of each version into scratch tags (``reprobot-cold/*``), timed
  step by step and removed afterwards; the live ``reprobot/base`` images are never touched, so the
  environment images built on them stay valid.

Environment build times are the ones ``benchmarks/fidelity.py`` recorded.

    .venv/bin/python benchmarks/cold_costs.py [--measure] --fidelity OUT/fidelity \\
        --out OUT/cold.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from rich.console import Console
from rich.table import Table

from reprobot.settings import Settings
from reprobot.validation.env.base_image import (
    DEBIAN_SUITES,
    _setup_base,
    base_tag,
    recipe_dir,
)
from reprobot.validation.env.image_cache import ENV_REPOSITORY_PREFIX
from reprobot.validation.sandbox.container import connect

SCRATCH = "reprobot-cold"


def log_span(path: Path) -> float | None:
    """Seconds from a file's creation to its last write (creation read with statx via stat(1))."""
    if not path.exists():
        return None
    proc = subprocess.run(
        ["stat", "-c", "%W %Y", str(path)], capture_output=True, text=True, check=False
    )
    try:
        born, modified = (float(x) for x in proc.stdout.split())
    except ValueError:
        return None
    return modified - born if born > 0 else None


def measure_bootstrap(
    client: docker.DockerClient, python: str, settings: Settings
) -> dict[str, Any]:
    """Debootstrap, import and set up a base image for ``python`` under scratch tags; timed."""
    suite = DEBIAN_SUITES[python]
    rootfs = f"{SCRATCH}/rootfs:{suite}"
    base = f"{SCRATCH}/base:py{python}"
    log_path = settings.logs_dir / f"cold-py{python}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    times: dict[str, Any] = {"python": python, "suite": suite, "log": str(log_path)}
    with open(log_path, "wb") as sink, tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        out = Path(tmp) / f"{suite}.tar"
        started = time.monotonic()
        subprocess.run(
            [
                "sh",
                str(recipe_dir() / "bootstrap-rootfs.sh"),
                suite,
                settings.debian_mirror,
                str(out),
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=True,
        )
        times["debootstrap_s"] = round(time.monotonic() - started, 1)
        started = time.monotonic()
        repository, _, tag = rootfs.partition(":")
        client.api.import_image_from_file(str(out), repository=repository, tag=tag)
        times["import_s"] = round(time.monotonic() - started, 1)
        started = time.monotonic()
        _setup_base(client, rootfs, base, settings, sink, log_path)
        times["setup_s"] = round(time.monotonic() - started, 1)
    times["total_s"] = round(times["debootstrap_s"] + times["import_s"] + times["setup_s"], 1)
    times["size_mb"] = round(client.images.get(base).attrs["Size"] / 1e6)
    for tag in (base, rootfs):
        # A busy engine can be slow to delete; a scratch image left behind is only disk space.
        with contextlib.suppress(docker.errors.APIError, requests.exceptions.RequestException):
            client.images.remove(tag, noprune=False)
    return times


def image_rows(client: docker.DockerClient, only: set[str] | None = None) -> list[dict[str, Any]]:
    """Size of every base and environment image (those in ``only`` when given), and how much
    an environment adds to its base (Docker shares the base's layers between images)."""
    bases = {}
    for python in DEBIAN_SUITES:
        try:
            image = client.images.get(base_tag(python))
        except docker.errors.ImageNotFound:
            continue
        bases[image.id] = (base_tag(python), image.attrs["Size"])
    rows = [
        {"image": tag, "kind": "base", "size_mb": round(size / 1e6), "own_mb": round(size / 1e6)}
        for tag, size in bases.values()
    ]
    for image in client.images.list():
        tags = [
            t
            for t in image.tags
            if t.startswith(ENV_REPOSITORY_PREFIX) and (only is None or t in only)
        ]
        if not tags:
            continue
        size = image.attrs["Size"]
        base = image.labels.get("reprobot.base", "")
        base_size = next((s for t, s in bases.values() if t == base), None)
        rows.append(
            {
                "image": tags[0],
                "kind": "env",
                "base": base,
                "size_mb": round(size / 1e6),
                "own_mb": round((size - base_size) / 1e6) if base_size is not None else None,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="base bootstrap, environment build, image sizes")
    parser.add_argument("--measure", action="store_true", help="bootstrap afresh into scratch tags")
    parser.add_argument("--python", action="append", choices=sorted(DEBIAN_SUITES), default=None)
    parser.add_argument("--fidelity", type=Path, required=True, help="output folder of fidelity.py")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 150)
    settings = Settings()
    client = connect(timeout=600)
    versions = args.python or sorted(DEBIAN_SUITES, key=lambda v: tuple(map(int, v.split("."))))
    report: dict[str, Any] = {"base": [], "env": [], "images": []}

    bases = Table(
        title="Base image bootstrap" + (" (measured now)" if args.measure else " (build logs)")
    )
    for column in (
        "python",
        "debian",
        "debootstrap s",
        "import s",
        "set-up s",
        "total s",
        "size MB",
    ):
        bases.add_column(column, justify="left" if column in ("python", "debian") else "right")
    for python in versions:
        if args.measure:
            with console.status(f"bootstrapping Python {python}"):
                row = measure_bootstrap(client, python, settings)
            console.print(json.dumps(row), markup=False)
        else:
            span = log_span(settings.logs_dir / f"base-py{python}.log")
            row = {"python": python, "suite": DEBIAN_SUITES[python], "total_s": span}
            try:
                row["size_mb"] = round(client.images.get(base_tag(python)).attrs["Size"] / 1e6)
            except docker.errors.ImageNotFound:
                row["size_mb"] = None
        report["base"].append(row)
        bases.add_row(
            python,
            row["suite"],
            *(
                "-" if row.get(k) is None else f"{row[k]:.1f}"
                for k in ("debootstrap_s", "import_s", "setup_s", "total_s")
            ),
            "-" if row.get("size_mb") is None else str(row["size_mb"]),
        )
    console.print(bases)

    fidelity = args.fidelity / "fidelity.json"
    envs = Table(title="Environment build per instance (recorded by fidelity.py)")
    for column in ("instance", "image", "build s", "note"):
        envs.add_column(column, justify="right" if column == "build s" else "left")
    if fidelity.exists():
        first_use: dict[str, str] = {}
        for r in json.loads(fidelity.read_text()).get("instances", []):
            tag = r.get("env_tag", "")
            shared = first_use.setdefault(tag, r["instance_id"]) if tag else r["instance_id"]
            note = f"same image as {shared}" if shared != r["instance_id"] else ""
            report["env"].append(
                {
                    "instance": r["instance_id"],
                    "image": tag,
                    "build_s": r.get("env_build_s"),
                    "note": note,
                }
            )
            build = r.get("env_build_s")
            envs.add_row(
                r["instance_id"],
                tag.rsplit(":", 1)[-1][:12],
                "-" if build is None else f"{build:.1f}",
                note,
            )
        console.print(envs)
        builds = [e["build_s"] for e in report["env"] if e["build_s"] is not None and not e["note"]]
        if builds:
            console.print(
                f"environment builds: {len(builds)} images, {sum(builds):.0f} s in all, "
                f"median {sorted(builds)[len(builds) // 2]:.1f} s, max {max(builds):.1f} s",
                markup=False,
            )
    else:
        console.print(f"no {fidelity}; run benchmarks/fidelity.py first", markup=False)

    sizes = Table(title="Image sizes")
    for column in ("image", "kind", "size MB", "own layers MB"):
        sizes.add_column(column, justify="left" if column in ("image", "kind") else "right")
    used = {e["image"] for e in report["env"] if e["image"]} or None
    report["images"] = image_rows(client, used)
    for row in sorted(report["images"], key=lambda r: (r["kind"] != "base", r["image"])):
        sizes.add_row(
            row["image"],
            row["kind"],
            str(row["size_mb"]),
            "-" if row["own_mb"] is None else str(row["own_mb"]),
        )
    console.print(sizes)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    console.print(f"written: {args.out}", markup=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
