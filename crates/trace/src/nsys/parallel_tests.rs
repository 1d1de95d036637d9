//! Differential tests: the kernel table read in rowid ranges on several threads against the
//! one-thread reader, on every Nsight Systems export among the fixtures (and the shared
//! external ones when present), on generated large exports (a fixture's kernel table doubled,
//! as `bench/nsys_big.py` does), at many range sizes, and on malformed tables, whose errors must
//! be the same.

use super::*;
use kernelab_model::LaunchConfig;
use std::path::Path;

type Read = std::result::Result<Profile, String>;

fn strings(conn: &Connection) -> HashMap<i64, String> {
    super::super::strings(conn, &mut 0).expect("StringIds")
}

/// The one-thread reader over the whole table.
fn one_thread(conn: &Connection, keep: bool) -> Read {
    let strings = strings(conn);
    let cols = crate::sqlite::columns(conn, TABLE).map_err(|e| e.to_string())?;
    let mut p = Profile::default();
    p.dispatches.keep_correlations(keep);
    read_rows(
        conn,
        &query(&cols, keep, None),
        &mut Names::new(&strings),
        &mut p,
    )
    .map_err(|e| e.to_string())?;
    Ok(p)
}

/// The parallel reader with `threads` threads and `range_rows` rowids per range (automatic
/// when `None`); `Ok(None)` when the table is not split.
fn parallel(
    conn: &Connection,
    threads: usize,
    range_rows: Option<i64>,
    keep: bool,
) -> std::result::Result<Option<Profile>, String> {
    let strings = strings(conn);
    let cols = crate::sqlite::columns(conn, TABLE).map_err(|e| e.to_string())?;
    let Some(plan) =
        plan_with(conn, &cols, keep, threads, range_rows).map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    let mut p = Profile::default();
    p.dispatches.keep_correlations(keep);
    read(plan, &cols, &strings, &mut p).map_err(|e| e.to_string())?;
    Ok(Some(p))
}

/// The reader from the table's pages with `threads` threads and `range_leaves` leaf pages per
/// range (automatic when `None`); `Ok(None)` when the table is not read from its pages.
fn pages(
    conn: &Connection,
    threads: usize,
    range_leaves: Option<usize>,
    keep: bool,
) -> std::result::Result<Option<Profile>, String> {
    let strings = strings(conn);
    let cols = crate::sqlite::columns(conn, TABLE).map_err(|e| e.to_string())?;
    let file = crate::sqlite_pages::database_file(conn);
    let Some(table) = page_table(conn, file.as_ref(), &cols, keep).map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    let q = query(&cols, keep, None);
    let names_of = crate::sqlite::IntRows::prepare(conn, &q)
        .map_err(|e| e.to_string())?
        .names()
        .to_vec();
    let mut p = Profile::default();
    p.dispatches.keep_correlations(keep);
    read_from_pages_with(
        &table,
        &positions(&cols, keep),
        &names_of,
        &strings,
        &mut p,
        threads,
        range_leaves,
    )
    .map_err(|e| e.to_string())?;
    Ok(Some(p))
}

/// Names, launch configs (by id), dispatches and their contexts equal.
fn assert_same(a: &Profile, b: &Profile, what: &str) {
    let names = |p: &Profile| {
        (0..p.names.len())
            .map(|i| p.names.get(i as u32).cloned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(a), names(b), "names: {what}");
    let launches = |p: &Profile| {
        (0..p.launches.len())
            .map(|i| p.launches.get(i as u32).copied())
            .collect::<Vec<Option<LaunchConfig>>>()
    };
    assert_eq!(launches(a), launches(b), "launches: {what}");
    assert_eq!(a.dispatches.len(), b.dispatches.len(), "dispatches: {what}");
    assert!(
        a.dispatches.iter().eq(b.dispatches.iter()),
        "dispatches: {what}"
    );
    assert_eq!(
        a.dispatches.contexts(),
        b.dispatches.contexts(),
        "contexts: {what}"
    );
}

/// One read against the one-thread reader's: the same profile or the same error.
fn same_as(want: &Read, got: &Read, what: &str) {
    match (want, got) {
        (Ok(a), Ok(b)) => assert_same(a, b, what),
        (Err(a), Err(b)) => assert_eq!(a, b, "error: {what}"),
        (a, b) => panic!(
            "{what}: one thread {:?}, other {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
}

/// The one-thread reader against the parallel one at several splits, and against the reader
/// from the table's pages on one thread and on several at several splits, with and without
/// correlation ids: the same profile or the same error. Returns how many splits were read in
/// parallel through SQL, and how many reads were from the pages.
fn check(path: &Path, what: &str) -> (usize, usize) {
    let conn = crate::sqlite::open(path).expect("open");
    let rows: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {TABLE}"), [], |r| r.get(0))
        .unwrap_or(0);
    let (mut split, mut paged) = (0, 0);
    for keep in [false, true] {
        let want = one_thread(&conn, keep);
        let sizes = [
            Some(1),
            Some(2),
            Some(3),
            Some(7),
            Some((rows / 5).max(1)),
            Some((rows / 2).max(1)),
            None,
        ];
        for threads in [2, 3] {
            for range_rows in sizes {
                let what = format!("{what}, {threads} threads, {range_rows:?} rows, keep {keep}");
                let Some(got) = parallel(&conn, threads, range_rows, keep).transpose() else {
                    continue;
                };
                split += 1;
                same_as(&want, &got, &what);
            }
        }
        for (threads, leaves) in [(1, None), (2, Some(1)), (3, Some(2)), (2, None)] {
            let what = format!("{what}, pages, {threads} threads, {leaves:?} leaves, keep {keep}");
            let Some(got) = pages(&conn, threads, leaves, keep).transpose() else {
                continue;
            };
            paged += 1;
            same_as(&want, &got, &what);
        }
    }
    (split, paged)
}

/// Every Nsight Systems SQLite export among the fixtures (and the shared ones when present).
fn nsys_fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dirs = [
        root.join("tests/fixtures"),
        root.join("../shared/fixtures/nvidia"),
        root.join("../shared/fixtures/external/nsys"),
    ];
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "sqlite") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_fixture_reads_the_same_in_parallel() {
    let fixtures = nsys_fixtures();
    assert!(fixtures.len() >= 2, "{fixtures:?}");
    let mut read = 0;
    for f in &fixtures {
        let conn = crate::sqlite::open(f).expect("open");
        let objects = crate::sqlite::objects(&conn).expect("objects");
        if !objects.iter().any(|o| o == TABLE) {
            continue; // a capture without kernels
        }
        read += 1;
        let (n, paged) = check(f, &f.display().to_string());
        assert!(n > 0, "{}: never split", f.display());
        assert!(paged > 0, "{}: never read from its pages", f.display());
    }
    assert!(read >= 2, "{fixtures:?}");
}

/// A copy of the cloverleaf fixture with its kernel table doubled `rounds` times, as
/// `bench/nsys_big.py` does (times shifted by the table's span, correlation and grid ids by
/// their range), in `dir`.
fn doubled(dir: &Path, rounds: u32) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let src = root.join("tests/fixtures/nsys-2024.5-a100-cloverleaf-cuda.sqlite");
    let out = dir.join(format!("nsys_x{rounds}.sqlite"));
    std::fs::copy(&src, &out).expect("copy");
    let db = Connection::open(&out).expect("open");
    let cols = crate::sqlite::columns(&db, TABLE).expect("columns");
    for _ in 0..rounds {
        let (lo, hi): (i64, i64) = db
            .query_row(
                &format!("SELECT min(start), max(\"end\") FROM {TABLE}"),
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("span");
        let span = hi - lo + 1000;
        let mut select = Vec::new();
        for c in &cols {
            select.push(match c.as_str() {
                "start" | "end" => format!("\"{c}\" + {span}"),
                "correlationId" | "gridId" => {
                    let top: i64 = db
                        .query_row(
                            &format!("SELECT coalesce(max(\"{c}\"), 0) FROM {TABLE}"),
                            [],
                            |r| r.get(0),
                        )
                        .expect("top");
                    format!("\"{c}\" + {}", top + 1)
                }
                _ => format!("\"{c}\""),
            });
        }
        db.execute_batch(&format!(
            "INSERT INTO {TABLE} SELECT {} FROM {TABLE} ORDER BY rowid",
            select.join(", ")
        ))
        .expect("double");
    }
    out
}

#[test]
fn a_large_generated_export_reads_the_same_in_parallel() {
    let dir = tempfile::tempdir().expect("tmp");
    // 1,312 kernels doubled 6 times: 83,968, over two automatic ranges of 32,768.
    let path = doubled(dir.path(), 6);
    let conn = crate::sqlite::open(&path).expect("open");
    for keep in [false, true] {
        let want = one_thread(&conn, keep).expect("one thread");
        assert_eq!(want.dispatches.len(), 83_968);
        for (threads, rows) in [(2, None), (3, None), (2, Some(1000)), (5, Some(4099))] {
            let got = parallel(&conn, threads, rows, keep)
                .expect("parallel")
                .expect("split");
            assert_same(
                &want,
                &got,
                &format!("{threads} threads, {rows:?}, keep {keep}"),
            );
        }
        // From the pages: 2,000-odd leaves, automatic ranges of 256 and smaller ones.
        for (threads, leaves) in [(1, None), (2, None), (3, None), (2, Some(100))] {
            let got = pages(&conn, threads, leaves, keep)
                .expect("pages")
                .expect("read from the pages");
            assert_same(
                &want,
                &got,
                &format!("pages, {threads} threads, {leaves:?}, keep {keep}"),
            );
        }
    }
    // The automatic plan: four ranges per thread at least MIN_RANGE_ROWS each.
    let cols = crate::sqlite::columns(&conn, TABLE).expect("columns");
    let plan = plan_with(&conn, &cols, false, 2, None)
        .expect("plan")
        .expect("split");
    assert_eq!(plan.range_rows, MIN_RANGE_ROWS);
    assert_eq!(plan.ranges(), 3);
    assert_eq!(plan_with(&conn, &cols, false, 1, None).expect("plan"), None);
}

/// A minimal export in `dir` whose kernel table is made by `sql` (after the string table).
fn export(dir: &Path, name: &str, sql: &str) -> PathBuf {
    let p = dir.join(name);
    let c = Connection::open(&p).expect("db");
    c.execute_batch(&format!(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO StringIds VALUES (1, 'k1'), (2, 'k2'), (3, 'k3'), (1000000, 'far');
         {sql}"
    ))
    .expect("schema");
    p
}

const KERNELS: &str = "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, \"end\" INTEGER,
    deviceId INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER,
    gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);";

/// `n` rows: names cycling through the string ids (and one unknown), grids changing.
fn rows(n: u32) -> String {
    format!(
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < {n})
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 10, i * 10 + (i % 7), i % 2, i % 3, i,
           CASE i % 5 WHEN 4 THEN 1000000 WHEN 3 THEN 99 ELSE i % 3 + 1 END,
           i % 4 + 1, 1, 1, 128, 1, CASE WHEN i % 11 = 0 THEN NULL ELSE 1 END FROM r;"
    )
}

#[test]
fn malformed_and_unusual_tables_read_the_same_in_parallel() {
    let dir = tempfile::tempdir().expect("tmp");
    let cases: Vec<(&str, String)> = vec![
        ("plain", format!("{KERNELS}{}", rows(500))),
        (
            "end before start late",
            format!(
                "{KERNELS}{}UPDATE {TABLE} SET \"end\" = 0 WHERE rowid = 400;",
                rows(500)
            ),
        ),
        (
            "two errors",
            format!(
                "{KERNELS}{}UPDATE {TABLE} SET gridX = 'x' WHERE rowid = 300;
                 UPDATE {TABLE} SET \"end\" = 0 WHERE rowid = 200;",
                rows(500)
            ),
        ),
        (
            "text, real and blob values",
            format!(
                "{KERNELS}{}UPDATE {TABLE} SET streamId = 2.5 WHERE rowid = 450;",
                rows(500)
            ),
        ),
        (
            "text in the name column",
            format!(
                "{KERNELS}{}UPDATE {TABLE} SET demangledName = 'name' WHERE rowid = 499;",
                rows(500)
            ),
        ),
        (
            "blob start",
            format!(
                "{KERNELS}{}UPDATE {TABLE} SET start = X'00' WHERE rowid = 250;",
                rows(500)
            ),
        ),
        (
            "sparse rowids",
            format!(
                "{KERNELS}{}UPDATE {TABLE} SET rowid = rowid * 1000003 WHERE rowid > 250;
                 DELETE FROM {TABLE} WHERE rowid BETWEEN 20 AND 90;",
                rows(500)
            ),
        ),
        (
            "negative and huge rowids",
            format!(
                "{KERNELS}{}INSERT INTO {TABLE} (rowid, start, \"end\", demangledName)
                 VALUES (-9223372036854775808, 1, 2, 1), (9223372036854775807, 3, 5, 2);",
                rows(50)
            ),
        ),
        ("empty", KERNELS.to_string()),
        (
            "few columns",
            format!(
                "CREATE TABLE {TABLE} (start INTEGER, \"end\" INTEGER, demangledName INTEGER);
                 INSERT INTO {TABLE} VALUES (1, 2, 1), (3, 4, 2), (5, 7, NULL), (9, 9, 3);"
            ),
        ),
        (
            "a view",
            format!(
                "CREATE TABLE k (start INTEGER, \"end\" INTEGER, demangledName INTEGER);
                 INSERT INTO k VALUES (1, 2, 1), (3, 4, 2), (5, 7, 3);
                 CREATE VIEW {TABLE} AS SELECT * FROM k;"
            ),
        ),
        (
            "without rowid",
            format!(
                "CREATE TABLE {TABLE} (start INTEGER PRIMARY KEY, \"end\" INTEGER,
                   demangledName INTEGER) WITHOUT ROWID;
                 INSERT INTO {TABLE} VALUES (5, 6, 1), (1, 2, 2), (3, 4, 3);"
            ),
        ),
        (
            "a column named rowid",
            format!(
                "CREATE TABLE {TABLE} (rowid INTEGER, start INTEGER, \"end\" INTEGER,
                   demangledName INTEGER);
                 INSERT INTO {TABLE} VALUES (3, 1, 2, 1), (2, 3, 4, 2), (1, 5, 6, 3);"
            ),
        ),
        (
            "an index covering all but correlation ids",
            format!(
                "{KERNELS}{}CREATE INDEX by_name ON {TABLE} (demangledName, start, \"end\",
                   deviceId, streamId, gridX, gridY, gridZ, blockX, blockY, blockZ);",
                rows(500)
            ),
        ),
        (
            "start and end in capitals",
            format!(
                "CREATE TABLE {TABLE} (START INTEGER, \"End\" INTEGER, demangledName INTEGER);
                 INSERT INTO {TABLE} VALUES (1, 2, 1), (3, 4, 2), (5, 7, 3);"
            ),
        ),
        (
            "a covering index",
            format!(
                "CREATE TABLE {TABLE} (start INTEGER, \"end\" INTEGER, demangledName INTEGER);
                 INSERT INTO {TABLE} VALUES (9, 10, 1), (1, 2, 2), (5, 6, 3);
                 CREATE INDEX by_name ON {TABLE} (demangledName, \"end\", start);"
            ),
        ),
    ];
    for (i, (what, sql)) in cases.iter().enumerate() {
        let path = export(dir.path(), &format!("case{i}.sqlite"), sql);
        let (n, paged) = check(&path, what);
        let from_pages = !matches!(
            *what,
            "a view" | "without rowid" | "a covering index" | "start and end in capitals"
        );
        assert_eq!(
            paged > 0,
            from_pages,
            "{what}: read from the pages {paged} times"
        );
        let splits = !matches!(
            *what,
            "empty"
                | "negative and huge rowids"
                | "a view"
                | "without rowid"
                | "a column named rowid"
                | "a covering index"
        );
        assert_eq!(n > 0, splits, "{what}: split {n} times");
    }
    // The errors name what was expected, as the one-thread reader's do.
    let path = export(
        dir.path(),
        "late.sqlite",
        &format!(
            "{KERNELS}{}UPDATE {TABLE} SET \"end\" = 0 WHERE rowid = 400;",
            rows(500)
        ),
    );
    let conn = crate::sqlite::open(&path).expect("open");
    let e = parallel(&conn, 2, Some(16), false)
        .expect_err("end before start")
        .to_string();
    assert!(e.contains(TABLE) && e.contains("start 4000, end 0"), "{e}");
}

#[test]
fn ranges_cover_the_rowids_once() {
    for (lo, hi, rows) in [
        (1, 10, 3),
        (1, 9, 3),
        (-5, 5, 1),
        (i64::MIN, i64::MAX, i64::MAX / 2),
        (7, 7, 1),
    ] {
        let plan = Plan {
            path: PathBuf::new(),
            threads: 2,
            rowids: (lo, hi),
            range_rows: rows,
        };
        let n = plan.ranges();
        assert!(n >= 1);
        let mut next = i128::from(lo);
        for i in 0..n {
            let (a, b) = plan.range(i);
            assert_eq!(i128::from(a), next, "{lo}..{hi} by {rows}: range {i}");
            assert!(a <= b);
            next = i128::from(b) + 1;
        }
        assert_eq!(next, i128::from(hi) + 1, "{lo}..{hi} by {rows}");
    }
}
