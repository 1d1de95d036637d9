"""The Python module against the CLI: every fixture read through Python equals the CLI's JSON;
tables read through pyarrow, polars and pandas; errors carry their location; the GIL is
released while reading."""

import gzip
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import kernelab
from conftest import FIXTURES, ROOT, binary, cli, cli_json

# Every trace fixture kernelab profile reads (the CLI's tests read the same files).
TRACES = sorted(
    str(p.relative_to(ROOT))
    for p in FIXTURES.iterdir()
    if p.is_file()
    and (p.name.endswith((".json.gz", ".sqlite", ".xplane.pb")) or "kernel_trace" in p.name
         or "kernel_stats" in p.name or "timestamps" in p.name)
)


def test_traces_found():
    # The parametrised test below must have inputs: Kineto, nsys, rocprofv3 and XPlane.
    assert len(TRACES) >= 10
    assert any(t.endswith(".sqlite") for t in TRACES)
    assert any("rocprofv3" in t for t in TRACES)


@pytest.mark.parametrize("trace", TRACES)
def test_profile_equals_cli_json(trace):
    os.chdir(ROOT)
    code, out, err = cli("profile", trace, "--format", "json", ok=(0, 2))
    if code == 2:
        # A fixture the CLI refuses: the same message, as an InputError naming the file.
        with pytest.raises(kernelab.InputError) as e:
            kernelab.profile(trace)
        assert err.strip() == f"kernelab: error: {e.value}"
        assert e.value.file == trace
        return
    p = kernelab.profile(trace)
    assert p.document == json.loads(out)
    assert p.summary == p.document["summary"]
    assert p.sources == p.document["inputs"]
    k = pa.table(p.kernels)
    assert k.num_rows == len(p.document["kernels"])
    # Every row, every figure: the table's columns are the document's, flattened.
    for row, doc in zip(k.to_pylist(), p.document["kernels"]):
        assert row["name"] == doc["name"] and row["total_ns"] == doc["total_ns"]
        assert row["share"] == doc["share"] and row["calls"] == doc["calls"]
        assert (row["registers_min"], row["registers_max"]) == (
            (doc["registers"] or {}).get("min"),
            (doc["registers"] or {}).get("max"),
        )
        assert row["grid"] == (None if doc["grid"] is None else json.dumps(doc["grid"], separators=(",", ":")))


def test_profile_options_equal_cli():
    os.chdir(ROOT)
    t = "tests/fixtures/kineto_h200_cuda_graph_replay.json.gz"
    p = kernelab.profile(t, by_phase=True, by_graph=True, group="none", time_range="0:1ms")
    assert p.document == cli_json("profile", t, "--by-phase", "--by-graph", "--group", "none", "--time-range", "0:1ms")
    assert p.phases.num_rows == len(p.document["phases"]) > 0
    assert p.graphs.num_rows == len(p.document["graphs"]["rows"]) > 0
    g = pa.table(p.graphs).to_pylist()[0]
    assert g["kernel_ns_per_replay_median"] == p.document["graphs"]["rows"][0]["kernel_ns_per_replay"]["median"]
    two = ["tests/fixtures/kineto_two_stream_h200.json.gz", "tests/fixtures/h200_pair/gdn_w4s3_run1.json.gz"]
    assert kernelab.profile(*two, stream=7).document == cli_json("profile", *two, "--stream", "7")


def test_dispatches_are_the_store_and_match_parquet(tmp_path):
    os.chdir(ROOT)
    traces = ["tests/fixtures/kineto_two_stream_h200.json.gz", "tests/fixtures/rocprofv3_sdk0.5_kernel_trace.csv"]
    p = kernelab.profile(*traces)
    d = pa.table(p.dispatches)
    assert d.num_rows == p.summary["kernel_count"]
    # Independent of kernelab's ranking: the sum of the durations is the kernel time.
    assert pa.compute.sum(d["duration_ns"]).as_py() == p.summary["kernel_time_ns"]
    assert set(d["file"].to_pylist()) == set(traces)
    # The declared schema is shared with the binary's `export --parquet`: same columns, types
    # and rows. (The wheel's command has no Parquet writer: it says so, exit 2.)
    _, _, err = cli("export", "--parquet", tmp_path / "wheel", *traces, ok=(2,))
    assert "built without the Parquet writer" in err and not (tmp_path / "wheel").exists()
    subprocess.run([binary(), "export", "--parquet", str(tmp_path), *traces], check=True, cwd=ROOT,
                   capture_output=True)
    pq_table = pq.read_table(tmp_path / "dispatches.parquet")
    assert pq_table.schema.remove_metadata() == d.schema.remove_metadata()
    assert pq_table.to_pylist() == d.to_pylist()
    # The same through a Kineto file read by hand: durations and names of every kernel event.
    with gzip.open(traces[0]) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    one = d.filter(pa.compute.equal(d["file"].cast(pa.string()), traces[0]))
    assert one.num_rows == len(events)
    assert sorted(one["name"].cast(pa.string()).to_pylist()) == sorted(e["name"] for e in events)


def test_frames_through_pyarrow_polars_pandas():
    os.chdir(ROOT)
    p = kernelab.profile("tests/fixtures/kineto_qwen3next_4l_prompt8192_baseline.json.gz")
    d, k = p.dispatches, p.kernels
    n = p.summary["kernel_count"]
    assert len(d) == n and pa.table(d).num_rows == n
    pdf = d.to_pandas()
    assert len(pdf) == n and isinstance(pdf["name"].dtype, pd.CategoricalDtype)
    assert int(pdf["duration_ns"].sum()) == p.summary["kernel_time_ns"]
    pol = pl.from_arrow(pa.table(d))
    assert pol.height == n and pol["duration_ns"].sum() == p.summary["kernel_time_ns"]
    pol2 = pl.DataFrame(k)
    assert pol2.columns == k.column_names and pol2.height == len(p.document["kernels"])
    kdf = k.to_pandas()
    assert kdf["total_ns"].tolist() == [r["total_ns"] for r in p.document["kernels"]]
    assert d.to_polars().height == n
    # An empty table keeps its declared columns.
    assert p.phases.num_rows == 0 and "phase" in p.phases.column_names
    # to_pandas exports the table column by column (each released on its own): the same frame
    # as pyarrow's conversion of the whole stream, for a full table and an empty one.
    pd.testing.assert_frame_equal(pdf, pa.table(d).to_pandas(split_blocks=True))
    pd.testing.assert_frame_equal(kdf, pa.table(k).to_pandas())
    empty = p.phases.to_pandas()
    assert list(empty.columns) == p.phases.column_names and len(empty) == 0


@pytest.mark.parametrize(
    "hidden, call, needs",
    [
        ("pyarrow", "t.to_pandas()", "pip install pyarrow pandas"),
        ("pandas", "t.to_pandas()", "pip install pyarrow pandas"),
        ("pyarrow", "t.to_pyarrow()", "pip install pyarrow"),
        ("polars", "t.to_polars()", "pip install polars"),
    ],
)
def test_a_missing_reader_names_the_package_to_install(hidden, call, needs):
    # A fresh interpreter in which `hidden` cannot be imported (None in sys.modules).
    code = (
        f"import sys; sys.modules[{hidden!r}] = None\n"
        "import kernelab\n"
        "t = kernelab.profile('tests/fixtures/kineto_qwen3next_4l_prompt8192_baseline.json.gz').kernels\n"
        f"try:\n    {call}\nexcept ModuleNotFoundError as e:\n    print(e)\nelse:\n    print('no error')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    msg = out.stdout.strip()
    assert f"{hidden} is not installed: {needs}" in msg, msg
    assert "frames" in msg, msg


def test_compare_equals_cli():
    os.chdir(ROOT)
    base = [f"tests/fixtures/h200_pair/gdn_w4s3_run{i}.json.gz" for i in (1, 2, 3)]
    cand = [f"tests/fixtures/h200_pair/gdn_w8s2_run{i}.json.gz" for i in (1, 2, 3)]
    got = kernelab.compare(base, cand)
    args = ["compare"] + [x for b in base for x in ("--base", b)] + [x for c in cand for x in ("--cand", c)]
    assert got == cli_json(*args)
    assert kernelab.compare(base[0], cand[0]) == cli_json("compare", base[0], cand[0])


def test_code_equals_cli():
    os.chdir(ROOT)
    a, b = "tests/fixtures/code/arch_sm_90.cubin", "tests/fixtures/code/arch_sm_90a.cubin"
    assert kernelab.code.show(a, b) == cli_json("code", "show", a, b)
    assert kernelab.code.diff(a, b) == cli_json("code", "diff", a, b)
    assert kernelab.code.matrix([a], [b]) == cli_json("code", "matrix", "--base", a, "--cand", b)


def test_check_equals_cli_for_paths_and_arrays():
    os.chdir(ROOT)
    t = "tests/fixtures/tensor"
    a, pert, flip = f"{t}/a.npy", f"{t}/a_perturbed.npy", f"{t}/a_flip.npy"
    assert kernelab.check.bitwise(a, flip) == cli_json("check", "bitwise", a, flip, ok=(1,))
    assert kernelab.check.close(a, pert, rtol=1e-3) == cli_json("check", "close", a, pert, "--rtol", "1e-3", ok=(0, 1))
    assert kernelab.check.oracle(f"{t}/out_bf16.npy", f"{t}/ref_f64.npy") == cli_json(
        "check", "oracle", f"{t}/out_bf16.npy", f"{t}/ref_f64.npy", ok=(0, 1))
    assert kernelab.check.finite(f"{t}/a_nonfinite.npy") == cli_json("check", "finite", f"{t}/a_nonfinite.npy", ok=(1,))
    assert kernelab.check.repeat(a, f"{t}/a_copy.npy") == cli_json("check", "repeat", a, f"{t}/a_copy.npy")
    # NumPy arrays give the figures their files give (only the labels differ).
    x, y = np.load(a), np.load(flip)
    arr, path = kernelab.check.bitwise(x, y), kernelab.check.bitwise(a, flip)
    assert arr["pass"] is path["pass"] is False
    assert [t["result"] for t in arr["tensors"]] == [t["result"] for t in path["tensors"]]
    assert arr["tensors"][0]["result"]["differing"] > 0
    z = np.zeros(16, dtype=np.float32)
    assert kernelab.check.bitwise(z, z.copy())["pass"] is True
    assert kernelab.check.finite(np.array([1.0, np.nan], dtype=np.float32))["pass"] is False


def test_ab_analyze_arrays_frames_and_files():
    os.chdir(ROOT)
    f = "tests/fixtures/h200_ab/inproc_w4s3_w8s2.csv"
    want = cli_json("ab", "analyze", f)
    assert kernelab.ab.analyze(f) == want
    frame = pd.read_csv(f)
    # The file names its metric after itself; pairs from memory take the name given.
    assert want["analyses"][0]["metric"] == "inproc_w4s3_w8s2"
    assert kernelab.ab.analyze(frame)["analyses"][0]["metric"] == "value"
    got = kernelab.ab.analyze(frame, metric="inproc_w4s3_w8s2")
    # The same pairs from a DataFrame: every figure but the samples file's name.
    assert got["samples"] is None
    assert {k: v for k, v in got.items() if k != "samples"} == {k: v for k, v in want.items() if k != "samples"}
    main, aa = frame[frame.aa == 0], frame[frame.aa == 1]
    arrays = kernelab.ab.analyze(main.a.to_numpy(), main.b.to_numpy(), main.order.tolist(), aa=aa,
                                 metric="inproc_w4s3_w8s2")
    assert arrays["analyses"] == want["analyses"] and arrays["aa"] == want["aa"]
    assert kernelab.ab.analyze(pl.read_csv(f), metric="inproc_w4s3_w8s2")["analyses"] == want["analyses"]
    assert kernelab.ab.analyze(f, threshold="1%", alpha=0.1) == cli_json("ab", "analyze", f, "--threshold", "1%", "--alpha", "0.1")
    j = "tests/fixtures/h200_ab/ab_proc_w4s3_w8s2.jsonl"
    assert kernelab.ab.analyze(j) == cli_json("ab", "analyze", j)
    with pytest.raises(kernelab.UsageError, match="alpha"):
        kernelab.ab.analyze([1.0, 2.0], [1.0, 2.0], alpha=0.9)


def test_serve_analyze_equals_cli():
    os.chdir(ROOT)
    s = "tests/fixtures/serve/h200/eager_vs_sdpa.samples.jsonl"
    want = cli_json("serve", "--analyze", "--resume", s, ok=(0, 1))
    got = kernelab.serve.analyze(s)
    assert {k: v for k, v in got.items() if k != "samples"} == {k: v for k, v in want.items() if k != "samples"}
    assert os.path.samefile(got["samples"], want["samples"])


def test_bundle_records_report_check(tmp_path):
    os.chdir(ROOT)
    b = tmp_path / "bundle"
    t = "tests/fixtures/kineto_h200_cuda_graph_replay.json.gz"
    cli("--record", b, "profile", t)
    cli("--record", b, "check", "bitwise", "tests/fixtures/tensor/a.npy", "tests/fixtures/tensor/a_copy.npy")
    bundle = kernelab.Bundle(b)
    assert sorted(r["kind"] for r in bundle.records) == ["check_bitwise", "profile"]
    prof = next(r for r in bundle.records if r["kind"] == "profile")
    assert prof["result"]["kernels"] == kernelab.profile(t).document["kernels"]
    _, md, _ = cli("report", b)
    assert bundle.report() == md
    _, html, _ = cli("report", b, "--format", "html")
    assert bundle.report("html") == html
    assert bundle.report("json") == json.loads(cli("report", b, "--format", "json")[1])
    note = tmp_path / "note.md"
    note.write_text("The GEMM takes 99.5% of the time and the check passed bitwise.\n")
    want = cli_json("report", "check", note, "--bundle", b, ok=(0, 1))
    assert bundle.check(note) == want
    assert bundle.check(text=note.read_text()) == want


def test_errors_carry_the_location(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": }]}')
    code, _, err = cli("profile", bad, ok=(2,))
    with pytest.raises(kernelab.InputError) as e:
        kernelab.profile(bad)
    assert isinstance(e.value, kernelab.Error)
    assert e.value.file == str(bad) and e.value.byte is not None
    # The CLI's message, word for word.
    assert err.strip() == f"kernelab: error: {e.value}"
    csv = tmp_path / "kernel_trace.csv"
    csv.write_text("Kernel_Name,Start_Timestamp,End_Timestamp\nk,10,oops\n")
    with pytest.raises(kernelab.InputError) as e:
        kernelab.profile(csv)
    assert e.value.file == str(csv) and e.value.line == 2
    with pytest.raises(kernelab.InputError) as e:
        kernelab.profile(tmp_path / "missing.json")
    assert e.value.file == str(tmp_path / "missing.json")
    with pytest.raises(kernelab.UsageError):
        kernelab.profile(bad, time_range="5:1")
    with pytest.raises(kernelab.UsageError):
        kernelab.profile(bad, group="kernel")
    trunc = "tests/fixtures/tensor/a_truncated.npy"
    with pytest.raises(kernelab.InputError) as e:
        kernelab.check.finite(os.path.join(ROOT, trunc))
    assert e.value.file.endswith("a_truncated.npy")


def synthetic_trace(path, kernels):
    """A Kineto trace of `kernels` kernel events on one stream, written here."""
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n')
        for i in range(kernels):
            sep = "," if i + 1 < kernels else ""
            f.write('{"ph": "X", "cat": "kernel", "name": "void gemm_kernel<%d>(float*)", "pid": 0, "tid": 7, '
                    '"ts": %d.5, "dur": 3.25, "args": {"device": 0, "stream": 7, "correlation": %d, '
                    '"grid": [4, 1, 1], "block": [128, 1, 1]}}%s\n' % (i % 50, 10 * i, i + 1, sep))
        f.write("]}\n")


def test_gil_released_while_reading(tmp_path):
    trace = tmp_path / "big.json"
    synthetic_trace(trace, 300_000)
    result = {}

    def read():
        t0 = time.perf_counter()
        result["profile"] = kernelab.profile(trace)
        result["dispatches"] = result["profile"].dispatches
        result["seconds"] = time.perf_counter() - t0

    worker = threading.Thread(target=read)
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert result["profile"].summary["kernel_count"] == 300_000
    assert result["dispatches"].num_rows == 300_000
    # Holding the GIL for the whole read would leave this thread no tick at all while it ran;
    # released, it ticks about once a millisecond.
    assert result["seconds"] > 0.05
    assert ticks >= result["seconds"] * 1000 / 4, (ticks, result["seconds"])


def test_cli_command_and_help():
    code, out, _ = cli("--version")
    assert out.startswith("kernelab ")
    assert "profile" in (kernelab.profile.__doc__ or "")
    assert "Arrow" in (kernelab.Table.__doc__ or "")


def test_arrow_capsules_keep_the_schema_and_ignore_a_requested_one():
    os.chdir(ROOT)
    p = kernelab.profile("tests/fixtures/kineto_two_stream_h200.json.gz")
    d = p.dispatches
    # The schema capsule and the stream's schema are the same, field metadata included.
    s = pa.schema(d)
    t = pa.table(d)
    assert t.schema == s and t.schema.metadata == s.metadata
    assert t.num_rows == d.num_rows and t.column_names == d.column_names
    # A requested schema is a hint the producer may ignore (the PyCapsule interface): the
    # stream comes back as it is, readable by pyarrow.
    capsule = d.__arrow_c_stream__(pa.schema([("other", pa.int8())]).__arrow_c_schema__())
    assert pa.RecordBatchReader._import_from_c_capsule(capsule).read_all() == t
    # Each capsule is consumed once: a second stream is a fresh export.
    assert pa.table(d) == t


def test_the_wheels_command_leaves_out_the_mcp_server():
    code, _, err = cli("mcp", ok=(2,))
    assert "built without the MCP server" in err and "cargo install --path crates/kernelab" in err
