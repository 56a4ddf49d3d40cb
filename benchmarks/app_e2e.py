"""End-to-end time of the App on a real benchmark issue: from the ``issues.opened`` delivery to
the reproduction comment on GitHub.

It serves the instance's repository at its base commit (plus a ``.github/reprobot.yml`` holding
the instance's environment) from a local GitHub, starts ``reprobot serve`` with one embedded
worker, and opens the issue twice: the first run builds the environment image if it is missing
(cold), the second finds it (warm), which is the figure that matters for a repository the App
already knows.

    .venv/bin/python benchmarks/app_e2e.py --instance marshmallow-code__marshmallow-1359 \\
        --instances DATA/instances.jsonl --specs DATA/env_specs.json --repos REPOS
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.app_harness import AppHarness, wait_for  # noqa: E402

from reprobot.bench.data.instances import load_instances  # noqa: E402
from reprobot.bench.envs.environments import clone_path  # noqa: E402


def config_for(specs: dict[str, object], repo: str, version: str) -> str:
    """The repository's ``.github/reprobot.yml``: the instance's Python, install and test
    commands, as a maintainer would write them."""
    table = specs.get("specs", specs)
    assert isinstance(table, dict)
    spec = table[repo][version]
    return yaml.safe_dump(
        {
            "python": spec["python"],
            "install": spec["install"],
            "test_command": spec.get("test_cmd", "pytest"),
        }
    )


def one_run(app: AppHarness, number: int, title: str, body: str) -> dict[str, object]:
    data = app.open_issue(number, title, body)
    started = time.monotonic()
    answer = app.deliver("issues", data)
    acked = time.monotonic()
    jobs = wait_for("the job", lambda: app.finished(number), timeout=3600)
    comments = app.bot_comments(number)
    posted = [
        c.finished
        for c in app.github.calls
        if c.method == "POST" and c.path.endswith(f"/issues/{number}/comments") and c.status == 201
    ]
    return {
        "issue": number,
        "status": answer.status_code,
        "ack_ms": round((acked - started) * 1000, 1),
        "job_state": jobs[0].state,
        "reproduced": bool(comments),
        "to_comment_s": round(posted[0] - started, 2) if posted else None,
        "to_job_done_s": round(time.monotonic() - started, 2),
        "labels": app.github.issue_labels(app.repo, number),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", default="marshmallow-code__marshmallow-1359")
    parser.add_argument("--instances", type=Path, required=True, help="instances JSON-lines file")
    parser.add_argument("--specs", type=Path, required=True, help="environment table (JSON)")
    parser.add_argument("--repos", type=Path, required=True, help="folder of git clones")
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    (instance,) = [i for i in load_instances(args.instances) if i.instance_id == args.instance]
    specs = json.loads(args.specs.read_text())
    title, _, body = instance.problem_statement.partition("\n")
    root = Path(tempfile.mkdtemp(prefix="reprobot-app-e2e-"))
    app = AppHarness(
        root,
        clone_path(args.repos, instance.repo),
        repo=instance.repo,
        ref=instance.base_commit,
        config=config_for(specs, instance.repo, instance.version),
        REPROBOT_RUN_TIMEOUT_S="900",
    )
    try:
        app.serve(workers=1)
        runs = [one_run(app, 1, title, body), one_run(app, 2, title, body)]
    finally:
        app.close()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    result = {"instance": instance.instance_id, "cold": runs[0], "warm": runs[1]}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"instance {instance.instance_id} (base {instance.base_commit[:12]})")
        for name, run in (("cold", runs[0]), ("warm", runs[1])):
            print(
                f"  {name}: ack {run['ack_ms']} ms, delivery -> comment {run['to_comment_s']} s, "
                f"job done {run['to_job_done_s']} s, reproduced={run['reproduced']}, "
                f"labels={run['labels']}, job {run['job_state']}"
            )
    return 0 if all(r["reproduced"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
