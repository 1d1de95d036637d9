//! The confined file layer (`KERNELAB_CONFINE_ROOT`): nothing outside the root is read, listed
//! or written, through links, `..`, or a folder swapped for a link while files are opened.
//! The root is read once per process, so every case shares one root and runs in this binary.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_model::{
    confined, create_dir_all, list_dir, open_append_regular, read_regular, write_file, NewFile,
    CONFINE_ENV,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

struct Setup {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

/// The root (confining every fsio call of this process) and a folder beside it, outside.
fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("inner")).expect("root");
        std::fs::create_dir_all(&outside).expect("outside");
        std::fs::write(outside.join("secret"), b"SECRET").expect("secret");
        std::fs::write(root.join("inner/ok"), b"inside").expect("ok");
        std::env::set_var(CONFINE_ENV, &root);
        Setup {
            _tmp: tmp,
            root,
            outside,
        }
    })
}

fn refused(e: std::io::Error, root: &Path) {
    let m = e.to_string();
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{m}");
    assert!(
        m.contains("outside the folder this run is confined to")
            && m.contains(&root.display().to_string()),
        "{m}"
    );
}

/// Every file name under `dir`, recursively (links not followed).
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).expect("under").display().to_string());
            if e.file_type().expect("type").is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn files_inside_open_and_every_way_out_is_refused() {
    let s = setup();
    let root = std::fs::canonicalize(&s.root).expect("canon");
    let before = listing(&s.outside);
    assert_eq!(
        read_regular(&s.root.join("inner/ok"), 100).expect("inside"),
        b"inside"
    );
    // `..` that stays inside is fine; one that climbs out is not.
    assert_eq!(
        read_regular(&s.root.join("inner/../inner/ok"), 100).expect("inside"),
        b"inside"
    );
    refused(
        read_regular(&s.root.join("../outside/secret"), 100).expect_err(".."),
        &root,
    );
    refused(
        read_regular(&s.outside.join("secret"), 100).expect_err("abs"),
        &root,
    );
    // A link to a file outside, and a folder that is a link to one outside.
    std::os::unix::fs::symlink(s.outside.join("secret"), s.root.join("file_link")).expect("ln");
    std::os::unix::fs::symlink(&s.outside, s.root.join("dir_link")).expect("ln");
    std::os::unix::fs::symlink("../outside", s.root.join("rel_link")).expect("ln");
    for p in ["file_link", "dir_link/secret", "rel_link/secret"] {
        refused(read_regular(&s.root.join(p), 100).expect_err(p), &root);
        refused(confined(&s.root.join(p)).expect_err(p), &root);
    }
    // A link that stays inside is followed.
    std::os::unix::fs::symlink("inner/ok", s.root.join("in_link")).expect("ln");
    assert_eq!(
        read_regular(&s.root.join("in_link"), 100).expect("in"),
        b"inside"
    );
    // Writes: through a folder link, to a name that is a link, appends, folders, listings.
    refused(
        write_file(&s.root.join("dir_link/new"), b"x", false).expect_err("write"),
        &root,
    );
    let e = write_file(&s.root.join("file_link"), b"x", true).expect_err("link target");
    assert!(e.to_string().contains("not a regular file"), "{e}");
    refused(
        open_append_regular(&s.root.join("dir_link/log")).expect_err("append"),
        &root,
    );
    refused(
        create_dir_all(&s.root.join("dir_link/a/b")).expect_err("mkdir"),
        &root,
    );
    refused(
        list_dir(&s.root.join("dir_link"), 10).expect_err("list"),
        &root,
    );
    refused(
        confined(&s.root.join("missing/../../outside/x")).expect_err("climb"),
        &root,
    );
    assert!(confined(&s.root.join("inner/new/deeper")).is_ok());
    write_file(&s.root.join("inner/new.txt"), b"fresh", false).expect("write inside");
    assert_eq!(
        std::fs::read(s.root.join("inner/new.txt")).expect("read"),
        b"fresh"
    );
    assert_eq!(listing(&s.outside), before, "nothing outside changed");
    assert_eq!(
        std::fs::read(s.outside.join("secret")).expect("secret"),
        b"SECRET"
    );
}

#[test]
fn a_new_file_dropped_unfinished_leaves_nothing_and_temporary_names_differ() {
    let s = setup();
    let dir = s.root.join("drop");
    create_dir_all(&dir).expect("mkdir");
    let mut f = NewFile::create(&dir.join("out"), false).expect("create");
    f.write_all(b"partial").expect("write");
    let names: Vec<String> = listing(&dir);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].starts_with(".kernelab-") && names[0].ends_with(".tmp"));
    let g = NewFile::create(&dir.join("out2"), false).expect("create");
    assert_ne!(listing(&dir).len(), 1, "a second, different temporary name");
    drop(f);
    drop(g);
    assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
}

/// A folder swapped for a link to the outside and back, as fast as the machine allows, for
/// 5 s, while another thread opens, writes, appends and lists through it: never a byte from
/// outside, never a file written there.
#[test]
fn a_folder_swapped_for_a_link_in_a_loop_never_leads_outside() {
    let s = setup();
    let race = s.root.join("race");
    create_dir_all(&race).expect("mkdir");
    let real = s.root.join("race/real");
    let swap = s.root.join("race/d");
    std::fs::create_dir_all(&real).expect("real");
    std::fs::write(real.join("secret"), b"inside").expect("write");
    let before = listing(&s.outside);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, real, swap, outside) =
            (stop.clone(), real.clone(), swap.clone(), s.outside.clone());
        std::thread::spawn(move || {
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::remove_file(&swap);
                let _ = std::os::unix::fs::symlink(&real, &swap);
                let _ = std::fs::remove_file(&swap);
                let _ = std::os::unix::fs::symlink(&outside, &swap);
                flips += 1;
            }
            flips
        })
    };
    let t = Instant::now();
    let (mut inside, mut refusals) = (0u64, 0u64);
    while t.elapsed() < Duration::from_secs(5) {
        match read_regular(&swap.join("secret"), 100) {
            Ok(b) => {
                assert_eq!(b, b"inside", "read through the swapped folder");
                inside += 1;
            }
            Err(_) => refusals += 1,
        }
        let _ = write_file(&swap.join("planted"), b"x", true);
        let _ = open_append_regular(&swap.join("log"));
        let _ = create_dir_all(&swap.join("made"));
        let _ = list_dir(&swap, 100);
    }
    stop.store(true, Ordering::Relaxed);
    let flips = swapper.join().expect("swapper");
    assert!(flips > 100, "the folder was swapped {flips} times");
    assert!(
        refusals > 0,
        "some opens met the outside link and were refused"
    );
    assert_eq!(listing(&s.outside), before, "nothing outside changed");
    eprintln!("race: {flips} swaps, {inside} reads inside, {refusals} refused");
}
