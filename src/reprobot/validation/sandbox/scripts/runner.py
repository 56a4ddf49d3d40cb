"""Test runner inside a sandbox container (standard library only, Python 3.9+).

It runs as root with five capabilities (SETUID, SETGID, SETPCAP, KILL, NET_ADMIN), as ``python -I -S -c``
so that nothing of the project can reach its imports, and is the only one that writes to the
container's standard output: one tar of results, read by the host. Everything that touches the
project runs as the sandbox user (uid 1000) with no capability at all, not even in its bounding
set: unpacking the tree and the job from standard input, applying patches, re-installing,
pytest, converting coverage data. That user can neither read, write nor signal this process, nor
open its output stream (a different uid, no ptrace), nor reach its private directory.

pytest reports through Reprobot's plugin on a Unix socket this process holds the other end of:
what pytest collected (before any test function runs) and its JUnit report (as soon as pytest
wrote it). The kernel stamps every message with the process id of its sender, and only what
pytest's own process sent counts: a process the tests fork inherits the socket, but whatever it
writes, before pytest exits or after, is set aside, and a socket cannot be truncated or rewritten.
After pytest exits every process of the sandbox user is killed before the channel is read to its
end. Code that runs inside the pytest process itself can still lie about its own results; the
host's cross-checks (pytest's exit status against the outcomes, collected ids) and the verdict
say so where it matters.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import re
import shlex
import signal
import socket
import stat
import struct
import subprocess
import sys
import tarfile
import threading
import time
from typing import Any

WORK = "/work"
REPO = "/work/repo"
OUT = "/work/out"  # the sandbox user's: pytest's JUnit file, coverage data
META = "/work/.reprobot"  # the job, the patches and the tools, as unpacked
PRIVATE = "/work/.result"  # this process's own: logs and the report channel (mode 0700)
TOOLS = "/work/.runner"  # read-only for the sandbox user: tools and the pytest plugin
PLUGIN_DIR = TOOLS + "/plugin"
# The report plugin's module name, new in every run: the repository's root comes before the
# plugin's folder on pytest's import path, and no file of the tree, fixed before the run, can
# be named for a module whose name it cannot know.
PLUGIN_MODULE = "reprobot_report_" + os.urandom(8).hex()
OVERLAY = "/work/.overlay"
HOME = "/work/home"
HOME_SEED = "/opt/reprobot/home"
SANDBOX_UID = 1000
LOG_HEAD = 20000
LOG_TAIL = 180000
PYTEST_USAGE_ERROR = 4
REPORT_FD_VAR = "REPROBOT_REPORT_FD"
METADATA = (".egg-info", ".dist-info")
# Beside the report plugin: the tree's metadata whose entry points it loads (trust_tree_metadata).
TRUSTED_METADATA = "trusted_metadata.json"
# What the report channel may hold at most: collected ids and a JUnit report.
REPORT_MAX = 64 * 1024 * 1024
RESULT_FILES = ("coverage.json", "contexts.json")
PR_CAPBSET_DROP = 24
SIOCSIFADDR, SIOCSIFNETMASK = 0x8916, 0x891C
# Addresses no network uses (RFC 2544's benchmarking range, RFC 3849's documentation prefix),
# each alone in its prefix, given to the loopback interface: no other address becomes local.
LOCAL_IPV4 = "198.18.0.1"
LOCAL_IPV6 = "2001:db8::1"


def _tail(data: bytes, limit: int = 4000) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= limit else "...\n" + text[-limit:]


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return 63


def drop_bounding_set() -> None:
    """Empty this process's capability bounding set, once, before any child exists: no program
    it starts can gain a capability by exec. Done here and not in each child between fork and
    exec, where loading a library (``ctypes``, dlopen) can wait forever on the dynamic loader's
    lock when another thread held it at the fork (a thread exiting loads libgcc_s)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(_last_cap() + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def add_local_addresses() -> None:
    """Give the loopback interface an IPv4 and an IPv6 address that are not loopback ones.

    With only 127.0.0.1 and ::1, glibc's ``getaddrinfo`` with ``AI_ADDRCONFIG`` and a family
    (what asyncio's and anyio's listeners ask for "localhost") finds no configured address of
    that family and fails, where any CI runner has one. These addresses sit on ``lo``: the
    sandbox still has no other interface and no route, and nothing can leave it."""
    def ifreq(address: str) -> bytes:
        return struct.pack("16sH2s4s8s", b"lo:1", socket.AF_INET, b"", socket.inet_aton(address), b"")

    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        # The kernel gives the address its class's mask (a /24 here) until told otherwise.
        fcntl.ioctl(sock.fileno(), SIOCSIFADDR, ifreq(LOCAL_IPV4))
        fcntl.ioctl(sock.fileno(), SIOCSIFNETMASK, ifreq("255.255.255.255"))
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as sock:
        # struct in6_ifreq: the address, its prefix length, the interface's index.
        fcntl.ioctl(sock.fileno(), SIOCSIFADDR, struct.pack(
            "16sIi", socket.inet_pton(socket.AF_INET6, LOCAL_IPV6), 128, socket.if_nametoindex("lo")))


_STARTED = time.monotonic()


def stage(what: str) -> None:
    """Say on standard error where the run is: what the host shows of a run that dies before it
    reports (its deadline, a crash), so that such a run names the step it was stuck in."""
    sys.stderr.write("reprobot-runner: %.1f s: %s\n" % (time.monotonic() - _STARTED, what))
    sys.stderr.flush()


def as_sandbox_user(
    argv: list[str],
    env: dict[str, str],
    timeout: float,
    log_path: str | None = None,
    stdin: int = subprocess.DEVNULL,
    cwd: str = REPO,
    pass_fds: tuple[int, ...] = (),
    started: Any = None,
) -> tuple[int, bytes]:
    """Run argv as the sandbox user; output goes to log_path (returned empty) or is returned;
    ``started`` hears the process id as soon as the process exists.

    The exit code is the child's, 128 + N when a signal N killed it, -9 at this runner's timeout
    and 127 when it could not be started."""
    out: Any = open(log_path, "ab") if log_path else subprocess.PIPE  # noqa: SIM115
    stage("%s (at most %d s)" % (" ".join([os.path.basename(argv[0])] + argv[1:4])[:120], timeout))
    try:
        # The child becomes the sandbox user in C, between fork and exec (no groups, then its
        # gid and uid: from uid 0 without keep-caps, its permitted and effective capabilities
        # are cleared), in a session of its own; no Python code runs in it before exec.
        with subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=stdin, stdout=out, stderr=subprocess.STDOUT,
            pass_fds=pass_fds, user=SANDBOX_UID, group=SANDBOX_UID, extra_groups=[],
            umask=0o022, start_new_session=True,
        ) as proc:
            if started is not None:
                started(proc.pid)
            try:
                output, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                stage("stopped at its time limit")
                proc.kill()
                output, _ = proc.communicate()
                return -9, output or b""
            code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
            stage("exit %d" % code)
            return code, output or b""
    except (OSError, subprocess.SubprocessError) as exc:
        return 127, str(exc).encode()
    finally:
        if log_path:
            out.close()


class ReportChannel:
    """This process's end of the report socket, read while pytest runs (a report larger than
    the socket's buffer must not stall it) and kept per sender: the kernel names the sending
    process of every message (SCM_CREDENTIALS), and only the messages of pytest's own process
    make up the report."""

    CREDENTIALS = struct.Struct("iII")  # struct ucred: pid, uid, gid

    def __init__(self) -> None:
        self.ours, self.theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.chunks: list[tuple[int, bytes]] = []
        self.size = 0
        self.overflow = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.pytest_pid = -2

    def start(self, pid: int) -> None:
        """pytest runs as ``pid``: read what arrives (until then the socket's buffer holds it)."""
        self.pytest_pid = pid
        self.reader.start()

    def _read(self) -> None:
        space = socket.CMSG_SPACE(self.CREDENTIALS.size)
        while True:
            try:
                data, ancillary, _, _ = self.ours.recvmsg(1 << 16, space)
            except OSError:
                return
            if not data:
                return
            sender = -1
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    sender = self.CREDENTIALS.unpack(value[: self.CREDENTIALS.size])[0]
            if self.size + len(data) > REPORT_MAX:
                self.overflow = True  # keep draining, so that no writer blocks on a full buffer
                continue
            self.size += len(data)
            self.chunks.append((sender, data))

    def close_ours(self) -> None:
        """Give up this process's copy of the writing end (pytest has its own)."""
        self.theirs.close()

    def read(self) -> tuple[bytes, int]:
        """pytest's own messages, and how many bytes other processes sent. Called once every
        process of the sandbox user is gone, so that the channel reaches its end."""
        if self.reader.ident is not None:  # started
            self.reader.join(15)
        self.ours.close()
        own = b"".join(data for sender, data in self.chunks if sender == self.pytest_pid)
        foreign = sum(len(data) for sender, data in self.chunks if sender != self.pytest_pid)
        return own, foreign


def kill_sandbox_user() -> None:
    """Kill every process but this one and init: whatever the tests left running."""
    with contextlib.suppress(OSError):
        os.kill(-1, signal.SIGKILL)
    # Reap them, so that none lives on as a zombie holding a report open (a process stuck in the
    # kernel gets a few seconds; init reaps it later).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def oom_kills() -> int | None:
    """How many processes the kernel's OOM killer has killed in this container so far."""
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            with open(path) as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def read_sandbox_file(path: str, limit: int) -> bytes | None:
    """A regular file the sandbox user wrote, never through a link, at most limit bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit + 1)[:limit]
    finally:
        os.close(fd)


def apply_patches(patches: list[dict[str, str]], env: dict[str, str]) -> list[dict[str, object]]:
    """Apply each patch in order with git apply (then patch --fuzz); stop at the first that fails."""
    results: list[dict[str, object]] = []
    for item in patches:
        path = os.path.join(META, "patches", item["file"])
        code, out = as_sandbox_user(["git", "apply", "--verbose", "--whitespace=nowarn", path], env, 120)
        method = "git apply"
        if code != 0:
            # The same fallback as the SWE-bench harness (fuzzy context), but only when a dry run
            # shows the whole patch applies, so a failed patch never leaves a half-patched tree,
            # and --forward, so that a patch that looks reversed is refused, never un-applied.
            dry, dry_out = as_sandbox_user(["patch", "--batch", "--forward", "--dry-run", "--fuzz=5", "-p1", "-i", path], env, 120)
            if dry == 0:
                code, fuzz_out = as_sandbox_user(["patch", "--batch", "--forward", "--no-backup-if-mismatch", "--reject-file=-", "--fuzz=5", "-p1", "-i", path], env, 120)
                out = out + b"\n" + fuzz_out
                method = "patch --fuzz=5"
            else:
                out = out + b"\n" + dry_out
        results.append({"name": item["name"], "applied": code == 0, "method": method if code == 0 else None, "output": _tail(out)})
        if code != 0:
            break
    return results


def tree_metadata() -> list[str]:
    """Every package metadata folder or file (``*.egg-info``, ``*.dist-info``) the tree holds,
    anywhere but in ``.git``: what a re-install adds is the difference before and after it."""
    found: list[str] = []
    for folder, dirs, files in os.walk(REPO):
        if folder == REPO:
            dirs[:] = [d for d in dirs if d != ".git"]
        found += [os.path.join(folder, n) for n in dirs + files if n.endswith(METADATA)]
        dirs[:] = [d for d in dirs if not d.endswith(METADATA)]
    return sorted(found)


def top_metadata() -> list[str]:
    """The package metadata at the tree's root and in ``src/``: the folders on the import path
    when pytest loads its plugins."""
    found: list[str] = []
    for folder in (REPO, os.path.join(REPO, "src")):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found += [os.path.join(folder, n) for n in sorted(names) if n.endswith(METADATA)]
    return found


def build_metadata(build: str, env: dict[str, str]) -> list[str]:
    """The metadata folders of the image's build artifacts (wherever the build wrote them, as in
    a ``package_dir`` an editable install names), as paths in the tree."""
    code, out = as_sandbox_user(["tar", "-t", "-f", build], env, 120)
    if code != 0:
        return []
    found: set[str] = set()
    for member in out.decode("utf-8", "surrogateescape").splitlines():
        parts = member.removeprefix("./").split("/")
        for i, part in enumerate(parts):
            if part.endswith(METADATA):
                found.add(os.path.join(REPO, *parts[: i + 1]))
                break
    return sorted(found)


def drop_tree_metadata(env: dict[str, str], also: list[str] | None = None) -> None:
    """Remove the package metadata the tree itself holds at its root and in ``src/``, the
    folders on the import path when pytest loads its plugins, and in the folders of ``also``
    (the image's, which come back whole): entry points there would load code as a pytest
    plugin. Only the metadata the environment's own build made (the image's, or a
    re-install's) is read."""
    found = top_metadata()
    found += [p for p in also or [] if os.path.lexists(p) and p not in found]
    for start in range(0, len(found), 200):
        as_sandbox_user(["rm", "-rf", "--"] + found[start:start + 200], env, 120)


def trust_tree_metadata(trusted: list[str]) -> None:
    """Name the tree's metadata whose entry points pytest may load, in a file beside the report
    plugin that the tests cannot write: what the image's build or a re-install of a trusted
    build made; no other metadata of the tree, wherever the import path finds it."""
    path = os.path.join(PLUGIN_DIR, TRUSTED_METADATA)
    with open(path, "w") as fh:
        json.dump(sorted(set(trusted)), fh)
    os.chmod(path, 0o644)


def reinstall(env: dict[str, str]) -> dict[str, object]:
    """Re-install the project without dependencies and without network into the overlay prefix,
    then ask pip whether the project now requires what the image lacks (a tree whose manifests
    changed since the image was built): such a run would only test an import error."""
    base = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
            "--ignore-installed", "--disable-pip-version-check", "--no-warn-script-location", "--prefix", OVERLAY]
    log = os.path.join(PRIVATE, "install.log")
    code, _ = as_sandbox_user(base + ["-e", "."], env, 600, log)
    mode = "editable"
    if code != 0:
        code, _ = as_sandbox_user(base + ["."], env, 600, log)
        mode = "regular"
    if code != 0:
        return {"ok": False, "mode": None}
    _, out = as_sandbox_user([sys.executable, "-m", "pip", "check", "--disable-pip-version-check"], env, 120)
    missing = missing_requirements(out.decode("utf-8", "replace"), overlay_projects())
    return {"ok": not missing, "mode": mode, "missing": missing}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def overlay_projects() -> set[str]:
    """The normalized names of the distributions the re-install made: in the overlay, and the
    egg-info a legacy editable install leaves in the tree."""
    found = []
    for _folder, dirs, _files in os.walk(OVERLAY):
        found += dirs
    for folder in (REPO, os.path.join(REPO, "src")):
        if os.path.isdir(folder):
            found += os.listdir(folder)
    return {
        normalized(d.rsplit(".", 1)[0].split("-", 1)[0])
        for d in found
        if d.endswith((".dist-info", ".egg-info"))
    }


_NOT_INSTALLED = re.compile(r"^(\S+) \S+ requires (\S+), which is not installed\.$")


def missing_requirements(check_output: str, projects: set[str]) -> list[str]:
    """The requirements of ``projects`` that ``pip check`` reports as not installed (sorted)."""
    missing = set()
    for line in check_output.splitlines():
        match = _NOT_INSTALLED.match(line.strip())
        if match and normalized(match.group(1)) in projects:
            missing.add(match.group(2))
    return sorted(missing)


def split_command(test_cmd: str) -> tuple[dict[str, str], list[str]]:
    """Split leading VAR=value words off a test command."""
    words = shlex.split(test_cmd)
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-") and words[0].split("=", 1)[0].isidentifier():
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    return env, words


def coverage_rc(contexts: bool, files: list[str] | None = None) -> str:
    """Reprobot's own coverage.py configuration (the text of an rc file).

    The project's own settings are not read: ``parallel`` or ``source`` there would move or
    narrow the data this run reports. Per-test contexts name the test function that ran each
    line, so a run can tell the lines its new tests execute from those the others do.
    ``files`` (repository paths) narrows the measurement to them: the tracer then follows no
    line of any other file, which on a large project halves the run (SymPy's trigonometry
    tests: 207 s measuring the whole tree, 118 s measuring the one module a fix changes).
    """
    lines = ["[run]", "data_file = " + os.path.join(OUT, ".coverage"), "include ="]
    lines += ["    " + pattern for pattern in coverage_include(files)]
    if contexts:
        lines.append("dynamic_context = test_function")
    return "\n".join(lines) + "\n"


# coverage.py splits an include list at commas and line ends and matches it as shell patterns;
# a path holding any of these could widen or break the list, so such a list measures the tree.
UNSAFE_IN_PATTERN = frozenset(",*?[]\\\n\r\t\0")


def coverage_include(files: list[str] | None) -> list[str]:
    """The patterns coverage.py measures: the given repository files, or the whole tree when none
    is given or any of them is not a plain relative path."""
    if not files:
        return [REPO + "/*"]
    for path in files:
        if (
            not isinstance(path, str)
            or any(part in ("", ".", "..") for part in path.split("/"))
            or any(ch in UNSAFE_IN_PATTERN or ord(ch) < 32 for ch in path)
            or path != path.strip()
        ):
            return [REPO + "/*"]
    return [REPO + "/" + path for path in sorted(set(files))]


def is_pytest(words: list[str]) -> bool:
    return bool(words) and (os.path.basename(words[0]) in ("pytest", "py.test") or words[1:3] == ["-m", "pytest"])


def unittest_argv(words: list[str], coverage_rcfile: str | None) -> list[str]:
    """The interpreter-level argv for a unittest-family command (unittest, Django's runners):
    Reprobot's reporter runs it in its own process, under coverage.py when asked."""
    reporter = os.path.join(PLUGIN_DIR, "reprobot_unittest.py")
    if coverage_rcfile:
        head = [sys.executable, os.path.join(TOOLS, "cov.py"), "run", "--rcfile=" + coverage_rcfile, reporter]
    else:
        head = [sys.executable, reporter]
    return head + words


def pytest_argv(words: list[str], coverage_rcfile: str | None) -> list[str]:
    """The interpreter-level argv for a pytest command line, under coverage.py with the given
    rc file when there is one, with Reprobot's report plugin loaded."""
    if words and os.path.basename(words[0]) in ("pytest", "py.test"):
        rest = words[1:]
    elif len(words) >= 3 and words[1:3] == ["-m", "pytest"]:
        rest = words[3:]
    else:
        raise SystemExit("unsupported test command (pytest only): %r" % (words,))
    if coverage_rcfile:
        head = [sys.executable, os.path.join(TOOLS, "cov.py"), "run", "--rcfile=" + coverage_rcfile, "-m", "pytest"]
    else:
        head = [sys.executable, "-m", "pytest"]
    # Later options win in pytest's parser, so these override the project's --tb=no and family.
    # One module that fails to import must not hide the outcomes of all the others.
    extra = ["--junitxml=" + os.path.join(OUT, "junit.xml"), "-o", "junit_family=xunit1", "--tb=short"]
    if "no:cacheprovider" not in rest:
        # pytest's cache in a fresh folder outside the tree: a cache the tree holds (its last
        # failures) is never read, nothing is written into the tree, and plugins that keep
        # their state there (pytest-memray's memory limits) still find a cache.
        extra += ["-o", "cache_dir=" + os.path.join(OUT, "pytest-cache")]
    return head + rest + extra + ["--continue-on-collection-errors", "-p", PLUGIN_MODULE]


def coverage_json(env: dict[str, str], rcfile: str, contexts: bool) -> bool:
    """Convert the coverage data in a fresh, isolated interpreter (no project code on its path)."""
    data = os.path.join(OUT, ".coverage")
    if not os.path.exists(data):
        return False
    log = os.path.join(PRIVATE, "coverage.log")
    isolated = [sys.executable, "-I", "-S"]
    code, _ = as_sandbox_user(isolated + [os.path.join(TOOLS, "cov.py"), "json", "--rcfile=" + rcfile,
                                          "-o", os.path.join(OUT, "coverage.json")], env, 600, log)
    if code == 0 and contexts:
        code, _ = as_sandbox_user(isolated + [os.path.join(TOOLS, "cov_contexts.py"), data,
                                              os.path.join(OUT, "contexts.json"), REPO], env, 600, log)
    return code == 0


def parse_report(data: bytes) -> dict[str, Any]:
    """What the report channel says: the collected ids, the JUnit text, pytest's exit status,
    and a problem when the channel holds anything but what the plugin writes."""
    report: dict[str, Any] = {"collected": None, "junit": None, "exitstatus": None, "problem": None,
                              "xpassed": []}
    finished = False
    for line in data.splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            # RecursionError: a line nested deeper than the parser's stack, which no plugin writes.
            report["problem"] = "the report channel holds a line that is not JSON"
            return report
        if not isinstance(record, dict):
            report["problem"] = "the report channel holds a record that is not an object"
            return report
        if "collected" in record and report["collected"] is None and not finished:
            ids = record["collected"]
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                report["problem"] = "the collected ids are not a list of strings"
                return report
            report["collected"] = ids
        elif record.get("finished") is True and not finished:
            finished = True
            junit = record.get("junit")
            report["junit"] = junit if isinstance(junit, str) else None
            status = record.get("exitstatus")
            report["exitstatus"] = status if isinstance(status, int) else None
            xpassed = record.get("xpassed", [])
            if not isinstance(xpassed, list) or not all(isinstance(i, str) for i in xpassed):
                report["problem"] = "the unexpected passes are not a list of strings"
                return report
            report["xpassed"] = xpassed
        else:
            report["problem"] = "the report channel holds a record the plugin never writes"
            return report
    return report


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


def emit(status: dict[str, Any], junit: str | None, extra: dict[str, bytes]) -> None:
    """The one result: a tar on standard output."""
    files = {"status.json": json.dumps(status).encode()}
    if junit is not None:
        files["junit.xml"] = junit.encode("utf-8", "surrogateescape")
    for name in ("pytest.log", "install.log"):
        path = os.path.join(PRIVATE, name)
        if os.path.exists(path):
            with open(path, "rb") as fh:
                files[name] = fh.read()
    files.update(extra)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    sys.stdout.buffer.write(buf.getvalue())
    sys.stdout.buffer.flush()


def prepare() -> tuple[dict[str, Any] | None, str | None]:
    """This process's private folders, then the tree and the job unpacked by the sandbox user."""
    os.umask(0o022)
    os.mkdir(PRIVATE, 0o700)
    os.mkdir(TOOLS, 0o755)
    os.mkdir(PLUGIN_DIR, 0o755)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": HOME, "LANG": "C.UTF-8"}
    code, out = as_sandbox_user(["tar", "-x", "-i", "-f", "-", "-C", WORK], env, 600, stdin=0, cwd=WORK)
    if code != 0:
        return None, "unpacking the tree failed: " + _tail(out, 1000)
    raw = read_sandbox_file(os.path.join(META, "job.json"), 16 * 1024 * 1024)
    try:
        job = json.loads(raw or b"")
    except ValueError:
        job = None
    if not isinstance(job, dict):
        return None, "the job file did not arrive"
    # Copied before any project code runs, into a folder the sandbox user cannot write.
    for name, dest in (("cov.py", TOOLS), ("cov_contexts.py", TOOLS), ("reprobot_report.py", PLUGIN_DIR),
                       ("reprobot_unittest.py", PLUGIN_DIR)):
        data = read_sandbox_file(os.path.join(META, name), 1024 * 1024)
        if data is None:
            return None, "the tool %s did not arrive" % name
        target = PLUGIN_MODULE + ".py" if name == "reprobot_report.py" else name
        with open(os.path.join(dest, target), "wb") as fh:
            fh.write(data)
    return job, None


def main() -> None:
    # The container's hostname is its short id: the host can tell which sandbox spoke, on
    # standard error (what it keeps when the run dies) and in the log (when it reports).
    announce = "reprobot-sandbox: %s\n" % socket.gethostname()
    sys.stderr.write(announce)
    sys.stderr.flush()
    status: dict[str, Any] = {"started": time.time(), "runner": 2, "sandbox": socket.gethostname()}
    add_local_addresses()
    drop_bounding_set()
    job, problem = prepare()
    if os.path.isdir(PRIVATE):
        with open(os.path.join(PRIVATE, "pytest.log"), "ab") as log:
            log.write(announce.encode())
    if job is None:
        status.update(ran=False, error=problem, finished=time.time())
        emit(status, None, {})
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(job.get("env", {}))
    env.update({"PIP_NO_INDEX": "1", "PYTHONDONTWRITEBYTECODE": "1", "GIT_CONFIG_NOSYSTEM": "1", "HOME": HOME})
    as_sandbox_user(["mkdir", "-p", OUT, HOME], env, 60, cwd=WORK)
    if os.path.isdir(HOME_SEED):
        # What the environment's warm-up fetched into the sandbox user's home (data files,
        # caches): each run starts with its own copy, which it may change.
        as_sandbox_user(["cp", "-a", HOME_SEED + "/.", HOME], env, 300, cwd=WORK)
    build = "/opt/reprobot/repo-build.tar"
    restore = not job.get("reinstall") and os.path.exists(build)
    image_metadata = build_metadata(build, env) if restore else []
    drop_tree_metadata(env)
    if restore:
        # The image's build artifacts (egg-info, generated version files) go back next to the
        # fresh tree unless the run re-installs.
        as_sandbox_user(["tar", "-x", "-f", build, "-C", REPO], env, 120)
    patches = apply_patches(job["patches"], env)
    # What a patch wrote into package metadata is dropped too; the image's comes back.
    drop_tree_metadata(env, image_metadata)
    if restore:
        as_sandbox_user(["tar", "-x", "-f", build, "-C", REPO, "--wildcards", "--no-anchored",
                         "*.egg-info/*", "*.dist-info/*"], env, 120)
    status["patches"] = patches
    status["patches_applied"] = all(p["applied"] for p in patches)
    ran = False
    report: dict[str, Any] | None = None
    extra: dict[str, bytes] = {}
    oom_before = oom_kills()
    if status["patches_applied"]:
        install: dict[str, object] = {"ok": True, "mode": "image"}
        # Now only the image's build made what metadata stands at the root and in src/.
        trusted = top_metadata() + image_metadata
        if job.get("reinstall"):
            before = set(tree_metadata())
            install = reinstall(env)
            trusted += [p for p in tree_metadata() if p not in before]
            # The tree's build code ran as the sandbox user: nothing it started may live on
            # into the test run.
            kill_sandbox_user()
        status["install"] = install
        if install["ok"]:
            cmd_env, words = split_command(job["test_cmd"])
            env.update(cmd_env)
            contexts = bool(job.get("coverage_contexts"))
            rcfile = None
            if job.get("coverage"):
                rcfile = os.path.join(TOOLS, "coveragerc")
                with open(rcfile, "w") as fh:
                    fh.write(coverage_rc(contexts, job.get("coverage_files") or None))
            selection = list(job.get("selection", []))
            trust_tree_metadata(trusted)
            if is_pytest(words):
                argv = pytest_argv(words, rcfile)
                report, code, mode = run_pytest(argv, selection, env, float(job["timeout_s"]))
            else:
                status["tool"] = "unittest"
                argv = unittest_argv(words, rcfile) + (["--reprobot-select"] + selection if selection else [])
                report, code, mode = run_pytest(argv, [], env, float(job["timeout_s"]))
            status["selection_mode"] = mode
            status["pytest_exit"] = code
            ran = True
            kill_sandbox_user()
            if rcfile:
                status["coverage_ok"] = coverage_json(env, rcfile, contexts)
                for name in RESULT_FILES:
                    data = read_sandbox_file(os.path.join(OUT, name), 256 * 1024 * 1024)
                    if data is not None:
                        extra[name] = data
    kill_sandbox_user()
    oom_after = oom_kills()
    if oom_before is not None and oom_after is not None:
        status["oom_kills"] = oom_after - oom_before
    status["ran"] = ran
    if report is not None:
        status["collected"] = report["collected"]
        status["report_exitstatus"] = report["exitstatus"]
        status["report_problem"] = report["problem"]
        status["report_foreign_bytes"] = report.get("foreign_bytes", 0)
        status["xpassed"] = report.get("xpassed", [])
    status["finished"] = time.time()
    trim_log(os.path.join(PRIVATE, "pytest.log"))
    trim_log(os.path.join(PRIVATE, "install.log"))
    stage("writing the result")
    emit(status, report["junit"] if report else None, extra)


def run_pytest(
    argv: list[str], selection: list[str], env: dict[str, str], timeout: float
) -> tuple[dict[str, Any], int, str]:
    """pytest as the sandbox user, reporting on a channel only it and this process hold; with
    the files of the selected ids when pytest cannot find some of them."""
    log = os.path.join(PRIVATE, "pytest.log")
    env = dict(env)
    env["PYTHONPATH"] = PLUGIN_DIR + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")

    def once(args: list[str]) -> tuple[int, dict[str, Any]]:
        channel = ReportChannel()
        fd = channel.theirs.fileno()
        try:
            code, _ = as_sandbox_user(
                args, dict(env, **{REPORT_FD_VAR: str(fd)}), timeout, log, pass_fds=(fd,),
                started=channel.start,
            )
        finally:
            channel.close_ours()
        # Nothing the tests started may still hold the channel when it is read to its end.
        kill_sandbox_user()
        stage("reading the report channel")
        data, foreign = channel.read()
        report = parse_report(data)
        if channel.overflow:
            report["problem"] = "the report channel holds more than %d bytes" % REPORT_MAX
        report["foreign_bytes"] = foreign
        return code, report

    code, report = once(argv + selection)
    mode = "ids"
    if code == PYTEST_USAGE_ERROR and selection:
        # An id pytest cannot find aborts the whole run; fall back to the files named.
        files = sorted({s.split("::", 1)[0] for s in selection if os.path.exists(os.path.join(REPO, s.split("::", 1)[0]))})
        with open(log, "ab") as note:
            note.write(b"\n[reprobot: some selected ids were not found; running their files]\n")
        code, report = once(argv + files)
        mode = "files"
    return report, code, mode


if __name__ == "__main__":
    main()
