"""Every attack needs the Docker engine; a sandbox that fails to stop one tends to hang the run,
so each fails in minutes instead."""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent


# First, so that ``-m docker`` and ``-m 'not docker'`` see these marks. The hook sees every item
# of the session, so it picks this folder's own.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.docker)
            item.add_marker(pytest.mark.timeout(240))
