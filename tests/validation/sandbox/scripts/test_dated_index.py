"""The package index as it stood at a moment: which files a bounded page keeps, the releases it
lets through for this Python, and the index served over HTTP in front of a real upstream."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.package_index import JSON_TYPE, PackageIndex
from tests.support.scripts import load_script

dated_index = load_script("dated_index")

MOMENT = datetime(2019, 6, 1, tzinfo=UTC)
CP39 = {("cp39", "cp39", "manylinux2014_x86_64"), ("py3", "none", "any")}


def cp39(tag: tuple[str, str, str]) -> bool:
    return tag in CP39


def file(name: str, uploaded: str | None, yanked: bool = False) -> dict[str, Any]:
    entry: dict[str, Any] = {"filename": name, "url": f"https://files.example/{name}"}
    if uploaded is not None:
        entry["upload-time"] = uploaded
    if yanked:
        entry["yanked"] = True
    return entry


def names(page: dict[str, Any]) -> list[str]:
    return [f["filename"] for f in page["files"]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-10-28T17:40:12Z", datetime(2020, 10, 28, 17, 40, 12, tzinfo=UTC)),
        ("2020-10-28T17:40:12.123456789Z", datetime(2020, 10, 28, 17, 40, 12, 123456, tzinfo=UTC)),
        ("2020-10-28T19:40:12+02:00", datetime(2020, 10, 28, 17, 40, 12, tzinfo=UTC)),
        ("2020-10-28", datetime(2020, 10, 28, tzinfo=UTC)),
        ("", None),
        ("yesterday", None),
        (None, None),
        (1603906812, None),
    ],
)
def test_upload_times_are_read_as_utc(text: object, expected: datetime | None) -> None:
    assert dated_index.parse_time(text) == expected


@pytest.mark.parametrize(
    ("filename", "project", "version"),
    [
        ("numpy-1.19.3-cp39-cp39-manylinux2010_x86_64.whl", "numpy", "1.19.3"),
        ("pytest_cov-2.8.1-py2.py3-none-any.whl", "pytest-cov", "2.8.1"),
        ("foo-1.0-1-py3-none-any.whl", "foo", "1.0"),
        ("Sphinx-3.1.0.tar.gz", "sphinx", "3.1.0"),
        ("zope.interface-5.2.0.tar.gz", "zope-interface", "5.2.0"),
        ("backports.zoneinfo-0.2.1.tar.gz", "backports-zoneinfo", "0.2.1"),
        ("python-dateutil-2.8.1.tar.gz", "python-dateutil", "2.8.1"),
        ("pkg-0.1.zip", "pkg", "0.1"),
        ("numpy-1.19.3.win32.exe", "numpy", None),
        ("other-1.0.tar.gz", "pkg", None),
    ],
)
def test_a_file_names_its_release(filename: str, project: str, version: str | None) -> None:
    assert dated_index.file_version(filename, project) == version


def test_wheel_tags_expand_compressed_tag_sets() -> None:
    assert dated_index.wheel_tags("x-1.0-py2.py3-none-any.whl") == [
        ("py2", "none", "any"),
        ("py3", "none", "any"),
    ]
    assert dated_index.wheel_tags("x-1.0.tar.gz") is None
    assert dated_index.wheel_tags("broken.whl") is None


def test_files_uploaded_after_the_moment_are_hidden() -> None:
    page = {
        "name": "docutils",
        "versions": ["0.14", "0.15", "0.18"],
        "files": [
            file("docutils-0.14-py3-none-any.whl", "2017-08-03T09:01:23Z"),
            file("docutils-0.14.tar.gz", "2017-08-03T09:01:20Z"),
            file("docutils-0.15-py3-none-any.whl", "2019-06-01T00:00:00Z"),
            file("docutils-0.18-py3-none-any.whl", "2021-10-26T20:00:00Z"),
            file("docutils-0.18.tar.gz", "2021-10-26T20:00:01Z"),
        ],
    }
    bounded, note = dated_index.bound_page(page, "docutils", MOMENT, cp39)
    assert names(bounded) == [
        "docutils-0.14-py3-none-any.whl",
        "docutils-0.14.tar.gz",
        "docutils-0.15-py3-none-any.whl",  # uploaded at the moment itself
    ]
    assert bounded["versions"] == ["0.14", "0.15"]
    assert note.hidden == 2
    assert not note.unbounded
    assert note.admitted is None
    # The page given is not changed.
    assert len(page["files"]) == 5


def test_a_page_without_upload_times_is_kept_whole_and_said_so() -> None:
    page = {"files": [file("six-1.16.0-py2.py3-none-any.whl", None), file("six-1.0.tar.gz", None)]}
    bounded, note = dated_index.bound_page(page, "six", MOMENT, cp39)
    assert bounded == page
    assert note.unbounded
    # A file without a time beside timed ones is kept; the timed ones are bounded.
    mixed = {"files": [file("six-1.0.tar.gz", None), file("six-1.16.0.tar.gz", "2021-05-05")]}
    bounded, note = dated_index.bound_page(mixed, "six", MOMENT, cp39)
    assert names(bounded) == ["six-1.0.tar.gz"]
    assert not note.unbounded


def test_a_compiled_project_without_a_wheel_for_this_python_gets_its_first_one() -> None:
    page = {
        "files": [
            file("numpy-1.16.4-cp37-cp37m-manylinux1_x86_64.whl", "2019-05-29T00:00:00Z"),
            file("numpy-1.16.4.zip", "2019-05-29T00:00:01Z"),
            file("numpy-1.19.3-cp39-cp39-manylinux2014_x86_64.whl", "2020-10-28T00:00:00Z"),
            file("numpy-1.19.3.zip", "2020-10-28T00:00:01Z"),
            file("numpy-1.19.4-cp39-cp39-manylinux2014_x86_64.whl", "2020-11-02T00:00:00Z"),
            file("numpy-2.0.0-cp39-cp39-manylinux2014_x86_64.whl", "2024-06-16T00:00:00Z"),
        ]
    }
    bounded, note = dated_index.bound_page(page, "numpy", MOMENT, cp39)
    assert names(bounded) == [
        "numpy-1.16.4-cp37-cp37m-manylinux1_x86_64.whl",
        "numpy-1.16.4.zip",
        "numpy-1.19.3-cp39-cp39-manylinux2014_x86_64.whl",
        "numpy-1.19.3.zip",
    ]
    assert note.admitted == "1.19.3"
    assert note.admitted_at == datetime(2020, 10, 28, tzinfo=UTC)


def test_a_pure_project_keeps_its_sources_of_the_time() -> None:
    page = {
        "files": [
            file("mpmath-1.1.0.tar.gz", "2018-12-04T00:00:00Z"),
            file("mpmath-1.2.0-py3-none-any.whl", "2021-02-01T00:00:00Z"),
        ]
    }
    bounded, note = dated_index.bound_page(page, "mpmath", MOMENT, cp39)
    assert names(bounded) == ["mpmath-1.1.0.tar.gz"]
    assert note.admitted is None


def test_a_project_without_a_release_at_the_moment_gets_its_first() -> None:
    page = {
        "files": [
            file("tomli-1.0.0.tar.gz", "2021-05-30T00:00:00Z"),
            file("tomli-1.0.1-py3-none-any.whl", "2021-06-01T00:00:00Z", yanked=True),
            file("tomli-2.0.0-py3-none-any.whl", "2021-12-13T00:00:00Z"),
        ]
    }
    bounded, note = dated_index.bound_page(page, "tomli", MOMENT, cp39)
    assert names(bounded) == ["tomli-1.0.0.tar.gz"]
    assert note.admitted == "1.0.0"


def test_a_yanked_wheel_of_the_time_does_not_count_as_installable() -> None:
    page = {
        "files": [
            file("lxml-4.3.0-cp39-cp39-manylinux2014_x86_64.whl", "2019-01-01", yanked=True),
            file("lxml-4.6.2-cp39-cp39-manylinux2014_x86_64.whl", "2020-11-26"),
        ]
    }
    bounded, note = dated_index.bound_page(page, "lxml", MOMENT, cp39)
    assert note.admitted == "4.6.2"
    assert len(bounded["files"]) == 2


def test_relative_file_addresses_become_absolute() -> None:
    page = {"files": [{"filename": "a-1.0.tar.gz", "url": "../../files/a-1.0.tar.gz"}, "junk"]}
    out = dated_index.absolute_urls(page, "https://index.example/simple/a/")
    assert out["files"][0]["url"] == "https://index.example/files/a-1.0.tar.gz"
    assert out["files"][1] == "junk"


def test_an_html_page_keeps_its_upstream_address() -> None:
    html = b"<html><head><title>a</title></head><body></body></html>"
    based = dated_index.with_base(html, "https://index.example/simple/a/")
    assert based.startswith(b'<html><head><base href="https://index.example/simple/a/">')
    assert dated_index.with_base(based, "https://other.example/") == based


def _get(url: str) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, headers={"Accept": JSON_TYPE})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read()


def test_the_index_serves_upstream_pages_bounded() -> None:
    moment = datetime(2023, 3, 2, tzinfo=UTC)
    with PackageIndex() as upstream:
        upstream.add_wheel("widget", "1.0", {"widget.py": "V = 1\n"}, "2022-06-01T00:00:00Z")
        upstream.add_wheel("widget", "2.0", {"widget.py": "V = 2\n"}, "2024-06-01T00:00:00Z")
        upstream.add_wheel("legacy", "3.0", {"legacy.py": ""}, "2024-06-01T00:00:00Z")
        upstream.html_only.add("legacy")
        with dated_index.DatedIndex([upstream.url], moment, cp39) as index:
            status, kind, body = _get(index.urls[0] + "widget/")
            assert (status, kind) == (200, JSON_TYPE)
            page = json.loads(body)
            assert names(page) == ["widget-1.0-py3-none-any.whl"]
            # The file's address is the upstream's, made absolute: pip downloads from there.
            assert page["files"][0]["url"] == upstream.url.replace(
                "/simple/", "/files/widget-1.0-py3-none-any.whl"
            )
            status, kind, body = _get(index.urls[0] + "legacy")
            assert status == 200
            assert kind.startswith("text/html")
            assert f'<base href="{upstream.url}legacy/">'.encode() in body
            assert _get(index.urls[0] + "missing/")[0] == 404
            assert _get(index.urls[0].replace("/0/", "/7/") + "widget/")[0] == 404
            assert _get(index.urls[0] + "../etc/passwd")[0] == 404
            assert index.report() == {
                "projects": 2,
                "hidden_files": 1,
                "unbounded": ["legacy"],
                "admitted": {},
                "admitted_at": {},
                "pinned_later": {},
            }
        # The index asked its upstream for the JSON form.
        assert "/simple/widget/" in upstream.requests


def test_an_unreachable_upstream_is_a_gateway_error() -> None:
    with dated_index.DatedIndex(["http://127.0.0.1:9/simple/"], MOMENT, cp39) as index:
        assert _get(index.urls[0] + "widget/")[0] == 502


@pytest.mark.parametrize(
    ("lines", "pins"),
    [
        (["Werkzeug==2.3.7"], {"werkzeug": ["2.3.7"]}),
        (["numpy==1.17.*", "pandas>=1.0"], {"numpy": ["1.17.*"]}),
        (["foo[bar] == 1.0 ; python_version < '3.10'"], {"foo": ["1.0"]}),
        (["zope.interface===5.2.0  # exact"], {"zope-interface": ["5.2.0"]}),
        (["six>=1.0,==1.16.0", "-e .", "# a==1.0", ""], {}),
    ],
)
def test_exact_pins_are_read_from_requirement_lines(
    lines: list[str], pins: dict[str, list[str]]
) -> None:
    assert dated_index.exact_pins(lines) == pins


def test_a_release_pinned_exactly_is_kept_whatever_its_date() -> None:
    page = {
        "files": [
            file("Werkzeug-2.2.3-py3-none-any.whl", "2023-02-14T00:00:00Z"),
            file("Werkzeug-2.3.7-py3-none-any.whl", "2023-08-14T00:00:00Z"),
            file("Werkzeug-2.3.8-py3-none-any.whl", "2023-11-08T00:00:00Z"),
        ]
    }
    moment = datetime(2023, 3, 1, tzinfo=UTC)
    bounded, note = dated_index.bound_page(page, "werkzeug", moment, cp39, ("2.3.7",))
    assert names(bounded) == [
        "Werkzeug-2.2.3-py3-none-any.whl",
        "Werkzeug-2.3.7-py3-none-any.whl",
    ]
    assert note.pinned_later == datetime(2023, 8, 14, tzinfo=UTC)
    assert dated_index.matches("1.17.5", "1.17.*")
    assert not dated_index.matches("1.170.0", "1.17.*")
    assert dated_index.matches("2.0.0", "2.0")
    assert not dated_index.matches("2.0.1", "2.0")
