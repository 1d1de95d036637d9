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

#[test]
fn state_files_and_run_folders_that_are_links_fifos_or_large_are_refused() {
    let root = tempfile::tempdir().expect("tmp");
    let run = create_in(root.path(), RunKind::Ab, "lbl", None).expect("creates");
    std::fs::write(&run.samples, header(&run.identity)).expect("writes");
    let state = run.dir.join("state");
    let refused = |what: &str| {
        let t = std::time::Instant::now();
        let e = list_in(root.path()).expect_err(what).to_string();
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{what}");
        e
    };
    // 1 GiB (sparse): refused at the cap, not read.
    std::fs::File::create(&state)
        .and_then(|f| f.set_len(1 << 30))
        .expect("sparse");
    let e = refused("large");
    assert!(
        e.contains("state: cannot read the run's state: larger than the limit of 64 bytes"),
        "{e}"
    );
    // A FIFO: refused by type, without blocking.
    std::fs::remove_file(&state).expect("rm");
    let made = std::process::Command::new("mkfifo").arg(&state).status();
    if made.is_ok_and(|s| s.success()) {
        let e = refused("fifo");
        assert!(e.contains("not a regular file"), "{e}");
        std::fs::remove_file(&state).expect("rm");
    }
    // A link to a file outside the state folder: not followed.
    let outside = tempfile::tempdir().expect("tmp");
    let target = outside.path().join("secret");
    std::fs::write(&target, "complete\n").expect("writes");
    std::os::unix::fs::symlink(&target, &state).expect("link");
    let e = refused("link");
    assert!(
        e.contains("state: a symbolic link where a run's state file is expected"),
        "{e}"
    );
    std::fs::remove_file(&state).expect("rm");
    // A state that is not one kernelab writes.
    std::fs::write(&state, "\x1b[31mcomplete\n").expect("writes");
    let e = refused("unknown");
    assert!(e.contains("expected complete, stopped or failed"), "{e}");
    std::fs::remove_file(&state).expect("rm");
    assert_eq!(list_in(root.path()).expect("lists")[0].state, "incomplete");
    // A run folder that is a link to a folder outside: refused, by listing and by resume.
    let elsewhere = create_in(outside.path(), RunKind::Ab, "x", None).expect("creates");
    std::fs::write(&elsewhere.samples, header(&elsewhere.identity)).expect("writes");
    std::os::unix::fs::symlink(&elsewhere.dir, root.path().join("ab-linked")).expect("link");
    let e = refused("linked folder");
    assert!(
        e.contains("ab-linked: a symbolic link where a run's folder is expected"),
        "{e}"
    );
    let e = resume_in(root.path(), Path::new("ab-linked"), RunKind::Ab, 3).expect_err("link");
    assert!(e.to_string().contains("a symbolic link"), "{e}");
    std::fs::remove_file(root.path().join("ab-linked")).expect("rm");
    // `..` is no run id; nor is a header's id that leaves the state folder.
    let e = resume_in(root.path(), Path::new(".."), RunKind::Ab, 3).expect_err("dotdot");
    assert!(!e.to_string().is_empty());
    let mut evil = run.identity.clone();
    evil.id = Some("../../x".into());
    let p = outside.path().join("evil.jsonl");
    std::fs::write(&p, header(&evil)).expect("writes");
    let e = resume_in(root.path(), &p, RunKind::Ab, 3).expect_err("id");
    assert!(
        e.to_string()
            .contains("the header's id \"../../x\" is not a run id"),
        "{e}"
    );
}

#[test]
fn a_3_gb_line_in_a_samples_file_is_refused_naming_it_without_holding_it() {
    let root = tempfile::tempdir().expect("tmp");
    let run = create_in(root.path(), RunKind::Ab, "lbl", None).expect("creates");
    let mut text = header(&run.identity);
    text.push_str("{\"kind\":\"run\",\"aa\":false,\"pad\":\"");
    std::fs::write(&run.samples, &text).expect("writes");
    // A sparse 3 GB line: zero bytes after the text, no newline.
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(&run.samples)
        .expect("opens");
    f.set_len(3_000_000_000).expect("sparse");
    let t = std::time::Instant::now();
    let e = list_in(root.path()).expect_err("long line").to_string();
    assert!(
        e.contains("samples.jsonl: line 2: longer than 67108864 bytes"),
        "{e}"
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn conclude_writes_the_state_of_the_bodys_result_and_keeps_its_error() {
    let root = tempfile::tempdir().expect("tmp");
    let run = create_in(root.path(), RunKind::KernelRun, "k", None).expect("creates");
    let state = || std::fs::read_to_string(run.dir.join("state")).expect("state");
    let ok: Result<u32, RunError> = Ok(7);
    assert_eq!(run.conclude(ok, |_| RunState::Complete).expect("ok"), 7);
    assert_eq!(state(), "complete\n");
    let failed: Result<u32, RunError> = Err(RunError::NoStateDir);
    let e = run
        .conclude(failed, |r| {
            assert!(r.is_err());
            RunState::Stopped
        })
        .expect_err("the body's error");
    assert!(matches!(e, RunError::NoStateDir), "{e}");
    assert_eq!(state(), "stopped\n");
    // A state that cannot be written fails a body that worked.
    std::fs::remove_dir_all(&run.dir).expect("removes");
    std::fs::create_dir_all(run.dir.join("state")).expect("a folder where the state goes");
    let ok: Result<u32, RunError> = Ok(1);
    assert!(run.conclude(ok, |_| RunState::Complete).is_err());
}
