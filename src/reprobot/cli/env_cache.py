"""``reprobot env list`` and ``reprobot env prune``: the environment images as a cache."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from rich.table import Table

from reprobot.console import console
from reprobot.settings import Settings
from reprobot.validation import cached_images, connect, prune, unique_bytes

_GB = 1024**3
_MB = 1024**2


def register(env_sub: Any) -> None:
    listing = env_sub.add_parser("list", help="environment images, least recently used first")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=cmd_env_list)
    pruning = env_sub.add_parser(
        "prune", help="remove least recently used environment images down to a size"
    )
    pruning.add_argument(
        "--max-gb", type=float, required=True, help="disk the environment images may keep"
    )
    pruning.add_argument(
        "--spare-minutes",
        type=float,
        default=60.0,
        help="never remove an image used this recently (default 60)",
    )
    pruning.set_defaults(handler=cmd_env_prune)


def cmd_env_list(args: argparse.Namespace, settings: Settings) -> int:
    images = cached_images(connect(), settings)
    if args.json:
        rows = [
            {
                "tag": c.tag,
                "own_bytes": c.own_bytes,
                "last_used": c.last_used,
                "as_of": c.as_of,
                "resolver": c.resolver,
                "sources": c.sources,
            }
            for c in images
        ]
        print(json.dumps({"images": rows, "total_bytes": unique_bytes(images)}))
        return 0
    table = Table("image", "adds", "last used", "packages as of", "resolver", "decided by")
    now = time.time()
    for c in images:
        table.add_row(
            c.tag,
            f"{c.own_bytes / _MB:.0f} MB",
            f"{(now - c.last_used) / 3600:.1f} h ago",
            c.as_of or "newest",
            c.resolver or "pip (newest releases)",
            "\n".join(f"{part}: {source}" for part, source in sorted(c.sources.items())),
        )
    out = console()
    out.print(table)
    out.print(f"{len(images)} images, {unique_bytes(images) / _GB:.2f} GB beyond the base images")
    return 0


def cmd_env_prune(args: argparse.Namespace, settings: Settings) -> int:
    result = prune(connect(), settings, int(args.max_gb * _GB), args.spare_minutes * 60)
    out = console()
    for tag in result.removed:
        out.print(f"removed {tag}")
    for tag in result.refused:
        out.print(f"kept {tag}: still in use")
    out.print(
        f"freed {result.freed_bytes / _GB:.2f} GB; {result.kept} images keep "
        f"{result.remaining_bytes / _GB:.2f} GB"
    )
    return 0
