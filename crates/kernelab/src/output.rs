//! Writing results: standard output, or a file that is never silently replaced.

use crate::cli::OutputArgs;
use anyhow::{bail, Context, Result};
use std::io::{IsTerminal, Write};

/// Fails early if `--out` names an existing file and `--force` was not given, or names
/// something that is not a regular file (a folder, a FIFO, a device: never replaced).
pub fn check_target(out: &OutputArgs) -> Result<()> {
    if let Some(path) = &out.out {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if meta.is_dir() {
                bail!(
                    "{}: is a directory; --out needs a file path",
                    path.display()
                );
            }
            if !meta.is_file() {
                bail!(
                    "{}: not a regular file; --out replaces only regular files",
                    path.display()
                );
            }
            if !out.force {
                bail!(
                    "{}: already exists; not replacing it (use --force to replace)",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

/// The width to fit terminal tables to, when standard output is a terminal and no file is named.
pub fn terminal_width(out: &OutputArgs) -> Option<u16> {
    if out.out.is_some() || !std::io::stdout().is_terminal() {
        return None;
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .or(Some(200))
}

/// Writes `text` to standard output or, atomically, to the `--out` file.
pub fn write(out: &OutputArgs, text: &str) -> Result<()> {
    match &out.out {
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            Ok(())
        }
        Some(path) => {
            check_target(out)?;
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            let file_name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tmp = dir.join(format!(".{file_name}.kernelab-{}.tmp", std::process::id()));
            // The temporary file never outlives this function, whatever happens below.
            let _guard = RemoveOnDrop(&tmp);
            std::fs::write(&tmp, text).with_context(|| format!("{}", tmp.display()))?;
            if out.force {
                std::fs::rename(&tmp, path).with_context(|| format!("{}", path.display()))?;
                return Ok(());
            }
            // A hard link creates the name only if it does not exist: no race with another
            // writer can replace a file that appeared meanwhile.
            match std::fs::hard_link(&tmp, path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => bail!(
                    "{}: appeared while writing; not replacing it (use --force)",
                    path.display()
                ),
                Err(e) => Err(e).with_context(|| format!("{}", path.display())),
            }
        }
    }
}

/// Removes a file when dropped (best effort: it may already be gone).
struct RemoveOnDrop<'a>(&'a std::path::Path);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// A document as pretty JSON with a final newline.
pub fn json<T: serde::Serialize>(doc: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(doc).context("serializing JSON")? + "\n")
}

/// The terminal or Markdown text of `sections(name_width)` for the table and md formats.
pub fn sections_text(
    out: &OutputArgs,
    sections: impl Fn(usize) -> Vec<kernelab_report::Section>,
) -> Option<String> {
    use kernelab_report::{render, OutputFormat};
    match out.format {
        crate::cli::FormatArg::Table => Some(render(
            &sections(60),
            OutputFormat::Terminal,
            terminal_width(out),
        )),
        crate::cli::FormatArg::Md => Some(render(&sections(100), OutputFormat::Markdown, None)),
        _ => None,
    }
}
