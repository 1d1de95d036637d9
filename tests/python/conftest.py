"""Shared helpers of the Python tests: the fixtures folder and the `kernelab` command of the
installed wheel (the same command line, run in-process by its console script); folders of the
session's own for everything the tests run; a skip that fails under KERNELAB_REQUIRE_ALL=1."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def kernelab_cmd():
    """The wheel's `kernelab` command, beside this interpreter."""
    exe = Path(sys.executable).parent / "kernelab"
    assert exe.exists(), f"{exe}: the wheel's kernelab command is not installed"
    return str(exe)


def cli(*args, ok=(0,)):
    """Runs `kernelab ARGS...`; returns (exit code, stdout, stderr)."""
    p = subprocess.run([kernelab_cmd(), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode in ok, f"kernelab {args}: exit {p.returncode}: {p.stderr}"
    return p.returncode, p.stdout, p.stderr


def binary():
    """The kernelab binary cargo built (`KERNELAB_BINARY`, set by .ci/run), for what the wheel
    leaves out (`export --parquet`, `mcp`); the test skips without it."""
    exe = os.environ.get("KERNELAB_BINARY", "")
    if not exe or not os.access(exe, os.X_OK):
        pytest.skip("KERNELAB_BINARY names no kernelab binary (cargo build -p kernelab; .ci/run sets it)")
    return exe


def cli_json(*args, ok=(0,)):
    """`kernelab ARGS... --format json` as a dict."""
    _, out, _ = cli(*args, "--format", "json", ok=ok)
    return json.loads(out)


@pytest.fixture
def fixtures():
    return FIXTURES


@pytest.fixture(scope="session", autouse=True)
def own_folders():
    """The state, cache, config, data and temporary folders of this session (as the Rust tests'
    kernelab_testkit::isolated_env), for the module in-process and every program it starts;
    removed at the end: nothing lands in the user's home or stays in /tmp."""
    names = ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR")
    saved = {n: os.environ.get(n) for n in names}
    with tempfile.TemporaryDirectory(prefix="kernelab-pytest-") as d:
        for n in names:
            p = Path(d) / n.lower()
            p.mkdir()
            os.environ[n] = str(p)
        tempfile.tempdir = None  # tempfile reads TMPDIR again
        yield Path(d)
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v
        tempfile.tempdir = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Under KERNELAB_REQUIRE_ALL=1 (.ci/run sets it), a test that skips fails: CI has every
    prerequisite, so a skip there hides a test that should have run."""
    report = yield
    if report.skipped and not hasattr(report, "wasxfail") and os.environ.get("KERNELAB_REQUIRE_ALL") == "1":
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped, and KERNELAB_REQUIRE_ALL=1 says every test must run: {why}"
    return report
