"""The in-container scripts loaded as modules of their own, so tests can call their functions."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from reprobot.validation.sandbox import scripts as sandbox_scripts

SCRIPTS = Path(sandbox_scripts.__file__).parent


def load_script(name: str) -> ModuleType:
    """Load an in-container script by path (it is never imported inside Reprobot)."""
    spec = importlib.util.spec_from_file_location(f"reprobot_test_{name}", SCRIPTS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
