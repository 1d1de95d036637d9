//! Issue 27: `--format` offers exactly what a command writes; one `--force` rule for every file
//! written (`--out`, `--svg`, `export`).

use super::{fixture, kernelab};

#[test]
fn issue27_format_lists_and_accepts_only_what_the_command_writes() {
    for cmd in [
        &["check", "close"][..],
        &["ab"],
        &["ab", "analyze"],
        &["kernel", "run"],
        &["ceilings"],
        &["impact"],
        &["sweep"],
    ] {
        let help = kernelab().args(cmd).arg("--help").output().expect("runs");
        let text = String::from_utf8_lossy(&help.stdout);
        let at = text.find("--format").expect("--format in --help");
        let section = &text[at..text[at..].find("[default").map_or(text.len(), |e| at + e)];
        assert!(
            !section.contains("csv"),
            "{cmd:?} --help offers csv: {section}"
        );
        assert!(section.contains("json"), "{cmd:?}: {section}");
        let out = kernelab()
            .args(cmd)
            .args(["--format", "csv"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("invalid value 'csv' for '--format <FORMAT>'")
                && err.contains("[possible values: table, md, json]"),
            "{cmd:?}: {err}"
        );
    }
    // A command with a CSV form keeps it.
    let help = kernelab()
        .args(["profile", "--help"])
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&help.stdout).contains("csv"));
}

#[test]
fn issue27_export_refuses_an_existing_table_unless_force() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("out");
    let ab = fixture("h200_ab/ab_proc_w4s3_w8s2.jsonl");
    let run = |force: bool| {
        let mut c = kernelab();
        c.args(["export", "--parquet"]).arg(&out).arg(&ab);
        if force {
            c.arg("--force");
        }
        c.output().expect("runs")
    };
    assert!(run(false).status.success());
    let table = out.join("ab_samples.parquet");
    std::fs::write(&table, "stale").expect("writes");
    let o = run(false);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "ab_samples.parquet: already exists; not replacing it (use --force to replace)"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read(&table).expect("reads"), b"stale");
    assert!(run(true).status.success());
    assert_eq!(
        std::fs::read(&table).expect("reads").get(..4),
        Some(&b"PAR1"[..])
    );
    let mut names: Vec<_> = std::fs::read_dir(&out)
        .expect("lists")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["ab_samples.parquet"], "no temporary file left");
}

#[test]
fn issue27_completions_and_man_pages_come_from_the_cli_definition() {
    let out = kernelab()
        .args(["completions", "bash"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let bash = String::from_utf8_lossy(&out.stdout);
    assert!(
        bash.contains("_kernelab()") && bash.contains("--accept-bias"),
        "bash"
    );
    // The `ab` options the completion offers are exactly what `ab --help` documents (`--aa`
    // and `--budget` never were options of `ab`; `serve` has a `--budget` since #25).
    let ab = bash
        .split("kernelab__subcmd__ab)")
        .nth(1)
        .and_then(|rest| rest.split(";;").next())
        .expect("an ab case in the bash completion");
    assert!(
        ab.contains("--baseline") || ab.contains("--candidate") || ab.contains("--pairs"),
        "{ab}"
    );
    assert!(!ab.contains("--aa ") && !ab.contains("--budget"), "{ab}");
    assert!(bash.contains("--budget"), "serve's --budget is offered");
    let zsh = kernelab()
        .args(["completions", "zsh"])
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&zsh.stdout).starts_with("#compdef kernelab"));
    let man = kernelab().arg("man").output().expect("runs");
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(
        page.contains(".TH kernelab 1") && page.contains("runs"),
        "{page}"
    );
    let ab = kernelab().args(["man", "ab"]).output().expect("runs");
    let page = String::from_utf8_lossy(&ab.stdout);
    assert!(
        page.contains(".TH kernelab-ab 1") && page.contains("accept\\-bias"),
        "{page}"
    );
    let bad = kernelab().args(["man", "nope"]).output().expect("runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("man nope: no such command; one of profile")
    );
}
