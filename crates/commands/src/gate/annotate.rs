//! The kernel source lines a pull request changed, for check annotations: `git diff
//! --unified=0 BASE HEAD -- PATHSPECS` of the sources `[annotate] paths` names, read hunk by
//! hunk into the head's line ranges.

use anyhow::Result;
use std::path::Path;

/// A run of lines of a kernel source that the head changed (1-based, in the head's file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedLines {
    /// The file, relative to the top of the repository.
    pub file: String,
    /// The first line.
    pub line: u64,
    /// The last line.
    pub end_line: u64,
}

/// The lines of the files matching `paths` (git pathspecs) that `head` changed against `base`
/// in `repo`. Files the head deleted have no lines to annotate and are left out.
pub fn changed_lines(
    repo: &Path,
    base: &str,
    head: &str,
    paths: &[String],
) -> Result<Vec<ChangedLines>> {
    let mut args = vec![
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--unified=0",
        base,
        head,
        "--",
    ];
    args.extend(paths.iter().map(String::as_str));
    Ok(parse_unified0(&super::git::git(repo, &args)?))
}

/// A diff header's path (`b/src/k.cu`, or git's quoted form `"b/src/\"k\".cu"`) without its
/// `b/` prefix; `None` for `/dev/null`.
fn header_path(p: &str) -> Option<String> {
    let p = p.trim_end_matches('\t');
    let unquoted = match p.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
        Some(q) => {
            let mut out = String::new();
            let mut chars = q.chars();
            while let Some(c) = chars.next() {
                match (c, c == '\\') {
                    (_, true) => match chars.next()? {
                        't' => out.push('\t'),
                        'n' => out.push('\n'),
                        other => out.push(other),
                    },
                    (c, false) => out.push(c),
                }
            }
            out
        }
        None => p.to_string(),
    };
    unquoted.strip_prefix("b/").map(str::to_string)
}

/// `START[,COUNT]` of a hunk header's side (COUNT 1 when left out).
fn range(s: &str) -> Option<(u64, u64)> {
    match s.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((s.parse().ok()?, 1)),
    }
}

/// The head's changed lines of a `git diff --unified=0` output: each hunk `@@ -a,b +c,d @@`
/// is lines c to c+d−1 of the file its `+++ b/FILE` header names; a hunk that only removes
/// lines (d = 0) is the line after which they were (at least line 1).
pub fn parse_unified0(diff: &str) -> Vec<ChangedLines> {
    let mut out = Vec::new();
    let mut file: Option<String> = None;
    for line in diff.lines() {
        if let Some(p) = line.strip_prefix("+++ ") {
            file = header_path(p);
        } else if let Some(rest) = line.strip_prefix("@@ -") {
            let Some(f) = &file else { continue };
            let Some(plus) = rest.split(' ').nth(1).and_then(|s| s.strip_prefix('+')) else {
                continue;
            };
            let Some((start, count)) = range(plus) else {
                continue;
            };
            let (line, end_line) = if count == 0 {
                (start.max(1), start.max(1))
            } else {
                (start, start + count - 1)
            };
            out.push(ChangedLines {
                file: f.clone(),
                line,
                end_line,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_become_the_heads_line_ranges() {
        let diff = "diff --git a/k.cu b/k.cu\nindex 1..2 100644\n--- a/k.cu\n+++ b/k.cu\n\
                    @@ -3 +3 @@ __global__ void k()\n-  x = 1;\n+  x = 2;\n\
                    @@ -10,0 +11,2 @@\n+a\n+b\n@@ -20,3 +21,0 @@\n-c\n-d\n-e\n\
                    diff --git a/gone.cu b/gone.cu\n--- a/gone.cu\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n\
                    diff --git a/new.py b/new.py\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+y\n\
                    diff --git \"a/a \\\"q\\\".cu\" \"b/a \\\"q\\\".cu\"\n+++ \"b/a \\\"q\\\".cu\"\n\
                    @@ -0,0 +1 @@\n+z\n";
        let c = parse_unified0(diff);
        let got: Vec<(&str, u64, u64)> = c
            .iter()
            .map(|c| (c.file.as_str(), c.line, c.end_line))
            .collect();
        assert_eq!(
            got,
            [
                ("k.cu", 3, 3),
                ("k.cu", 11, 12),
                ("k.cu", 21, 21),
                ("new.py", 1, 1),
                ("a \"q\".cu", 1, 1)
            ]
        );
        assert!(parse_unified0("@@ -1 +1 @@\n").is_empty(), "no file yet");
        assert!(
            parse_unified0("+++ b/x\n@@ -1 +x @@\n").is_empty(),
            "bad range"
        );
    }
}
