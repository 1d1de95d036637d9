//! A self-contained HTML page: inline CSS, tables and SVG charts, no scripts.

use crate::evidence::{Block, Report};
use crate::render::CONVENTION;
use crate::svg;
use crate::table::{Align, Table};

use crate::format::html_escape as esc;

/// `**bold**` and `` `code` `` spans in a line, as HTML (code spans first: their content is
/// never bold).
fn inline(s: &str) -> String {
    let mut out = String::new();
    for (i, piece) in s.split('`').enumerate() {
        if i % 2 == 1 {
            out += &format!("<code>{}</code>", esc(piece));
        } else {
            for (j, bit) in esc(piece).split("**").enumerate() {
                if j % 2 == 1 {
                    out += &format!("<strong>{bit}</strong>");
                } else {
                    out += bit;
                }
            }
        }
    }
    out
}

fn table(t: &Table) -> String {
    let mut s = format!("<table>\n<caption>{}</caption>\n<thead><tr>", esc(&t.title));
    for c in &t.columns {
        s += &format!(
            "<th class=\"{}\">{}</th>",
            if c.align == Align::Right { "r" } else { "l" },
            esc(&c.name)
        );
    }
    s += "</tr></thead>\n<tbody>\n";
    for r in &t.rows {
        s += "<tr>";
        for (i, v) in r.iter().enumerate() {
            let right = t.columns.get(i).is_some_and(|c| c.align == Align::Right);
            s += &format!(
                "<td class=\"{}\">{}</td>",
                if right { "r" } else { "l" },
                inline(v)
            );
        }
        s += "</tr>\n";
    }
    s + "</tbody></table>\n"
}

const CSS: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1000px;color:#1b1f23}\
h1{font-size:1.6em}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:1.6em}h3{font-size:1.1em;margin:1.2em 0 .4em}\
table{border-collapse:collapse;margin:.6em 0 1.2em;display:block;max-width:100%;overflow-x:auto}p.status{font-size:1.1em}code{background:#f6f8fa;padding:0 .2em}caption{text-align:left;font-weight:600;padding:.2em 0}\
th,td{border:1px solid #d0d7de;padding:3px 8px}th{background:#f6f8fa}td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}\
pre{background:#f6f8fa;padding:.8em;overflow-x:auto}p.note{color:#57606a}details{margin:.4em 0 1em}summary{cursor:pointer;color:#0969da}\
svg.chart{display:block;margin:.4em 0 1.2em;background:#fff}svg .title{font-weight:600;font-size:14px}\
svg .label,svg .value{font-size:12px;fill:#24292f}svg .tick{font-size:11px;fill:#57606a}svg .axistitle{font-size:12px;fill:#24292f}\
svg .bar{fill:#4c78a8}svg .bar.neg{fill:#54a24b}svg .bar.marked{fill:#e45756}svg .label.marked{font-weight:700;fill:#b4232a}\
svg .axis{stroke:#57606a;stroke-width:1}svg .grid{stroke:#d0d7de;stroke-width:1}svg .one{stroke:#24292f;stroke-width:1.2;stroke-dasharray:4 3}\
svg .band{fill:#f2cf5b;opacity:.45}svg .thr{fill:#9ecae9;opacity:.35}svg .thrline{stroke:#4c78a8;stroke-dasharray:2 3}\
svg .pt{fill:#e45756;opacity:.85}svg .series{fill:none;stroke:#8c959f;stroke-width:1}\
svg .ci{stroke-width:2.5}svg .faster{fill:#1a7f37;stroke:#1a7f37}svg .slower{fill:#cf222e;stroke:#cf222e}\
svg .same{fill:#0969da;stroke:#0969da}svg .unsure{fill:#bf8700;stroke:#bf8700}svg text.value.faster,svg text.value.slower,svg text.value.same,svg text.value.unsure{stroke:none}\
svg .aa{fill:#9ecae9;opacity:.6}svg .aapt{fill:#4c78a8}";

fn list(s: &mut String, lines: &[String]) {
    *s += "<ul>\n";
    for x in lines {
        *s += &format!("<li>{}</li>\n", inline(x));
    }
    *s += "</ul>\n";
}

fn blocks(s: &mut String, bs: &[Block]) {
    for b in bs {
        match b {
            Block::Heading(h) => *s += &format!("<h3>{}</h3>\n", esc(h)),
            Block::Lines(l) => list(s, l),
            Block::List { title, lines } => {
                if !lines.is_empty() {
                    *s += &format!("<h4>{}</h4>\n", esc(title));
                    list(s, lines);
                }
            }
            Block::Table(t) => *s += &table(t),
            Block::Chart(svg) => *s += svg,
            Block::Code(c) => *s += &format!("<pre><code>{}</code></pre>\n", esc(c)),
            Block::Details {
                summary,
                blocks: inner,
            } => {
                *s += &format!("<details>\n<summary>{}</summary>\n", esc(summary));
                blocks(s, inner);
                *s += "</details>\n";
            }
        }
    }
}

/// Renders the report as one HTML page: the summary table and the forest plot of every
/// verdict first, then the sections with their charts.
pub fn html(title: &str, r: &Report) -> String {
    let mut s = format!("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n", esc(title), esc(title));
    if let Some(intro) = &r.intro {
        for para in intro.split("\n\n").filter(|p| !p.trim().is_empty()) {
            s += &format!("<p>{}</p>\n", inline(para.trim()));
        }
    }
    s += &format!("<p class=\"status\">{}</p>\n", inline(&r.headline.status));
    if !r.headline.flags.is_empty() {
        s += "<ul>\n";
        for f in &r.headline.flags {
            s += &format!("<li>⚠ {}</li>\n", esc(f));
        }
        s += "</ul>\n";
    }
    if !r.headline.changes.rows.is_empty() {
        s += &table(&r.headline.changes);
    }
    if !r.unreadable.is_empty() {
        s += "<h2>Records not read</h2>\n<ul>\n";
        for u in &r.unreadable {
            s += &format!(
                "<li><code>{}</code>: {}</li>\n",
                esc(&u.path.display().to_string()),
                esc(&u.reason)
            );
        }
        s += "</ul>\n";
    }
    s += &format!(
        "<details>\n<summary>Every record ({})</summary>\n{}</details>\n",
        r.heads.len(),
        table(&r.summary)
    );
    s += &format!("<p class=\"note\">{}</p>\n", esc(CONVENTION));
    if !r.verdicts.is_empty() {
        s += &svg::forest(
            "Every timing verdict: ratio, interval and ±threshold band",
            &r.verdicts,
        );
    }
    for p in &r.parts {
        s += &format!("<h2>{}</h2>\n", esc(&p.title));
        blocks(&mut s, &p.blocks);
    }
    s + "</body>\n</html>\n"
}
