"""What packaging metadata declares for tests: extras, PEP 735 groups, Poetry, PDM and Hatch."""

from __future__ import annotations

from reprobot.validation.env.detect.metadata import ProjectMeta, pick
from reprobot.validation.env.detect.plan import InstallPlan


def _meta(pyproject: str = "", setup_cfg: str = "", setup_py: str = "") -> ProjectMeta:
    files = {"pyproject.toml": pyproject, "setup.cfg": setup_cfg, "setup.py": setup_py}
    return ProjectMeta.read(lambda path: files.get(path) or None)


def test_pick_prefers_test_names_over_development_ones() -> None:
    assert pick(["docs", "dev", "tests"]) == "tests"
    assert pick({"Dev": 1, "lint": 2}) == "Dev"
    assert pick(["docs", "lint"]) is None


DEPENDENCY_GROUPS = """\
[project]
name = "demo"
version = "1"

[dependency-groups]
test = ["pytest>=8", "demo[extra]", {include-group = "typing"}]
typing = ["mypy; python_version >= '3.9'"]
docs = ["sphinx"]
"""


def test_dependency_groups_resolve_includes_and_turn_the_project_into_extras() -> None:
    plan = _meta(DEPENDENCY_GROUPS).declared_for_tests()
    assert plan == InstallPlan(
        extras=("extra",), packages=("pytest>=8", 'mypy; python_version >= "3.9"')
    )
    assert plan.sources == ("pyproject.toml [dependency-groups] test",)


def test_a_cyclic_group_declares_nothing() -> None:
    text = '[dependency-groups]\ntest = [{include-group = "a"}]\na = [{include-group = "test"}]\n'
    assert _meta(text).declared_for_tests() == InstallPlan()


POETRY = """\
[tool.poetry]
name = "demo"
version = "1.0"

[tool.poetry.dependencies]
python = "^3.9"

[tool.poetry.group.dev.dependencies]
pytest = "^7.2"
hypothesis = {version = "~6.1", extras = ["numpy"]}
local = {path = "../local"}

[tool.poetry.group.docs]
optional = true

[tool.poetry.group.docs.dependencies]
sphinx = "*"
"""


def test_poetry_groups_become_pep_508_requirements() -> None:
    meta = _meta(POETRY)
    assert meta.requires_python() == ">=3.9,<4.0"
    assert meta.poetry_default_groups() == ["dev"]
    plan = meta.declared_for_tests()
    # A path dependency has no requirement a package index could serve.
    assert plan.packages == ("pytest<8.0,>=7.2", "hypothesis[numpy]<6.2,>=6.1")


def test_legacy_poetry_dev_dependencies() -> None:
    text = '[tool.poetry]\nname = "d"\n[tool.poetry.dev-dependencies]\npytest = ">=6"\n'
    assert _meta(text).declared_for_tests().packages == ("pytest>=6",)


def test_pdm_development_groups_with_the_project_itself() -> None:
    text = (
        '[project]\nname = "demo"\nversion = "1"\n'
        "[tool.pdm.dev-dependencies]\n"
        'test = ["-e file:///${PROJECT_ROOT}/[extra,other]", "pytest"]\n'
    )
    plan = _meta(text).declared_for_tests()
    assert plan.extras == ("extra", "other")
    assert plan.packages == ("pytest",)


def test_hatch_environments_inherit_from_default() -> None:
    text = (
        '[project]\nname = "demo"\nversion = "1"\n'
        "[tool.hatch.envs.default]\n"
        'dependencies = ["coverage"]\n'
        "[tool.hatch.envs.test]\n"
        'dependencies = ["pytest"]\nfeatures = ["io"]\n'
        "[tool.hatch.envs.lint]\n"
        'detached = true\ndependencies = ["ruff"]\n'
    )
    meta = _meta(text)
    assert meta.hatch_env("test") == InstallPlan(extras=("io",), packages=("pytest", "coverage"))
    assert meta.hatch_env("lint").packages == ("ruff",)


def test_hatch_test_without_settings_gets_hatch_s_defaults() -> None:
    text = '[project]\nname = "demo"\nversion = "1"\n'
    text += '[tool.hatch.envs.hatch-test]\nextra-dependencies = ["trio"]\n'
    plan = _meta(text).declared_for_tests()
    assert "pytest" in plan.packages and "trio" in plan.packages


def test_setup_cfg_and_setup_py_extras_and_names() -> None:
    cfg = "[metadata]\nname = demo\n[options.extras_require]\ntesting = pytest\n"
    assert _meta(setup_cfg=cfg).extras() == {"testing"}
    assert _meta(setup_cfg=cfg).name == "demo"
    setup_py = 'setup(name="demo", extras_require={"test": ["pytest"]})'
    meta = _meta(setup_py=setup_py)
    assert meta.extras() == {"test"}
    assert meta.name == "demo"


def test_every_kind_s_test_entry_is_merged() -> None:
    text = DEPENDENCY_GROUPS + '[project.optional-dependencies]\ntests = ["coverage"]\n'
    plan = _meta(text).declared_for_tests()
    assert plan.extras == ("tests", "extra")
    assert "pytest>=8" in plan.packages


def test_uv_s_default_groups_join_the_test_group() -> None:
    text = (
        '[project]\nname = "demo"\nversion = "1"\n'
        '[dependency-groups]\ntest = ["pytest"]\ndev = [{include-group = "test"}, "trustme"]\n'
        'lint = ["ruff"]\n'
    )
    assert _meta(text).declared_for_tests().packages == ("pytest", "trustme")
    chosen = text + '[tool.uv]\ndefault-groups = ["lint"]\n'
    assert _meta(chosen).declared_for_tests().packages == ("pytest", "ruff")


def test_every_poetry_group_not_marked_optional() -> None:
    text = POETRY + '[tool.poetry.group.test.dependencies]\nfreezegun = "*"\n'
    assert _meta(text).declared_for_tests().packages[-1] == "freezegun"
