"""Shared helpers of the Python tests: the fixtures folder and the `kernelab` command of the
installed wheel (the same command line, run in-process by its console script)."""

import json
import os
import subprocess
import sys
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


def cli_json(*args, ok=(0,)):
    """`kernelab ARGS... --format json` as a dict."""
    _, out, _ = cli(*args, "--format", "json", ok=ok)
    return json.loads(out)


@pytest.fixture
def fixtures():
    return FIXTURES
