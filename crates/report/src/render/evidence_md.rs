//! The report as Markdown, shaped like a performance pull-request body: the title, the summary
//! table, then the sections in reading order. Past GitHub's limit on a pull-request body, the
//! sections that do not fit go to an appendix file that the body links.

use crate::evidence::{Part, Report};

/// The most characters GitHub accepts in a pull-request body.
pub const GITHUB_BODY_LIMIT: usize = 65_536;

/// The sign convention, stated once under the summary.
pub const CONVENTION: &str = "Every ratio is candidate / baseline of the metric as measured and every change is ratio − 1 (for times, below 1 and negative are faster).";

/// A table under a heading of `level` (`##` … `####`).
fn table_at(t: &crate::table::Table, level: usize) -> String {
    super::markdown::table(t, level)
}

/// One part as Markdown.
fn part(p: &Part) -> String {
    let mut s = format!("## {}\n\n", crate::format::md_line(&p.title));
    super::markdown::blocks(&mut s, &p.blocks, 4);
    s
}

/// The title, the author's introduction, the status, the changes, unreadable records, and
/// every record's summary row (folded).
fn head(title: &str, r: &Report) -> String {
    let mut s = format!("# {}\n\n", crate::format::md_line(title));
    if let Some(intro) = &r.intro {
        s += &crate::format::escape_controls(intro.trim_end(), &['\n', '\t']);
        s += "\n\n";
    }
    s += &format!(
        "{}\n\n",
        crate::format::escape_controls(&r.headline.status, &[])
    );
    for f in &r.headline.flags {
        s += &format!("- ⚠ {}\n", crate::format::md_prose(f));
    }
    if !r.headline.flags.is_empty() {
        s.push('\n');
    }
    if !r.headline.changes.rows.is_empty() {
        s += &table_at(&r.headline.changes, 2);
    }
    if !r.unreadable.is_empty() {
        s += "## Records not read\n\n";
        for u in &r.unreadable {
            s += &format!(
                "- `{}`: {}\n",
                crate::format::escape_controls(&u.path.display().to_string(), &[]),
                crate::format::md_line(&u.reason)
            );
        }
        s.push('\n');
    }
    s += &format!(
        "<details>\n<summary>Every record ({})</summary>\n\n{}</details>\n\n{CONVENTION}\n\n",
        r.heads.len(),
        table_at(&r.summary, 2)
    );
    s
}

/// Renders the whole report as one Markdown document (charts are in the HTML page only).
pub fn markdown(title: &str, r: &Report) -> String {
    let mut s = head(title, r);
    for p in &r.parts {
        s += &part(p);
    }
    s
}

/// Renders the report as a pull-request body of at most `limit` characters: the summary and
/// as many whole sections as fit, in order; the remaining sections go to the appendix (the
/// second value, `None` when everything fits), which the body links as `appendix`.
pub fn pr_body(title: &str, r: &Report, limit: usize, appendix: &str) -> (String, Option<String>) {
    let mut body = head(title, r);
    let parts: Vec<(String, String)> = r.parts.iter().map(|p| (p.title.clone(), part(p))).collect();
    let total: usize =
        body.chars().count() + parts.iter().map(|p| p.1.chars().count()).sum::<usize>();
    if total <= limit {
        for (_, p) in &parts {
            body += p;
        }
        return (body, None);
    }
    let note = |rest: &[(String, String)]| {
        format!(
            "---\n\nThe rest of this report ({}) is in [{appendix}]({appendix}): a pull-request body holds at most {} characters.\n",
            rest.iter().map(|p| p.0.as_str()).collect::<Vec<_>>().join(", "),
            crate::format::thousands(limit as u64)
        )
    };
    let mut used = body.chars().count();
    let mut split = parts.len();
    for (i, (_, p)) in parts.iter().enumerate() {
        let n = p.chars().count();
        if used + n + note(&parts[i..]).chars().count() > limit {
            split = i;
            break;
        }
        used += n;
        body += p;
    }
    body += &note(&parts[split..]);
    let mut rest = format!("# {title}: appendix\n\n{CONVENTION}\n\n");
    for (_, p) in &parts[split..] {
        rest += p;
    }
    (body, Some(rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{Align, Block, Table};

    fn report(parts: usize, lines: usize) -> Report {
        Report {
            headline: crate::evidence::Status {
                status: "**Status: ready**".into(),
                changes: Table::new("Changes", &[("change", Align::Left)]),
                flags: Vec::new(),
            },
            intro: None,
            unreadable: Vec::new(),
            summary: Table::new("Summary", &[("label", Align::Left)]),
            verdicts: Vec::new(),
            parts: (0..parts)
                .map(|i| Part {
                    title: format!("Part {i}"),
                    blocks: vec![Block::Lines(vec!["x".repeat(100); lines])],
                })
                .collect(),
            heads: Vec::new(),
            impacts: Vec::new(),
        }
    }

    #[test]
    fn bodies_past_the_limit_move_whole_sections_to_the_appendix() {
        let r = report(5, 10);
        let full = markdown("T", &r);
        let (body, rest) = pr_body("T", &r, GITHUB_BODY_LIMIT, "a.md");
        assert_eq!(body, full);
        assert!(rest.is_none());
        // A limit that holds the summary and two parts.
        let limit = 2_600;
        let (body, rest) = pr_body("T", &r, limit, "pr.appendix.md");
        let rest = rest.expect("appendix");
        assert!(body.chars().count() <= limit, "{}", body.chars().count());
        assert!(body.contains("## Part 1\n") && !body.contains("## Part 2\n"));
        assert!(body.contains("The rest of this report (Part 2, Part 3, Part 4) is in [pr.appendix.md](pr.appendix.md)"));
        assert!(rest.starts_with("# T: appendix") && rest.contains("## Part 2\n"));
        // Nothing lost, nothing repeated.
        for i in 0..5 {
            let title = format!("## Part {i}\n");
            assert_eq!(
                body.matches(&title).count() + rest.matches(&title).count(),
                1
            );
        }
    }
}
