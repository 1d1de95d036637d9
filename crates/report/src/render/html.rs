//! A self-contained HTML page: inline CSS, tables and SVG charts, no scripts.

use crate::evidence::{Block, Headline, Part};
use crate::table::{Align, Table};

use crate::format::html_escape as esc;

/// `**bold**` spans in a line, as HTML.
fn inline(s: &str) -> String {
    let e = esc(s);
    let mut out = String::new();
    for (i, piece) in e.split("**").enumerate() {
        if i % 2 == 1 {
            out += &format!("<strong>{piece}</strong>");
        } else {
            out += piece;
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
                esc(v)
            );
        }
        s += "</tr>\n";
    }
    s + "</tbody></table>\n"
}

const CSS: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:980px;color:#1b1f23}\
h1{font-size:1.6em}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:1.6em}\
table{border-collapse:collapse;margin:.6em 0 1.2em}caption{text-align:left;font-weight:600;padding:.2em 0}\
th,td{border:1px solid #d0d7de;padding:3px 8px}th{background:#f6f8fa}td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}\
pre{background:#f6f8fa;padding:.8em;overflow-x:auto}ul.head li{margin:.2em 0}\
svg.chart{display:block;margin:.4em 0 1.2em;background:#fff}svg .title{font-weight:600;font-size:13px}\
svg .label,svg .value{font-size:11px;fill:#57606a}svg .bar{fill:#4c78a8}svg .bar.neg{fill:#54a24b}\
svg .axis{stroke:#8c959f;stroke-width:1}svg .band{fill:#f2cf5b;opacity:.45}svg .pt{fill:#e45756;opacity:.8}\
svg .aa{fill:#9ecae9;opacity:.6}svg .aapt{fill:#4c78a8}";

/// Renders the report as one HTML page.
pub fn html(title: &str, heads: &[Headline], parts: &[Part]) -> String {
    let mut s = format!("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n<ul class=\"head\">\n", esc(title), esc(title));
    for h in heads {
        s += &format!(
            "<li><strong>{}</strong>: {}</li>\n",
            esc(&h.kind),
            esc(&h.headline)
        );
    }
    s += "</ul>\n";
    for p in parts {
        s += &format!("<h2>{}</h2>\n", esc(&p.title));
        for b in &p.blocks {
            match b {
                Block::Lines(l) => {
                    s += "<ul>\n";
                    for x in l {
                        s += &format!("<li>{}</li>\n", inline(x));
                    }
                    s += "</ul>\n";
                }
                Block::Table(t) => s += &table(t),
                Block::Chart(svg) => s += svg,
                Block::Code(c) => s += &format!("<pre><code>{}</code></pre>\n", esc(c)),
            }
        }
    }
    s + "</body>\n</html>\n"
}
