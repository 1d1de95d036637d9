use super::*;

fn header(identity: &Identity) -> String {
    let mut v = serde_json::to_value(identity).expect("serialises");
    v["kind"] = "header".into();
    v["schema_version"] = 3.into();
    v["baseline"] = serde_json::json!(["true"]);
    format!("{v}\n")
}

#[test]
fn two_runs_created_in_the_same_second_get_different_folders() {
    let root = tempfile::tempdir().expect("tmp");
    let a = create_in(root.path(), RunKind::Ab, "x", None).expect("first");
    let b = create_in(root.path(), RunKind::Ab, "x", None).expect("second");
    assert_ne!(a.id, b.id);
    assert!(a.samples.is_file() && b.samples.is_file());
    assert_eq!(a.samples, a.dir.join("samples.jsonl"));
    assert!(a.id.starts_with("ab-2"), "{}", a.id);
}

#[test]
fn a_named_samples_file_is_never_clobbered_and_is_linked_from_the_run() {
    let root = tempfile::tempdir().expect("tmp");
    let p = root.path().join("mine.jsonl");
    std::fs::write(&p, "keep\n").expect("writes");
    let e = create_in(root.path(), RunKind::Ab, "x", Some(&p)).expect_err("exists");
    assert!(e.to_string().contains("never overwritten"), "{e}");
    assert_eq!(std::fs::read_to_string(&p).expect("reads"), "keep\n");
    let q = root.path().join("new.jsonl");
    let run = create_in(root.path(), RunKind::Serve, "x", Some(&q)).expect("creates");
    assert_eq!(run.samples, q);
    assert!(run.dir.join("samples.jsonl").is_file());
}

#[test]
fn resume_takes_an_id_or_a_path_and_checks_kind_and_version() {
    let root = tempfile::tempdir().expect("tmp");
    let run = create_in(root.path(), RunKind::Ab, "lbl", None).expect("creates");
    std::fs::write(&run.samples, header(&run.identity)).expect("writes");
    let by_id = resume_in(root.path(), Path::new(&run.id), RunKind::Ab, 3).expect("by id");
    assert_eq!(by_id.dir, run.dir);
    assert_eq!(by_id.identity.label.as_deref(), Some("lbl"));
    let by_path = resume_in(root.path(), &run.samples, RunKind::Ab, 3).expect("by path");
    assert_eq!(by_path.id, run.id);
    let e = resume_in(root.path(), &run.samples, RunKind::Serve, 3).expect_err("kind");
    assert!(
        e.to_string()
            .ends_with("line 1: a serve run cannot be resumed here; this file holds a ab run"),
        "{e}"
    );
    let e = resume_in(root.path(), &run.samples, RunKind::Ab, 2).expect_err("version");
    assert!(e.to_string().contains("schema_version 3 is newer"), "{e}");
    let e = resume_in(root.path(), Path::new("nope"), RunKind::Ab, 3).expect_err("absent");
    assert!(e.to_string().starts_with("--resume nope: neither"), "{e}");
}

#[test]
fn a_legacy_file_without_an_id_gets_a_run_folder_linking_to_it() {
    let root = tempfile::tempdir().expect("tmp");
    let p = root.path().join("old.jsonl");
    std::fs::write(&p, header(&Identity::default())).expect("writes");
    let run = resume_in(root.path(), &p, RunKind::Ab, 3).expect("resumes");
    assert_eq!(run.samples, p);
    assert!(run.dir.starts_with(root.path()) && run.dir != root.path());
    let listed = list_in(root.path()).expect("lists");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].kind, Some(RunKind::Ab));
}

#[test]
fn list_counts_pairs_and_reads_the_state() {
    let root = tempfile::tempdir().expect("tmp");
    let run = create_in(root.path(), RunKind::Ab, "lbl", None).expect("creates");
    let mut text = header(&run.identity);
    for aa in [true, true, false, false, false, false] {
        text.push_str(&format!("{{\"kind\":\"run\",\"aa\":{aa}}}\n"));
    }
    std::fs::write(&run.samples, text).expect("writes");
    let l = list_in(root.path()).expect("lists");
    assert_eq!((l[0].count, l[0].state.as_str()), (2, "incomplete"));
    run.finish(RunState::Complete).expect("finishes");
    let l = list_in(root.path()).expect("lists");
    assert_eq!(
        (l[0].label.as_str(), l[0].state.as_str()),
        ("lbl", "complete")
    );
    assert_eq!(list_in(&root.path().join("absent")).expect("empty"), vec![]);
}
