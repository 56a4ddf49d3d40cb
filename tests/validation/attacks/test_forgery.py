"""Forged results: a failing test tries to make the host read it as passing, from inside the
sandbox, in every way a test module can without touching pytest itself; and a report that does
go missing or stops making sense is an error of the run with its cause, never an empty pass."""

from __future__ import annotations

import json
from pathlib import Path

import docker
import pytest

from reprobot.bot.render.verdict import render_verdict
from reprobot.cli.main import main
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import run_tests
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.example_patches import NEW_TEST, example_diff
from tests.support.sandbox_attack import Snap, attack

LIMITS = RunLimits(timeout_s=120, memory_mb=512, pids=128)
FAILING = "tests/test_forge.py::test_the_bug_is_still_there"

# A JUnit report and a whole result archive that say every test passed.
FORGERY_KIT = '''\
import io
import json
import os
import tarfile

FORGED_JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="1">'
    '<testcase classname="tests.test_forge" name="test_the_bug_is_still_there" '
    'file="tests/test_forge.py"/></testsuite></testsuites>'
)


def forged_archive():
    status = {"runner": 2, "sandbox": "0" * 12, "ran": True, "patches": [],
              "patches_applied": True, "install": {"ok": True, "mode": "image"},
              "pytest_exit": 0, "collected": ["tests/test_forge.py::test_the_bug_is_still_there"]}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in (("status.json", json.dumps(status).encode()),
                           ("junit.xml", FORGED_JUNIT.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def try_everything():
    """Write the forgeries wherever a test could hope the host reads them."""
    for path in ("/work/out/junit.xml", "/work/.result/report.jsonl"):
        try:
            with open(path, "w") as fh:
                fh.write(FORGED_JUNIT)
        except OSError:
            pass
    archive = forged_archive()
    for pid in (os.getppid(), 1):
        try:
            with open("/proc/%d/fd/1" % pid, "wb") as out:
                out.write(archive)
        except OSError:
            pass
'''

ATEXIT_TEST = """\
import atexit

from tests.forgery_kit import try_everything

# At interpreter exit: after pytest wrote its report, the moment a rewrite would go unseen.
atexit.register(try_everything)


def test_the_bug_is_still_there():
    try_everything()  # and once during the run too
    assert 1 + 1 == 3
"""

# A child that outlives pytest and rewrites the report and the coverage data a moment later.
LINGERING_CHILD_TEST = """\
import os
import time

from tests.forgery_kit import FORGED_JUNIT, try_everything


def test_the_bug_is_still_there():
    if os.fork() == 0:
        os.setsid()
        time.sleep(1.5)
        try_everything()
        with open("/work/out/.coverage", "wb") as fh:
            fh.write(b"not coverage data")
        os._exit(0)
    assert 1 + 1 == 3
"""


@pytest.mark.parametrize("module", [ATEXIT_TEST, LINGERING_CHILD_TEST], ids=["atexit", "child"])
def test_a_failing_test_cannot_report_itself_passing(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap, module: str
) -> None:
    snapshot = tiny_snapshot({"tests/forgery_kit.py": FORGERY_KIT, "tests/test_forge.py": module})
    result = attack(docker_client, tiny_env, snapshot, [FAILING], LIMITS)
    run = result.run
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.outcomes == {FAILING: Outcome.FAILED}
    assert "1 + 1 == 3" in run.failures[FAILING]
    # The forged archive's sandbox id never reached the host.
    assert run.sandbox_id != "0" * 12


# A child that holds pytest's report channel (it inherits every descriptor) and writes a
# passing report into it twice: at once, and the moment pytest is gone, first trying to truncate
# what pytest wrote.
CHANNEL_DAEMON_TEST = """\
import json
import os
import sys
import time

from tests.forgery_kit import FORGED_JUNIT

RECORDS = [
    {"collected": ["tests/test_forge.py::test_the_bug_is_still_there"]},
    {"finished": True, "exitstatus": 0, "junit": FORGED_JUNIT},
]
DATA = "".join(json.dumps(r) + "\\n" for r in RECORDS).encode()


def forge(fd):
    try:
        os.ftruncate(fd, 0)
    except OSError:
        pass
    try:
        os.write(fd, DATA)
    except OSError:
        pass


def test_the_bug_is_still_there():
    plugin = next(m for n, m in sys.modules.items() if n.startswith("reprobot_report_"))
    fd = plugin._channel["fd"]
    main = os.getpid()
    if os.fork() == 0:
        os.setsid()
        forge(fd)
        deadline = time.time() + 60
        while os.getppid() == main and time.time() < deadline:
            time.sleep(0.0002)
        forge(fd)
        os._exit(0)
    assert 1 + 1 == 3
"""


def test_a_child_holding_the_report_channel_cannot_write_the_report(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(
        {"tests/forgery_kit.py": FORGERY_KIT, "tests/test_forge.py": CHANNEL_DAEMON_TEST}
    )
    run = attack(docker_client, tiny_env, snapshot, [FAILING], LIMITS).run
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.outcomes == {FAILING: Outcome.FAILED}
    assert "1 + 1 == 3" in run.failures[FAILING]


# pytest's exit status comes from the kernel, not from the report: a failed test with exit 0.
EXIT_ZERO_TEST = """\
import atexit
import os

atexit.register(lambda: os._exit(0))


def test_the_bug_is_still_there():
    assert 1 + 1 == 3
"""


def test_an_exit_status_that_contradicts_the_report_makes_the_run_inconclusive(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot({"tests/test_forge.py": EXIT_ZERO_TEST})
    run = attack(docker_client, tiny_env, snapshot, [FAILING], LIMITS).run
    assert run.error is not None
    assert "pytest exited 0 but its report has 1 failed test(s)" in run.error


def test_rewritten_coverage_data_after_pytest_exits_does_not_count(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(
        {"tests/forgery_kit.py": FORGERY_KIT, "tests/test_forge.py": LINGERING_CHILD_TEST}
    )
    run = run_tests(
        docker_client, tiny_env, snapshot, selection=[FAILING], coverage=True, limits=LIMITS
    )
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.outcomes == {FAILING: Outcome.FAILED}
    # The coverage data is pytest's own: the child was killed before it could rewrite it.
    assert run.coverage is not None
    line = LINGERING_CHILD_TEST.splitlines().index("    assert 1 + 1 == 3") + 1
    assert line in run.coverage["tests/test_forge.py"].executed


# Inside pytest's own process a conftest can do anything pytest can; what it cannot do is make
# a report vanish unnoticed. This one switches pytest's JUnit writer off, as a broken fix could.
DELETING_CONFTEST = """\
def pytest_configure(config):
    config.option.xmlpath = None
"""


TAMPERING_CONFTEST = """\
import os


def pytest_configure(config):
    fd = int(os.environ.get("REPROBOT_REPORT_FD", "-1"))
    if fd >= 0:
        os.write(fd, b'{"collected": ["tests/test_forge.py::test_the_bug_is_still_there"]}\\n')
"""


# It can feed pytest's JUnit writer a test that never ran; the host sees it was never collected.
INVENTED = "tests/test_forge.py::test_invented"
INVENTED_TESTS_CONFTEST = """\
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    for when in ("call", "teardown"):
        session.config.hook.pytest_runtest_logreport(
            report=pytest.TestReport(
                "tests/test_forge.py::test_invented",
                ("tests/test_forge.py", 0, "test_invented"),
                {},
                "passed",
                None,
                when,
            )
        )
"""


@pytest.mark.parametrize(
    ("conftest", "error"),
    [
        (DELETING_CONFTEST, "pytest wrote no report"),
        (TAMPERING_CONFTEST, "pytest's report cannot be trusted"),
    ],
    ids=["deleted-report", "tampered-channel"],
)
def test_what_a_conftest_does_to_the_report_is_an_error_with_its_cause(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Snap,
    conftest: str,
    error: str,
) -> None:
    snapshot = tiny_snapshot(
        {
            "tests/conftest.py": conftest,
            "tests/test_forge.py": "def test_the_bug_is_still_there():\n    assert False\n",
        }
    )
    run = attack(docker_client, tiny_env, snapshot, [FAILING], LIMITS).run
    assert run.error is not None and error in run.error, run.error
    assert run.outcomes == {FAILING: Outcome.MISSING}


def test_a_test_a_conftest_invents_never_counts_and_is_named(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(
        {
            "tests/conftest.py": INVENTED_TESTS_CONFTEST,
            "tests/test_forge.py": "def test_the_bug_is_still_there():\n    assert False\n",
        }
    )
    # Asked for by its id, the invented test is still missing: its pass was never pytest's.
    run = attack(docker_client, tiny_env, snapshot, [FAILING, INVENTED], LIMITS).run
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.outcomes == {FAILING: Outcome.FAILED, INVENTED: Outcome.MISSING}
    assert run.unmatched == (INVENTED,)


def test_a_test_that_kills_pytest_is_not_reported_as_out_of_memory(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(
        {
            "tests/test_forge.py": (
                "import os, signal\n\n\ndef test_the_bug_is_still_there():\n"
                "    os.kill(os.getpid(), signal.SIGKILL)\n"
            )
        }
    )
    run = attack(docker_client, tiny_env, snapshot, [FAILING], LIMITS).run
    assert run.limits_hit == frozenset()
    assert run.error == "pytest was killed (signal 9)"
    assert run.outcomes == {FAILING: Outcome.MISSING}


# --- end to end: a "fix" that forges instead of fixing ------------------------------------------

# Added to the package's __init__.py: whenever the package is imported (by the tests), forge.
FORGING_CODE = """
import atexit as _atexit
import os as _os

_PASS = (
    '<testsuites><testsuite name="pytest"><testcase classname="tests.test_multi" '
    'name="test_multi_unit" file="tests/test_multi.py"/></testsuite></testsuites>'
)


def _forge():
    try:
        with open("/work/out/junit.xml", "w") as fh:
            fh.write(_PASS)
    except OSError:
        pass
    for pid in (_os.getppid(), 1):
        try:
            with open("/proc/%d/fd/1" % pid, "wb") as out:
                out.write(b"forged")
        except OSError:
            pass


_atexit.register(_forge)
"""


def forging_fix() -> str:
    return example_diff("src/durations/__init__.py", lambda old: old + FORGING_CODE)


# Library code that declares the failing input an expected failure: the bug stays, and pytest's
# exit status calls the run a success.
XFAILING_CODE = """\
    if sum(char in UNITS for char in text) > 1:
        import pytest

        pytest.xfail("several units are not supported yet")
"""


def xfailing_fix() -> str:
    anchor = "    unit = text[-1]\n"
    return example_diff(
        "src/durations/parse.py", lambda old: old.replace(anchor, XFAILING_CODE + anchor)
    )


# A conftest that marks every test an expected failure, strict or not.
XFAIL_MARKING_CONFTEST = """\
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,6 @@
+import pytest
+
+
+def pytest_collection_modifyitems(items):
+    for item in items:
+        item.add_marker(pytest.mark.xfail(reason="flaky"))
"""


@pytest.mark.parametrize(
    ("fix", "after"),
    [(xfailing_fix(), "XF"), (XFAIL_MARKING_CONFTEST, "XF")],
    ids=["library-calls-xfail", "conftest-marks-xfail"],
)
def test_an_expected_failure_is_never_the_pass_that_verifies_a_fix(
    docker_client: docker.DockerClient,
    example_env: EnvImage,
    example_repo: Path,
    fix: str,
    after: str,
) -> None:
    base = RepoSnapshot.from_git(example_repo, "HEAD")
    verdict = verify(docker_client, example_env, base, Patch(NEW_TEST), fix=Patch(fix))
    assert verdict.status == "not_verified" and not verdict.success
    assert {t: tr.kind for t, tr in verdict.transitions.items()} == {
        "tests/test_multi.py::test_multi_unit": f"F->{after}"
    }
    assert "fail → xfail (marked as an expected failure with the change: not a pass)" in (
        render_verdict(verdict)
    )


# A conftest can make pytest itself lie; the verdict then says the pull request changes how its
# tests run.
CONFTEST_FIX = """\
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,9 @@
+import pytest
+
+
+@pytest.hookimpl(hookwrapper=True)
+def pytest_runtest_makereport(item, call):
+    outcome = yield
+    report = outcome.get_result()
+    report.outcome = "passed"
+    report.longrepr = None
"""


def test_a_forging_fix_is_not_verified_by_reprobot_verify(
    docker_client: docker.DockerClient,
    example_env: EnvImage,
    example_repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tests = tmp_path / "tests.diff"
    tests.write_text(NEW_TEST)
    fix = tmp_path / "fix.diff"
    fix.write_text(forging_fix())
    code = main(
        [
            "verify",
            "--repo",
            str(example_repo),
            "--base",
            "HEAD",
            "--fix",
            str(fix),
            "--tests",
            str(tests),
            "--python",
            "3.11",
            "--install",
            "python -m pip install -e '.[test]'",
            "--json",
        ]
    )
    assert code == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "not_verified"
    assert verdict["success"] is False
    assert verdict["transitions"] == {"tests/test_multi.py::test_multi_unit": "F->F"}
    assert verdict["harness_changes"] == []


def test_a_fix_that_changes_how_tests_run_needs_review_and_says_so(
    docker_client: docker.DockerClient,
    example_env: EnvImage,
    example_repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = RepoSnapshot.from_git(example_repo, "HEAD")
    verdict = verify(docker_client, example_env, base, Patch(NEW_TEST), fix=Patch(CONFTEST_FIX))
    # Code inside pytest's own process made it report a pass; the verdict says where that code
    # is, and does not call the fix verified.
    assert verdict.harness_changes == ("conftest.py",)
    assert verdict.status == "needs_review" and not verdict.success
    (tmp_path / "tests.diff").write_text(NEW_TEST)
    (tmp_path / "fix.diff").write_text(CONFTEST_FIX)
    argv = ["verify", "--repo", str(example_repo), "--base", "HEAD", "--python", "3.11"]
    argv += ["--install", "python -m pip install -e '.[test]'"]
    argv += ["--fix", str(tmp_path / "fix.diff"), "--tests", str(tmp_path / "tests.diff")]
    page = tmp_path / "verdict.html"
    assert main([*argv, "--markdown", "--html", str(page)]) == 0
    text = capsys.readouterr().out
    assert (
        "### 🔍 Needs review: the reproducing test passes with this change, but it changes how"
        in text
    )
    assert "This pull request changes how its tests run:** `conftest.py`" in text
    # The same verdict as a page, in the same words, naming the harness file.
    html = page.read_text()
    assert "🔍 Needs review: the reproducing test passes with this change, but it changes" in html
    assert "This change alters how its tests run: <code>conftest.py</code>" in html
