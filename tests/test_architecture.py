"""The plan holds: imports point down the layers, and docs/ARCHITECTURE.md and the README's
layout table name every package of the tree."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "reprobot"
# What each layer may import of Reprobot, besides the shared modules at the package's top
# (settings, logs, progress, console, errors) and itself.
ALLOWED = {
    "validation": set(),
    "generation": {"validation"},
    "bot": {"generation", "validation"},
    "bench": {"generation", "validation"},
    "cli": {"bot", "bench", "generation", "validation"},
}
SHARED = {"settings", "logs", "progress", "console", "errors", "__init__", "__version__"}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n == "reprobot" or n.startswith("reprobot.")}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_imports_point_down_the_layers(layer: str) -> None:
    wrong = []
    for path in sorted((SRC / layer).rglob("*.py")):
        for module in imported_modules(path):
            target = layer_of(module)
            if target is None or target == layer or target in SHARED:
                continue
            if target not in ALLOWED[layer]:
                wrong.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not wrong, "\n".join(wrong)


def _imports_from_other_layers(layer: str) -> list[tuple[Path, str, list[str]]]:
    """(file, module, names) of every ``from reprobot.<other layer>... import`` in ``layer``."""
    found = []
    for path in sorted((SRC / layer).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                target = layer_of(node.module)
                if node.module.startswith("reprobot.") and target in ALLOWED and target != layer:
                    found.append((path, node.module, [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    target = layer_of(alias.name)
                    external = target in ALLOWED and target != layer
                    if alias.name.startswith("reprobot.") and external:
                        found.append((path, alias.name, []))
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_imports_across_layers_go_through_the_public_face(layer: str) -> None:
    """Another layer is imported as ``from reprobot.<layer> import name``, and the name is one its
    ``__init__`` exports (``__all__``): what a layer offers the others is in one place."""
    wrong = []
    for path, module, names in _imports_from_other_layers(layer):
        where = path.relative_to(ROOT)
        if module.count(".") != 1 or not names:
            wrong.append(f"{where} reaches into {module}")
            continue
        exported = importlib.import_module(module).__dict__.get("__all__", [])
        wrong += [
            f"{where} imports {module}.{n}, not in its __all__" for n in names if n not in exported
        ]
    assert not wrong, "\n".join(wrong)


def test_every_public_face_exports_what_it_names() -> None:
    for layer in ALLOWED:
        module = importlib.import_module(f"reprobot.{layer}")
        missing = [n for n in getattr(module, "__all__", []) if not hasattr(module, n)]
        assert not missing, (layer, missing)


def test_shared_modules_import_no_layer() -> None:
    for name in SHARED - {"__init__", "__version__"}:
        imported = imported_modules(SRC / f"{name}.py")
        assert {layer_of(m) for m in imported} <= SHARED, (name, imported)


def packages() -> list[str]:
    """Every package of the tree, as a path below ``src/reprobot`` (``bot/jobs``)."""
    return sorted(
        str(init.parent.relative_to(SRC))
        for init in SRC.rglob("__init__.py")
        if init.parent != SRC and "migrations" not in init.parent.parts
    )


def test_the_architecture_document_names_every_package() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_/]+)/`", text))
    missing = [p for p in packages() if p not in named]
    assert not missing, f"docs/ARCHITECTURE.md does not name: {missing}"
    stale = sorted(n for n in named if n.split("/")[0] in ALLOWED and not (SRC / n).is_dir())
    assert not stale, f"docs/ARCHITECTURE.md names packages that do not exist: {stale}"


def test_the_readme_layout_names_every_layer_and_the_architecture_document() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for layer in ALLOWED:
        assert f"`src/reprobot/{layer}/`" in text, layer
    assert "](docs/ARCHITECTURE.md)" in text
    assert "../shared" not in text


def test_a_test_module_named_after_a_module_mirrors_its_place() -> None:
    """``tests/<package>/test_<module>.py`` beside the code it tests: a test file named after a
    module sits in the folder mirroring that module's package (one of them, when two packages
    have a module of that name). Tests named for a behaviour may sit at any level."""
    homes: dict[str, set[Path]] = {}
    for path in SRC.rglob("*.py"):
        if path.name != "__init__.py" and "migrations" not in path.parts:
            homes.setdefault(path.stem, set()).add(path.parent.relative_to(SRC))
    tests = ROOT / "tests"
    misplaced = []
    for path in sorted(tests.rglob("test_*.py")):
        where = path.parent.relative_to(tests)
        if where.parts[:1] in (("support",), ("github_server",)):
            continue
        named = homes.get(path.stem.removeprefix("test_"))
        if named and where not in named:
            misplaced.append(f"{path.relative_to(ROOT)} belongs in tests/{sorted(named)[0]}/")
    assert not misplaced, "\n".join(misplaced)


# The drafter names a test after the issue's title; every other reading of the issue's words is
# the issue layer's (``generation/issue/``), which parses them once into typed parts.
_TITLE_NAMES_THE_TEST = {"draft.py"}


def _issue_text_reads(path: Path) -> list[str]:
    """``<issue>.body`` / ``<issue>.title`` in ``path``, where ``<issue>`` is a name or an
    attribute called ``issue`` or ``report`` (an ``IssueReport`` by the drafter's naming)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute) or node.attr not in ("body", "title"):
            continue
        owner = node.value
        name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        if name in ("issue", "report"):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} reads {name}.{node.attr}")
    return found


def test_the_drafter_reads_the_issue_only_through_the_issue_layer() -> None:
    reads = []
    for path in sorted((SRC / "generation" / "drafter").glob("*.py")):
        found = _issue_text_reads(path)
        if path.name in _TITLE_NAMES_THE_TEST:
            found = [f for f in found if not f.endswith(".title")]
        reads.extend(found)
    assert not reads, "\n".join(reads)
    # The check sees what it looks for: the issue layer itself reads both.
    assert _issue_text_reads(SRC / "generation" / "issue" / "prose.py")


def test_no_class_name_is_defined_twice() -> None:
    # One name, one concept: two classes of one name in two places make every import of it a
    # question of which one is meant.
    where: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, twice
    # The check sees what it looks for.
    assert len(where["Verdict"]) == 1 and len(where) > 100
