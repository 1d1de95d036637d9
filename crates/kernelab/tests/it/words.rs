//! What the words say (#41): help and errors name every format `profile` reads, binary input
//! is quoted as hex, filters are stated in every format, `--top 0`, the A/A line and the
//! labels that needed explaining.

use super::kernelab;

/// `kernelab ARGS`: its exit code, standard output and standard error.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = kernelab().args(args).output().expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_and_the_unknown_format_error_name_every_format() {
    let (_, help, _) = run(&["profile", "--help"]);
    // clap wraps the help: compare with the line breaks as spaces.
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("image.png");
    std::fs::write(&p, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe").expect("write");
    let (code, _, err) = run(&["profile", &p.display().to_string()]);
    assert_eq!(code, Some(2), "{err}");
    for f in kernelab_trace::Format::ALL {
        assert!(
            help.contains(f.describe()),
            "--help names {}:\n{help}",
            f.name()
        );
        assert!(
            err.contains(f.describe()),
            "the error names {}:\n{err}",
            f.name()
        );
    }
    assert!(
        err.contains("starts with bytes 89 50 4e 47 0d 0a 1a 0a"),
        "binary shown as hex: {err}"
    );
    assert!(
        !err.contains('\u{fffd}'),
        "no replacement characters: {err}"
    );
}

/// `kernelab profile ARGS` on a fixture in every text format, each of which must succeed.
fn profile_in_every_format(args: &[&str]) -> Vec<(String, String)> {
    ["table", "md", "json"]
        .into_iter()
        .map(|format| {
            let mut all = vec!["profile"];
            all.extend(args);
            all.extend(["--format", format]);
            let out = kernelab()
                .current_dir(super::fixture(""))
                .args(&all)
                .output()
                .expect("runs");
            assert!(
                out.status.success(),
                "{all:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            (
                format.to_string(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        })
        .collect()
}

#[test]
fn filters_are_stated_in_every_format() {
    let trace = "h200_pair/gdn_w4s3_run1.json.gz";
    let filtered = profile_in_every_format(&[
        trace,
        "--time-range",
        "1ms:2.5ms",
        "--name",
        "chunk",
        "--device",
        "0",
        "--stream",
        "7",
    ]);
    for (format, text) in &filtered {
        for said in [
            "--time-range: kernels starting 1 ms to 2500 µs after the first kernel's start",
            "--name: full names matching \\\"chunk\\\"",
            "--device: device 0 only",
            "--stream: stream 7 only",
        ] {
            // JSON escapes the quotes once; the views write them plain.
            let said = if format == "json" {
                said.to_string()
            } else {
                said.replace("\\\"", "\"")
            };
            assert!(text.contains(&said), "{format} states {said}:\n{text}");
        }
    }
    for (format, text) in profile_in_every_format(&[trace]) {
        assert!(!text.contains("filtered ("), "{format}: no filter, no note");
    }
    for format in ["table", "md", "json"] {
        let out = kernelab()
            .current_dir(super::fixture(""))
            .args(["compare", trace, "h200_pair/gdn_w2s4_run1.json.gz"])
            .args(["--name", "chunk", "--format", format])
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("filtered (--name: full names matching"),
            "compare --format {format} states the filter:\n{text}"
        );
    }
}

#[test]
fn top_0_shows_every_row() {
    let trace = "h200_pair/gdn_w4s3_run1.json.gz";
    for (format, text) in profile_in_every_format(&[trace, "--top", "0"]) {
        assert!(!text.contains("Top 0"), "{format}: {text}");
        assert!(!text.contains("other ("), "{format}: no row folded: {text}");
    }
    let all = profile_in_every_format(&[trace, "--top", "0"]);
    let doc: serde_json::Value = serde_json::from_str(&all[2].1).expect("JSON");
    let every: serde_json::Value =
        serde_json::from_str(&profile_in_every_format(&[trace])[2].1).expect("JSON");
    assert_eq!(doc["kernels"], every["kernels"], "--top 0 keeps every row");
    assert!(doc["other"].is_null());
}

#[test]
fn the_a_a_line_says_what_it_means() {
    let out = kernelab()
        .current_dir(super::fixture(""))
        .args(["ab", "analyze", "h200_ab/ab_proc_w4s3_w8s2.jsonl"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "A/A      ratio 1.0012: too few pairs for an A/A: 4 of 6 needed (the harness is not checked)"
        ),
        "{text}"
    );
    assert!(!text.contains("unavailable (too few pairs) ok"), "{text}");
}
