"""The one-line cause of a failed build, read from its log."""

from __future__ import annotations

import pytest

from reprobot.validation.env.build_log import failure_cause

PIP_LOG = b"""\
+ python -m pip install -e .[test]
Collecting nosuchpackage>=1
ERROR: Could not find a version that satisfies the requirement nosuchpackage>=1 (from versions: )
ERROR: No matching distribution found for nosuchpackage>=1
"""

SCM_LOG = b"""\
+ python -m pip install -e .
  Getting requirements to build editable ... error
  error: subprocess-exited-with-error
  \xc3\x97 Getting requirements to build editable did not run successfully.
      File "/tmp/pip-build-env/setuptools_scm/_get_version_impl.py", line 166, in _version_missing
          raise LookupError(error_msg)
      LookupError: setuptools-scm was unable to detect version for /work/repo.
  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error
"""

C_LOG = b"""\
  building 'speed._speed' extension
  speed/_speed.c:1:10: fatal error: libxml/parser.h: No such file or directory
  error: command '/usr/bin/gcc' failed with exit code 1
"""


@pytest.mark.parametrize(
    ("log", "cause"),
    [
        (PIP_LOG, "pip found no distribution for nosuchpackage>=1"),
        (SCM_LOG, "LookupError: setuptools-scm was unable to detect version for /work/repo."),
        (C_LOG, "speed/_speed.c:1:10: fatal error: libxml/parser.h: No such file or directory"),
        (b"+ true\nall fine\n", ""),
        (
            b"    error: failed to get `pyo3` as a dependency of package `x v0.1.0`\n"
            b"  error: subprocess-exited-with-error\n"
            b"ERROR: Failed building editable for x\n",
            "pip could not build x",
        ),
        (
            b"error: failed to get `pyo3` as a dependency of package `x v0.1.0`\n"
            b"error: subprocess-exited-with-error\n",
            "error: failed to get `pyo3` as a dependency of package `x v0.1.0`",
        ),
    ],
)
def test_failure_cause(log: bytes, cause: str) -> None:
    assert failure_cause(log) == cause


def test_a_hostile_log_gives_a_short_printable_line() -> None:
    log = b"ValueError: " + b"\x1b[31m" + b"x" * 5000 + b"\n"
    cause = failure_cause(log)
    assert len(cause) == 300
    assert "\x1b" not in cause
