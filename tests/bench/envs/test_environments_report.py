"""Which instances ran, why the others did not, and the images a run stood on (what each
instance's result says is read by the job: ``swt.results.not_runnable``)."""

from __future__ import annotations

import json

from reprobot.bench.envs.environments_report import (
    environment_summary,
    hand_written_pins,
    images_markdown,
    repo_of,
    runnable_markdown,
    runnable_rows,
)
from reprobot.bench.envs.spec_table import default_overlay
from reprobot.validation.env.image_cache import CachedImage

MB = 1024**2

# Each instance's image (one errored before it had one), and why it did not run (None: it did).
ENVIRONMENTS = {
    "psf__requests-1963": "reprobot/env-r:a",
    "psf__requests-2317": "reprobot/env-r:a",
    "pvlib__pvlib-python-1072": "reprobot/env-p:b",
}
CAUSES: dict[str, str | None] = {
    "psf__requests-1963": None,
    "psf__requests-2317": (
        "golden tests fail after the fix too (F→F), e.g. tests/test_requests.py::test_x"
    ),
    "pydicom__pydicom-901": "SandboxError: feeding the container failed: git archive 7241f5 failed",
    "pvlib__pvlib-python-1072": (
        "golden tests on R: the tree requires tomli, which the environment lacks"
    ),
}


def test_repositories_from_ids() -> None:
    assert repo_of("pvlib__pvlib-python-1072") == "pvlib/pvlib-python"
    assert repo_of("psf__requests-1963") == "psf/requests"


def test_runnable_instances_per_repository() -> None:
    assert runnable_rows(CAUSES) == {
        "psf/requests": {"instances": 2, "runnable": 1},
        "pvlib/pvlib-python": {"instances": 1, "runnable": 0},
        "pydicom/pydicom": {"instances": 1, "runnable": 0},
    }


def test_images_the_run_used_with_their_sizes_dates_and_build_times() -> None:
    images = [
        CachedImage(
            "reprobot/env-r:a",
            "a",
            "base",
            300 * MB,
            0.0,
            "2026-11-23T22:00:00Z",
            as_of="2021-01-01T00:00:00Z",
            build_s=95.0,
        ),
        CachedImage("reprobot/env-x:z", "z", "base", 50 * MB, 0.0, "2026-11-23T20:00:00Z"),
    ]
    started = 1795468800.0  # 2026-11-23T21:20:00Z
    summary = environment_summary(ENVIRONMENTS, images, started)
    assert summary.to_json() == {
        "images": [
            # Removed since the run: nothing to weigh.
            {
                "tag": "reprobot/env-p:b",
                "mb": None,
                "as_of": "",
                "build_s": None,
                "built_this_run": False,
            },
            {
                "tag": "reprobot/env-r:a",
                "mb": 300,
                "as_of": "2021-01-01T00:00:00Z",
                "build_s": 95.0,
                "built_this_run": True,
            },
        ],
        "total_mb": 300,
        "built": 1,
        "repositories": {
            "psf/requests": {"images": 1, "mb": 300, "build_s": 95.0},
            "pvlib/pvlib-python": {"images": 1, "mb": 0, "build_s": 0.0},
        },
    }
    pins = hand_written_pins(
        {
            "specs": {
                "astropy/astropy": {
                    "1.3": {
                        "pip_packages": ["astropy-helpers>=1.3,<1.4"],
                        "replace_pins": ["hypothesis>=5,<7"],
                        "why": "observed: ...",
                    }
                },
                "psf/requests": {"2.0": {"env": {"X": "1"}}},
            }
        }
    )
    assert pins == [
        "astropy/astropy 1.3: astropy-helpers>=1.3,<1.4",
        "astropy/astropy 1.3: hypothesis>=5,<7",
    ]
    text = runnable_markdown(CAUSES) + images_markdown(summary, pins)
    assert "| all | 4 | 1 (25%) |" in text
    assert "- `pydicom__pydicom-901`: SandboxError" in text
    assert "| `reprobot/env-r:a` | 300 | 2021-01-01T00:00:00Z | 95 s | yes |" in text
    assert "| `reprobot/env-p:b` | gone | newest |  |  |" in text
    assert "| psf/requests | 1 | 300 | 1.6 min |" in text
    assert "Requirements written by hand (`env_overrides.json`): 2" in text
    assert "- astropy/astropy 1.3: hypothesis>=5,<7" in text


def test_every_addition_of_the_projects_own_says_why() -> None:
    overlay = json.loads(default_overlay().read_text(encoding="utf-8"))
    for repo, versions in overlay["specs"].items():
        for version, record in versions.items():
            assert str(record.get("why", "")).startswith("observed:"), (repo, version)
