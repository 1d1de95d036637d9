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
