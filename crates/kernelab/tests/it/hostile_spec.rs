//! Kernel specs as an attacker writes them: deep expressions, overflowing shapes, buffers larger
//! than the machine, missing code objects and symbols. Each is exit 2 with a message naming the
//! spec, run under a 2 GiB address-space ceiling and a time limit.

use super::fixture;
use std::path::Path;
use std::time::Duration;

/// Runs `kernelab kernel run --dry-run SPEC` under `ulimit -v` 2 GiB; returns (code, stderr).
fn dry_run(spec: &Path) -> (Option<i32>, String) {
    let bin = assert_cmd::cargo::cargo_bin("kernelab");
    let out = assert_cmd::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152; exec \"$0\" \"$@\"")
        .arg(bin)
        .envs(kernelab_testkit::isolated_env())
        .args(["kernel", "run", "--dry-run"])
        .arg(spec)
        .timeout(Duration::from_secs(120))
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of the copy_scalar/copy_vec4 spec with `edit` applied, written beside the fixtures'
/// code object (by absolute path).
fn spec(dir: &Path, edit: impl Fn(String) -> String) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture("kernel/copy_scalar_vs_vec4.toml")).expect("spec");
    let code = fixture("code/copy_variants_sm90.cubin");
    let text = text.replace(
        "../code/copy_variants_sm90.cubin",
        &code.display().to_string(),
    );
    let p = dir.join("k.toml");
    std::fs::write(&p, edit(text)).expect("write");
    p
}

#[test]
fn the_unedited_spec_resolves() {
    let dir = tempfile::tempdir().expect("tmp");
    let (code, err) = dry_run(&spec(dir.path(), |t| t));
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn deeply_nested_expressions_are_refused_not_a_stack_overflow() {
    let dir = tempfile::tempdir().expect("tmp");
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let (code, err) = dry_run(&spec(dir.path(), |t| {
        t.replacen("shape = [\"N\"]", &format!("shape = [\"{deep}\"]"), 1)
    }));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("k.toml"), "{err}");
    assert!(err.contains("nested deeper than 64 levels"), "{err}");
    assert!(
        err.len() < 2_000,
        "the message does not echo the whole input"
    );
}

#[test]
fn a_huge_wrong_value_is_not_echoed_whole() {
    let dir = tempfile::tempdir().expect("tmp");
    let huge = "x".repeat(1_000_000);
    let (code, err) = dry_run(&spec(dir.path(), |t| {
        t.replace("N = 67108864", &format!("N = \"{huge}\""))
    }));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("k.toml: line 6: invalid type: string \"xxx"),
        "{err}"
    );
    assert!(err.contains("characters in all)"), "{err}");
    assert!(err.len() < 2_000, "{} bytes", err.len());
}

#[test]
fn shapes_that_overflow_or_outgrow_the_host_are_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let (code, err) = dry_run(&spec(dir.path(), |t| {
        t.replacen("shape = [\"N\"]", "shape = [\"N\", \"N\", \"N\"]", 1)
    }));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "argument `src`: shape [67108864, 67108864, 67108864] of F32 overflows 64-bit sizes"
        ),
        "{err}"
    );
    let (code, err) = dry_run(&spec(dir.path(), |t| {
        t.replacen("shape = [\"N\"]", "shape = [\"N\", \"N\"]", 1)
    }));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("bytes of host memory up to argument `src`"),
        "{err}"
    );
    let (code, err) = dry_run(&spec(dir.path(), |t| {
        t.replacen(
            "shape = [\"N\"]",
            "shape = [\"-(-9223372036854775807 - 1)\"]",
            1,
        )
    }));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("overflow"), "{err}");
}

#[test]
fn a_missing_code_object_or_symbol_is_not_resolved() {
    let dir = tempfile::tempdir().expect("tmp");
    let (code, err) = dry_run(&spec(dir.path(), |t| {
        t.replacen("copy_variants_sm90.cubin\"", "no_such_file.cubin\"", 1)
    }));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("baseline code object") && err.contains("no_such_file.cubin"),
        "{err}"
    );
    let (code, err) = dry_run(&spec(dir.path(), |t| {
        t.replace("symbol = \"copy_vec4\"", "symbol = \"copy_vec8\"")
    }));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("candidate: no kernel `copy_vec8` in this code object (it has 3 kernels: "),
        "{err}"
    );
}

#[test]
fn the_h200_fault_specs_resolve_without_a_gpu() {
    // The specs and cubin of bench/h200/faults (run on an H200: docs/benchmarks.md).
    let root = fixture("").join("../../bench/h200/faults");
    for v in ["illegal", "hang"] {
        let (code, err) = dry_run(&root.join(format!("ok_vs_{v}.toml")));
        assert_eq!(code, Some(0), "{v}: {err}");
    }
}
