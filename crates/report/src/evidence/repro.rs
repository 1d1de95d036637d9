//! The reproduction part: the exact commands, with input paths relative to the folder that held
//! them, and every record's provenance folded in a details block.

use super::{Block, Part};
use crate::bundle::{Entry, RecordHead};
use crate::format::UNAVAILABLE;

/// The deepest folder that holds every absolute input path of the records, if any.
fn common_dir(records: &[&RecordHead]) -> Option<String> {
    let mut dirs = records
        .iter()
        .flat_map(|r| &r.provenance.inputs)
        .filter(|i| i.path.starts_with('/'))
        .map(|i| {
            let mut parts: Vec<&str> = i.path.split('/').collect();
            parts.pop();
            parts
        });
    let mut common = dirs.next()?;
    for d in dirs {
        let n = common.iter().zip(&d).take_while(|(a, b)| a == b).count();
        common.truncate(n);
    }
    let dir = common.join("/");
    (!dir.is_empty()).then_some(dir)
}

/// One shell word, quoted when it needs to be (`$'…'` with escapes when it holds a control
/// character, so that a command is always one line).
fn quote(a: &str) -> String {
    if a.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in a.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32 & 0xff)),
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    if a.is_empty()
        || a.contains([
            ' ', '\'', '"', '$', '(', ')', '*', '|', ';', '&', '<', '>', '#', '`', '\\',
        ])
    {
        format!("'{}'", a.replace('\'', "'\\''"))
    } else {
        a.to_string()
    }
}

/// The reproduction command of a record: `kernelab …`, paths under `dir` made relative, and
/// the record going to `./bundle` under its label (`--record bundle --label L`), so that the
/// commands rebuild the same bundle.
pub(super) fn command(r: &RecordHead, dir: Option<&str>) -> String {
    let mut out = vec!["kernelab".to_string()];
    let mut args = r.provenance.argv.iter().skip(1);
    while let Some(a) = args.next() {
        if a == "--record" || a == "--label" {
            args.next();
            continue;
        }
        if a.starts_with("--record=") || a.starts_with("--label=") {
            continue;
        }
        let rel = dir
            .and_then(|d| a.strip_prefix(d))
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(a);
        out.push(quote(rel));
    }
    out.extend(["--record".to_string(), "bundle".to_string()]);
    out.extend(["--label".to_string(), quote(&r.label)]);
    out.join(" ")
}

/// The last two folders of a path, for naming where commands run without the full path.
fn tail(dir: &str) -> String {
    let parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    let n = parts.len();
    parts[n.saturating_sub(2)..].join("/")
}

/// The reproduction part.
pub(super) fn reproduction(entries: &[Entry]) -> Part {
    let records: Vec<&RecordHead> = entries.iter().map(|e| &e.record).collect();
    let dir = common_dir(&records);
    let mut repro = String::new();
    if let Some(d) = &dir {
        repro += &format!("# run in the folder that held the inputs (…/{})\n", tail(d));
    }
    for r in &records {
        repro += &command(r, dir.as_deref());
        repro.push('\n');
    }
    let mut details = Vec::new();
    for e in entries {
        let p = &e.record.provenance;
        let mut lines = vec![format!(
            "kernelab {}; host {}; {}; {}; recorded {} to {}",
            p.kernelab_version,
            p.host.as_deref().unwrap_or(UNAVAILABLE),
            p.gpu
                .as_deref()
                .map(|g| format!("GPU {g}"))
                .unwrap_or_else(|| "GPU not recorded".into()),
            match &p.git {
                Some(g) => format!(
                    "git {}{}",
                    &g.commit[..12.min(g.commit.len())],
                    if g.dirty { " (dirty)" } else { "" }
                ),
                None => "not run in a git repository".into(),
            },
            p.started,
            p.finished
        )];
        for i in &p.inputs {
            let path = dir
                .as_deref()
                .and_then(|d| i.path.strip_prefix(d))
                .and_then(|r| r.strip_prefix('/'))
                .unwrap_or(&i.path);
            lines.push(format!(
                "`{path}` sha256 {}{}",
                i.sha256
                    .as_deref()
                    .map(|h| &h[..16.min(h.len())])
                    .unwrap_or(UNAVAILABLE),
                i.bytes
                    .map(|b| format!(", {} bytes", crate::format::thousands(b)))
                    .unwrap_or_default()
            ));
        }
        let file = e
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        details.push(Block::Heading(format!(
            "{} · {} ({file})",
            e.record.label, e.record.kind
        )));
        details.push(Block::Lines(lines));
    }
    Part {
        title: "Reproduction".into(),
        blocks: vec![
            Block::Code(repro),
            Block::Details {
                summary: format!("Provenance of the {} records", entries.len()),
                blocks: details,
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::{InputFile, Provenance};

    fn record(argv: &[&str], inputs: &[&str]) -> RecordHead {
        RecordHead {
            schema_version: 2,
            kind: "check_bitwise".into(),
            label: "x".into(),
            provenance: Provenance {
                argv: argv.iter().map(|s| s.to_string()).collect(),
                inputs: inputs
                    .iter()
                    .map(|p| InputFile {
                        path: p.to_string(),
                        ..InputFile::default()
                    })
                    .collect(),
                ..Provenance::default()
            },
        }
    }

    #[test]
    fn commands_use_paths_relative_to_the_inputs_folder() {
        let a = record(
            &[
                "/opt/bin/kernelab",
                "check",
                "bitwise",
                "/w/repo/tests/fixtures/tensor/a.npz",
                "/w/repo/tests/fixtures/tensor/b.npz",
                "--record",
                "/tmp/bundle",
                "--label",
                "it's",
            ],
            &[
                "/w/repo/tests/fixtures/tensor/a.npz",
                "/w/repo/tests/fixtures/tensor/b.npz",
            ],
        );
        let b = record(
            &["kernelab", "profile", "/w/repo/tests/fixtures/t.json.gz"],
            &["/w/repo/tests/fixtures/t.json.gz"],
        );
        let dir = common_dir(&[&a, &b]);
        assert_eq!(dir.as_deref(), Some("/w/repo/tests/fixtures"));
        assert_eq!(
            command(&a, dir.as_deref()),
            "kernelab check bitwise tensor/a.npz tensor/b.npz --record bundle --label x"
        );
        assert_eq!(
            command(&b, dir.as_deref()),
            "kernelab profile t.json.gz --record bundle --label x"
        );
        assert_eq!(tail("/w/repo/tests/fixtures"), "tests/fixtures");
        // Relative inputs leave the commands as typed.
        let c = record(&["kernelab", "check", "finite", "a.npy"], &["a.npy"]);
        assert_eq!(common_dir(&[&c]), None);
        assert_eq!(
            command(&c, None),
            "kernelab check finite a.npy --record bundle --label x"
        );
    }
}

#[cfg(test)]
mod quote_tests {
    #[test]
    fn a_word_with_a_newline_stays_on_one_line() {
        assert_eq!(super::quote("a\n# b"), "$'a\\n# b'");
        assert_eq!(super::quote("it's"), "'it'\\''s'");
        assert_eq!(super::quote("plain"), "plain");
    }
}
