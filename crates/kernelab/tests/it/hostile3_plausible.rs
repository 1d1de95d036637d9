//! Hostile input, round 3 (issue 39), plausible figures and safe messages: a kernel dispatch,
//! copy or stats row whose duration is outside 0..=86400 s (1 day) is left out of every figure
//! with a note naming it, the rest of the figures unchanged (Kineto, Nsight Systems export,
//! rocprofv3 CSV, rocprofv3 kernel stats); an end before the start stays exit 2 naming the place;
//! and no message on standard error carries a raw control character from an input (a file name,
//! a value quoted in an error, a command-line argument).

use crate::{fixture, kernelab};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// 10^17 ns (about 3 years): how far past its start a patched record ends.
const FAR: i64 = 100_000_000_000_000_000;

/// Runs `kernelab ARGS` with a 10 s limit: exit code, standard output, standard error, wall.
fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (Option<i32>, String, Vec<u8>, Duration) {
    let t = Instant::now();
    let out = kernelab()
        .args(args)
        .timeout(Duration::from_secs(10))
        .output()
        .expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.stderr,
        t.elapsed(),
    )
}

/// `kernelab profile FILE --format json`, which must succeed within 10 s.
fn profile(file: &Path) -> Value {
    let args = [
        "profile".as_ref(),
        file.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ];
    let (code, stdout, stderr, wall) = run::<&std::ffi::OsStr>(&args);
    assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&stderr));
    assert!(wall < Duration::from_secs(10), "{wall:?}");
    serde_json::from_str(&stdout).expect("JSON")
}

/// `kernelab profile FILE`, which must fail with exit 2 within 10 s; its standard error.
fn refused(file: &Path) -> String {
    let (code, _, stderr, wall) = run(&[std::ffi::OsStr::new("profile"), file.as_os_str()]);
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(wall < Duration::from_secs(10), "{wall:?}");
    stderr
}

/// `text` with the first `old` after the first `anchor` replaced by `new`.
fn patch_after(text: &str, anchor: &str, old: &str, new: &str) -> String {
    let a = text.find(anchor).expect("anchor");
    let o = a + text[a..].find(old).expect("old text after the anchor");
    format!("{}{new}{}", &text[..o], &text[o + old.len()..])
}

/// The Kineto fixture of 79 kernels and 16 copies, decompressed.
fn kineto_text() -> String {
    let gz =
        std::fs::read(fixture("kineto-cuda-simple_add-benchmark_trace.json.gz")).expect("fixture");
    let mut s = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut s)
        .expect("gzip");
    s
}

/// The summary figure `key` of a profile document, as an integer.
fn figure(doc: &Value, key: &str) -> i64 {
    doc["summary"][key]
        .as_i64()
        .unwrap_or_else(|| panic!("{key}: {}", doc["summary"]))
}

/// The notes of a profile document, one string.
fn notes(doc: &Value) -> String {
    doc["notes"].to_string()
}

/// The row of kernel `name`.
fn row<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["kernels"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

const CUDNN: &str = "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1";

/// A Kineto kernel of 10^15 µs and a copy of 10^15 µs: both left out with their notes, and
/// every whole-trace figure is the original's less exactly their own durations (1035 µs and
/// 11 µs); the wall is unchanged. A negative `dur` stays exit 2.
#[test]
fn kineto_kernel_and_copy_of_ten_to_the_15_us_are_left_out_with_a_note() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = kineto_text();
    let base_path = dir.path().join("base.json");
    std::fs::write(&base_path, &text).expect("write");
    let big = patch_after(
        &text,
        &format!("\"name\": \"{CUDNN}\""),
        "\"dur\": 1035,",
        "\"dur\": 1000000000000000,",
    );
    let big = patch_after(
        &big,
        "\"cat\": \"gpu_memcpy\"",
        "\"dur\": 11,",
        "\"dur\": 1000000000000000,",
    );
    let big_path = dir.path().join("big.json");
    std::fs::write(&big_path, &big).expect("write");
    let base = profile(&base_path);
    let doc = profile(&big_path);
    let n = notes(&doc);
    assert!(
        n.contains(&format!("big.json: 1 kernel dispatch with a duration outside 0..=86400 s (1 day) left out of every figure: #3 `{CUDNN}` 1000000000000000000 ns")),
        "{n}"
    );
    assert!(
        n.contains("big.json: 1 copy or fill with a duration outside 0..=86400 s (1 day) left out of every figure: #1 memcpy 1000000000000000000 ns"),
        "{n}"
    );
    assert!(!notes(&base).contains("left out"), "{}", notes(&base));
    assert_eq!(figure(&base, "kernel_count"), 79);
    assert_eq!(figure(&doc, "kernel_count"), 78);
    for (key, less) in [
        ("kernel_time_ns", 1_035_000),
        ("busy_ns", 1_035_000),
        ("wall_ns", 0),
        ("first_start_ns", 0),
        ("memcpy_ns", 11_000),
        ("memcpy_count", 1),
        ("memset_ns", 0),
    ] {
        assert_eq!(figure(&doc, key), figure(&base, key) - less, "{key}");
    }
    assert_eq!(row(&base, CUDNN)["calls"], 2);
    assert_eq!(row(&doc, CUDNN)["calls"], 1);
    assert_eq!(row(&doc, CUDNN)["max_ns"], 1_033_000);
    // A negative duration is no duration: exit 2 naming the byte and the field, as before.
    let neg = patch_after(
        &text,
        &format!("\"name\": \"{CUDNN}\""),
        "\"dur\": 1035,",
        "\"dur\": -1035,",
    );
    let neg_path = dir.path().join("neg.json");
    std::fs::write(&neg_path, neg).expect("write");
    let e = refused(&neg_path);
    assert!(
        e.contains("neg.json: byte ")
            && e.contains("`dur`")
            && e.contains("a non-negative duration"),
        "{e}"
    );
}

/// A copy of the saxpy export (5 kernels) whose second kernel's end is `end(start)`.
fn saxpy_with(dir: &Path, name: &str, end: &str) -> (PathBuf, i64) {
    let p = dir.join(name);
    std::fs::copy(fixture("nsys-2022.2-a100-saxpy-mpi-cuda.sqlite"), &p).expect("copy");
    let c = rusqlite::Connection::open(&p).expect("open");
    let second = "(SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid LIMIT 1 OFFSET 1)";
    let dur: i64 = c
        .query_row(
            &format!(
                "SELECT \"end\" - start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = {second}"
            ),
            [],
            |r| r.get(0),
        )
        .expect("duration");
    c.execute(
        &format!("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = {end} WHERE rowid = {second}"),
        [],
    )
    .expect("update");
    (p, dur)
}

/// An Nsight Systems export whose second kernel ends 10^17 ns after its start: left out with
/// a note naming it, the other four kernels' figures unchanged; one that ends before its start
/// is refused (exit 2 naming the file and the table).
#[test]
fn nsys_kernel_ending_years_later_is_left_out_and_one_ending_before_its_start_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let base = profile(&fixture("nsys-2022.2-a100-saxpy-mpi-cuda.sqlite"));
    let (big, dur) = saxpy_with(dir.path(), "big.sqlite", &format!("start + {FAR}"));
    let doc = profile(&big);
    let n = notes(&doc);
    assert!(
        n.contains("big.sqlite: 1 kernel dispatch with a duration outside 0..=86400 s (1 day) left out of every figure: #2 `saxpy(double *, double *, double *, double, int)` 100000000000000000 ns"),
        "{n}"
    );
    assert_eq!(figure(&base, "kernel_count"), 5);
    assert_eq!(figure(&doc, "kernel_count"), 4);
    assert_eq!(
        figure(&doc, "kernel_time_ns"),
        figure(&base, "kernel_time_ns") - dur
    );
    assert_eq!(figure(&doc, "busy_ns"), figure(&base, "busy_ns") - dur);
    assert_eq!(figure(&doc, "wall_ns"), figure(&base, "wall_ns"));
    let (neg, _) = saxpy_with(dir.path(), "neg.sqlite", "start - 1");
    let e = refused(&neg);
    assert!(
        e.contains("neg.sqlite")
            && e.contains("CUPTI_ACTIVITY_KIND_KERNEL")
            && e.contains("an end not before the start"),
        "{e}"
    );
}

/// A rocprofv3 kernel trace whose third row ends 10^17 ns after its start: left out with a note
/// (#3: the third dispatch, line 4), the rest unchanged; an end before the start is exit 2
/// naming line 4 and `End_Timestamp`.
#[test]
fn rocprof_csv_row_ending_years_later_is_left_out_and_one_ending_before_its_start_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let src = fixture("rocprofv3_sdk0.5_kernel_trace.csv");
    let text = std::fs::read_to_string(&src).expect("fixture");
    let (start, end) = ("8819330200120456", "8819330200223721");
    assert!(text
        .lines()
        .nth(3)
        .expect("line 4")
        .contains(&format!(",{start},{end},")));
    let with_end = |e: &str| {
        patch_after(
            &text,
            "\"subtract_kernel(",
            &format!(",{start},{end},"),
            &format!(",{start},{e},"),
        )
    };
    let big = dir.path().join("big.csv");
    let far = 8_819_330_200_120_456 + FAR;
    std::fs::write(&big, with_end(&far.to_string())).expect("write");
    let base = profile(&src);
    let doc = profile(&big);
    let n = notes(&doc);
    assert!(
        n.contains("big.csv: 1 kernel dispatch with a duration outside 0..=86400 s (1 day) left out of every figure: #3 `subtract_kernel(float*, float const*, float const*, int, int)` 100000000000000000 ns"),
        "{n}"
    );
    let dur = 8_819_330_200_223_721 - 8_819_330_200_120_456;
    assert_eq!(
        figure(&doc, "kernel_count"),
        figure(&base, "kernel_count") - 1
    );
    assert_eq!(
        figure(&doc, "kernel_time_ns"),
        figure(&base, "kernel_time_ns") - dur
    );
    for key in ["busy_ns", "wall_ns", "first_start_ns"] {
        assert_eq!(figure(&doc, key), figure(&base, key), "{key}");
    }
    let neg = dir.path().join("neg.csv");
    std::fs::write(&neg, with_end("8819330200120451")).expect("write");
    let e = refused(&neg);
    assert!(
        e.contains("neg.csv: line 4: `End_Timestamp`") && e.contains("not before the start"),
        "{e}"
    );
}

/// A rocprofv3 kernel stats row whose longest call is 10^17 ns (its total 285 ms): the row is
/// left out of every figure with a note, the other six rows unchanged.
#[test]
fn kernel_stats_row_with_a_call_of_years_is_left_out_with_a_note() {
    let dir = tempfile::tempdir().expect("tmp");
    let src = fixture("rocprofv3_kernel_stats_jacobi.csv");
    let text = std::fs::read_to_string(&src).expect("fixture");
    let big = dir.path().join("stats.csv");
    let name = "LocalLaplacianKernel(int, int, int, double, double, double const*, double*)";
    std::fs::write(
        &big,
        patch_after(&text, name, ",291521,", &format!(",{FAR},")),
    )
    .expect("write");
    let base = profile(&src);
    let doc = profile(&big);
    let n = notes(&doc);
    assert!(
        n.contains(&format!("stats.csv: 1 kernel stats row with a duration outside 0..=86400 s (1 day) left out of every figure: #3 `{name}` 100000000000000000 ns per call")),
        "{n}"
    );
    assert_eq!(
        figure(&doc, "kernel_count"),
        figure(&base, "kernel_count") - 1000
    );
    assert_eq!(
        figure(&doc, "kernel_time_ns"),
        figure(&base, "kernel_time_ns") - 285_486_734
    );
    assert_eq!(
        doc["kernels"].as_array().map(Vec::len),
        base["kernels"].as_array().map(|v| v.len() - 1)
    );
}

/// Standard error holds no ESC byte (nor any other C0/C1 control but a line break or a tab).
fn assert_no_raw_controls(stderr: &[u8]) {
    let text = String::from_utf8_lossy(stderr);
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{:?}",
        text
    );
}

/// A file named with `\x1b[2J` (clear the screen) and content no reader knows: the error names
/// the file with the sequence escaped (`a\x1b[2Jb.json`), never the raw ESC byte.
#[test]
fn a_file_named_with_an_escape_sequence_is_named_escaped_on_stderr() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("a\u{1b}[2Jb\u{9b}1m.json");
    std::fs::write(&p, "garbage{").expect("write");
    let (code, _, stderr, wall) = run(&[std::ffi::OsStr::new("profile"), p.as_os_str()]);
    assert_eq!(code, Some(2));
    assert!(wall < Duration::from_secs(10), "{wall:?}");
    let text = String::from_utf8_lossy(&stderr);
    assert!(
        text.contains("kernelab: error: ") && text.contains("a\\x1b[2Jb\\u{9b}1m.json: byte 0"),
        "{text}"
    );
    assert_no_raw_controls(&stderr);
}

/// A Kineto trace whose kernel `dur` is a string holding a raw ESC sequence: the error quotes
/// what it found, escaped (`found "\x1b[2J"`), and names the byte and field.
#[test]
fn an_error_quoting_a_control_character_from_the_input_escapes_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("esc.json");
    std::fs::write(
        &p,
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": \"\u{1b}[2J\", \"pid\": 0, \"tid\": 7}]}",
    )
    .expect("write");
    let (code, _, stderr, _) = run(&[std::ffi::OsStr::new("profile"), p.as_os_str()]);
    assert_eq!(code, Some(2));
    let text = String::from_utf8_lossy(&stderr);
    assert!(
        text.contains("esc.json: byte ")
            && text.contains("`dur`")
            && text.contains("found \"\\x1b[2J\""),
        "{text}"
    );
    assert_no_raw_controls(&stderr);
}

/// A command-line argument holding an escape sequence: the usage error (exit 2) carries no raw
/// control character either.
#[test]
fn a_usage_error_quoting_an_argument_with_an_escape_sequence_prints_no_raw_escape() {
    let (code, _, stderr, _) = run(&["profile\u{1b}[2J"]);
    assert_eq!(code, Some(2));
    let text = String::from_utf8_lossy(&stderr);
    assert!(text.contains("unrecognized subcommand"), "{text}");
    assert_no_raw_controls(&stderr);
}
