"""Environment build inside a build container (standard library only, Python 3.9+).

Runs as root with network, from the trusted tree in /work/repo; reads /run/reprobot/build.json.
Installs the Debian packages the spec names (compilers and libraries for compiled extensions),
the requirements files (line by line when a whole file fails, reporting what was skipped), the
binary-only requirements (a conda environment file's packages, each as a wheel or not at all),
the pinned packages, the project itself, the project's build requirements (so a run
can re-install it offline) and pytest when the project brings none. With an ``as_of`` moment,
every pip call goes through a local index that hides what was uploaded after it
(``dated_index.py``). Prints its progress, then a last line ``REPROBOT-RESULT <json>``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from typing import Any

REPO = "/work/repo"
# The sandbox user's home as the warm-up commands left it; every run starts with a copy.
HOME_SEED = "/opt/reprobot/home"
SANDBOX_UID = 1000
WARM_TIMEOUT_S = 900
ARTIFACTS = "/opt/reprobot/repo-build.tar"
CONSTRAINTS = "/run/reprobot/constraints.txt"


def tree_files() -> set[str]:
    found = set()
    for folder, dirs, names in os.walk(REPO):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if not name.endswith(".pyc"):
                found.add(os.path.relpath(os.path.join(folder, name), REPO))
    return found


def save_artifacts(before: set[str]) -> list[str]:
    """Keep what the install wrote into the tree (egg-info, version files, extensions).

    The tree itself is not kept in the image; a run puts these files back next to the fresh
    tree so that the editable install made here stays valid without re-installing.
    """
    created = sorted(tree_files() - before)
    os.makedirs(os.path.dirname(ARTIFACTS), exist_ok=True)
    with tarfile.open(ARTIFACTS, "w") as tar:
        for rel in created:
            tar.add(os.path.join(REPO, rel), arcname=rel)
    return created


# Behaviours of an older Python (EnvSpec.python_compat), each restored by code that the
# interpreter runs at start-up: site-packages/_reprobot_compat.py, imported by a .pth file, so the
# build's own steps, the tests and everything they start see them.
PYTHON_COMPAT = {
    # Before Python 3.7, collections.Mapping and the other ABCs were plain attributes; 3.7 to 3.9
    # keep them behind a module __getattr__ that warns (DeprecationWarning) on every use, and 3.10
    # removed them. Set as attributes, they are found without a warning, as on the older Python.
    "collections-abc-aliases": (
        "import collections\n"
        "import collections.abc\n"
        "for _name in collections.abc.__all__:\n"
        "    if _name not in vars(collections):\n"
        "        setattr(collections, _name, getattr(collections.abc, _name))\n"
    ),
}
COMPAT_MODULE = "_reprobot_compat"


def restore_python_compat(names: list[str]) -> str:
    """Write the start-up module that restores ``names``; returns its path."""
    unknown = sorted(set(names) - set(PYTHON_COMPAT))
    if unknown:
        raise SystemExit("unknown python_compat: %s" % ", ".join(unknown))
    import sysconfig

    site = sysconfig.get_paths()["purelib"]
    path = os.path.join(site, COMPAT_MODULE + ".py")
    with open(path, "w") as fh:
        fh.write("# Written by Reprobot's environment build: behaviours of an older Python.\n")
        fh.write("\n".join(PYTHON_COMPAT[n] for n in names))
    with open(os.path.join(site, COMPAT_MODULE + ".pth"), "w") as fh:
        fh.write("import %s\n" % COMPAT_MODULE)
    return path


def sh(cmd: str, env: dict[str, str]) -> int:
    print("+ " + cmd, flush=True)
    return subprocess.call(cmd, shell=True, cwd=REPO, env=env)


def pip(args: list[str], env: dict[str, str]) -> int:
    argv = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"] + args
    print("+ " + " ".join(argv), flush=True)
    return subprocess.call(argv, cwd=REPO, env=env)


def install_requirements(path: str, env: dict[str, str], skipped: list[str]) -> None:
    """Install one requirements file; when pip rejects it whole, install it line by line."""
    if pip(["-r", path], env) == 0:
        return
    with open(os.path.join(REPO, path)) as fh:
        lines = [ln.split(" #", 1)[0].strip() for ln in fh]
    for line in lines:
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            install_requirements(os.path.join(os.path.dirname(path), line.split(None, 1)[1]), env, skipped)
            continue
        if line.startswith(("-c ", "--constraint ", "--index-url", "--extra-index-url", "-i ")):
            continue
        args = line.split() if line.startswith(("-e ", "--editable ")) else [line]
        if pip(args, env) != 0:
            skipped.append("%s: %s" % (path, line))


def conda_requirements(path: str, names: dict[str, str]) -> list[str]:
    """The requirement lines of a conda environment file (its ``dependencies``, ``pip:`` entries
    included), read without a YAML library: conda's ``name=1.2`` becomes ``name==1.2.*``, conda
    names become pip names through ``names``, and Python itself is left out."""
    with open(os.path.join(REPO, path)) as fh:
        lines = fh.read().splitlines()
    out: list[str] = []
    inside = False
    for raw in lines:
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not raw.startswith((" ", "-")):
            inside = line.strip() == "dependencies:"
            continue
        item = line.strip()
        if not inside or not item.startswith("- ") or item.endswith(":"):
            continue
        spec = item[2:].strip().strip("\"'")
        if "::" in spec:
            spec = spec.split("::", 1)[1]
        match = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", spec)
        if not match:
            continue
        name, rest = match.group(1), match.group(2).replace(" ", "")
        if name.lower() in ("python", "pip"):
            continue
        if rest.startswith("=") and not rest.startswith("=="):
            rest = "==" + rest[1:].split("=", 1)[0]
            rest = rest if "*" in rest else rest + ".*"
        out.append(names.get(name.lower(), name) + rest)
    return out


def install_binary(path: str, names: dict[str, str], env: dict[str, str], skipped: list[str]) -> None:
    """Install each line of a requirement file or conda environment file as a wheel, alone."""
    if path.endswith((".yml", ".yaml")):
        lines = conda_requirements(path, names)
    else:
        with open(os.path.join(REPO, path)) as fh:
            lines = [ln.split(" #", 1)[0].strip() for ln in fh]
        lines = [ln for ln in lines if ln and not ln.startswith(("#", "-"))]
    for line in lines:
        if pip(["--only-binary", ":all:", line], env) != 0:
            skipped.append("%s: %s (no wheel for this Python)" % (path, line))


def requirement_lines(job: dict[str, Any]) -> list[str]:
    """Every requirement the build names: the pins, and the lines of its requirement files."""
    lines = list(job.get("pip_packages", [])) + list(job.get("test_requirements", []))
    for path in list(job.get("requirements", [])) + list(job.get("binary_requirements", [])):
        if not os.path.exists(os.path.join(REPO, path)):
            continue
        if path.endswith((".yml", ".yaml")):
            lines += conda_requirements(path, job.get("conda_names", {}))
            continue
        with open(os.path.join(REPO, path)) as fh:
            lines += [ln.split(" #", 1)[0].strip() for ln in fh]
    return lines


def relaxed_pin(pin: str) -> str | None:
    """``name==1.16.0`` → ``name>=1.16.0,<2``: the same major release, later builds allowed."""
    match = re.match(r"^([A-Za-z0-9_.\-]+(?:\[[^\]]*\])?)==(\d+)((?:\.[0-9A-Za-z]+)*)$", pin.strip())
    if not match:
        return None
    name, major, rest = match.groups()
    return "%s>=%s%s,<%d" % (name, major, rest, int(major) + 1)


def install_pins(pins: list[str], env: dict[str, str], relaxed: list[str]) -> list[str]:
    """Install pins one by one after the set failed as a whole; a pin that does not build on
    this Python (a release older than the Python) is relaxed to a later build of the same major
    release, taken as a wheel. Returns the pins that could not be installed either way."""
    failed = []
    for pin in pins:
        if pip([pin], env) == 0:
            continue
        wider = relaxed_pin(pin)
        if wider and pip(["--only-binary", ":all:", wider], env) == 0:
            relaxed.append("%s -> %s" % (pin, wider))
            continue
        failed.append(pin)
    return failed


def apt_install(packages: list[str], env: dict[str, str]) -> list[str] | None:
    """Install ``packages``; None when apt cannot be used at all, else the packages it could
    not install. When the set fails, each is tried alone: a name the CI's Ubuntu has and Debian
    lacks costs only itself, and is named."""
    apt_env = dict(env, DEBIAN_FRONTEND="noninteractive")
    if sh("apt-get update", apt_env) != 0:
        return None
    command = "apt-get install -y --no-install-recommends "
    missing: list[str] = []
    if sh(command + " ".join(packages), apt_env) != 0:
        missing = [p for p in packages if sh(command + p, apt_env) != 0]
    shutil.rmtree("/var/lib/apt/lists", ignore_errors=True)
    os.makedirs("/var/lib/apt/lists/partial", exist_ok=True)
    return missing


VERSIONEER_FILE = (
    "# Written by Reprobot's environment build from a known version: the tree has no git\n"
    "# metadata, so versioneer could not tell it.\n"
    "import json\n\n"
    "version_json = '''\n%s\n'''  # END VERSION_JSON\n\n\n"
    "def get_versions():\n"
    "    return json.loads(version_json)\n"
)


def versioneer_source() -> str | None:
    """``versionfile_source`` of a versioneer project (setup.cfg's [versioneer]), if any."""
    cfg = os.path.join(REPO, "setup.cfg")
    if not os.path.exists(os.path.join(REPO, "versioneer.py")) or not os.path.exists(cfg):
        return None
    with open(cfg) as fh:
        text = fh.read()
    section = re.search(r"^\[versioneer\](.*?)(?=^\[|\Z)", text, re.S | re.M)
    found = re.search(r"^versionfile_source\s*=\s*(\S+)", section.group(1), re.M) if section else None
    return found.group(1) if found else None


def pin_versioneer(version: str) -> bool:
    """Give a versioneer project its version when the tree has no git metadata (versioneer
    would say ``0+unknown``, which no requirement on the project itself accepts): its version
    file becomes the static one versioneer writes into a source distribution. For this build
    only; every run streams the tree afresh."""
    source = versioneer_source()
    if not source or os.path.exists(os.path.join(REPO, ".git")):
        return False
    path = os.path.join(REPO, source)
    if not os.path.exists(path):
        return False
    data = {"version": version, "full-revisionid": None, "dirty": False, "error": None, "date": None}
    with open(path, "w") as fh:
        fh.write(VERSIONEER_FILE % json.dumps(data, indent=1))
    return True


def build_requires() -> list[str]:
    """The [build-system] requires of pyproject.toml, read without a TOML library (3.9 has none)."""
    path = os.path.join(REPO, "pyproject.toml")
    if not os.path.exists(path):
        return ["setuptools", "wheel"]
    with open(path) as fh:
        text = fh.read()
    section = re.search(r"^\[build-system\](.*?)(?=^\[|\Z)", text, re.S | re.M)
    if not section:
        return ["setuptools", "wheel"]
    # Quoted strings may hold brackets (extras such as "setuptools_scm[toml]").
    requires = re.search(r"""requires\s*=\s*\[((?:[^\]"']|"[^"]*"|'[^']*')*)\]""", section.group(1), re.S)
    if not requires:
        return []
    return re.findall(r"""["']([^"']+)["']""", requires.group(1))


def editable_install() -> bool:
    """Whether the project is installed editable, pointing at /work/repo."""
    site = [p for p in sys.path if p.endswith("site-packages")]
    for folder in site:
        for direct in glob.glob(os.path.join(folder, "*.dist-info", "direct_url.json")):
            with open(direct) as fh:
                data = json.load(fh)
            if data.get("url", "").startswith("file://" + REPO) and data.get("dir_info", {}).get("editable"):
                return True
        for link in glob.glob(os.path.join(folder, "*.egg-link")):
            with open(link) as fh:
                if fh.readline().strip().startswith(REPO):
                    return True
    return False


def main() -> None:
    with open("/run/reprobot/build.json") as fh:
        job = json.load(fh)
    env = dict(os.environ)
    env.update(job.get("pip_env", {}))
    env.update(job.get("env", {}))
    # Shipped beside this script; imported here so the host's tests can load this file alone.
    import dated_index  # type: ignore[import-not-found]

    moment = dated_index.parse_time(job.get("as_of"))
    if moment is None:
        return finish(build(job, env))
    upstreams = [env.get("PIP_INDEX_URL") or dated_index.default_index()] + env.get("PIP_EXTRA_INDEX_URL", "").split()
    cafile = env.get("PIP_CERT") or env.get("SSL_CERT_FILE")
    pinned = dated_index.exact_pins(requirement_lines(job))
    with dated_index.DatedIndex(upstreams, moment, dated_index.this_python(), cafile=cafile, pinned=pinned) as index:
        # Every pip call reads these, the spec's own commands and pip's build environments too.
        env["PIP_INDEX_URL"] = index.urls[0]
        env["PIP_EXTRA_INDEX_URL"] = " ".join(index.urls[1:])
        print("+ packages as of %s, through a local index bounded there" % job["as_of"], flush=True)
        result = build(job, env)
        # Also when the build failed: what the date hid or let through may be why.
        result["resolution"] = index.report()
    finish(result)


def run_prepare(job: dict[str, Any], env: dict[str, str], skipped: list[str]) -> bool:
    """Run the project's own preparing commands (data downloads, generated code), with network:
    what they write into the tree is kept with the install's files. One that fails is named;
    True when all succeeded."""
    ok = True
    for cmd in job.get("prepare", []):
        code = sh(cmd, env)
        if code != 0:
            skipped.append("prepare: %s (exit %d)" % (cmd, code))
            ok = False
    return ok


def build(job: dict[str, Any], env: dict[str, str]) -> dict[str, object]:
    result: dict[str, object] = {"ok": False, "skipped": []}
    skipped: list[str] = []
    before = tree_files()
    if job.get("python_compat"):
        where = restore_python_compat(list(job["python_compat"]))
        print("+ restored for this environment: %s (%s)" % (", ".join(job["python_compat"]), where), flush=True)
    if job.get("constraints"):
        # pip reads PIP_CONSTRAINT on every call, the install command's included.
        with open(CONSTRAINTS, "w") as fh:
            fh.write("\n".join(job["constraints"]) + "\n")
        env["PIP_CONSTRAINT"] = CONSTRAINTS
    if job.get("system_packages"):
        missing = apt_install(list(job["system_packages"]), env)
        if missing is None:
            result["error"] = "apt could not read its package lists: %s" % " ".join(job["system_packages"])
            return result
        skipped += ["system package: %s (not in this Debian release)" % p for p in missing]
    pretend = env.get("SETUPTOOLS_SCM_PRETEND_VERSION")
    if pretend and pin_versioneer(pretend):
        print("+ versioneer: version %s written for this build" % pretend, flush=True)
    for cmd in job.get("pre_install", []):
        if sh(cmd, env) != 0:
            result["error"] = "pre-install command failed: %s" % cmd
            return result
    for req in job.get("requirements", []):
        if os.path.exists(os.path.join(REPO, req)):
            install_requirements(req, env, skipped)
        else:
            skipped.append("%s: file not found" % req)
    for req in job.get("binary_requirements", []):
        if os.path.exists(os.path.join(REPO, req)):
            install_binary(req, job.get("conda_names", {}), env, skipped)
    relaxed: list[str] = []
    pins = list(job.get("pip_packages", []))
    if pins and pip(pins, env) != 0:
        failed = install_pins(pins, env, relaxed)
        if failed:
            result["error"] = "installing the pinned packages failed: %s" % " ".join(failed)
            result["relaxed"] = relaxed
            return result
    prepared = False
    if sh(job["install"], env) != 0:
        # A project whose build needs files its own preparation makes (``make cython`` before
        # ``pip install .``) installs once they are there.
        prepared = bool(job.get("prepare"))
        if prepared:
            run_prepare(job, env, skipped)
        if not prepared or sh(job["install"], env) != 0:
            result["error"] = "the install command failed: %s" % job["install"]
            return result
    tests_need = list(job.get("test_requirements", []))
    if tests_need and pip(tests_need, env) != 0:
        # One at a time, so that one that does not install (no release for this Python, a
        # build that fails) costs only itself; each left out is named.
        for requirement in tests_need:
            if pip([requirement], env) != 0:
                skipped.append("test requirement: %s" % requirement)
    if not prepared:
        run_prepare(job, env, skipped)
    requires = build_requires()
    if requires and pip(requires, env) != 0:
        skipped.append("build requirements: %s" % " ".join(requires))
    if subprocess.call([sys.executable, "-c", "import pytest"], cwd="/") != 0 and pip(["pytest"], env) != 0:
        result["error"] = "pytest could not be installed"
        return result
    artifacts = save_artifacts(before)
    if job.get("warm"):
        result["warm"] = warm(list(job["warm"]), env)
    freeze = subprocess.run([sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True, check=False)
    result.update({"ok": True, "skipped": skipped, "relaxed": relaxed, "editable": editable_install(), "freeze": freeze.stdout.splitlines(),
                   "artifacts": artifacts})
    # The tree is streamed in afresh for every run; keeping it would only grow the image.
    shutil.rmtree(REPO, ignore_errors=True)
    os.makedirs(REPO)
    return result


def _as_sandbox_user() -> None:
    os.setgroups([])
    os.setresgid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
    os.setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)


def warm(commands: list[str], env: dict[str, str]) -> list[dict[str, object]]:
    """Run ``commands`` as the sandbox user, with network, in a home of their own that the image
    keeps: what the project fetches at test start-up (data files, caches) is then there for every
    offline run, which starts with a copy of it. A command that fails is reported, never fatal:
    the runs will tell whether what it should have fetched is missing."""
    os.makedirs(HOME_SEED, exist_ok=True)
    os.chown(HOME_SEED, SANDBOX_UID, SANDBOX_UID)
    user_env = dict(env, HOME=HOME_SEED)
    done: list[dict[str, object]] = []
    for cmd in commands:
        print("+ (warm, as the sandbox user) " + cmd, flush=True)
        try:
            code = subprocess.call(cmd, shell=True, cwd=REPO, env=user_env, preexec_fn=_as_sandbox_user,
                                   timeout=WARM_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            code = -9
        done.append({"command": cmd, "exit": code})
    return done


def finish(result: dict[str, object]) -> None:
    print("REPROBOT-RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
