//! Hostile input, round 3 (issue 39), trace and code readers: damaged SQLite b-trees and
//! headers (exit 2 naming the table, page or byte, never kernels lost with exit 0), files left
//! beside an export that was only read, XPlane files of many empty messages and `.aks2`
//! decompression bombs (exit 2 naming the cap, within 2 GiB of address space and 10 s).

use crate::{fixture, kernelab};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const CLOVERLEAF: &str = "nsys-2024.5-a100-cloverleaf-cuda.sqlite";
const KERNELS: &str = "CUPTI_ACTIVITY_KIND_KERNEL";

/// Runs `kernelab ARGS` with a 10 s limit; the exit code, standard error and wall time.
fn run(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, Duration) {
    let t = Instant::now();
    let out = kernelab()
        .args(args)
        .timeout(Duration::from_secs(10))
        .output()
        .expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

/// Runs `kernelab ARGS` under `ulimit -v` of 2 GiB (through `sh`); as [`run`].
fn run_2gib(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, Duration) {
    let bin = assert_cmd::cargo::cargo_bin("kernelab");
    let t = Instant::now();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152; exec \"$0\" \"$@\"")
        .arg(&bin)
        .args(args)
        .envs(kernelab_testkit::isolated_env())
        .output()
        .expect("sh");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A copy of the cloverleaf export in `dir`.
fn export_copy(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(fixture(CLOVERLEAF), &p).expect("copy");
    p
}

/// The page size and the root page of `table`.
fn root_of(db: &Path, table: &str) -> (usize, usize) {
    let c = rusqlite::Connection::open(db).expect("open");
    let size: i64 = c
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .expect("page size");
    let root: i64 = c
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = ?1",
            [table],
            |r| r.get(0),
        )
        .expect("root");
    (size as usize, root as usize)
}

fn be16(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_be_bytes([b[at], b[at + 1]]))
}

/// The offsets of the child pointers of the interior page at `at` (not page 1) and the child
/// pages they hold.
fn children(b: &[u8], at: usize) -> Vec<(usize, u32)> {
    assert_eq!(b[at], 0x05, "an interior table page");
    (0..be16(b, at + 3))
        .map(|i| {
            let cell = at + be16(b, at + 12 + 2 * i);
            let p = u32::from_be_bytes(b[cell..cell + 4].try_into().expect("4 bytes"));
            (cell, p)
        })
        .collect()
}

/// The kernel table of `db` with its second child pointer changed to the first leaf: that leaf
/// is reached twice, the second never; returns the leaf met twice.
fn point_second_child_at_first(db: &Path, table: &str) -> u32 {
    let (size, root) = root_of(db, table);
    let mut b = std::fs::read(db).expect("read");
    let kids = children(&b, (root - 1) * size);
    let (cell, _) = kids[1];
    b[cell..cell + 4].copy_from_slice(&kids[0].1.to_be_bytes());
    std::fs::write(db, &b).expect("write");
    kids[0].1
}

/// Lowers the cell count of the third leaf under the root of `table` by one (its last cell
/// dropped); returns that leaf.
fn drop_a_cell(db: &Path, table: &str) -> u32 {
    let (size, root) = root_of(db, table);
    let mut b = std::fs::read(db).expect("read");
    let leaf = children(&b, (root - 1) * size)[2].1;
    let at = (leaf as usize - 1) * size;
    assert_eq!(b[at], 0x0d, "a table leaf");
    let n = be16(&b, at + 3) as u16 - 1;
    b[at + 3..at + 5].copy_from_slice(&n.to_be_bytes());
    std::fs::write(db, &b).expect("write");
    leaf
}

fn to_wal(db: &Path) {
    let c = rusqlite::Connection::open(db).expect("open");
    let mode: String = c
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .expect("wal");
    assert_eq!(mode, "wal");
}

#[test]
fn a_btree_leaf_reached_twice_is_exit_2_naming_table_and_page() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = export_copy(dir.path(), "twice.sqlite");
    let leaf = point_second_child_at_first(&db, KERNELS);
    let (code, err, took) = run(&[os("profile"), db.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("twice.sqlite")
            && err.contains(KERNELS)
            && err.contains(&format!("page {leaf} "))
            && err.contains("referenced twice"),
        "{err}"
    );
    assert!(took < Duration::from_secs(10));
}

#[test]
fn a_btree_leaf_with_a_cell_dropped_is_exit_2_naming_table_and_page() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = export_copy(dir.path(), "dropped.sqlite");
    let leaf = drop_a_cell(&db, KERNELS);
    let (code, err, _) = run(&[os("profile"), db.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(KERNELS)
            && err.contains(&format!("page {leaf} "))
            && err.contains("cells dropped"),
        "{err}"
    );
}

#[test]
fn damaged_trees_read_through_sqlite_are_exit_2_from_quick_check() {
    let dir = tempfile::tempdir().expect("tmp");
    // In WAL mode the kernel table is read through SQLite, whose scan would not notice.
    let db = export_copy(dir.path(), "wal.sqlite");
    to_wal(&db);
    let leaf = point_second_child_at_first(&db, KERNELS);
    let (code, err, _) = run(&[os("profile"), db.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("quick_check of CUPTI_ACTIVITY_KIND_KERNEL")
            && err.contains(&format!("2nd reference to page {leaf}")),
        "{err}"
    );
    // The string table is always read through SQLite.
    let db = export_copy(dir.path(), "strings.sqlite");
    let leaf = drop_a_cell(&db, "StringIds");
    let (code, err, _) = run(&[os("profile"), db.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("quick_check of StringIds") && err.contains(&format!("page {leaf}")),
        "{err}"
    );
}

#[test]
fn a_header_sqlite_refuses_is_exit_2_naming_the_byte() {
    let dir = tempfile::tempdir().expect("tmp");
    let clean = std::fs::read(fixture(CLOVERLEAF)).expect("read");
    for (at, value, what) in [
        (16usize, vec![0x03u8, 0x00], "page size"),
        (19, vec![3], "read version"),
        (21, vec![65], "payload fraction 64"),
        (23, vec![33], "payload fraction 32"),
        (28, 100_000u32.to_be_bytes().to_vec(), "database size"),
    ] {
        let mut b = clean.clone();
        b[at..at + value.len()].copy_from_slice(&value);
        let db = dir.path().join(format!("h{at}.sqlite"));
        std::fs::write(&db, &b).expect("write");
        let (code, err, _) = run(&[os("profile"), db.as_os_str()]);
        assert_eq!(code, Some(2), "{what}: {err}");
        assert!(
            err.contains(&format!("h{at}.sqlite: byte {at}:")) && err.contains(what),
            "{what}: {err}"
        );
    }
    // A database size SQLite takes (valid for the file's change counter) that stops before
    // pages of the kernel table: SQLite would refuse those pages, the page reader must too.
    let db = export_copy(dir.path(), "short.sqlite");
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute_batch(&format!(
            "CREATE TABLE zz (a INTEGER); INSERT INTO {KERNELS} SELECT * FROM {KERNELS};"
        ))
        .expect("grow");
    }
    let top: i64 = rusqlite::Connection::open(&db)
        .expect("open")
        .query_row("SELECT max(rootpage) FROM sqlite_master", [], |r| r.get(0))
        .expect("roots");
    let mut b = std::fs::read(&db).expect("read");
    assert_eq!(b[24..28], b[92..96], "a header size SQLite trusts");
    assert!(
        b.len() / 4096 > top as usize + 10,
        "kernel pages past the roots"
    );
    b[28..32].copy_from_slice(&(top as u32).to_be_bytes());
    std::fs::write(&db, &b).expect("write");
    let (code, err, _) = run(&[os("profile"), db.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("short.sqlite") && err.contains("malformed"),
        "{err}"
    );
}

/// The kernel count `profile --format json` reports for `db`.
fn kernel_count(db: &Path) -> u64 {
    let out = kernelab()
        .args(["profile", "--format", "json"])
        .arg(db)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    v["summary"]["kernel_count"].as_u64().expect("count")
}

#[test]
fn reading_an_export_writes_nothing_beside_it() {
    let dir = tempfile::tempdir().expect("tmp");
    // Rollback-journal mode, as nsys writes it.
    let plain = export_copy(dir.path(), "plain.sqlite");
    // WAL mode, no -wal or -shm beside it.
    let wal = export_copy(dir.path(), "wal.sqlite");
    to_wal(&wal);
    // WAL mode with rows only in its -wal file and no -shm: SQLite would create the -shm to
    // read them, and an immutable open would leave them unread; refused, naming the file.
    let pending = export_copy(dir.path(), "pending.sqlite");
    to_wal(&pending);
    let saved = dir.path().join("saved-main");
    std::fs::copy(&pending, &saved).expect("save");
    let side = |p: &Path, s: &str| {
        let mut o = p.as_os_str().to_owned();
        o.push(s);
        PathBuf::from(o)
    };
    let frames = dir.path().join("saved-wal");
    {
        let c = rusqlite::Connection::open(&pending).expect("open");
        c.execute_batch(&format!(
            "PRAGMA wal_autocheckpoint = 0; INSERT INTO {KERNELS} SELECT * FROM {KERNELS} LIMIT 10;"
        ))
        .expect("insert");
        std::fs::copy(side(&pending, "-wal"), &frames).expect("keep the frames");
    }
    std::fs::rename(&saved, &pending).expect("main without the rows");
    std::fs::rename(&frames, side(&pending, "-wal")).expect("the rows in the WAL");
    let before = listing(dir.path());
    assert_eq!(
        before,
        [
            "pending.sqlite",
            "pending.sqlite-wal",
            "plain.sqlite",
            "wal.sqlite"
        ]
    );
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .expect("meta")
            .modified()
            .expect("mtime")
    };
    let stamps: Vec<_> = before.iter().map(|n| stamp(&dir.path().join(n))).collect();
    assert_eq!(kernel_count(&plain), 1312);
    assert_eq!(kernel_count(&wal), 1312);
    let (code, err, _) = run(&[os("profile"), pending.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("pending.sqlite-wal beside it holds changes"),
        "{err}"
    );
    assert_eq!(listing(dir.path()), before);
    let after: Vec<_> = before.iter().map(|n| stamp(&dir.path().join(n))).collect();
    assert_eq!(after, stamps, "no file beside the exports was written");
}

/// A protobuf length-delimited field.
fn pb(tag: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut put = |mut v: u64| loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    };
    put(tag << 3 | 2);
    put(payload.len() as u64);
    out.extend_from_slice(payload);
    out
}

/// A device plane `/device:GPU:0` holding `body` (more fields of the plane).
fn device_plane(body: &[u8]) -> Vec<u8> {
    let mut plane = pb(2, b"/device:GPU:0");
    plane.extend_from_slice(body);
    pb(1, &plane)
}

#[test]
fn xplane_files_of_many_empty_messages_are_exit_2_naming_the_cap() {
    let dir = tempfile::tempdir().expect("tmp");
    let empty = |tag: u8, n: usize| [tag << 3 | 2, 0].repeat(n);
    // 10 M empty stats on one event (20 MB): 1.2 GB once decoded.
    let event = empty(4, 10_000_000);
    let mut line = pb(2, b"Stream #1(Kernel)");
    line.extend(pb(4, &event));
    let stats = device_plane(&pb(3, &line));
    // 20 M empty events on one line.
    let mut line = pb(2, b"Stream #1(Kernel)");
    line.extend(empty(4, 20_000_000));
    let events = device_plane(&pb(3, &line));
    // 10 M empty planes after a device plane.
    let mut planes = device_plane(&[]);
    planes.extend(empty(1, 10_000_000));
    for (name, bytes, cap) in [
        ("stats", stats, "MAX_XPLANE_DECODED_BYTES"),
        ("events", events, "MAX_XPLANE_DECODED_BYTES"),
        ("planes", planes, "MAX_XPLANE_PLANES"),
    ] {
        let p = dir.path().join(format!("{name}.xplane.pb"));
        std::fs::write(&p, bytes).expect("write");
        let (code, err, took) = run_2gib(&[os("profile"), p.as_os_str()]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}.xplane.pb: byte ")) && err.contains(cap),
            "{name}: {err}"
        );
        assert!(took < Duration::from_secs(10), "{name}: {took:?}");
    }
    // Host planes are not decoded at all: a million empty stats on one is no cost.
    let mut host = pb(2, b"/host:CPU");
    host.extend(empty(6, 10_000_000));
    let mut bytes = pb(1, &host);
    bytes.extend(device_plane(&[]));
    let p = dir.path().join("host.xplane.pb");
    std::fs::write(&p, bytes).expect("write");
    let (code, err, took) = run_2gib(&[os("profile"), p.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn aks2_bombs_and_repeated_entries_are_exit_2_naming_the_entry_or_cap() {
    let fx = |n: &str| fixture(&format!("fuzz/aks2/{n}"));
    for (name, wants) in [
        // 1 GiB of zeros in a 156 kB file, as its header declares.
        (
            "bomb_1gib.aks2",
            &[
                "byte 4:",
                "at most 200 times",
                "MAX_RATIO",
                "not 1073741824",
            ][..],
        ),
        // The same stream, declaring 16 MiB: its chunks say it inflates past that.
        (
            "bomb_declares_less.aks2",
            &["byte 4:", "declared 16777216 bytes, not more"][..],
        ),
        // 200,000 entries naming one 1 MiB image: 200 GB of copies.
        (
            "one_image_many_entries.aks2",
            &["entry 1 (\"k\")", "entries naming one image"][..],
        ),
    ] {
        let (code, err, took) = run_2gib(&[os("code"), os("show"), fx(name).as_os_str()]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
        for w in wants {
            assert!(err.contains(w), "{name}: {w}: {err}");
        }
        assert!(took < Duration::from_secs(10), "{name}: {took:?}");
    }
}
