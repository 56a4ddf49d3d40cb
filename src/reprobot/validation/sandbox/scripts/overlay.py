"""Startup hook of sandbox environments (installed as ``_reprobot_overlay`` with a .pth line).

A run that re-installs the project does so offline into ``/work/.overlay`` (the image itself is
read-only). This puts that prefix, and every path its .pth files add, in front of the image's
own site-packages, so the re-installed project wins over the copy the image was built with.
"""

from __future__ import annotations

import os
import site
import sys


def _activate() -> None:
    prefix = os.environ.get("REPROBOT_OVERLAY", "/work/.overlay")
    lib = os.path.join(prefix, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    if not os.path.isdir(lib):
        return
    before = list(sys.path)
    site.addsitedir(lib)
    added = [p for p in sys.path if p not in before]
    sys.path[:] = added + before


_activate()
