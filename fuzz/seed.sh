#!/bin/sh
# Seeds every fuzz corpus, $CORPUS/<target>/ (default fuzz/corpus/), from tests/fixtures,
# bench/h200/faults and the stored regression inputs (tests/fixtures/fuzz/<target>/). Seeds over
# MAX_SEED bytes are skipped (decompressed Kineto traces included) so that the corpora stay small
# enough to carry; SQLite seeds are copies of the fixtures cut to a few rows per table.
# Evidence-bundle records are made by running kernelab with --record on fixtures: $KERNELAB
# (default target/debug/kernelab; when it is missing, those seeds are skipped, saying so).
# Run from anywhere.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
fx="$root/tests/fixtures"
corpus=${CORPUS:-$root/fuzz/corpus}
MAX_SEED=${MAX_SEED:-2000000}
KERNELAB=${KERNELAB:-$root/target/debug/kernelab}
seed() { # target file...
    target=$1
    shift
    mkdir -p "$corpus/$target"
    for f in "$@"; do
        if [ -f "$f" ] && [ "$(wc -c <"$f")" -le "$MAX_SEED" ]; then
            cp "$f" "$corpus/$target/"
        fi
    done
    if [ -d "$fx/fuzz/$target" ]; then
        cp "$fx/fuzz/$target"/* "$corpus/$target/" 2>/dev/null || true
    fi
}
seed npy "$fx"/tensor/*.npy
seed git_index "$root"/.git/index
mkdir -p "$corpus/gate_config"
printf '[build]\ncommand = "make"\n\n[kernel]\nspec = "bench/k.toml"\nthreshold = "1%%"\nrounds = 30\n' >"$corpus/gate_config/kernel"
printf '[python]\nmodule = "bench/k.py"\nfunction = "run"\ninputs = "make"\nthreshold = "2%%"\noptions = ["--rounds", "40"]\n' >"$corpus/gate_config/python"
printf '[bench]\ncommand = "./bench"\nmetric_regex = ["t=t: ([0-9.]+)"]\nthreshold = "2%%"\nbudget = "20m"\n[annotate]\npaths = ["*.cu"]\n' >"$corpus/gate_config/ab"
printf '[build]\ncommand = "make"\n\n[sweep]\nfile = "bench/sweep.toml"\nthreshold = "1%%"\ngpus = [0, 1]\ntimeout = 60\n' >"$corpus/gate_config/sweep"
mkdir -p "$corpus/controls_ledger"
printf '%s\n' '{"key":"k [T=8] on GPU-1","change":-0.0055,"interval":[-0.02,0.016],"rounds":10,"at":"2026-12-06T14:14:53Z","spec":"k.toml"}' >"$corpus/controls_ledger/one"
mkdir -p "$corpus/confined_path"
for p in d/f in/f out/secret rel ../outside/secret d/../../outside/secret w/new wout/x /etc/passwd; do
    printf '%s' "$p" >"$corpus/confined_path/$(printf '%s' "$p" | tr '/.' '__')"
done
seed npz "$fx"/tensor/*.npz
seed safetensors "$fx"/tensor/*.safetensors
seed cubin "$fx"/code/*.cubin "$root"/bench/h200/faults/*.cubin
seed fatbin "$fx"/code/copy_variants_fatbin_exe
seed hsaco "$fx"/code/*.co
seed offload_bundle
seed aks2 "$fx"/code/*.aks2
seed pe_hip_fat "$fx"/code/*.dll "$fx"/code/arch_fatbin.o
seed kineto
seed kineto_parallel
seed xplane "$fx"/*.xplane.pb
seed rocprofv3_json
seed proton "$fx"/proton/*.json "$fx"/proton/*.hatchet
seed proton_trace "$fx"/proton/*.chrome_trace
seed rocprof_csv "$fx"/rocprof*.csv "$fx"/rocpd_*.csv "$fx"/omniperf_*.csv
seed ncu_csv "$fx"/ncu*.csv
seed rocpd
seed rocprof_compute_db
seed nsys
seed spec_toml "$fx"/kernel/*.toml "$root"/bench/h200/faults/*.toml
seed samples_jsonl "$fx"/h200_ab/*.jsonl
seed pairs "$fx"/h200_ab/*.csv "$fx"/h200_ab/*.jsonl
seed bundle_record
seed report_note "$root"/docs/report.md "$root"/CHANGELOG.md
seed family_name
seed serve_spec "$root"/bench/h200/serve/*.toml
seed serve_samples "$fx"/serve/h200/*.samples.jsonl
seed sse
seed http_response "$fx"/serve/http/*.http
seed mcp_request
seed prometheus_metrics
seed serve_trace "$fx"/serve/traces/*.csv "$fx"/serve/traces/*.jsonl
seed sweep_manifest
seed ceilings "$fx"/h200_ceilings/*.json
seed counter_csv "$fx"/rocprofv3_*counter_collection*.csv
seed export_input "$fx"/h200_ab/*.jsonl
seed slurm_script
python3 - "$corpus" "$fx" "$MAX_SEED" <<'PY'
import glob, gzip, json, os, shutil, sqlite3, struct, sys, tempfile
corpus, fx, max_seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
def out(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) <= max_seed:
        with open(os.path.join(corpus, target, name), "wb") as f:
            f.write(data)

# No safetensors or offload-bundle fixture is stored: make one of each from the fixtures.
h = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [8, 12]}}).encode()
out("safetensors", "ab.safetensors", struct.pack("<Q", len(h)) + h + bytes(12))
co = sorted(glob.glob(os.path.join(fx, "code", "*.co")))[0]
data = open(co, "rb").read()
ids = [b"host-x86_64-unknown-linux-gnu-", b"hipv4-amdgcn-amd-amdhsa--gfx1100"]
header = 32 + sum(24 + len(i) for i in ids)
bundle = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(ids))
bundle += struct.pack("<QQQ", header, 0, len(ids[0])) + ids[0]
bundle += struct.pack("<QQQ", header, len(data), len(ids[1])) + ids[1]
out("offload_bundle", "gfx1100.hipfb", bundle + data)

# Prometheus text as vLLM's prometheus_client writes it (counters with _total, a histogram).
out("prometheus_metrics", "vllm.txt",
    "# HELP vllm:prefix_cache_hits_total Prefix cache hits.\n"
    "# TYPE vllm:prefix_cache_hits_total counter\n"
    'vllm:prefix_cache_hits_total{engine="0",model_name="m"} 1024.0\n'
    "# TYPE vllm:kv_cache_usage_perc gauge\n"
    'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25\n'
    "# TYPE vllm:time_to_first_token_seconds histogram\n"
    'vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 3.0\n'
    'vllm:time_to_first_token_seconds_count{model_name="m"} 3.0\n'
    'vllm:time_to_first_token_seconds_sum{model_name="m"} 0.25\n')

# Kineto traces, decompressed; kernel names from them for the family-name corpus.
names = set()
for gz in sorted(glob.glob(os.path.join(fx, "*.json.gz")) + glob.glob(os.path.join(fx, "h200_pair", "*.json.gz"))):
    with gzip.open(gz) as f:
        text = f.read(max_seed + 1)
    if len(text) > max_seed:
        continue
    out("kineto", os.path.basename(gz)[:-3], text)
    # The parallel reader's corpus: a chunk-size byte, then the trace.
    out("kineto_parallel", os.path.basename(gz)[:-3], b"\x20" + (text if isinstance(text, bytes) else text.encode()))
    try:
        for e in json.loads(text).get("traceEvents", []):
            if isinstance(e, dict) and e.get("cat") == "kernel" and isinstance(e.get("name"), str):
                names.add(e["name"])
    except ValueError:
        pass
with gzip.open(os.path.join(fx, "h200_kernel", "all.samples.jsonl.gz")) as f:
    out("samples_jsonl", "kernel_run.samples.jsonl", f.read(max_seed + 1))
out("kineto", "minimal.json", '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 7, "args": {"stream": 7, "device": 0}}]}')
for i, n in enumerate(sorted(names)[:40]):
    out("family_name", f"kineto{i:02}.txt", n)
for i, n in enumerate([
    "void gemm_bf16_kernel<128, 64>(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16*, int, int, int)",
    "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE",
    "_Z6kernelPfS_i",
    "rms_norm_kernel.kd",
    "Cijk_Ailk_Bljk_HHS_BH_MT64x64x16 [clone .kd]",
    "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
    "operator()(int) const::{lambda(int)#1}",
    "recompute_w_u_fwd_kernel (.kd)",
]):
    out("family_name", f"hand{i:02}.txt", n)

# The other CSV layouts, which no fixture holds: results.stats.csv, API trace, rocprof-compute
# kernel top, nsys stats.
out("rocprof_csv", "results.stats.csv", '"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n"k1",2,300,150,75.0\n"k2",1,100,100,25.0\n')
out("rocprof_csv", "hip_api_trace.csv", '"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n"HIP_RUNTIME_API","hipLaunchKernel",7,7,1,900,950\n"MARKER_CORE_API","decode phase",7,7,11,1800,3500\n')
out("rocprof_csv", "pmc_kernel_top.csv", 'Kernel_Name,Count,Sum(ns),Mean(ns),Median(ns),Pct\nk1,150,4358035.0703125,29053.5,28900.3828125,100.0\n')
out("rocprof_csv", "cuda_gpu_kern_sum.csv", 'Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n100.0,88573480,5,17714696.0,17713960.0,17700808,17733416,12992.1,"saxpy(double *, double *, double *, double, int)"\n')

# Paired samples as JSON (the CSV and JSONL layouts are fixtures).
out("pairs", "pairs.json", json.dumps({"pairs": [{"a": 100 + k % 7, "b": 103 + k % 5, "order": "AB" if k % 2 == 0 else "BA"} for k in range(12)], "aa": [{"a": 100, "b": 101}, {"a": 102, "b": 100}]}))

def cut(src, rows=20):
    """A copy of the nsys export `src`: the tables the reader uses, at most `rows` rows each."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "db.sqlite")
        shutil.copy(src, p)
        c = sqlite3.connect(p)
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        keep = ("StringIds", "CUPTI_ACTIVITY_KIND_", "CUDA_GRAPH_", "NVTX_EVENTS", "TARGET_INFO_GPU", "META_DATA_", "ENUM_CUDA_MEMCPY_OPER")
        for t in tables:
            try:
                if t == "StringIds":
                    pass
                elif t.startswith(keep):
                    c.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" LIMIT {rows})')
                else:
                    c.execute(f'DROP TABLE "{t}"')
            except sqlite3.Error:
                pass
        # Strings: only those the kept rows may name (any integer in them).
        used = set()
        for t in [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")]:
            if t != "StringIds":
                for row in c.execute(f'SELECT * FROM "{t}"'):
                    used.update(v for v in row if isinstance(v, int))
        c.execute("CREATE TEMP TABLE used (id INTEGER PRIMARY KEY)")
        c.executemany("INSERT OR IGNORE INTO used VALUES (?)", [(u,) for u in used])
        try:
            c.execute("DELETE FROM StringIds WHERE id NOT IN (SELECT id FROM used)")
        except sqlite3.Error:
            pass
        c.commit()
        c.execute("PRAGMA page_size = 512")
        c.execute("VACUUM")
        c.close()
        return open(p, "rb").read()
for src in sorted(glob.glob(os.path.join(fx, "*.sqlite"))):
    out("nsys", os.path.basename(src), cut(src))

# Table leaf pages of the nsys fixtures, each after a byte that picks the columns read.
os.makedirs(os.path.join(corpus, "sqlite_leaf"), exist_ok=True)
for src in sorted(glob.glob(os.path.join(fx, "nsys-*.sqlite"))):
    raw = open(src, "rb").read()
    size = struct.unpack(">H", raw[16:18])[0] or 65536
    leaves = [k for k in range(1, len(raw) // size) if raw[k * size] == 0x0D][:4]
    for k in leaves:
        out("sqlite_leaf", f"{os.path.basename(src)}.page{k + 1}", bytes([k % 4]) + raw[k * size:(k + 1) * size])

def db(sql):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "db.sqlite")
        c = sqlite3.connect(p)
        c.executescript(sql)
        c.close()
        return open(p, "rb").read()
rocpd = """
CREATE TABLE rocpd_metadata (id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
INSERT INTO rocpd_metadata (tag, value) VALUES ('schema_version', '3');
CREATE TABLE rocpd_info_agent (id INTEGER PRIMARY KEY, type TEXT, type_index INTEGER, name TEXT, product_name TEXT);
INSERT INTO rocpd_info_agent (type, type_index, name, product_name) VALUES ('CPU', 0, 'AMD EPYC 9454', 'AMD EPYC 9454'), ('GPU', 0, 'gfx942', 'AMD Instinct MI300X');
CREATE TABLE kernels (id INTEGER PRIMARY KEY, name TEXT, agent_type_index INTEGER, stream_id INTEGER, corr_id INTEGER, start INTEGER, end INTEGER,
    grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, workgroup_x INTEGER, workgroup_y INTEGER, workgroup_z INTEGER,
    lds_size INTEGER, scratch_size INTEGER, vgpr_count INTEGER, accum_vgpr_count INTEGER, sgpr_count INTEGER);
INSERT INTO kernels (name, agent_type_index, stream_id, corr_id, start, end, grid_x, grid_y, grid_z, workgroup_x, workgroup_y, workgroup_z, lds_size, scratch_size, vgpr_count, accum_vgpr_count, sgpr_count) VALUES
    ('rms_norm_kernel(float*, float const*, float const*, int)', 0, 0, 1, 1001000000, 1001008120, 8192, 1, 1, 256, 1, 1, 0, 0, 24, 0, 16),
    ('void gemm_bf16_kernel<128, 64>(__hip_bfloat16 const*, int)', 0, 0, 2, 1001010120, 1001130520, 1216, 1, 1, 256, 1, 1, 65536, 0, 128, 64, 96),
    ('__amd_rocclr_copyBuffer', 0, 1, 3, 1001140000, 1001143520, 4096, 1, 1, 512, 1, 1, 0, 0, 8, 0, 24);
CREATE TABLE memory_copies (id INTEGER PRIMARY KEY, start INTEGER, end INTEGER, size INTEGER, stream_id INTEGER, dst_agent_type_index INTEGER);
INSERT INTO memory_copies (start, end, size, stream_id, dst_agent_type_index) VALUES (1000000000, 1000041000, 16777216, 0, 0);
"""
out("rocpd", "mi300x_results.db", db(rocpd))
# The rocprof-compute analysis database: its workload, kernel and dispatch tables, 20 rows each.
with tempfile.TemporaryDirectory() as d:
    p = os.path.join(d, "db.sqlite")
    shutil.copy(os.path.join(fx, "rocprof-compute-3.5.0-mi350-monte_carlo_pi.db"), p)
    c = sqlite3.connect(p)
    keep = ("compute_metadata", "compute_workload", "compute_kernel", "compute_dispatch")
    for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
        if t in keep:
            c.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" LIMIT 20)')
        elif not t.startswith("sqlite_"):
            c.execute(f'DROP TABLE "{t}"')
    c.commit()
    c.execute("PRAGMA page_size = 512")
    c.execute("VACUUM")
    c.close()
    out("rocprof_compute_db", "mi350_monte_carlo_pi.db", open(p, "rb").read())
out("rocpd", "minimal.db", db("CREATE TABLE rocpd_kernel_dispatch (id INTEGER); CREATE TABLE kernels (name TEXT, start INTEGER, \"end\" INTEGER); INSERT INTO kernels VALUES ('k', 10, 20);"))
PY
# Evidence-bundle records, one command each, from the fixtures.
if [ -x "$KERNELAB" ]; then
    bundle=$(mktemp -d)
    k() { "$KERNELAB" --record "$bundle" "$@" >/dev/null 2>&1 || true; }
    gdn="$fx/kineto_gdn_chunk_T8192.json.gz"
    k profile "$gdn"
    k profile "$fx/rocprofv3_sdk0.5_kernel_trace.csv"
    k compare "$fx/h200_pair/gdn_w4s3_run1.json.gz" "$fx/h200_pair/gdn_w8s2_run1.json.gz"
    k metrics "$fx/ncu_recompute_metrics.csv"
    k code show "$fx/code/recompute_w_u_fwd_kernel_w4s3.cubin"
    k code diff "$fx/code/recompute_w_u_fwd_kernel_w4s3.cubin" "$fx/code/recompute_w_u_fwd_kernel_w8s2.cubin"
    k check bitwise "$fx/tensor/a.npy" "$fx/tensor/a_copy.npy"
    k check close "$fx/tensor/a.npy" "$fx/tensor/a_perturbed.npy"
    k check finite "$fx/tensor/a_nonfinite.npy"
    k ab analyze "$fx/h200_ab/inproc_w4s3_w8s2.csv"
    k ab analyze "$fx/h200_ab/ab_proc_w4s3_w8s2.jsonl"
    for f in "$bundle"/*.json; do
        [ -f "$f" ] && cp "$f" "$corpus/bundle_record/"
    done
    rm -rf "$bundle"
else
    echo "seed.sh: $KERNELAB not built; bundle_record gets no records (cargo build first)" >&2
fi
for t in "$corpus"/*/; do
    printf '%s %s\n' "$(basename "$t")" "$(ls "$t" | wc -l)"
done
echo "corpora in $corpus ($(du -sh "$corpus" | cut -f1))"
