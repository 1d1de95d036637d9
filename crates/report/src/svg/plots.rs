//! The plots a reviewer reads at a glance: the forest plot of every verdict, per-round ratios
//! over time, and the share bars of the request with the changed family marked. Every axis has
//! its unit and tick labels.

use super::{decimals, open, ticks};
use crate::format::{html_escape as esc, percent};

/// One verdict with an interval, for the forest plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdicts {
    /// Label (and kind, when the label has several timed records).
    pub name: String,
    /// Candidate / baseline.
    pub ratio: f64,
    /// Its interval.
    pub ci: Option<(f64, f64)>,
    /// The practical threshold δ (fraction), when known.
    pub threshold: Option<f64>,
    /// The verdict word.
    pub verdict: String,
}

/// One bar of the share chart.
#[derive(Clone, Debug)]
pub(crate) struct ShareBar {
    /// Kernel or family name.
    pub label: String,
    /// Share of request kernel time (0..1).
    pub share: f64,
    /// Whether this is the changed family.
    pub marked: bool,
}

/// A horizontal axis from `x0` to `x1` pixels at `y` for the domain `lo..hi`, with ticks, grid
/// lines up to `top`, and a title.
fn x_axis(
    lo: f64,
    hi: f64,
    (x0, x1): (f64, f64),
    (top, y): (f64, f64),
    label: impl Fn(f64, usize) -> String,
    title: &str,
) -> String {
    let x = |v: f64| x0 + (v - lo) / (hi - lo) * (x1 - x0);
    let t = ticks(lo, hi, 6);
    let d = t.windows(2).next().map_or(2, |w| decimals(w[1] - w[0]));
    let mut s = format!(
        "<line x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\" class=\"axis\"/>\n"
    );
    for v in t {
        s += &format!(
            "<line x1=\"{0:.1}\" y1=\"{top:.1}\" x2=\"{0:.1}\" y2=\"{y:.1}\" class=\"grid\"/><line x1=\"{0:.1}\" y1=\"{y:.1}\" x2=\"{0:.1}\" y2=\"{1:.1}\" class=\"axis\"/><text x=\"{0:.1}\" y=\"{2:.1}\" class=\"tick\" text-anchor=\"middle\">{3}</text>\n",
            x(v),
            y + 4.0,
            y + 16.0,
            esc(&label(v, d))
        );
    }
    s += &format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axistitle\" text-anchor=\"middle\">{}</text>\n",
        (x0 + x1) / 2.0,
        y + 32.0,
        esc(title)
    );
    s
}

/// Padded bounds of `values`, always holding `must`.
fn bounds(values: impl Iterator<Item = f64>, must: &[f64], pad: f64) -> (f64, f64) {
    let (lo, hi) = values
        .chain(must.iter().copied())
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let p = ((hi - lo) * pad).max(1e-3);
    (lo - p, hi + p)
}

fn verdict_class(v: &str) -> &'static str {
    match v {
        "FASTER" => "faster",
        "SLOWER" => "slower",
        "SAME" => "same",
        _ => "unsure",
    }
}

/// The forest plot: one row per verdict, the ratio as a dot, its interval as a line, the
/// ±threshold band around 1, and the ratio, interval and verdict written at the right.
pub(crate) fn forest(title: &str, rows: &[Verdicts]) -> String {
    let (w, label_w, text_w, row_h, top) = (960.0, 230.0, 300.0, 30.0, 34.0);
    let (x0, x1) = (label_w, w - text_w);
    let h = top + row_h * rows.len() as f64 + 50.0;
    let (lo, hi) = bounds(
        rows.iter().flat_map(|r| {
            let (l, u) = r.ci.unwrap_or((r.ratio, r.ratio));
            let t = r.threshold.unwrap_or(0.0);
            [r.ratio, l, u, 1.0 - t, 1.0 + t]
        }),
        &[1.0],
        0.08,
    );
    let x = |v: f64| x0 + (v - lo) / (hi - lo) * (x1 - x0);
    let bottom = top + row_h * rows.len() as f64;
    let mut s = open(title, w, h, "forest");
    s += &x_axis(
        lo,
        hi,
        (x0, x1),
        (top - 4.0, bottom + 4.0),
        crate::format::fixed,
        "candidate / baseline (ratio; < 1: candidate faster)",
    );
    s += &format!(
        "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" class=\"one\"/>\n",
        x(1.0),
        top - 4.0,
        bottom + 4.0
    );
    for (i, r) in rows.iter().enumerate() {
        let y = top + row_h * (i as f64 + 0.5);
        if let Some(t) = r.threshold {
            s += &format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" class=\"thr\"><title>±{} threshold</title></rect>\n",
                x(1.0 - t),
                y - row_h / 2.0 + 3.0,
                (x(1.0 + t) - x(1.0 - t)).max(1.0),
                row_h - 6.0,
                percent(t, false)
            );
        }
        let class = verdict_class(&r.verdict);
        if let Some((l, u)) = r.ci {
            s += &format!(
                "<line x1=\"{0:.1}\" y1=\"{2:.1}\" x2=\"{1:.1}\" y2=\"{2:.1}\" class=\"ci {class}\"/><line x1=\"{0:.1}\" y1=\"{3:.1}\" x2=\"{0:.1}\" y2=\"{4:.1}\" class=\"ci {class}\"/><line x1=\"{1:.1}\" y1=\"{3:.1}\" x2=\"{1:.1}\" y2=\"{4:.1}\" class=\"ci {class}\"/>\n",
                x(l),
                x(u),
                y,
                y - 6.0,
                y + 6.0
            );
        }
        let text = crate::format::pair_text(r.ratio, r.ci);
        s += &format!(
            "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\" class=\"pt {class}\"><title>{}: {} {}</title></circle>\n",
            x(r.ratio),
            esc(&r.name),
            esc(&text),
            esc(&r.verdict)
        );
        s += &super::label(
            x0 - 8.0,
            y + 4.0,
            "label",
            "end",
            &r.name,
            super::chars_for(x0 - 12.0),
        );
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"value {class}\">{} {}</text>\n",
            x1 + 10.0,
            y + 4.0,
            esc(&text),
            esc(&r.verdict)
        );
    }
    s + "</svg>\n"
}

/// Per-round ratios over time: one point per round in time order, joined; the interval as a
/// band, 1 as a line and the ±threshold as dashed lines.
pub(crate) fn rounds(
    title: &str,
    ratios: &[f64],
    ci: Option<(f64, f64)>,
    threshold: Option<f64>,
) -> String {
    let (w, h, left, right, top, bottom) = (760.0, 250.0, 70.0, 20.0, 30.0, 190.0);
    let mut must = vec![1.0];
    must.extend(ci.into_iter().flat_map(|(l, u)| [l, u]));
    must.extend(threshold.into_iter().flat_map(|t| [1.0 - t, 1.0 + t]));
    let (lo, hi) = bounds(ratios.iter().copied(), &must, 0.1);
    let n = ratios.len().max(2);
    let x = |i: usize| left + i as f64 / (n - 1) as f64 * (w - left - right);
    let y = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top);
    let mut s = open(title, w, h, "rounds");
    let t = ticks(lo, hi, 5);
    let d = t.windows(2).next().map_or(2, |p| decimals(p[1] - p[0]));
    for v in &t {
        s += &format!(
            "<line x1=\"{left}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" class=\"grid\"/><text x=\"{2}\" y=\"{3:.1}\" class=\"tick\" text-anchor=\"end\">{4}</text>\n",
            y(*v),
            w - right,
            left - 6.0,
            y(*v) + 4.0,
            crate::format::fixed(*v, d)
        );
    }
    if let Some((l, u)) = ci {
        s += &format!(
            "<rect x=\"{left}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" class=\"band\"><title>interval {} to {}</title></rect>\n",
            y(u),
            w - left - right,
            (y(l) - y(u)).max(1.0),
            crate::format::fixed(l, 4),
            crate::format::fixed(u, 4)
        );
    }
    if let Some(t) = threshold {
        for v in [1.0 - t, 1.0 + t] {
            s += &format!(
                "<line x1=\"{left}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" class=\"thrline\"><title>±{2} threshold</title></line>\n",
                y(v),
                w - right,
                percent(t, false)
            );
        }
    }
    s += &format!(
        "<line x1=\"{left}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" class=\"one\"/>\n",
        y(1.0),
        w - right
    );
    let path: Vec<String> = ratios
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{:.1},{:.1}", x(i), y(*r)))
        .collect();
    s += &format!(
        "<polyline points=\"{}\" class=\"series\"/>\n",
        path.join(" ")
    );
    for (i, r) in ratios.iter().enumerate() {
        s += &format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" class=\"pt round\"><title>round {}: {r:.4}</title></circle>\n",
            x(i),
            y(*r),
            i + 1
        );
    }
    // The round axis: the first, last and a few rounds between.
    let step = (ratios.len() / 6).max(1);
    s += &format!(
        "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" class=\"axis\"/><line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\" class=\"axis\"/>\n",
        w - right
    );
    for i in (0..ratios.len()).step_by(step) {
        s += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n",
            x(i),
            bottom + 16.0,
            i + 1
        );
    }
    s += &format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axistitle\" text-anchor=\"middle\">round (time order)</text>\n<text x=\"14\" y=\"{:.1}\" class=\"axistitle\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">candidate / baseline</text>\n",
        (left + w - right) / 2.0,
        bottom + 34.0,
        (top + bottom) / 2.0,
        (top + bottom) / 2.0
    );
    s + "</svg>\n"
}

/// The share bars: top families by share of request kernel time, the changed family marked.
pub(crate) fn share_bars(title: &str, rows: &[ShareBar]) -> String {
    let (w, label_w, row_h, top) = (760.0, 320.0, 24.0, 30.0);
    let (x0, x1) = (label_w, w - 110.0);
    let bottom = top + row_h * rows.len() as f64;
    let h = bottom + 48.0;
    let max = rows
        .iter()
        .map(|r| r.share)
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 100.0;
    let hi = ticks(0.0, max, 5)
        .last()
        .copied()
        .filter(|t| *t >= max)
        .unwrap_or(max);
    let x = |pct: f64| x0 + pct / hi * (x1 - x0);
    let mut s = open(title, w, h, "shares");
    s += &x_axis(
        0.0,
        hi,
        (x0, x1),
        (top, bottom + 2.0),
        |v, d| format!("{v:.d$}%"),
        "share of request kernel GPU time (%)",
    );
    for (i, r) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let class = if r.marked { "bar marked" } else { "bar" };
        let name = if r.marked {
            format!("▶ {}", r.label)
        } else {
            r.label.clone()
        };
        s += &super::label(
            x0 - 6.0,
            y + 16.0,
            if r.marked { "label marked" } else { "label" },
            "end",
            &name,
            super::chars_for(x0 - 10.0),
        );
        s += &format!(
            "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" class=\"{class}\"><title>{}: {}</title></rect><text x=\"{:.1}\" y=\"{:.1}\" class=\"value\">{}</text>\n",
            y + 4.0,
            (x(r.share * 100.0) - x0).max(1.0),
            row_h - 7.0,
            esc(&r.label),
            percent(r.share, false),
            x(r.share * 100.0) + 4.0,
            y + 16.0,
            if r.marked {
                format!("{} (changed)", percent(r.share, false))
            } else {
                percent(r.share, false)
            }
        );
    }
    s + "</svg>\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 40.0, 5), vec![0.0, 10.0, 20.0, 30.0, 40.0]);
        let t = ticks(0.95, 1.17, 6);
        assert!(t.first().is_some_and(|v| (v - 0.95).abs() < 1e-9), "{t:?}");
        assert!(t.last().is_some_and(|v| (v - 1.15).abs() < 1e-9), "{t:?}");
        assert_eq!(decimals(0.05), 2);
        assert_eq!(decimals(10.0), 0);
    }

    #[test]
    fn forest_has_one_point_and_band_per_row() {
        let rows = vec![
            Verdicts {
                name: "w8s2".into(),
                ratio: 1.1636,
                ci: Some((1.1599, 1.1681)),
                threshold: Some(0.01),
                verdict: "SLOWER".into(),
            },
            Verdicts {
                name: "aa".into(),
                ratio: 1.0,
                ci: Some((0.9967, 1.0031)),
                threshold: Some(0.01),
                verdict: "SAME".into(),
            },
        ];
        let s = forest("Verdicts", &rows);
        assert_eq!(s.matches("<circle").count(), 2);
        assert_eq!(s.matches("class=\"thr\"").count(), 2);
        assert!(s.contains("1.1636 [1.1599, 1.1681] SLOWER"));
        assert!(s.contains("candidate / baseline (ratio"));
    }
}
