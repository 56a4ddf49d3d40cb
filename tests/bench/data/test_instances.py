"""SWE-bench instance records read as ``Instance``s, on small hand-made records (no Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprobot.bench.data.instances import (
    DatasetError,
    load_instances,
    parse_id_list,
    parse_instance,
)

TEST_PATCH = """\
diff --git a/pkg/tests/test_things.py b/pkg/tests/test_things.py
--- a/pkg/tests/test_things.py
+++ b/pkg/tests/test_things.py
@@ -1,2 +1,5 @@
 def test_old():
     pass
+
+def test_new():
+    assert 1
diff --git a/data/sample.toml b/data/sample.toml
new file mode 100644
--- /dev/null
+++ b/data/sample.toml
@@ -0,0 +1 @@
+x = 1
"""


def record(**overrides: object) -> dict[str, object]:
    base: dict[str, object] = {
        "instance_id": "acme__widgets-7",
        "repo": "acme/widgets",
        "base_commit": "a" * 40,
        "environment_setup_commit": "b" * 40,
        "version": "1.2",
        "patch": "",
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": '["test_new"]',
        "PASS_TO_PASS": json.dumps(["test_old"]),
    }
    base.update(overrides)
    return base


def test_instance_decodes_json_encoded_id_lists() -> None:
    instance = parse_instance(record())
    assert instance.fail_to_pass == ("test_new",)
    assert instance.pass_to_pass == ("test_old",)
    assert instance.test_files == ("pkg/tests/test_things.py",)


def test_instance_without_setup_commit_uses_base_commit() -> None:
    instance = parse_instance(record(environment_setup_commit=None))
    assert instance.environment_setup_commit == "a" * 40


def test_malformed_records_raise() -> None:
    with pytest.raises(DatasetError):
        parse_id_list("[not json")
    with pytest.raises(DatasetError):
        parse_id_list('{"a": 1}')
    bad = record()
    del bad["repo"]
    with pytest.raises(DatasetError):
        parse_instance(bad)


def test_load_instances_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(record()) + "\n\n" + json.dumps(record(instance_id="x-1")) + "\n")
    assert [i.instance_id for i in load_instances(path)] == ["acme__widgets-7", "x-1"]
