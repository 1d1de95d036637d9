//! Writing results: standard output, or a file that is never silently replaced.

use crate::cli::OutputArgs;
use anyhow::{bail, Context, Result};
use std::io::{IsTerminal, Write};

/// The one way a message reaches standard error (errors, warnings, hints, where results went,
/// the steps of long runs): `text` and a line break, with the control characters in it escaped
/// as every renderer writes them ([`kernelab_report::format::escape_controls`]: `\x1b`,
/// `\u{9b}`), so that a file name, kernel name or JSON key quoted from an input cannot act on the
/// terminal. Line breaks and tabs stay. A write that fails (standard error closed) is ignored.
pub(crate) fn to_stderr(text: &str) {
    let text = kernelab_report::format::escape_controls(text, &['\n', '\t']);
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Fails early if `--out` names an existing file and `--force` was not given, or names
/// something that is not a regular file (a folder, a FIFO, a device: never replaced).
pub(crate) fn check_target(out: &OutputArgs) -> Result<()> {
    match &out.out {
        Some(path) => check_file("--out", path, out.force),
        None => Ok(()),
    }
}

/// The one rule for every file a command writes (`--out`, `--svg`, `export`'s tables): a new
/// file, or with `force` an existing regular file; a folder, FIFO or device is never replaced.
/// Checked before any work, so a refused file costs nothing.
pub(crate) fn check_file(option: &str, path: &std::path::Path, force: bool) -> Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.is_dir() {
            bail!(
                "{}: is a directory; {option} needs a file path",
                path.display()
            );
        }
        if !meta.is_file() {
            bail!(
                "{}: not a regular file; {option} replaces only regular files",
                path.display()
            );
        }
        if !force {
            bail!(
                "{}: already exists; not replacing it (use --force to replace)",
                path.display()
            );
        }
    }
    Ok(())
}

/// The width to fit terminal text to (the one width policy of every command's table view):
/// the terminal's, when standard output is a terminal, no file is named and `--wide` is not
/// given; else none, and tables are drawn whole.
pub(crate) fn terminal_width(out: &OutputArgs) -> Option<u16> {
    if out.wide || out.out.is_some() || !std::io::stdout().is_terminal() {
        return None;
    }
    // COLUMNS when set (a shell sets it, but seldom exports it), else the terminal's own width.
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&w: &u16| w > 0)
        .or_else(|| terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| w.0))
        .or(Some(200))
}

/// Writes the line `line` to standard output (what a command that has no document says).
pub(crate) fn say(line: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")?;
    stdout.flush()?;
    Ok(())
}

/// Writes `text` to standard output or, atomically, to the `--out` file.
pub(crate) fn write(out: &OutputArgs, text: &str) -> Result<()> {
    match &out.out {
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            Ok(())
        }
        Some(path) => {
            check_target(out)?;
            write_file(path, text.as_bytes(), out.force)
        }
    }
}

/// Writes `bytes` to the file `path` the user named: a new file, or with `force` a regular
/// file replaced atomically; never through a link, never under a predictable temporary name.
/// Errors name `path`.
pub(crate) fn write_file(path: &std::path::Path, bytes: &[u8], force: bool) -> Result<()> {
    kernelab_model::write_file(path, bytes, force).with_context(|| format!("{}", path.display()))
}

/// A document as pretty JSON with a final newline.
pub(crate) fn json<T: serde::Serialize>(doc: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(doc).context("serializing JSON")? + "\n")
}
