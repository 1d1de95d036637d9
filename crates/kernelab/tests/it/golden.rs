//! Golden snapshots (insta) of the terminal tables (`--format table`, the default) and the
//! Markdown (`--format md`) of every command on the fixtures: a change to what a user reads
//! shows up as a snapshot diff. How to review and accept one: docs/testing.md.
//!
//! Commands run in the fixtures folder (or a temporary folder) with relative paths, so no
//! checkout path reaches the output; what still varies between machines and runs (temporary
//! paths, times, host, version, git commit, tool versions) is replaced by filters.

use super::{fixture, kernelab};
use std::path::Path;

/// In CI a snapshot mismatch must fail: refuse settings that would accept or ignore one.
fn refuse_auto_accept_in_ci() {
    if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") {
        let update = std::env::var("INSTA_UPDATE").unwrap_or_default();
        assert!(
            ["", "auto", "no"].contains(&update.as_str()),
            "INSTA_UPDATE={update} would accept snapshot changes in CI"
        );
        let force = std::env::var("INSTA_FORCE_PASS").unwrap_or_default();
        assert!(
            ["", "0"].contains(&force.as_str()),
            "INSTA_FORCE_PASS would hide snapshot mismatches in CI"
        );
    }
}

/// Runs `kernelab ARGS` in `dir`; the exit status must be `code`. Returns standard output.
fn run(dir: &Path, args: &[&str], code: i32) -> String {
    let out = kernelab()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(code),
        "kernelab {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Snapshot settings: the command line as the description, and the filters. `tmp` lists
/// temporary folders whose paths may appear in the output.
fn settings(command: &str, tmp: &[&Path]) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_description(format!("kernelab {command}"));
    s.set_omit_expression(true);
    for dir in tmp {
        let canonical = dir.canonicalize().expect("tmp exists");
        for p in [canonical.as_path(), *dir] {
            s.add_filter(&regex::escape(&p.display().to_string()), "[TMP]");
        }
    }
    s.add_filter(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", "[TIME]");
    s.add_filter(r"kernelab \d+\.\d+\.\d+[^;\s]*", "kernelab [VERSION]");
    s.add_filter(r"host [^;\n]+;", "host [HOST];");
    s.add_filter(
        r"git [0-9a-f]{7,40}( \(dirty\))?|not run in a git repository",
        "git [COMMIT]",
    );
    s.add_filter(r"\((\w+ )?LLVM version [^)]*\)", "(LLVM [VERSION])");
    s
}

/// Snapshots `kernelab ARGS` in `dir` as a terminal table (`NAME_table`, no `--format`: the
/// default) and as Markdown (`NAME_md`); both must exit with `code`.
fn golden_in(name: &str, dir: &Path, args: &[&str], code: i32, tmp: &[&Path]) {
    refuse_auto_accept_in_ci();
    for format in ["table", "md"] {
        let mut args = args.to_vec();
        if format == "md" {
            args.extend(["--format", "md"]);
        }
        let text = run(dir, &args, code);
        assert!(
            !text.trim().is_empty(),
            "kernelab {}: no output",
            args.join(" ")
        );
        settings(&args.join(" "), tmp).bind(|| {
            insta::assert_snapshot!(format!("{name}_{format}"), text);
        });
    }
}

/// [`golden_in`] in the fixtures folder, expecting success.
fn golden(name: &str, args: &[&str]) {
    golden_in(name, &fixture(""), args, 0, &[]);
}

/// Whether `tool --version` runs.
fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn profile_kineto() {
    golden(
        "profile_kineto",
        &["profile", "kineto_gdn_chunk_T8192.json.gz"],
    );
}

#[test]
fn profile_rocprofv3_kernel_trace_csv() {
    golden(
        "profile_rocprofv3_csv",
        &["profile", "rocprofv3_sdk0.5_kernel_trace.csv"],
    );
}

#[test]
fn profile_rocprofv3_kernel_stats_has_unavailable_figures() {
    golden(
        "profile_rocprofv3_stats",
        &["profile", "rocprofv3_kernel_stats_jacobi.csv", "--top", "5"],
    );
}

/// A small rocpd database written here through the stable views the reader uses (`kernels`,
/// `memory_copies`, `rocpd_metadata`, `rocpd_info_agent`), with made-up but plausible rows.
fn write_rocpd(path: &Path) {
    let mut sql = String::from(
        "CREATE TABLE rocpd_metadata (id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
         INSERT INTO rocpd_metadata (tag, value) VALUES ('schema_version', '3');
         CREATE TABLE rocpd_info_agent (id INTEGER PRIMARY KEY, type TEXT, type_index INTEGER,
             name TEXT, product_name TEXT);
         INSERT INTO rocpd_info_agent (type, type_index, name, product_name) VALUES
             ('CPU', 0, 'AMD EPYC 9454', 'AMD EPYC 9454'),
             ('GPU', 0, 'gfx942', 'AMD Instinct MI300X');
         CREATE TABLE kernels (id INTEGER PRIMARY KEY, name TEXT, agent_type_index INTEGER,
             stream_id INTEGER, corr_id INTEGER, start INTEGER, end INTEGER,
             grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
             workgroup_x INTEGER, workgroup_y INTEGER, workgroup_z INTEGER,
             lds_size INTEGER, scratch_size INTEGER,
             vgpr_count INTEGER, accum_vgpr_count INTEGER, sgpr_count INTEGER);
         CREATE TABLE memory_copies (id INTEGER PRIMARY KEY, start INTEGER, end INTEGER,
             size INTEGER, stream_id INTEGER, dst_agent_type_index INTEGER);
         INSERT INTO memory_copies (start, end, size, stream_id, dst_agent_type_index) VALUES
             (1000000000, 1000041000, 16777216, 0, 0),
             (1002000000, 1002020500, 8388608, 0, 0);\n",
    );
    let gemm = "void gemm_bf16_kernel<128, 64>(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16*, int, int, int)";
    let gemm_small = "void gemm_bf16_kernel<64, 64>(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16*, int, int, int)";
    let norm = "rms_norm_kernel(float*, float const*, float const*, int)";
    // (name, duration ns, grid x, block x, LDS, VGPRs, AGPRs, SGPRs)
    let rows = [
        (norm, 8_120, 8_192, 256, 0, 24, 0, 16),
        (gemm, 120_400, 1_216, 256, 65_536, 128, 64, 96),
        (norm, 8_080, 8_192, 256, 0, 24, 0, 16),
        (gemm, 118_560, 1_216, 256, 65_536, 128, 64, 96),
        (gemm_small, 61_240, 2_432, 256, 32_768, 96, 32, 80),
        (norm, 8_200, 8_192, 256, 0, 24, 0, 16),
        (gemm, 121_320, 1_216, 256, 65_536, 128, 64, 96),
        ("__amd_rocclr_copyBuffer", 3_520, 4_096, 512, 0, 8, 0, 24),
    ];
    let mut start = 1_001_000_000u64;
    for (i, (name, ns, grid, block, lds, v, a, s)) in rows.into_iter().enumerate() {
        sql += &format!(
            "INSERT INTO kernels (name, agent_type_index, stream_id, corr_id, start, end, grid_x, grid_y, grid_z, workgroup_x, workgroup_y, workgroup_z, lds_size, scratch_size, vgpr_count, accum_vgpr_count, sgpr_count) VALUES ('{name}', 0, 0, {}, {start}, {}, {grid}, 1, 1, {block}, 1, 1, {lds}, 0, {v}, {a}, {s});\n",
            i + 1,
            start + ns
        );
        start += ns + 2_000 + 500 * i as u64;
    }
    let conn = rusqlite::Connection::open(path).expect("create the database");
    conn.execute_batch(&sql).expect("write the database");
}

#[test]
fn profile_rocpd_database() {
    let dir = tempfile::tempdir().expect("tmp");
    write_rocpd(&dir.path().join("mi300x_results.db"));
    golden_in(
        "profile_rocpd_db",
        dir.path(),
        &["profile", "mi300x_results.db"],
        0,
        &[dir.path()],
    );
}

#[test]
fn profile_nsys_sqlite() {
    golden(
        "profile_nsys_sqlite",
        &[
            "profile",
            "nsys-2024.5-a100-cloverleaf-cuda.sqlite",
            "--top",
            "5",
        ],
    );
}

#[test]
fn profile_ncu_csv() {
    golden("profile_ncu_csv", &["profile", "ncu_recompute_metrics.csv"]);
}

#[test]
fn profile_group_family_and_none() {
    for group in ["family", "none"] {
        golden(
            &format!("profile_group_{group}"),
            &[
                "profile",
                "kineto-v100-resnet-rank0-ns_resolution.pt.trace.json.gz",
                "--group",
                group,
                "--top",
                "8",
            ],
        );
    }
}

#[test]
fn profile_by_phase() {
    golden(
        "profile_by_phase_kineto",
        &[
            "profile",
            "kineto-cuda-simple_add-benchmark_trace.json.gz",
            "--by-phase",
            "--top",
            "5",
        ],
    );
    golden(
        "profile_by_phase_nvtx",
        &[
            "profile",
            "nsys-2022.2-a100-saxpy-mpi-cuda.sqlite",
            "--by-phase",
        ],
    );
}

#[test]
fn compare_repeated_runs() {
    golden(
        "compare_runs",
        &[
            "compare",
            "--base",
            "h200_pair/gdn_w4s3_run1.json.gz",
            "h200_pair/gdn_w4s3_run2.json.gz",
            "h200_pair/gdn_w4s3_run3.json.gz",
            "--cand",
            "h200_pair/gdn_w8s2_run1.json.gz",
            "h200_pair/gdn_w8s2_run2.json.gz",
            "h200_pair/gdn_w8s2_run3.json.gz",
        ],
    );
}

#[test]
fn compare_pair_with_control() {
    golden(
        "compare_control",
        &[
            "compare",
            "h200_pair/gdn_w4s3_run1.json.gz",
            "h200_pair/gdn_w2s4_run1.json.gz",
            "--control",
            "chunk_fwd_kernel_o",
        ],
    );
}

#[test]
fn metrics() {
    golden("metrics_details", &["metrics", "ncu_recompute_metrics.csv"]);
    golden("metrics_sections", &["metrics", "ncu_chunk_sections.csv"]);
}

#[test]
fn code_show() {
    // Cubins without a disassembler (cuobjdump would change the output where installed).
    golden(
        "code_show_cubin",
        &[
            "code",
            "show",
            "code/recompute_w_u_fwd_kernel_w4s3.cubin",
            "code/copy_variants_sm90.cubin",
            "--no-disassemble",
        ],
    );
    golden(
        "code_show_sass_text",
        &[
            "code",
            "show",
            "code/recompute_w_u_fwd_kernel_w4s3.sass.txt",
        ],
    );
    golden(
        "code_show_amd_asm",
        &["code", "show", "code/asm_gfx1100_cov5_llc_amdgpujl_ker1.s"],
    );
}

#[test]
fn code_show_hsaco_with_llvm_objdump_19() {
    if !have("llvm-objdump-19") {
        kernelab_testkit::skip(
            "llvm-19",
            "llvm-objdump-19 is not installed (.ci/run installs llvm-19)",
        );
        return;
    }
    if let Some(t) = ["llvm-objdump-22", "llvm-objdump-21", "llvm-objdump-20"]
        .into_iter()
        .find(|t| have(t))
    {
        kernelab_testkit::skip(
            "llvm-objdump-19-only",
            format!("{t} is installed and would be used instead of llvm-objdump-19"),
        );
        return;
    }
    golden(
        "code_show_hsaco_llvm19",
        &[
            "code",
            "show",
            "code/hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co",
        ],
    );
}

#[test]
fn code_diff() {
    golden(
        "code_diff_sass_text",
        &[
            "code",
            "diff",
            "code/recompute_w_u_fwd_kernel_w4s3.sass.txt",
            "code/recompute_w_u_fwd_kernel_w8s2.sass.txt",
        ],
    );
    golden(
        "code_diff_cubin",
        &[
            "code",
            "diff",
            "code/recompute_w_u_fwd_kernel_w4s3.cubin",
            "code/recompute_w_u_fwd_kernel_w8s2.cubin",
            "--no-disassemble",
        ],
    );
}

#[test]
fn code_matrix() {
    let dir = tempfile::tempdir().expect("tmp");
    let copy = |from: &str, to: &str| {
        let to = dir.path().join(to);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(fixture(&format!("code/{from}")), to).expect("copy");
    };
    copy(
        "recompute_w_u_fwd_kernel_w4s3.cubin",
        "base/recompute.cubin",
    );
    copy(
        "recompute_w_u_fwd_kernel_w8s2.cubin",
        "cand/recompute.cubin",
    );
    for side in ["base", "cand"] {
        copy(
            "copy_variants_sm90.cubin",
            &format!("{side}/sub/copy.cubin"),
        );
        let gemm = "hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co";
        copy(gemm, &format!("{side}/gemm.co"));
    }
    golden_in(
        "code_matrix",
        dir.path(),
        &["code", "matrix", "base", "cand"],
        0,
        &[dir.path()],
    );
}

/// `check` in the tensor fixtures folder; `code` 1 where a gate fails.
fn golden_check(name: &str, args: &[&str], code: i32) {
    let mut all = vec!["check"];
    all.extend(args);
    golden_in(name, &fixture("tensor"), &all, code, &[]);
}

#[test]
fn check_bitwise() {
    golden_check("check_bitwise_flip", &["bitwise", "a.npy", "a_flip.npy"], 1);
    golden_check(
        "check_bitwise_npz",
        &["bitwise", "wu.npz", "wu_changed.npz"],
        1,
    );
    golden_check(
        "check_bitwise_equal",
        &["bitwise", "wu.npz", "wu_compressed.npz"],
        0,
    );
}

#[test]
fn check_close_and_oracle() {
    golden_check("check_close", &["close", "a_perturbed.npy", "a.npy"], 0);
    golden_check(
        "check_oracle",
        &["oracle", "out_bf16.npy", "ref_f64.npy", "--dtype", "bf16"],
        0,
    );
}

#[test]
fn check_finite_and_repeat() {
    golden_check("check_finite", &["finite", "a_nonfinite.npy", "wu.npz"], 1);
    golden_check(
        "check_repeat",
        &["repeat", "a.npy", "a_copy.npy", "a_flip.npy"],
        1,
    );
}

#[test]
fn check_sweep() {
    let dir = tempfile::tempdir().expect("tmp");
    super::sweep::config_manifest(dir.path());
    golden_in(
        "check_sweep",
        dir.path(),
        &["check", "sweep", "sweep.toml"],
        1,
        &[dir.path()],
    );
}

#[test]
fn ab_analyze() {
    golden(
        "ab_analyze_pairs_csv",
        &[
            "ab",
            "analyze",
            "h200_ab/inproc_w4s3_w8s2.csv",
            "--metric",
            "median_us",
        ],
    );
    golden(
        "ab_analyze_samples_jsonl",
        &["ab", "analyze", "h200_ab/ab_proc_w4s3_w8s2.jsonl"],
    );
}

#[test]
fn kernel_run_dry_run() {
    golden(
        "kernel_dry_run_triton",
        &[
            "kernel",
            "run",
            "kernel/recompute_w4s3_vs_w4s4.toml",
            "--dry-run",
        ],
    );
    golden(
        "kernel_dry_run_copy",
        &[
            "kernel",
            "run",
            "kernel/copy_scalar_vs_vec4.toml",
            "--dry-run",
        ],
    );
}

/// `report` over a bundle recorded by the commands (Markdown is its only text format), with
/// the real H200 `kernel run` record of w4s3 → w8s2, the profile of the request it runs in, and
/// the profiles of both builds compared under the kernel run's label.
#[test]
fn report_markdown() {
    refuse_auto_accept_in_ci();
    let bundle = tempfile::tempdir().expect("tmp");
    let b = bundle.path().to_str().expect("UTF-8 path");
    let fx = fixture("");
    let runs: [(&[&str], i32); 9] = [
        (
            &["profile", "kineto_qwen3next_4l_prompt8192_baseline.json.gz"],
            0,
        ),
        (
            &[
                "profile",
                "h200_pair/gdn_w4s3_run1.json.gz",
                "--label",
                "gdn_request",
            ],
            0,
        ),
        (
            &[
                "compare",
                "--label",
                "recompute_w4s3_vs_w8s2",
                "--base",
                "h200_pair/gdn_w4s3_run1.json.gz",
                "h200_pair/gdn_w4s3_run2.json.gz",
                "--cand",
                "h200_pair/gdn_w8s2_run1.json.gz",
                "h200_pair/gdn_w8s2_run2.json.gz",
            ],
            0,
        ),
        (
            &["check", "bitwise", "tensor/wu.npz", "tensor/wu_changed.npz"],
            1,
        ),
        (
            &[
                "check",
                "oracle",
                "tensor/out_bf16.npy",
                "tensor/ref_f64.npy",
                "--dtype",
                "bf16",
            ],
            0,
        ),
        (&["check", "finite", "tensor/a_nonfinite.npy"], 1),
        (
            &[
                "code",
                "diff",
                "code/recompute_w_u_fwd_kernel_w4s3.cubin",
                "code/recompute_w_u_fwd_kernel_w8s2.cubin",
                "--no-disassemble",
            ],
            0,
        ),
        (&["metrics", "ncu_recompute_metrics.csv"], 0),
        (
            &[
                "ab",
                "analyze",
                "h200_ab/inproc_w4s3_w8s2.csv",
                "--metric",
                "median_us",
            ],
            0,
        ),
    ];
    for (args, code) in runs {
        let mut args = args.to_vec();
        args.extend(["--record", b]);
        run(&fx, &args, code);
    }
    // The H200 kernel run (no GPU here): its JSON document as a record of this bundle.
    let prov = r#"{"argv": ["kernelab", "kernel", "run", "kernel/recompute_w4s3_vs_w8s2.toml"],
        "kernelab_version": "0.1.0", "inputs": [{"path": "kernel/recompute_w4s3_vs_w8s2.toml",
        "sha256": null, "bytes": null}], "host": null, "gpu": "NVIDIA H200", "git": null,
        "started": "2026-11-29T08:00:00Z", "finished": "2026-11-29T08:01:00Z"}"#;
    let result = std::fs::read_to_string(fixture("h200_kernel/recompute_w4s3_vs_w8s2.json"))
        .expect("H200 record");
    std::fs::write(
        bundle.path().join("0010-kernel_run.json"),
        format!(
            r#"{{"schema_version": 2, "kind": "kernel_run", "provenance": {prov}, "result": {result}}}"#
        ),
    )
    .expect("write");
    let text = run(&fx, &["report", b], 0);
    settings("report BUNDLE", &[bundle.path()]).bind(|| {
        insta::assert_snapshot!("report_md", text);
    });
    // The HTML page of the same bundle (tables, inline code, the SVG charts with their labels).
    let html = run(&fx, &["report", b, "--format", "html"], 0);
    settings("report BUNDLE --format html", &[bundle.path()]).bind(|| {
        insta::assert_snapshot!("report_html", html);
    });
}
