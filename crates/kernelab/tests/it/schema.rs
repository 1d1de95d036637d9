//! Every document the commands write on the repository's fixtures, and every record of a bundle
//! they make, validates against its published schema (docs/schema/v<SCHEMA_VERSION>/, generated
//! from the types; docs/json.md "Schemas"), with an independent validator (`jsonschema`).

use super::{fixture, kernelab, root};
use serde_json::Value;
use std::path::Path;

fn schema(kind: &str, what: &str) -> jsonschema::Validator {
    let p = root().join(format!(
        "docs/schema/v{}/{kind}.{what}.json",
        kernelab_model_version()
    ));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let v: Value = serde_json::from_str(&text).expect("schema JSON");
    jsonschema::draft202012::new(&v).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn kernelab_model_version() -> u64 {
    let text = std::fs::read_to_string(root().join("docs/schema/versions.json")).expect("versions");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    v.as_object()
        .and_then(|o| o.keys().filter_map(|k| k.parse().ok()).max())
        .expect("a version")
}

/// Validates `doc` against the schema of its own kind; returns the kind.
fn valid(doc: &Value, what: &str, source: &str) -> String {
    let kind = doc["kind"]
        .as_str()
        .unwrap_or_else(|| panic!("{source}: no kind"));
    let v = schema(kind, what);
    let errors: Vec<String> = v
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{source} ({kind} {what}): {errors:#?}");
    kind.to_string()
}

/// Runs `kernelab ARGS --format json` (exit 0 or 1) with `--record BUNDLE` and validates the
/// document.
fn run(args: &[&str], bundle: &Path, format_json: bool) -> String {
    let mut c = kernelab();
    c.args(args);
    if format_json {
        c.args(["--format", "json"]);
    }
    let out = c.arg("--record").arg(bundle).output().expect("runs");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "{args:?}: exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"));
    valid(&doc, "document", &format!("{args:?}"))
}

fn f(rel: &str) -> String {
    fixture(rel).display().to_string()
}

#[test]
fn every_fixture_document_and_record_validates_against_its_schema() {
    let t = tempfile::tempdir().expect("tmp");
    let bundle = t.path().join("bundle");
    let b = &bundle;
    let mut kinds = std::collections::BTreeSet::new();
    let mut k = |s: String| {
        kinds.insert(s);
    };
    for trace in [
        "kineto_h200_mm_bf16_four_shapes.json.gz",
        "kineto-rocm6.2-mi250-minitoy_train.json.gz",
        "rocprofv3_sdk0.5_kernel_trace.csv",
        "rocprofv3_kernel_stats_jacobi.csv",
        "nsys-2024.5-a100-cloverleaf-cuda.sqlite",
        "xplane_mi300_jax_conv_tw003.xplane.pb",
    ] {
        k(run(&["profile", &f(trace)], b, true));
    }
    k(run(
        &[
            "profile",
            "--by-phase",
            "--by-graph",
            &f("kineto_h200_cuda_graph_capture_and_replay.json.gz"),
        ],
        b,
        true,
    ));
    let p = |c: &str, n: u32| f(&format!("h200_pair/gdn_{c}_run{n}.json.gz"));
    k(run(
        &[
            "compare",
            "--base",
            &p("w4s3", 1),
            &p("w4s3", 2),
            &p("w4s3", 3),
            "--cand",
            &p("w8s2", 1),
            &p("w8s2", 2),
            &p("w8s2", 3),
        ],
        b,
        true,
    ));
    k(run(&["compare", &p("w4s3", 1), &p("w8s2", 1)], b, true));
    k(run(&["metrics", &f("ncu_recompute_metrics.csv")], b, true));
    k(run(
        &["metrics", &f("ncu-csv-details-cuda11.4-bert_flashattn.csv")],
        b,
        true,
    ));
    let c = |n: &str| f(&format!("code/{n}"));
    k(run(
        &["code", "show", &c("recompute_w_u_fwd_kernel_w4s3.sass.txt")],
        b,
        true,
    ));
    k(run(
        &[
            "code",
            "diff",
            &c("recompute_w_u_fwd_kernel_w4s3.sass.txt"),
            &c("recompute_w_u_fwd_kernel_w8s2.sass.txt"),
        ],
        b,
        true,
    ));
    k(run(
        &[
            "code",
            "matrix",
            "--base",
            &c("recompute_w_u_fwd_kernel_w4s3.cubin"),
            "--cand",
            &c("recompute_w_u_fwd_kernel_w8s2.cubin"),
            "--key",
            "^(recompute_w_u_fwd_kernel)",
        ],
        b,
        true,
    ));
    let tn = |n: &str| f(&format!("tensor/{n}"));
    k(run(
        &["check", "bitwise", &tn("a.npy"), &tn("a_flip.npy")],
        b,
        true,
    ));
    k(run(
        &["check", "close", &tn("a.npy"), &tn("a_perturbed.npy")],
        b,
        true,
    ));
    k(run(
        &["check", "oracle", &tn("out_bf16.npy"), &tn("ref_f64.npy")],
        b,
        true,
    ));
    k(run(
        &["check", "finite", &tn("a_nonfinite.npy"), &tn("a.npy")],
        b,
        true,
    ));
    k(run(
        &[
            "check",
            "repeat",
            &tn("a.npy"),
            &tn("a_copy.npy"),
            &tn("a_flip.npy"),
        ],
        b,
        true,
    ));
    let m = t.path().join("manifest.toml");
    std::fs::write(
        &m,
        format!(
            "[[config]]\nname = \"one\"\nbaseline = \"{}\"\ncandidate = \"{}\"\nrepeats = [\"{}\"]\n",
            tn("a.npy"),
            tn("a_perturbed.npy"),
            tn("a_copy.npy")
        ),
    )
    .expect("manifest");
    k(run(&["check", "sweep", &m.display().to_string()], b, true));
    k(run(
        &[
            "ab",
            "analyze",
            &f("h200_ab/ab_proc_w4s3_w8s2.jsonl"),
            "--metric",
            "median_us",
        ],
        b,
        true,
    ));
    k(run(
        &["ab", "analyze", &f("h200_ab/inproc_w4s3_w8s2.csv")],
        b,
        true,
    ));
    k(run(
        &[
            "kernel",
            "run",
            "--dry-run",
            &f("kernel/recompute_w4s3_vs_w4s4.toml"),
        ],
        b,
        true,
    ));
    for name in ["eager_vs_sdpa", "cb_eager_vs_sdpa", "looks_planted"] {
        k(run(
            &[
                "serve",
                "--analyze",
                "--resume",
                &f(&format!("serve/h200/{name}.samples.jsonl")),
            ],
            b,
            true,
        ));
    }
    k(run(&["ceilings", "--datasheet", "NVIDIA H200"], b, true));
    k(run(
        &[
            "roofline",
            &f("ncu_recompute_metrics.csv"),
            "--work",
            &root()
                .join("examples/roofline/work.toml")
                .display()
                .to_string(),
            "--ceilings",
            &f("h200_ceilings/ceilings.json"),
        ],
        b,
        true,
    ));
    // Documents written on the H200 (kernel runs, ceilings) are fixtures themselves.
    for doc in [
        "h200_kernel/recompute_w4s3_vs_w8s2.json",
        "h200_kernel/recompute_w4s3_aa.json",
        "h200_kernel/copy_scalar_vs_vec4.json",
        "h200_ceilings/ceilings.json",
    ] {
        let v: Value =
            serde_json::from_slice(&std::fs::read(fixture(doc)).expect("read")).expect("JSON");
        // Written by earlier versions: read through the upgrade into a record (validated
        // below with the bundle); a current one validates as it is.
        if v["schema_version"] == kernelab_model_version() {
            k(valid(&v, "document", doc));
        }
        kernelab()
            .args(["record", &f(doc), "--record"])
            .arg(b)
            .assert()
            .success();
        // The document as this kernelab writes it: the upgraded record's result in the envelope.
        let one = t.path().join(format!("one-{}", doc.replace('/', "-")));
        kernelab()
            .args(["record", &f(doc), "--record"])
            .arg(&one)
            .assert()
            .success();
        let rec = std::fs::read_dir(&one)
            .expect("bundle")
            .next()
            .expect("a record")
            .expect("entry");
        let rec: Value =
            serde_json::from_slice(&std::fs::read(rec.path()).expect("read")).expect("JSON");
        let mut d = serde_json::json!({"schema_version": rec["schema_version"], "kind": rec["kind"],
            "kernelab_version": rec["provenance"]["kernelab_version"]});
        for (key, val) in rec["result"].as_object().expect("result") {
            d[key] = val.clone();
        }
        k(valid(&d, "document", doc));
    }
    let profile = t.path().join("profile.json");
    let out = kernelab()
        .args(["profile", &p("w4s3", 1), "--format", "json"])
        .output()
        .expect("profile");
    std::fs::write(&profile, &out.stdout).expect("write");
    k(run(
        &[
            "impact",
            "--profile",
            &profile.display().to_string(),
            "--kernel-run",
            &f("h200_kernel/recompute_w4s3_vs_w8s2.json"),
        ],
        b,
        true,
    ));
    let sweep = super::sweep::tensor_sweep(t.path(), 2);
    k(run(&["sweep", &sweep.display().to_string()], b, true));
    // The bundle's report and an audit of a note against it.
    k(run(&["report", &bundle.display().to_string()], b, true));
    let note = t.path().join("note.md");
    std::fs::write(&note, "## gdn_w4s3_run1\n\nNothing quoted.\n").expect("note");
    k(run(
        &[
            "report",
            "check",
            &note.display().to_string(),
            "--bundle",
            &bundle.display().to_string(),
        ],
        b,
        true,
    ));
    // Every record of the bundle validates against its kind's record schema.
    let mut records = 0;
    for e in std::fs::read_dir(&bundle).expect("bundle") {
        let path = e.expect("entry").path();
        let v: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("JSON");
        valid(&v, "record", &path.display().to_string());
        records += 1;
    }
    assert!(records >= 30, "{records} records");
    for want in [
        "profile",
        "compare",
        "metrics",
        "code_show",
        "code_diff",
        "code_matrix",
        "check_bitwise",
        "check_close",
        "check_oracle",
        "check_finite",
        "check_repeat",
        "ab",
        "kernel_dry_run",
        "kernel_run",
        "serve",
        "ceilings",
        "roofline",
        "impact",
        "sweep",
        "report",
        "report_check",
    ] {
        assert!(
            kinds.contains(want),
            "no {want} document validated: {kinds:?}"
        );
    }
}
