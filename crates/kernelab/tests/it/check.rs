//! `kernelab check`: the gates on real H200 outputs and on cases whose expected figures NumPy
//! computed (`tests/oracle/tensor_cases.py` → `tests/expected/tensor_cases.json`).

use super::{fixture, kernelab, root, shared};
use serde_json::Value;
use std::path::PathBuf;

fn t(name: &str) -> String {
    fixture(&format!("tensor/{name}")).display().to_string()
}

fn expected() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/expected/tensor_cases.json")).expect("read"),
    )
    .expect("json")
}

/// Runs `kernelab check ARGS --format json`; returns the exit code and the document.
fn check(args: &[&str]) -> (i32, Value) {
    let out = kernelab()
        .arg("check")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let code = out.status.code().expect("exit code");
    assert!(code != 2, "{}", String::from_utf8_lossy(&out.stderr));
    (code, serde_json::from_slice(&out.stdout).expect("json"))
}

fn close_to(a: &Value, b: &Value) -> bool {
    let (x, y) = (a.as_f64().expect("a"), b.as_f64().expect("b"));
    (x - y).abs() <= 1e-12 * y.abs().max(1e-300)
}

#[test]
fn h200_outputs_of_two_configs_are_bitwise_equal() {
    let Some(a) = shared("nvidia/h200/gdn_wu_T128_w4s2.safetensors") else {
        return;
    };
    let Some(b) = shared("nvidia/h200/gdn_wu_T128_w8s3.safetensors") else {
        return;
    };
    let (code, doc) = check(&["bitwise", a.to_str().expect("p"), b.to_str().expect("p")]);
    assert_eq!(code, 0);
    let names: Vec<&str> = doc["tensors"]
        .as_array()
        .expect("t")
        .iter()
        .map(|x| x["name"].as_str().expect("n"))
        .collect();
    assert_eq!(names, vec!["u", "w"]);
    for x in doc["tensors"].as_array().expect("t") {
        assert_eq!(x["dtype"], "bf16");
        assert_eq!(x["shape"], serde_json::json!([1, 128, 32, 128]));
        assert_eq!(x["result"]["differing"], 0);
    }
    let (code, doc) = check(&["finite", a.to_str().expect("p")]);
    assert_eq!((code, doc["pass"].as_bool()), (0, Some(true)));
    let (code, _) = check(&["repeat", a.to_str().expect("p"), b.to_str().expect("p")]);
    assert_eq!(code, 0);
}

#[test]
fn a_flipped_bit_fails_with_its_index() {
    let e = expected();
    let (code, doc) = check(&["bitwise", &t("a.npy"), &t("a_flip.npy")]);
    assert_eq!(code, 1);
    let r = &doc["tensors"][0]["result"];
    assert_eq!(r["differing"], e["flip"]["differing"]);
    assert_eq!(r["first"][0]["index"], e["flip"]["first"]);
    assert_eq!(check(&["bitwise", &t("a.npy"), &t("a_copy.npy")]).0, 0);
}

#[test]
fn negative_zero_and_nan_options() {
    assert_eq!(
        check(&["bitwise", &t("zero_pos.npy"), &t("zero_neg.npy")]).0,
        1
    );
    let (code, doc) = check(&[
        "bitwise",
        &t("zero_pos.npy"),
        &t("zero_neg.npy"),
        "--zero-equal",
    ]);
    assert_eq!(code, 0, "{doc}");
    let (_, doc) = check(&["bitwise", &t("zero_pos.npy"), &t("zero_neg.npy")]);
    assert_eq!(doc["tensors"][0]["result"]["first"][0]["b"], "-0");
}

#[test]
fn nan_and_inf_are_counted() {
    let e = &expected()["nonfinite"];
    let (code, doc) = check(&["finite", &t("a_nonfinite.npy")]);
    assert_eq!(code, 1);
    let r = &doc["files"][0]["tensors"][0];
    assert_eq!(doc["files"][0]["tensors"][0]["name"], "a_nonfinite");
    assert_eq!(
        (&r["nan"], &r["pos_inf"], &r["neg_inf"], &r["first"]),
        (&e["nan"], &e["pos_inf"], &e["neg_inf"], &e["first"])
    );
}

#[test]
fn close_figures_match_numpy() {
    let e = &expected()["close"];
    let (code, doc) = check(&["close", &t("a_perturbed.npy"), &t("a.npy")]);
    assert_eq!(code, 0);
    let r = &doc["tensors"][0]["result"];
    for k in ["max_abs_err", "max_rel_err", "rel_l2_err"] {
        assert!(close_to(&r[k], &e[k]), "{k}: {} vs {}", r[k], e[k]);
    }
    assert_eq!(r["mismatches"], e["mismatches"]);
    assert_eq!(r["max_ulp"], e["max_ulp"]);
    let hist: Vec<u64> = r["ulp_histogram"]
        .as_array()
        .expect("h")
        .iter()
        .take(8)
        .map(|b| b["count"].as_u64().expect("n"))
        .collect();
    let want: Vec<u64> = e["ulp_histogram"]
        .as_array()
        .expect("h")
        .iter()
        .map(|v| v.as_u64().expect("n"))
        .collect();
    assert_eq!(hist, want);
    let (code, doc) = check(&["close", &t("a_perturbed.npy"), &t("a.npy"), "--ulp", "4"]);
    assert_eq!(code, 1);
    assert_eq!(
        doc["tensors"][0]["result"]["mismatches"],
        e["mismatches_ulp_4"]
    );
}

#[test]
fn oracle_error_of_bf16_stored_as_uint16() {
    let e = &expected()["oracle"];
    let (code, doc) = check(&[
        "oracle",
        &t("out_bf16.npy"),
        &t("ref_f64.npy"),
        "--dtype",
        "bf16",
    ]);
    assert_eq!(code, 0, "{doc}");
    let r = &doc["tensors"][0]["result"];
    assert_eq!(doc["tensors"][0]["dtype"], "bf16");
    for k in ["max_abs_err", "max_rel_err", "rel_l2_err"] {
        assert!(close_to(&r[k], &e[k]), "{k}: {} vs {}", r[k], e[k]);
    }
    assert_eq!(r["mismatches"], e["mismatches"]);
    // Seven elements one ULP apart.
    let (code, doc) = check(&[
        "close",
        &t("out_bf16_b.npy"),
        &t("out_bf16.npy"),
        "--dtype",
        "bf16",
        "--ulp",
        "0",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        doc["tensors"][0]["result"]["mismatches"],
        expected()["bf16_pair"]["differing"]
    );
    assert_eq!(doc["tensors"][0]["result"]["max_ulp"], 1);
}

#[test]
fn npz_members_by_name_stored_and_compressed() {
    let e = &expected()["npz"];
    assert_eq!(
        check(&["bitwise", &t("wu.npz"), &t("wu_compressed.npz")]).0,
        0
    );
    let (code, doc) = check(&["bitwise", &t("wu.npz"), &t("wu_changed.npz")]);
    assert_eq!(code, 1);
    let u = doc["tensors"]
        .as_array()
        .expect("t")
        .iter()
        .find(|x| x["name"] == "u")
        .cloned()
        .expect("u");
    assert_eq!(u["result"]["differing"], e["u_differing"]);
    assert_eq!(u["result"]["first"][0]["index"], e["u_first"]);
    let (code, doc) = check(&["bitwise", &t("wu.npz"), &t("w_only.npz")]);
    assert_eq!(code, 1);
    let u = doc["tensors"]
        .as_array()
        .expect("t")
        .iter()
        .find(|x| x["name"] == "u")
        .cloned()
        .expect("u");
    assert!(
        u["problem"].as_str().expect("problem").contains("only"),
        "{u}"
    );
}

#[test]
fn shape_mismatch_and_raw_files() {
    let (code, doc) = check(&["bitwise", &t("a.npy"), &t("a_shape.npy")]);
    assert_eq!(code, 1);
    assert!(doc["tensors"][0]["problem"]
        .as_str()
        .expect("p")
        .contains("shape [64, 32] vs [32, 64]"));
    assert_eq!(
        check(&[
            "bitwise",
            &t("a.npy"),
            &t("a.bin"),
            "--dtype",
            "f32",
            "--shape",
            "64,32"
        ])
        .0,
        0
    );
}

#[test]
fn bad_tensor_files_exit_2() {
    let out = kernelab()
        .args(["check", "bitwise"])
        .arg(t("a.npy"))
        .arg(t("a_truncated.npy"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a_truncated.npy") && err.contains("byte") && err.contains("truncated"),
        "{err}"
    );
    let out = kernelab()
        .args(["check", "finite"])
        .arg(t("a.bin"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dtype and --shape"));
}

#[test]
fn sweep_manifest_gates() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = dir.path().join("sweep.toml");
    let fx = root().join("tests/fixtures/tensor");
    let p = |n: &str| fx.join(n).display().to_string();
    let mut text = String::from("[tolerance]\nrtol = 1e-5\natol = 1e-5\n");
    for i in 0..3 {
        text += &format!(
            "[[config]]\nname = \"c{i}\"\nbaseline = \"{}\"\ncandidate = \"{}\"\nrepeats = [\"{}\"]\noracle = \"{}\"\n",
            p("a.npy"),
            p("a_copy.npy"),
            p("a.npy"),
            p("a_perturbed.npy")
        );
    }
    text += &format!(
        "[[config]]\nname = \"bad\"\nbaseline = \"{}\"\ncandidate = \"{}\"\n",
        p("a.npy"),
        p("a_nonfinite.npy")
    );
    std::fs::write(&m, text).expect("write");
    let (code, doc) = check(&["sweep", m.to_str().expect("p")]);
    assert_eq!(code, 1);
    // One record kind with `kernelab sweep`: the matrix, its lines, one line per gate.
    assert_eq!(doc["kind"], "sweep");
    assert_eq!(doc["mode"], "tensor");
    assert_eq!(doc["lines"][0], "3 of 4 configs bitwise equal");
    assert_eq!(doc["lines"][1], "3 of 4 configs passed every gate");
    let lines: Vec<&str> = doc["gates"]
        .as_array()
        .expect("g")
        .iter()
        .map(|g| g["line"].as_str().expect("l"))
        .collect();
    assert_eq!(
        lines,
        [
            "3 of 4 configs: baseline vs candidate bitwise",
            "3 of 3 configs: repeated candidate runs bit-identical",
            "3 of 4 configs: candidate finite",
            "3 of 3 configs: candidate within tolerance of the oracle",
        ]
    );
    let bad_point = &doc["points"][3];
    assert_eq!(bad_point["id"], "bad");
    assert_eq!(bad_point["verdict"], "fail");
    let finite = bad_point["gates"]
        .as_array()
        .expect("gates")
        .iter()
        .find(|g| g["name"] == "candidate finite")
        .expect("finite gate");
    // tests/fixtures/tensor/a_nonfinite.npy: 1 NaN, +Inf and −Inf among 2,048 elements.
    assert_eq!(finite["detail"], "1 NaN and 2 Inf of 2048 elements");
    let bad: PathBuf = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[config]]\nname = 1\n").expect("write");
    let out = kernelab()
        .args(["check", "sweep"])
        .arg(&bad)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"));
}

#[test]
fn fortran_members_read_in_c_order_and_unsupported_members_listed() {
    // tests/oracle/tensor_cases.py wrote both archives with NumPy: fortran_members.npz holds
    // column-major copies of c_members.npz's arrays, a byte-string and a complex member.
    let (code, doc) = check(&["bitwise", &t("fortran_members.npz"), &t("c_members.npz")]);
    assert_eq!(code, 0, "{doc}");
    let names: Vec<&str> = doc["tensors"]
        .as_array()
        .expect("tensors")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["a", "b"]);
    let skipped: Vec<String> = doc["not_checked"]
        .as_array()
        .expect("not_checked")
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["name"].as_str().unwrap_or(""),
                s["why"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped[0].ends_with("fortran_members.npz: s byte strings (|S2), not supported"),
        "{skipped:?}"
    );
    assert!(
        skipped[1].ends_with("fortran_members.npz: c complex numbers (<c8), not supported"),
        "{skipped:?}"
    );
    // The values in C order, as NumPy's ravel() gives them.
    let out = kernelab()
        .args(["check", "bitwise", "--first", "6"])
        .arg(t("fortran_members.npz"))
        .arg(t("c_members.npz"))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Not checked"), "{text}");
}

#[test]
fn python2_headers_and_structured_dtypes() {
    let e = &expected()["py2_shape"];
    assert_eq!(e, &serde_json::json!([1.0, 2.0, 3.0]));
    let (code, doc) = check(&["finite", &t("py2_shape.npy")]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["files"][0]["tensors"][0]["elements"], 3);
    let out = kernelab()
        .args(["check", "finite"])
        .arg(t("structured.npy"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("structured.npy")
            && err.contains("expected a numeric dtype: structured dtype ([('x', '<f4'), ('y', '<i4')]), not supported"),
        "{err}"
    );
}

#[test]
fn issue27_uint16_data_without_dtype_hints_at_bf16() {
    let out = kernelab()
        .args(["check", "oracle"])
        .arg(t("out_bf16.npy"))
        .arg(t("ref_f64.npy"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("out_bf16.npy: tensor is uint16 (out_bf16); if this is bf16 stored as uint16, give --dtype bf16"),
        "{err}"
    );
    // With the dtype named, no hint.
    let out = kernelab()
        .args(["check", "oracle"])
        .arg(t("out_bf16.npy"))
        .arg(t("ref_f64.npy"))
        .args(["--dtype", "bf16"])
        .output()
        .expect("runs");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hint"));
}
