"""`kernelab gate` with a `[python]` benchmark (issue 43): a throwaway git repository whose
`bench/k.py` times a NumPy "kernel" from a helper module of the repository. The base and head
each load their own file and their own helper (`file.py:function` references), a planted 10%
slowdown in the head's helper is a regression (exit 1), a commit that does not touch the
kernel passes (exit 0). Verdicts are asserted by word, never by exact figures."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HELPER = """import numpy as np


def work(x, y):
    np.sqrt(x, out=y)
"""

# The same output with 10% more work: the first tenth of the elements computed twice.
SLOW_HELPER = HELPER + """    k = len(x) // 10
    np.sqrt(x[:k], out=y[:k])
"""

BENCH = """import numpy as np

from helper import work

N = 2_000_000


def make():
    rng = np.random.default_rng(7)
    return rng.standard_normal(N).astype(np.float32) ** 2 + 1.0, np.empty(N, np.float32)


def run(x, y):
    work(x, y)
"""

CONFIG = """[python]
module = "bench/k.py"
function = "run"
inputs = "make"
threshold = "5%"
options = ["--outputs", "1", "--rounds", "40", "--samples-per-round", "10"]
"""


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture()
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / "bench").mkdir(parents=True)
    (r / ".kernelab").mkdir()
    _git(r, "init", "--quiet", "-b", "main")
    for k, v in (("user.name", "kernelab tests"), ("user.email", "tests@kernelab.invalid"),
                 ("commit.gpgsign", "false")):
        _git(r, "config", k, v)
    (r / "bench" / "helper.py").write_text(HELPER)
    (r / "bench" / "k.py").write_text(BENCH)
    (r / ".kernelab" / "gate.toml").write_text(CONFIG)
    _git(r, "add", ".")
    _git(r, "commit", "--quiet", "-m", "the kernel")
    for branch, path, text in (("slow", "bench/helper.py", SLOW_HELPER),
                               ("same", "README", "does not touch the kernel\n")):
        _git(r, "checkout", "--quiet", "-b", branch, "main")
        (r / path).write_text(text)
        _git(r, "add", ".")
        _git(r, "commit", "--quiet", "-m", branch)
    _git(r, "checkout", "--quiet", "main")
    return r


def _gate(repo, tmp_path, head):
    exe = Path(sys.executable).parent / "kernelab"
    out = tmp_path / f"{head}.json"
    summary = tmp_path / f"{head}.md"
    env = dict(os.environ, KERNELAB_PYTHON=sys.executable, XDG_STATE_HOME=str(tmp_path / "state"),
               GITHUB_STEP_SUMMARY=str(summary))
    env.pop("GITHUB_BASE_REF", None)
    bundle = tmp_path / f"bundle-{head}"
    p = subprocess.run([str(exe), "gate", "--repo", str(repo), "--base", "main", "--head", head,
                        "--format", "json", "--out", str(out), "--record", str(bundle)],
                       capture_output=True, text=True, env=env)
    if p.returncode in (0, 1):
        # The bundle renders, and its report passes its own audit.
        md = tmp_path / f"{head}-report.md"
        r = subprocess.run([str(exe), "report", str(bundle), "--format", "md", "--out", str(md)],
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        c = subprocess.run([str(exe), "report", "check", "--bundle", str(bundle), str(md)],
                           capture_output=True, text=True, env=env)
        assert c.returncode == 0, c.stdout + c.stderr
        records = [json.loads(f.read_text()) for f in sorted(bundle.glob("*.json"))]
        assert [r["label"] for r in records] == ["gate", "k"], records
        # Both sides' files were hashed while their work trees existed.
        inputs = records[1]["provenance"]["inputs"]
        assert [i["path"].endswith("bench/k.py") for i in inputs] == [True, True], inputs
        assert all(len(i["sha256"] or "") == 64 for i in inputs), inputs
    doc = json.loads(out.read_text()) if out.exists() else None
    return p, doc, summary.read_text() if summary.exists() else ""


def test_a_planted_slowdown_in_the_heads_helper_is_a_regression(repo, tmp_path):
    p, doc, summary = _gate(repo, tmp_path, "slow")
    assert p.returncode == 1, p.stderr
    g = doc["gate"]
    assert g["decision"] == "regression" and g["exit_status"] == 1
    (m,) = g["metrics"]
    assert m["metric"] == "call_time" and m["verdict"] == "SLOWER" and m["interval"][0] > 0.0, m
    assert "kernelab.kernel.compare of bench/k.py:run" in g["benchmark"]
    # The measurement is the kernel_run document of the comparison, each side its own file.
    run = doc["kernel_run"]
    assert run["kind"] == "kernel_run" and run["pass"] is True
    assert "❌ kernelab gate: regression" in summary and "call\\_time" not in summary
    assert "| call_time | **SLOWER** |" in summary, summary


def test_a_change_that_does_not_touch_the_kernel_passes(repo, tmp_path):
    p, doc, summary = _gate(repo, tmp_path, "same")
    assert p.returncode == 0, p.stderr
    g = doc["gate"]
    assert g["decision"] == "pass" and g["metrics"][0]["verdict"] in ("SAME", "FASTER"), g
    assert "✅ kernelab gate: pass" in summary
