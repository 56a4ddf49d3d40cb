"""Test runner inside a sandbox container (standard library only, Python 3.9+).

Reads /work/.reprobot/job.json; the repository tree is in /work/repo and the patches in
/work/.reprobot/patches. Applies the patches, re-installs the project offline when asked, runs
pytest with a JUnit XML report (and coverage.py when asked), and writes one tar of /work/out to
stdout: that tar is the only thing this script prints. Everything the project prints goes to
files under /work/out, whose size the work dir's tmpfs bounds.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import tarfile
import time

WORK = "/work"
REPO = "/work/repo"
OUT = "/work/out"
META = "/work/.reprobot"
OVERLAY = "/work/.overlay"
LOG_HEAD = 20000
LOG_TAIL = 180000
PYTEST_USAGE_ERROR = 4


def _tail(data: bytes, limit: int = 4000) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= limit else "...\n" + text[-limit:]


def _run(argv: list[str], env: dict[str, str], timeout: float, log_path: str | None = None) -> tuple[int, bytes]:
    """Run argv in the repository; output goes to log_path (returned empty) or is returned."""
    out = open(log_path, "ab") if log_path else subprocess.PIPE  # noqa: SIM115
    try:
        proc = subprocess.run(
            argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False
        )
        # A process killed by a signal (the OOM killer's SIGKILL) reports 128 + signal, as a shell
        # does, so that -9 means only this runner's timeout.
        code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        return code, proc.stdout or b""
    except subprocess.TimeoutExpired as exc:
        return -9, exc.stdout or b""
    except OSError as exc:
        return 127, str(exc).encode()
    finally:
        if log_path:
            out.close()  # type: ignore[union-attr]


def apply_patches(patches: list[dict[str, str]], env: dict[str, str]) -> list[dict[str, object]]:
    """Apply each patch in order with git apply (then patch --fuzz); stop at the first that fails."""
    results: list[dict[str, object]] = []
    for item in patches:
        path = os.path.join(META, "patches", item["file"])
        code, out = _run(["git", "apply", "--verbose", "--whitespace=nowarn", path], env, 120)
        method = "git apply"
        if code != 0:
            # The same fallback as the SWE-bench harness (fuzzy context), but only when a dry run
            # shows the whole patch applies, so a failed patch never leaves a half-patched tree,
            # and --forward, so that a patch that looks reversed is refused, never un-applied.
            dry, dry_out = _run(["patch", "--batch", "--forward", "--dry-run", "--fuzz=5", "-p1", "-i", path], env, 120)
            if dry == 0:
                code, fuzz_out = _run(["patch", "--batch", "--forward", "--no-backup-if-mismatch", "--reject-file=-", "--fuzz=5", "-p1", "-i", path], env, 120)
                out = out + b"\n" + fuzz_out
                method = "patch --fuzz=5"
            else:
                out = out + b"\n" + dry_out
        results.append({"name": item["name"], "applied": code == 0, "method": method if code == 0 else None, "output": _tail(out)})
        if code != 0:
            break
    return results


def reinstall(env: dict[str, str]) -> dict[str, object]:
    """Re-install the project without dependencies and without network into the overlay prefix."""
    base = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
            "--ignore-installed", "--disable-pip-version-check", "--no-warn-script-location", "--prefix", OVERLAY]
    log = os.path.join(OUT, "install.log")
    code, _ = _run(base + ["-e", "."], env, 600, log)
    mode = "editable"
    if code != 0:
        code, _ = _run(base + ["."], env, 600, log)
        mode = "regular"
    return {"ok": code == 0, "mode": mode if code == 0 else None}


def split_command(test_cmd: str) -> tuple[dict[str, str], list[str]]:
    """Split leading VAR=value words off a test command."""
    words = shlex.split(test_cmd)
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-") and words[0].split("=", 1)[0].isidentifier():
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    return env, words


def coverage_rc(contexts: bool) -> str:
    """Reprobot's own coverage.py configuration (the text of an rc file).

    The project's own settings are not read: ``parallel`` or ``source`` there would move or
    narrow the data this run reports. Per-test contexts name the test function that ran each
    line, so a run can tell the lines its new tests execute from those the others do.
    """
    lines = ["[run]", "data_file = " + os.path.join(OUT, ".coverage"), "include = " + REPO + "/*"]
    if contexts:
        lines.append("dynamic_context = test_function")
    return "\n".join(lines) + "\n"


def pytest_argv(words: list[str], coverage_rcfile: str | None) -> list[str]:
    """The interpreter-level argv for a pytest command line, under coverage.py with the given
    rc file when there is one."""
    if words and os.path.basename(words[0]) in ("pytest", "py.test"):
        rest = words[1:]
    elif len(words) >= 3 and words[1:3] == ["-m", "pytest"]:
        rest = words[3:]
    else:
        raise SystemExit("unsupported test command (pytest only): %r" % (words,))
    if coverage_rcfile:
        head = [sys.executable, os.path.join(META, "cov.py"), "run", "--rcfile=" + coverage_rcfile, "-m", "pytest"]
    else:
        head = [sys.executable, "-m", "pytest"]
    # Later options win in pytest's parser, so these override the project's --tb=no and family.
    # One module that fails to import must not hide the outcomes of all the others.
    extra = ["--junitxml=" + os.path.join(OUT, "junit.xml"), "-o", "junit_family=xunit1", "--tb=short",
             "-p", "no:cacheprovider", "--continue-on-collection-errors"]
    return head + rest + extra


def coverage_json(env: dict[str, str], rcfile: str, contexts: bool) -> bool:
    data = os.path.join(OUT, ".coverage")
    if not os.path.exists(data):
        return False
    log = os.path.join(OUT, "coverage.log")
    code, _ = _run([sys.executable, os.path.join(META, "cov.py"), "json", "--rcfile=" + rcfile,
                    "-o", os.path.join(OUT, "coverage.json")], env, 600, log)
    if code == 0 and contexts:
        code, _ = _run([sys.executable, os.path.join(META, "cov_contexts.py"), data, os.path.join(OUT, "contexts.json"),
                        REPO], env, 600, log)
    return code == 0


def trim_log(path: str) -> None:
    if not os.path.exists(path) or os.path.getsize(path) <= LOG_HEAD + LOG_TAIL:
        return
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(LOG_HEAD)
        fh.seek(size - LOG_TAIL)
        tail = fh.read()
    with open(path, "wb") as fh:
        fh.write(head + ("\n[... %d bytes cut ...]\n" % (size - LOG_HEAD - LOG_TAIL)).encode() + tail)


def emit() -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("status.json", "junit.xml", "coverage.json", "contexts.json", "pytest.log", "install.log"):
            path = os.path.join(OUT, name)
            if os.path.exists(path):
                tar.add(path, arcname=name)
    sys.stdout.buffer.write(buf.getvalue())
    sys.stdout.buffer.flush()


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(META, "job.json")) as fh:
        job = json.load(fh)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(job.get("env", {}))
    env.update({"PIP_NO_INDEX": "1", "PYTHONDONTWRITEBYTECODE": "1", "GIT_CONFIG_NOSYSTEM": "1"})
    status: dict[str, object] = {"started": time.time()}
    patches = apply_patches(job["patches"], env)
    status["patches"] = patches
    status["patches_applied"] = all(p["applied"] for p in patches)
    ran = False
    if status["patches_applied"]:
        install: dict[str, object] = {"ok": True, "mode": "image"}
        if job.get("reinstall"):
            install = reinstall(env)
        status["install"] = install
        if install["ok"]:
            cmd_env, words = split_command(job["test_cmd"])
            env.update(cmd_env)
            contexts = bool(job.get("coverage_contexts"))
            rcfile = None
            if job.get("coverage"):
                rcfile = os.path.join(OUT, "coveragerc")
                with open(rcfile, "w") as fh:
                    fh.write(coverage_rc(contexts))
            argv = pytest_argv(words, rcfile)
            selection = list(job.get("selection", []))
            log = os.path.join(OUT, "pytest.log")
            code, _ = _run(argv + selection, env, float(job["timeout_s"]), log)
            status["selection_mode"] = "ids"
            if code == PYTEST_USAGE_ERROR and selection:
                # An id pytest cannot find aborts the whole run; fall back to the files named.
                files = sorted({s.split("::", 1)[0] for s in selection if os.path.exists(os.path.join(REPO, s.split("::", 1)[0]))})
                with open(log, "ab") as fh:
                    fh.write(b"\n[reprobot: some selected ids were not found; running their files]\n")
                if os.path.exists(os.path.join(OUT, "junit.xml")):
                    os.remove(os.path.join(OUT, "junit.xml"))
                code, _ = _run(argv + files, env, float(job["timeout_s"]), log)
                status["selection_mode"] = "files"
            status["pytest_exit"] = code
            ran = True
            if rcfile:
                status["coverage_ok"] = coverage_json(env, rcfile, contexts)
    status["ran"] = ran
    status["finished"] = time.time()
    trim_log(os.path.join(OUT, "pytest.log"))
    trim_log(os.path.join(OUT, "install.log"))
    with open(os.path.join(OUT, "status.json"), "w") as fh:
        json.dump(status, fh)
    emit()


if __name__ == "__main__":
    main()
