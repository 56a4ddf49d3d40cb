"""The in-container steps that decide what an environment holds: pins relaxed on a newer Python,
a conda environment file read as pip requirements, and a re-installed tree that asks for a
requirement the image lacks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.scripts import load_script

runner = load_script("runner")
env_build = load_script("env_build")


@pytest.mark.parametrize(
    ("pin", "wider"),
    [
        ("numpy==1.16.0", "numpy>=1.16.0,<2"),
        ("cython==0.27.3", "cython>=0.27.3,<1"),
        ("MarkupSafe==1.0", "MarkupSafe>=1.0,<2"),
        ("pytest-astropy==0.2.1", "pytest-astropy>=0.2.1,<1"),
        ("foo[bar]==2.1", "foo[bar]>=2.1,<3"),
        ("numpy", None),
        ("numpy>=1.16", None),
        ("exceptiongroup==0.0.0a0", "exceptiongroup>=0.0.0a0,<1"),
    ],
)
def test_a_pin_is_relaxed_within_its_major_release(pin: str, wider: str | None) -> None:
    assert env_build.relaxed_pin(pin) == wider


def test_conda_environment_file_becomes_pip_requirements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(env_build, "REPO", str(tmp_path))
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "environment.yml").write_text(
        "name: xarray-tests\n"
        "channels:\n"
        "  - conda-forge\n"
        "  - nodefaults\n"
        "dependencies:\n"
        "  - python=3.8\n"
        "  - numpy=1.17  # the oldest supported\n"
        "  - pandas>=1.0\n"
        "  - conda-forge::pytables\n"
        "  - netcdf4\n"
        "  - pip\n"
        "  - pip:\n"
        "      - numbagg\n"
        "      - 'pint>=0.15'\n"
    )
    names = {"pytables": "tables", "netcdf4": "netCDF4"}
    assert env_build.conda_requirements("ci/environment.yml", names) == [
        "numpy==1.17.*",
        "pandas>=1.0",
        "tables",
        "netCDF4",
        "numbagg",
        "pint>=0.15",
    ]


CHECK = """\
astropy 4.3.dev0 requires importlib-metadata, which is not installed.
astropy 4.3.dev0 has requirement numpy>=1.17, but you have numpy 1.16.0.
sphinx 3.5.0 requires tomli, which is not installed.
pyerfa 2.0.0 requires numpy, which is not installed.
No broken requirements found.
"""


def test_missing_requirements_are_the_projects_own() -> None:
    assert runner.missing_requirements(CHECK, {"astropy"}) == ["importlib-metadata"]
    assert runner.missing_requirements(CHECK, {"astropy", "sphinx"}) == [
        "importlib-metadata",
        "tomli",
    ]
    # Another distribution's broken requirement is not the tree's doing.
    assert runner.missing_requirements(CHECK, {"marshmallow"}) == []
    assert runner.missing_requirements("No broken requirements found.\n", {"astropy"}) == []


def test_project_names_compare_normalized() -> None:
    text = "Foo_Bar 1.0 requires toml, which is not installed.\n"
    assert runner.missing_requirements(text, {runner.normalized("foo.bar")}) == ["toml"]


def test_a_versioneer_project_without_git_gets_its_known_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(env_build, "REPO", str(tmp_path))
    (tmp_path / "versioneer.py").write_text("# versioneer\n")
    (tmp_path / "setup.cfg").write_text(
        "[metadata]\nname = pkg\n\n[versioneer]\nVCS = git\n"
        "versionfile_source = pkg/_version.py\ntag_prefix = v\n"
    )
    (tmp_path / "pkg").mkdir()
    keywords = 'git_refnames = "$Format:%d$"\n'
    (tmp_path / "pkg" / "_version.py").write_text(keywords)
    assert env_build.pin_versioneer("0.7.0")
    text = (tmp_path / "pkg" / "_version.py").read_text()
    # The form versioneer's own versions_from_file reads back.
    found = re.search(r"version_json = '''\n(.*)'''  # END VERSION_JSON", text, re.M | re.S)
    assert found is not None
    assert json.loads(found.group(1))["version"] == "0.7.0"
    namespace: dict[str, object] = {}
    exec(compile(text, "_version.py", "exec"), namespace)
    assert namespace["get_versions"]() == json.loads(found.group(1))  # type: ignore[operator]


def test_versioneer_is_left_alone_with_git_metadata_or_without_versioneer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(env_build, "REPO", str(tmp_path))
    assert not env_build.pin_versioneer("1.0")
    (tmp_path / "versioneer.py").write_text("")
    (tmp_path / "setup.cfg").write_text("[versioneer]\nversionfile_source = v.py\n")
    (tmp_path / "v.py").write_text("x = 1\n")
    (tmp_path / ".git").mkdir()
    assert not env_build.pin_versioneer("1.0")
    assert (tmp_path / "v.py").read_text() == "x = 1\n"


def test_python_compat_is_a_start_up_module_of_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sysconfig

    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"purelib": str(tmp_path)})
    module = env_build.restore_python_compat(["collections-abc-aliases"])
    assert module == str(tmp_path / "_reprobot_compat.py")
    assert (tmp_path / "_reprobot_compat.pth").read_text() == "import _reprobot_compat\n"
    # In a Python of its own: the module changes the interpreter that imports it.
    check = (
        "import collections, collections.abc, site\n"
        f"site.addsitedir({str(tmp_path)!r})\n"
        "assert vars(collections)['MutableMapping'] is collections.abc.MutableMapping\n"
        "assert collections.Mapping is collections.abc.Mapping\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", check], capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    with pytest.raises(SystemExit, match="time-travel"):
        env_build.restore_python_compat(["time-travel"])
