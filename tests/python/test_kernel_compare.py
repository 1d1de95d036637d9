"""`kernelab.kernel.compare` and `kernelab kernel run --python` on CPU callables (issue 42):
verdicts of a planted slowdown and of an A/A control, each gate failing on the output that
should fail it, a callable's exception named, the record rendered by the report. The verdicts
are asserted by word and by the interval's side, never by exact figures (a noisy CI box)."""

import hashlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kernelab
import kernel_pairs as kp

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def state_home(tmp_path, monkeypatch):
    """Run folders (samples files) under the test's own folder."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("KERNELAB_BUNDLE", raising=False)


def gate(doc, prefix):
    """The gate whose name starts with `prefix`."""
    found = [g for g in doc["gates"] if g["name"].startswith(prefix)]
    assert len(found) == 1, [g["name"] for g in doc["gates"]]
    return found[0]


def test_planted_slowdown_is_slower():
    d = kernelab.kernel.compare(kp.base, kp.slower, kp.make, outputs=[1], rounds=60, samples=10)
    assert d["kind"] == "kernel_run" and d["pass"] is True
    assert all(g["passed"] for g in d["gates"]) and len(d["gates"]) == 5
    a = d["analysis"]
    assert a["verdict"] == "SLOWER", a
    assert a["interval"]["low"] > 1.0, a["interval"]
    assert len(d["rounds"]) == 60 and [r["order"] for r in d["rounds"][:4]] == ["AB", "BA", "AB", "BA"]
    assert d["batch"] >= 1 and d["device"].startswith("cpu")
    assert [b["code"] for b in d["builds"]] == ["python:kernel_pairs:base", "python:kernel_pairs:slower"]
    # Every sample is in the run's samples file, as kernel run writes them.
    lines = [json.loads(l) for l in Path(d["samples"]).read_text().splitlines()]
    timed = [l for l in lines if l.get("kind") == "sample"]
    assert len(timed) == 60 * 2 * 10, lines[:2]


def test_aa_control_is_same():
    d = kernelab.kernel.compare(kp.base, kp.slower, kp.make, outputs=[1], aa=True, rounds=40, samples=10,
                                threshold=0.03)
    a = d["analysis"]
    assert a["verdict"] == "SAME", a
    assert 0.97 < a["interval"]["low"] <= a["interval"]["high"] < 1.03
    assert d["builds"][0]["code"] == d["builds"][1]["code"] == "python:kernel_pairs:base"


def test_nan_fails_the_finite_gate_and_skips_timing():
    d = kernelab.kernel.compare(kp.base, kp.writes_nan, kp.make, outputs=[1], rounds=4)
    assert d["pass"] is False and d["analysis"] is None and d["rounds"] == []
    assert gate(d, "baseline outputs all finite")["passed"] is True
    g = gate(d, "candidate outputs all finite")
    assert g["passed"] is False and g["detail"].startswith("1 of ")


def test_outputs_are_poisoned_before_each_gate_run():
    """An output half written keeps the NaN poison in its other half."""
    d = kernelab.kernel.compare(kp.base, kp.half, kp.make, outputs=1, rounds=4)
    g = gate(d, "candidate outputs all finite")
    assert g["passed"] is False and g["detail"].startswith(f"{kp.N - kp.N // 2} of {kp.N}")


def test_one_element_fails_the_bitwise_gate():
    d = kernelab.kernel.compare(kp.base, kp.one_off, kp.make, outputs=[1], rounds=4)
    assert d["pass"] is False
    g = gate(d, "baseline vs candidate bitwise")
    assert g["passed"] is False and g["detail"].startswith("1 of ") and "[777]" in g["detail"]
    assert gate(d, "candidate outputs all finite")["passed"] is True


def test_returned_outputs_tolerance_and_oracle():
    d = kernelab.kernel.compare(kp.returns, kp.returns_rounded, kp.make, rounds=4, rtol=1e-3, atol=0)
    assert gate(d, "baseline vs candidate (rtol")["passed"] is True
    d = kernelab.kernel.compare(kp.returns, kp.returns_rounded, kp.make, rounds=4)
    assert gate(d, "baseline vs candidate bitwise")["passed"] is False
    d = kernelab.kernel.compare(kp.returns, kp.returns_rounded, kp.make, rounds=4, rtol=1e-3,
                                atol=0, oracle=kp.oracle)
    assert gate(d, "candidate vs oracle `kernel_pairs:oracle`")["passed"] is True
    d = kernelab.kernel.compare(kp.returns, kp.returns, kp.make, rounds=4, rtol=1e-6, atol=0,
                                oracle=kp.returns_rounded)
    assert gate(d, "candidate vs oracle")["passed"] is False


def test_an_exception_names_the_callable():
    with pytest.raises(kernelab.kernel.CallableError) as e:
        kernelab.kernel.compare(kp.base, kp.raises, kp.make, outputs=[1])
    assert isinstance(e.value, kernelab.Error)
    assert e.value.callable == "kernel_pairs:raises" and e.value.role == "candidate"
    assert "kernel_pairs:raises" in str(e.value) and "ValueError" in str(e.value)
    assert isinstance(e.value.__cause__, ValueError)
    with pytest.raises(kernelab.kernel.CallableError, match="inputs `kernel_pairs:bad_inputs`"):
        kernelab.kernel.compare(kp.base, kp.base, kp.bad_inputs)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(rounds=1), "rounds=1"),
        (dict(rounds=2.5), "rounds=2.5"),
        (dict(samples=0), "samples=0"),
        (dict(threshold=1.5), "threshold"),
        (dict(outputs=[5]), "outputs: 5"),
        (dict(graph=True), "graph=True"),
    ],
)
def test_bad_settings_are_usage_errors(kw, match):
    kw.setdefault("outputs", [1])
    with pytest.raises(kernelab.UsageError, match=match):
        kernelab.kernel.compare(kp.base, kp.base, kp.make, **kw)


def test_record_carries_the_callables_and_renders(tmp_path):
    ev = tmp_path / "evidence"
    d = kernelab.kernel.compare(kp.base, kp.slower, kp.make, outputs=[1], rounds=6,
                                record=ev, label="sqrt 3% slower")
    b = kernelab.Bundle(ev)
    (r,) = b.records
    assert r["kind"] == "kernel_run" and r["label"] == "sqrt 3% slower"
    assert r["result"]["rounds"] == d["rounds"]
    inputs = {i["path"]: i for i in r["provenance"]["inputs"]}
    src = inspect.getsource(kp.slower).encode()  # it names no other function
    assert inputs["python:kernel_pairs:slower"]["sha256"] == hashlib.sha256(src).hexdigest()
    assert inputs["python:kernel_pairs:slower"]["bytes"] == len(src)
    assert "python:kernel_pairs:make" in inputs
    import numpy as np

    assert f"python package numpy {np.__version__}" in inputs
    report = b.report()
    assert "sqrt 3% slower" in report and d["analysis"]["verdict"] in report


def kernelab_python(*args):
    """`kernelab kernel run --python ARGS...` from this folder; the completed process."""
    exe = Path(sys.executable).parent / "kernelab"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    return subprocess.run([str(exe), "kernel", "run", "--python", *args], capture_output=True,
                          text=True, cwd=HERE, env=env)


def test_cli_exit_codes():
    p = kernelab_python("kernel_pairs:base", "kernel_pairs:slower", "--inputs", "kernel_pairs:make",
                        "--outputs", "1", "--rounds", "6", "--format", "json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["kind"] == "kernel_run" and len(doc["rounds"]) == 6
    p = kernelab_python("kernel_pairs:base", "kernel_pairs:one_off", "--inputs", "kernel_pairs:make",
                        "--outputs", "1")
    assert p.returncode == 1 and "FAIL baseline vs candidate bitwise" in p.stdout, p.stdout
    p = kernelab_python("kernel_pairs:base", "kernel_pairs:raises", "--inputs", "kernel_pairs:make",
                        "--outputs", "1")
    assert p.returncode == 2 and "kernel_pairs:raises" in p.stderr and "ValueError" in p.stderr
    p = kernelab_python("kernel_pairs:base", "kernel_pairs:nope", "--inputs", "kernel_pairs:make")
    assert p.returncode == 2 and "nope" in p.stderr


def test_cli_global_record_and_label(tmp_path):
    """`kernelab --record DIR --label L kernel run --python ...`: the global options apply."""
    exe = Path(sys.executable).parent / "kernelab"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    ev = tmp_path / "ev"
    p = subprocess.run([str(exe), "--record", str(ev), "--label", "via the CLI", "kernel", "run",
                        "--python", "kernel_pairs:base", "kernel_pairs:slower", "--inputs",
                        "kernel_pairs:make", "--outputs", "1", "--rounds", "4"],
                       capture_output=True, text=True, cwd=HERE, env=env)
    assert p.returncode == 0, p.stderr
    (r,) = kernelab.Bundle(ev).records
    assert r["label"] == "via the CLI" and r["kind"] == "kernel_run"


class _DeviceArray:
    """Looks like a CUDA array of another library (CuPy): timing it on the host would be wrong."""

    __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False), "version": 3}


def test_device_arrays_of_other_libraries_are_refused():
    with pytest.raises(kernelab.UsageError, match="on a device"):
        kernelab.kernel.compare(kp.returns, kp.returns, lambda: (_DeviceArray(),))


def test_capture_of_recorded_triton_launches_writes_a_spec_that_resolves(tmp_path, monkeypatch):
    """Item 2 of issue 42 on a machine without a GPU: Triton's launch path stood in by
    `fake_triton` with real cache entries (Triton 3.0.0 vs 3.6.0 builds of one kernel). The
    capture names each side's kernel, compares their machine code, and writes code objects,
    metadata, the first launch's inputs and a launch spec that `kernel run --dry-run` resolves,
    each build with the parameters its cubin records (3.6 appends two scratch pointers)."""
    import fake_triton as ft
    import numpy as np
    from conftest import cli_json

    ft.install(monkeypatch)
    out = tmp_path / "captured"
    d = kernelab.kernel.compare(ft.base, ft.cand, ft.make, outputs=[2], rounds=4, samples=1, warmup=1,
                                capture=out)
    assert d["pass"] is True, d["gates"]
    la = d["launched"]
    assert [(k["side"], k["name"], k["function"]) for k in la["kernels"]] == [
        ("baseline", "scale_add", "fake_triton:scale_add"), ("candidate", "scale_add", "fake_triton:scale_add")]
    assert [k["launches"] for k in la["kernels"]] == [1.0, 1.0]
    assert [k["grid"] for k in la["kernels"]] == [[4, 1, 1], [4, 1, 1]]
    assert [k["block"] for k in la["kernels"]] == [[128, 1, 1], [128, 1, 1]]
    # Host callables: no GPU events, so no GPU time and no share (unavailable, not 0).
    assert la["call_ns"] == [None, None] and all(k["ns"] is None and k["share"] is None for k in la["kernels"])
    for k, version in zip(la["kernels"], ("3.0.0", "3.6.0")):
        cubin = (ft.FIXTURES / version / "scale_add.cubin").read_bytes()
        assert k["code_sha256"] == hashlib.sha256(cubin).hexdigest()
        assert (out / k["code"]).read_bytes() == cubin
    [pair] = la["pairs"]
    assert pair["identical"] is False and pair["machine_code"].startswith("machine code differs"), pair
    assert pair["registers"][0] is not None and pair["registers"][1] is not None
    plan = cli_json("kernel", "run", "--dry-run", pair["spec"])
    b, c = plan["builds"]
    assert (b["symbol"], c["symbol"]) == ("scale_add", "scale_add")
    assert len(b["params"]) == 6 and len(c["params"]) == 8, (b["params"], c["params"])
    assert b["params"][:3] == ["x_ptr", "y_ptr", "out_ptr"]
    # The inputs are the bytes the first launch read; the output written is `inout`.
    x, y, _ = ft.make()
    spec = Path(pair["spec"]).read_text()
    assert 'role = "inout"' in spec and spec.count("[[arg]]") == 6
    st = kernelab.check.finite(str(out / "inputs.safetensors"))
    shapes = {t["name"]: t["elements"] for f in st["files"] for t in f["tensors"]}
    assert shapes == {"x_ptr": ft.N, "y_ptr": ft.N, "out_ptr": ft.N}
    raw = (out / "inputs.safetensors").read_bytes()
    assert x.tobytes() in raw and y.tobytes() in raw
    # An A/A of one build: identical machine code, said beside the kernels.
    aa = kernelab.kernel.compare(ft.base, ft.base, ft.make, outputs=[2], rounds=4, samples=1, warmup=1)
    [p] = aa["launched"]["pairs"]
    assert p["identical"] is True and p["machine_code"].startswith("identical machine code"), p
    assert p["spec"] is None and aa["launched"]["capture"] is None
    # The terminal view names the kernels and the pair.
    text = kernelab._native.kernel_text(json.dumps(d), "md", None)
    assert "Kernels the baseline launched per call" in text and "Kernels the candidate launched per call" in text and "Machine code of the paired kernels" in text
    # capture=False captures nothing; a folder that is not empty is refused.
    assert kernelab.kernel.compare(ft.base, ft.cand, ft.make, outputs=[2], rounds=2, samples=1,
                                   capture=False).get("launched") is None
    with pytest.raises(kernelab.UsageError, match="new or empty folder"):
        kernelab.kernel.compare(ft.base, ft.cand, ft.make, outputs=[2], rounds=2, samples=1, capture=out)
    assert np.isfinite(x).all()


def test_samples_are_written_as_measured_and_kept_when_a_callable_fails_mid_run(tmp_path):
    """The samples file holds each sample as it is measured: a candidate that raises during
    the timing leaves the run's header and every sample taken before, and the run marked
    failed; a run that completes has them all."""
    calls = {"n": 0}

    def flaky(x, out):
        calls["n"] += 1
        if calls["n"] > 200:
            raise RuntimeError("the device fell off the bus")
        kp.base(x, out)

    path = tmp_path / "samples.jsonl"
    with pytest.raises(kernelab.kernel.CallableError, match="during timing"):
        kernelab.kernel.compare(kp.base, flaky, kp.make, outputs=[1], rounds=400, samples=2, warmup=1,
                                batch=1, samples_file=path)
    lines = [json.loads(l) for l in path.read_text().splitlines()]
    assert lines[0]["kind"] == "header", lines[0]
    taken = [l for l in lines if l.get("kind") == "sample"]
    assert 100 < len(taken) < 800, len(taken)
    assert {l["sample"]["build"] for l in taken} == {"baseline", "candidate"}
    states = [p.read_text().strip() for p in (tmp_path / "state").rglob("state") if p.is_file()]
    assert states == ["failed"], states


import numpy as np  # noqa: E402


def test_a_split_change_pairs_by_name_and_the_kernel_without_counterpart_reproduces_alone(tmp_path, monkeypatch):
    """Two kernels (the fake `scale` and `add`: real 3.0.0 and 3.3.1 cache entries, both of
    the kernel named `scale_add`) against one (3.6.0): the first pairs with the candidate by
    name, the second has no counterpart and gets a spec of its own (an A/A of it) that
    resolves, from what it read at its launch (`out` as `scale` left it); the two code objects
    of one name are kept apart."""
    import fake_triton as ft
    from conftest import cli_json

    ft.install(monkeypatch)
    out = tmp_path / "split"
    d = kernelab.kernel.compare(ft.split, ft.cand, ft.make, outputs=[2], rounds=2, samples=1, warmup=1,
                                capture=out)
    la = d["launched"]
    assert [(k["side"], k["function"], k["code"]) for k in la["kernels"]] == [
        ("baseline", "fake_triton:scale", "baseline/scale_add.cubin"),
        ("baseline", "fake_triton:add", "baseline/scale_add_2.cubin"),
        ("candidate", "fake_triton:scale_add", "candidate/scale_add.cubin")]
    assert (out / "baseline/scale_add_2.cubin").read_bytes() == (ft.FIXTURES / "3.3.1/scale_add.cubin").read_bytes()
    [pair] = la["pairs"]
    assert pair["identical"] is False and pair["spec"].endswith("1_scale_add/spec.toml"), pair
    assert [n for n in la["notes"] if "no counterpart" in n] == [
        "baseline kernel scale_add has no counterpart in the candidate (fused, split or removed)"]
    [alone] = [n.split("kernelab kernel run ")[1] for n in la["notes"] if "alone (an A/A of it)" in n]
    for spec in (pair["spec"], alone):
        plan = cli_json("kernel", "run", "--dry-run", spec)
        assert len(plan["builds"][0]["params"]) >= 6
    plan = cli_json("kernel", "run", "--dry-run", alone)
    assert plan["builds"][0]["params"] == plan["builds"][1]["params"] and len(plan["builds"][0]["params"]) == 7
    x, _, _ = ft.make()
    raw = (Path(alone).parent / "inputs.safetensors").read_bytes()
    assert (x * np.float32(2.0)).tobytes() in raw


FAKE_NVIDIA_SMI = """#!/bin/sh
case "$1" in
  --version) printf 'NVIDIA-SMI version  : 580.159.04\\nCUDA Version        : 13.0\\n'; exit 0;;
  --query-gpu=*) [ "$2" = "--format=csv,noheader,nounits" ] || exit 6;;
  *) exit 4;;
esac
n=$(cat "$(dirname "$0")/calls" 2>/dev/null || echo 0)
echo $((n + 1)) > "$(dirname "$0")/calls"
clock=1980
if [ "$n" -ge CHANGE_AFTER ]; then clock=1410; fi
echo "GPU-8b407799-36d2-0743-babd-293f8944a796, NVIDIA H100 80GB HBM3, 580.159.04, $clock, 2619, 1980, 2619, Not Active, 700.00, Enabled, Enabled, Default"
"""


def _fake_nvidia_smi(tmp_path, monkeypatch, change_after):
    """An `nvidia-smi` first on PATH whose application clock falls from 1980 to 1410 MHz after
    `change_after` fingerprints (the shape of nvidia-smi's real CSV, by column)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_NVIDIA_SMI.replace("CHANGE_AFTER", str(change_after)))
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


def test_the_conditions_are_taken_before_and_after_timing_and_a_change_refuses_the_verdict(tmp_path, monkeypatch):
    """Item 4 of issue 43 in Python: the fingerprint before the first round and after the last
    (as `kernel run`); unchanged, the verdict stands; a clock that moved refuses it (the CLI's
    exit 2, naming the field and both values)."""
    _fake_nvidia_smi(tmp_path, monkeypatch, change_after=100)
    d = kernelab.kernel.compare(kp.base, kp.base, kp.make, outputs=[1], rounds=4, samples=2)
    c = d["conditions"]
    assert c["changed"] == [] and c["fingerprint"]["gpus"][0]["sm_clock_mhz"] == "1980", c
    assert c["fingerprint"]["command"].startswith("kernelab.kernel.compare kernel_pairs:base"), c
    # A clock that falls between the first fingerprint and the last.
    (tmp_path / "bin" / "calls").unlink()
    monkeypatch.setenv("PATH", os.environ["PATH"].split(os.pathsep, 1)[1])
    bin_dir = tmp_path / "bin2"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_NVIDIA_SMI.replace("CHANGE_AFTER", "1"))
    smi.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    exe = Path(sys.executable).parent / "kernelab"
    p = subprocess.run([str(exe), "kernel", "run", "--python", "kernel_pairs:base", "kernel_pairs:base",
                        "--inputs", "kernel_pairs:make", "--outputs", "1", "--rounds", "4",
                        "--format", "json"], capture_output=True, text=True, cwd=HERE, env=env)
    assert p.returncode == 2, p.stderr
    assert "sm_clock_mhz: 1980 → 1410 (after round 3)" in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    # 1410 is not the default application clock: the clocks read as set (locked) too.
    fields = [ch["field"] for ch in doc["conditions"]["changed"]]
    assert fields == ["gpu 0 sm_clock_mhz", "gpu 0 clocks_locked"], doc["conditions"]


def test_a_captured_pairs_code_diff_is_recorded_beside_the_run(tmp_path, monkeypatch):
    """Item 2 of issue 42: with `capture=DIR` and `record=`, each captured pair's code objects
    go through `code diff` into the bundle (the real Triton 3.0.0 and 3.6.0 builds of one
    kernel), equal to `kernelab code diff` of the same files; the report renders and passes
    its own audit."""
    import fake_triton as ft
    from conftest import cli_json

    ft.install(monkeypatch)
    out, ev = tmp_path / "captured", tmp_path / "ev"
    d = kernelab.kernel.compare(ft.base, ft.cand, ft.make, outputs=[2], rounds=4, samples=1, warmup=1,
                                capture=out, record=ev, label="scale_add 3.0 vs 3.6")
    b = kernelab.Bundle(ev)
    assert [(r["kind"], r["label"]) for r in b.records] == [
        ("kernel_run", "scale_add 3.0 vs 3.6"), ("code_diff", "scale_add 3.0 vs 3.6: scale_add")]
    base, cand = (out / k["code"] for k in d["launched"]["kernels"])
    cli = cli_json("code", "diff", str(base), str(cand))
    assert b.records[1]["result"] == {k: v for k, v in cli.items()
                                      if k not in ("schema_version", "kind", "kernelab_version")}
    assert all(len(i["sha256"] or "") == 64 for i in b.records[1]["provenance"]["inputs"])
    report = b.report()
    assert "scale_add 3.0 vs 3.6: scale_add" in report
    check = b.check(text=report)
    assert check["mismatches"] == [], check["mismatches"]


def test_a_controls_ledger_is_read_before_timing_and_host_callables_never_join_it(tmp_path):
    """Issue 43, item 3: `controls=` is checked before anything runs (a line that is not a
    control raises, naming the file and line); callables whose launches were not captured
    (host code: nothing says their machine code is the same) neither join the ledger nor get
    a floor. (Captured identical-code pairs joining it: the commands crate's unit test, and
    the gate on the H100 in docs/benchmarks.md.)"""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "k", "change": 0.001}\nnot json\n')
    calls = []

    def make():
        calls.append(1)
        return kp.make()

    with pytest.raises(kernelab.Error, match=r"bad\.jsonl.*line 1"):
        kernelab.kernel.compare(kp.base, kp.slower, make, outputs=[1], controls=bad)
    assert calls == []
    ledger = tmp_path / "controls.jsonl"
    d = kernelab.kernel.compare(kp.base, kp.slower, kp.make, outputs=[1], aa=True, rounds=4,
                                samples=2, controls=ledger)
    assert d["pass"] is True and "noise_floor" not in d
    assert not ledger.exists()
    out = subprocess.run([sys.executable, "-m", "kernelab", "kernel", "run", "--python",
                          "kernel_pairs:base", "kernel_pairs:slower", "--inputs", "kernel_pairs:make",
                          "--outputs", "1", "--controls", str(bad), "--format", "json"],
                         cwd=HERE, capture_output=True, text=True)
    assert out.returncode == 2 and "bad.jsonl" in out.stderr, out.stderr
