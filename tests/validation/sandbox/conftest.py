"""Every attack needs the Docker engine; a sandbox that fails to stop one tends to hang the run,
so each fails in minutes instead."""

from __future__ import annotations

import pytest


# First, so that ``-m docker`` and ``-m 'not docker'`` see these marks.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "validation/sandbox/" in item.nodeid:
            item.add_marker(pytest.mark.docker)
            item.add_marker(pytest.mark.timeout(240))
