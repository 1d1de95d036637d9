//! The terminal view at 80, 100, 120 and 160 columns, drawn through a pseudo-terminal of that
//! width (the width the terminal reports, with no `COLUMNS`): every table keeps one line per
//! row, no line is wider than the terminal, no number is parted from its unit, and the line
//! under a table names each column it left out. Snapshots show what a user reads; `--wide`
//! draws what a pipe gets.

use super::{fixture, kernelab, root};
use std::io::Read;
use std::path::Path;

/// The widths drawn.
const WIDTHS: [u16; 4] = [80, 100, 120, 160];

/// `c`'s program, arguments, environment and folder as a standard command (the pseudo-terminal
/// needs its standard output, which `assert_cmd` keeps for itself).
fn plain(c: &assert_cmd::Command) -> std::process::Command {
    let mut s = std::process::Command::new(c.get_program());
    s.args(c.get_args());
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => s.env(k, v),
            None => s.env_remove(k),
        };
    }
    if let Some(d) = c.get_current_dir() {
        s.current_dir(d);
    }
    s
}

/// Runs `kernelab ARGS` in `dir` with its standard output on a pseudo-terminal `cols` wide;
/// returns what it drew (line ends as written, without the terminal's carriage returns) and
/// its exit code.
fn on_terminal(dir: &Path, args: &[&str], cols: u16) -> (String, Option<i32>) {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    use std::os::unix::ffi::OsStrExt;
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pseudo-terminal");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let size = rustix::termios::Winsize {
        ws_row: 50,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(&master, size).expect("the terminal's width");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let child = {
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(std::ffi::OsStr::from_bytes(name.as_bytes()))
            .expect("the terminal's other end");
        let mut c = kernelab();
        c.current_dir(dir).args(args);
        plain(&c)
            .stdin(std::process::Stdio::null())
            .stdout(slave)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("runs")
        // The command, and with it this side's copy of the other end, goes here: reading
        // ends once the child has closed its own.
    };
    let mut drawn = Vec::new();
    let mut master = std::fs::File::from(master);
    let mut buf = [0u8; 8192];
    loop {
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => drawn.extend_from_slice(&buf[..n]),
            // Linux answers EIO once no one holds the other end.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => panic!("reading the terminal: {e}"),
        }
    }
    let mut child = child;
    let code = child.wait().expect("waits").code();
    let text = String::from_utf8(drawn).expect("UTF-8 output");
    (text.replace("\r\n", "\n"), code)
}

/// Runs `kernelab ARGS` in `dir` with its standard output on a pipe.
fn piped(dir: &Path, args: &[&str]) -> String {
    let out = kernelab()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("runs");
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A drawn table: its header's column names, its row lines, and the line under it (empty
/// when none).
struct Drawn {
    columns: Vec<String>,
    rows: usize,
    under: String,
}

/// The tables of `text`, in order.
fn tables(text: &str) -> Vec<Drawn> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !l.starts_with('┌') {
            continue;
        }
        let columns = lines
            .get(i + 1)
            .map(|h| {
                h.trim_matches('│')
                    .split('┆')
                    .map(|c| c.trim().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let end = (i..lines.len())
            .find(|&j| lines[j].starts_with('└'))
            .expect("a table ends");
        let rows = lines[i..end].iter().filter(|l| l.starts_with('│')).count();
        let under = lines[end + 1..]
            .iter()
            .take_while(|l| !l.is_empty())
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        out.push(Drawn {
            columns,
            rows,
            under,
        });
    }
    out
}

/// Draws `kernelab ARGS` in `dir` at every width of [`WIDTHS`] and checks each against the
/// piped output; snapshots each as `NAME_WIDTH`. `code` is the exit code expected.
fn fits(name: &str, dir: &Path, args: &[&str], code: i32, tmp: &[&Path]) {
    let whole = piped(dir, args);
    let whole_tables = tables(&whole);
    assert!(!whole_tables.is_empty(), "{name}: no table:\n{whole}");
    let unit = regex::Regex::new(r"^\s*(ns|µs|ms|s|B|KiB|MiB|GiB|%)\b").expect("regex");
    for cols in WIDTHS {
        let (text, got) = on_terminal(dir, args, cols);
        assert_eq!(got, Some(code), "{name} at {cols}:\n{text}");
        let width = usize::from(cols);
        for l in text.lines() {
            assert!(
                l.chars().count() <= width,
                "{name}: a line wider than {cols} columns:\n{l}\n\n{text}"
            );
        }
        for pair in text.lines().collect::<Vec<_>>().windows(2) {
            assert!(
                !(pair[0].ends_with(|c: char| c.is_ascii_digit()) && unit.is_match(pair[1])),
                "{name} at {cols}: a number parted from its unit:\n{}\n{}",
                pair[0],
                pair[1]
            );
        }
        let drawn = tables(&text);
        assert_eq!(drawn.len(), whole_tables.len(), "{name} at {cols}:\n{text}");
        for (d, w) in drawn.iter().zip(&whole_tables) {
            assert_eq!(
                d.rows, w.rows,
                "{name} at {cols}: one line per row:\n{text}"
            );
            let left_out: Vec<&str> = w
                .columns
                .iter()
                .filter(|c| !d.columns.contains(c))
                .map(String::as_str)
                .collect();
            if !left_out.is_empty() {
                let said = format!("left out to fit {cols} columns: {}", left_out.join(", "));
                assert!(
                    d.under.contains(&said) && d.under.contains("--wide"),
                    "{name} at {cols}: the line under the table names {left_out:?}:\n{text}"
                );
            }
        }
        let mut settings = insta::Settings::clone_current();
        settings.set_description(format!(
            "kernelab {} (a terminal {cols} wide)",
            args.join(" ")
        ));
        settings.set_omit_expression(true);
        for dir in tmp {
            let canonical = dir.canonicalize().expect("tmp exists");
            for p in [canonical.as_path(), *dir] {
                settings.add_filter(&regex::escape(&p.display().to_string()), "[TMP]");
            }
        }
        settings.bind(|| insta::assert_snapshot!(format!("{name}_{cols}"), text));
    }
    // --wide: what a pipe gets, every column whole.
    let mut wide = args.to_vec();
    wide.push("--wide");
    let (text, _) = on_terminal(dir, &wide, 80);
    assert_eq!(text, whole, "{name}: --wide draws the tables whole");
}

#[test]
fn profile_fits_the_terminal() {
    fits(
        "profile",
        &root(),
        &[
            "profile",
            "examples/kineto_qwen3next_4l_prompt8192_baseline.json.gz",
        ],
        0,
        &[],
    );
}

#[test]
fn compare_fits_the_terminal() {
    fits(
        "compare",
        &fixture(""),
        &[
            "compare",
            "--base",
            "h200_pair/gdn_w4s3_run1.json.gz",
            "h200_pair/gdn_w4s3_run2.json.gz",
            "h200_pair/gdn_w4s3_run3.json.gz",
            "--cand",
            "h200_pair/gdn_w8s2_run1.json.gz",
            "h200_pair/gdn_w8s2_run2.json.gz",
            "h200_pair/gdn_w8s2_run3.json.gz",
        ],
        0,
        &[],
    );
}

#[test]
fn kernel_run_dry_run_fits_the_terminal() {
    fits(
        "kernel_dry_run",
        &fixture(""),
        &[
            "kernel",
            "run",
            "kernel/recompute_w4s3_vs_w4s4.toml",
            "--dry-run",
        ],
        0,
        &[],
    );
}

/// Records `args` into the bundle `bundle`; it must succeed.
fn record(bundle: &Path, args: &[&str]) {
    let out = kernelab()
        .current_dir(fixture(""))
        .args(args)
        .arg("--record")
        .arg(bundle)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn report_check_fits_the_terminal() {
    let dir = tempfile::tempdir().expect("tmp");
    let bundle = dir.path().join("bundle");
    record(
        &bundle,
        &[
            "profile",
            "h200_pair/gdn_w4s3_run1.json.gz",
            "--label",
            "gdn_request",
        ],
    );
    record(
        &bundle,
        &[
            "compare",
            "--label",
            "w8s2",
            "--base",
            "h200_pair/gdn_w4s3_run1.json.gz",
            "h200_pair/gdn_w4s3_run2.json.gz",
            "h200_pair/gdn_w4s3_run3.json.gz",
            "--cand",
            "h200_pair/gdn_w8s2_run1.json.gz",
            "h200_pair/gdn_w8s2_run2.json.gz",
            "h200_pair/gdn_w8s2_run3.json.gz",
        ],
    );
    let md = super::report_of(&bundle, "md");
    // Two planted errors: a sign flipped, a figure that matches nothing in the bundle.
    let note = md
        .replace("+17.03%", "-17.03%")
        .replace("415.486 µs over 5 calls", "425.486 µs over 5 calls");
    std::fs::write(dir.path().join("note.md"), note).expect("write the note");
    fits(
        "report_check",
        dir.path(),
        &["report", "check", "note.md", "--bundle", "bundle"],
        1,
        &[dir.path()],
    );
}
