"""The test command itself: it leaves nothing behind, and the wheel a user installs holds every file tested.

A run that passes here but leaves a PostgreSQL server and its growing folder in /tmp, or an editable
checkout that passes while the wheel lacks a new subpackage, is a failure a user meets and CI does not.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent


def _size(folder: Path) -> int:
    """Bytes in the files under `folder` (files that vanish while it is read are left out)."""
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_size
    return total


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A temp folder the `postgres` user can enter (pytest's own are 0700, root's), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="sa-cleanup-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


INNER_TESTS = """
import time

import psycopg
import pytest


@pytest.mark.parametrize("n", range(12))
def test_passes(pg_url, n):
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TABLE t (a int)")
        conn.execute("INSERT INTO t SELECT generate_series(1, 1000)")
    # a pooled connection the code under test never closed: the drop must end it
    leaked = psycopg.connect(pg_url)
    leaked.execute("SELECT 1")


def test_fails(pg_url):
    assert pg_url == "something else"


@pytest.mark.timeout(3)
def test_stopped_by_timeout(pg_url):
    time.sleep(30)
"""


def test_a_session_with_postgresql_leaves_no_folder_no_server_and_stays_small(
    pytester: pytest.Pytester, shared_tmp: Path
) -> None:
    """A small session of its own (a pass, a fail, a test stopped by pytest-timeout, twelve databases made
    and filled): afterwards no data folder, no server process, and the folder never passed 100 MB. Kept,
    the twelve databases alone would take it past 140 MB."""
    pytester.makepyfile(test_inner=INNER_TESTS)
    peak = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            for folder in shared_tmp.glob("sa-pg-*"):
                peak = max(peak, _size(folder))
            done.wait(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    env = {"TMPDIR": str(shared_tmp), "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    old = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        result = pytester.runpytest_subprocess(
            "-p", "session_cleanup", "-p", "pg_fixtures", "-p", "no:cacheprovider", "-q", timeout=300
        )
    finally:
        done.set()
        watcher.join()
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    outcome = result.parseoutcomes()
    assert outcome.get("passed") == 12 and outcome.get("failed") == 2, result.stdout.str()[-2000:]
    assert "Timeout" in result.stdout.str()
    assert list(shared_tmp.glob("sa-pg-*")) == []
    running = [pid for pid in os.listdir("/proc") if pid.isdigit() and str(shared_tmp).encode() in _cmdline(pid)]
    assert running == [], "a process is still running on the session's folder"
    assert 0 < peak < 100_000_000, f"the server's folder reached {peak / 1e6:.0f} MB"


def test_a_passed_run_leaves_no_temp_folder_not_even_the_one_pytest_keeps_them_in(tmp_path: Path) -> None:
    """pytest removes a passed run's numbered tmp_path folder but not `pytest-of-USER` around it: the plugin
    removes that too, so the temp folder is as the run found it."""
    temp, work = tmp_path / "temp", tmp_path / "work"
    temp.mkdir()
    work.mkdir()
    (work / "test_inner.py").write_text("def test_writes(tmp_path):\n    (tmp_path / 'f').write_text('x')\n")
    env = {
        **os.environ,
        "TMPDIR": str(temp),
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    args = ["-p", "session_cleanup", "-p", "no:cacheprovider", "-o", "tmp_path_retention_policy=failed", "-q"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "test_inner.py"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert list(temp.iterdir()) == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _tracked(*folders: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *folders], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [name for name in listed.split("\0") if name]


def test_the_wheel_holds_every_package_and_data_file_of_the_tree(tmp_path: Path) -> None:
    """Built from the tracked files alone (as a clean clone has them), offline, the wheel holds every file of
    `scheduler_agent/`, `prompts/` and `cassettes/` at the place the package reads it from. A subpackage or a
    data file missing from pyproject.toml's hand-written lists passes in an editable checkout and fails here."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir: dict[str, str] = project["tool"]["setuptools"].get("package-dir", {})
    source = tmp_path / "source"
    files = _tracked("pyproject.toml", "README.md", "scheduler_agent", *package_dir.values())
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("scheduler_agent-*.whl")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    # where each tracked file lands: prompts/x -> scheduler_agent/prompts/x, as package-dir maps it
    placed = {folder: package.replace(".", "/") for package, folder in package_dir.items()}
    expected = set()
    for name in files:
        top, _, rest = name.partition("/")
        if top in placed:
            expected.add(f"{placed[top]}/{rest}")
        elif top == "scheduler_agent":
            expected.add(name)
    missing = sorted(expected - in_wheel)
    assert missing == [], f"not in the wheel (add them to pyproject.toml's packages or package-data): {missing}"
    assert "scheduler_agent/agent/loop.py" in in_wheel and "scheduler_agent/prompts/system.md" in in_wheel
