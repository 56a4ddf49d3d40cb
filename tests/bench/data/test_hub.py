"""Instances by the public dataset's name: the Hub's Parquet listing and files, served by a real
local HTTP server that answers as the Hub does (a JSON list of file URLs, then redirects to the
files)."""

from __future__ import annotations

import argparse
import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reprobot.bench.data.hub import DatasetRef, download, parse_ref
from reprobot.bench.data.instances import DatasetError, load_instances
from reprobot.bench.run.command_context import resolve_instances
from reprobot.settings import Settings

LISTING = "/api/datasets/acme/bugs/parquet/default/test"


def record(number: int) -> dict[str, object]:
    return {
        "repo": "acme/widgets",
        "instance_id": f"acme__widgets-{number}",
        "base_commit": "a" * 40,
        "patch": "diff --git a/w.py b/w.py\n",
        "test_patch": "diff --git a/t.py b/t.py\n",
        "problem_statement": f"bug {number}: é and a long text " + "x" * 5000,
        "hints_text": "",
        "created_at": "2024-01-02T03:04:05Z",
        "version": "1.0",
        # As the Hub's conversion of SWE-bench stores them: JSON text, not lists.
        "FAIL_TO_PASS": json.dumps([f"t.py::test_{number}"]),
        "PASS_TO_PASS": "[]",
        "environment_setup_commit": "b" * 40,
    }


def parquet(records: list[dict[str, object]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), sink)
    return sink.getvalue()


class Hub:
    """The Hub's routes this reader uses, over files held in memory."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.paths: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hub.paths.append(self.path)
                if self.path.startswith("/api/") and self.path == LISTING:
                    urls = [f"{hub.url}/resolve/{name}" for name in sorted(hub.files)]
                    self._send(200, json.dumps(urls).encode(), "application/json")
                elif self.path.startswith("/resolve/"):
                    # The Hub answers a file with a redirect to its storage.
                    self.send_response(302)
                    self.send_header("Location", "/storage/" + self.path.rpartition("/")[2])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path.startswith("/storage/") and self.path[9:] in hub.files:
                    self._send(200, hub.files[self.path[9:]], "application/octet-stream")
                else:
                    self._send(404, b'{"error":"Not Found"}', "application/json")

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, follow_redirects=True, timeout=10)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def hub() -> Iterator[Hub]:
    server = Hub(
        {
            "0000.parquet": parquet([record(1), record(2)]),
            "0001.parquet": parquet([record(3)]),
        }
    )
    yield server
    server.close()


def test_names_parse_with_a_default_split() -> None:
    assert parse_ref("instances.jsonl") is None
    assert parse_ref("hub:acme/bugs") == DatasetRef("acme/bugs", "test")
    assert parse_ref("hub:princeton-nlp/SWE-bench_Lite@dev") == DatasetRef(
        "princeton-nlp/SWE-bench_Lite", "dev"
    )
    for bad in ("hub:acme", "hub:acme/bugs/extra", "hub:../x/y", "hub:acme/bugs@te st", "hub:"):
        with pytest.raises(DatasetError, match="not a dataset name"):
            parse_ref(bad)


def test_every_file_of_the_split_becomes_instances(hub: Hub, tmp_path: Path) -> None:
    with hub.client() as client:
        path = download(DatasetRef("acme/bugs"), client, tmp_path / "dataset")
    assert path == tmp_path / "dataset" / "acme__bugs-default-test.jsonl"
    instances = load_instances(path)
    assert [i.instance_id for i in instances] == [f"acme__widgets-{n}" for n in (1, 2, 3)]
    assert instances[0].fail_to_pass == ("t.py::test_1",)
    assert instances[2].problem_statement.startswith("bug 3: é and a long text xxx")
    assert hub.paths[0] == LISTING


def test_a_dataset_the_hub_does_not_have_is_a_clear_error(hub: Hub, tmp_path: Path) -> None:
    with hub.client() as client, pytest.raises(DatasetError) as info:
        download(DatasetRef("acme/nothing"), client, tmp_path)
    assert "cannot read acme/nothing split 'test' from the Hub: 404" in str(info.value)
    assert not list(tmp_path.iterdir())


def test_a_file_that_is_not_parquet_is_a_clear_error(tmp_path: Path) -> None:
    server = Hub({"0000.parquet": b"<html>rate limited</html>"})
    try:
        with server.client() as client, pytest.raises(DatasetError, match="is not a Parquet file"):
            download(DatasetRef("acme/bugs"), client, tmp_path)
    finally:
        server.close()


def test_an_unreachable_hub_is_a_clear_error(tmp_path: Path) -> None:
    with (
        httpx.Client(base_url="http://127.0.0.1:9", timeout=2) as client,
        pytest.raises(DatasetError, match="cannot reach the Hub for acme/bugs"),
    ):
        download(DatasetRef("acme/bugs"), client, tmp_path)


def test_bench_reads_a_named_dataset_once_into_its_output_folder(hub: Hub, tmp_path: Path) -> None:
    args = argparse.Namespace(instances="hub:acme/bugs", out=tmp_path / "out")
    resolve_instances(args, Settings(hub_url=hub.url, cache_dir=tmp_path / "cache"))
    assert args.instances == tmp_path / "out" / "dataset" / "acme__bugs-default-test.jsonl"
    assert len(load_instances(args.instances)) == 3
    # A file argument stays a file, and nothing is fetched for it.
    fetched = len(hub.paths)
    args = argparse.Namespace(instances=str(tmp_path / "mine.jsonl"), out=tmp_path / "out")
    resolve_instances(args, Settings(hub_url=hub.url, cache_dir=tmp_path / "cache"))
    assert args.instances == tmp_path / "mine.jsonl"
    assert len(hub.paths) == fetched
