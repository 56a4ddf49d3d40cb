"""Benchmark instances by the public dataset's name, where a network is available.

``hub:OWNER/NAME[@SPLIT]`` (``hub:princeton-nlp/SWE-bench_Lite@test``) names a dataset on the
Hugging Face Hub. Its split is read from the Hub's own Parquet conversion of the dataset: the
Hub lists the split's Parquet files at ``/api/datasets/OWNER/NAME/parquet/CONFIG/SPLIT``, each
file is downloaded, and the rows are written once as a JSON-lines file that the rest of the
harness reads like any other instances file (so the report hashes exactly what was evaluated).
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from reprobot.bench.data.instances import DatasetError

PREFIX = "hub:"
# A dataset split is a few megabytes; a file past this is not a benchmark split.
MAX_FILE_BYTES = 512 * 1024 * 1024
_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")


@dataclass(frozen=True)
class DatasetRef:
    """A split of a dataset on the Hub."""

    repo: str
    split: str = "test"
    config: str = "default"

    @property
    def file_name(self) -> str:
        return f"{self.repo.replace('/', '__')}-{self.config}-{self.split}.jsonl"


def parse_ref(text: str) -> DatasetRef | None:
    """The dataset ``text`` names, or None when it is not a ``hub:`` name (a file path)."""
    if not text.startswith(PREFIX):
        return None
    repo, _, split = text[len(PREFIX) :].partition("@")
    split = split or "test"
    if not _REPO.fullmatch(repo) or not _NAME.fullmatch(split) or ".." in repo:
        raise DatasetError(f"not a dataset name: {text!r} (expected hub:OWNER/NAME[@SPLIT])")
    return DatasetRef(repo, split)


def download(ref: DatasetRef, client: httpx.Client, folder: Path) -> Path:
    """Write the rows of ``ref`` as JSON lines into ``folder`` and return that file's path.

    ``client`` is an HTTP client whose base URL is the Hub."""
    listing = _get(client, f"/api/datasets/{ref.repo}/parquet/{ref.config}/{ref.split}", ref)
    try:
        urls = json.loads(listing)
    except ValueError as exc:
        raise DatasetError(f"the Hub's list of {ref.repo}'s files is not JSON") from exc
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        raise DatasetError(f"the Hub lists no Parquet files for {ref.repo} split {ref.split!r}")
    # The JSON boundary: the split's rows, written as they are for ``load_instances`` to read.
    rows: list[dict[str, Any]] = []
    for url in urls:
        rows.extend(_rows(_get(client, url, ref), url))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ref.file_name
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, default=str) + "\n")
    tmp.replace(path)
    return path


def _get(client: httpx.Client, url: str, ref: DatasetRef) -> bytes:
    try:
        with client.stream("GET", url) as answer:
            if answer.status_code != 200:
                raise DatasetError(
                    f"cannot read {ref.repo} split {ref.split!r} from the Hub: "
                    f"{answer.status_code} for {url}"
                )
            body = bytearray()
            for chunk in answer.iter_bytes():
                body += chunk
                if len(body) > MAX_FILE_BYTES:
                    raise DatasetError(f"{url} is larger than {MAX_FILE_BYTES} bytes")
            return bytes(body)
    except httpx.HTTPError as exc:
        raise DatasetError(f"cannot reach the Hub for {ref.repo}: {exc}") from exc


def _rows(data: bytes, url: str) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise DatasetError(
            "reading the Hub's Parquet files needs pyarrow: pip install -e '.[hub]'"
        ) from exc
    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:
        raise DatasetError(f"{url} is not a Parquet file: {exc}") from exc
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows
