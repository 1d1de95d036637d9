//! The report's charts as inline SVG: horizontal bars (instruction class changes), a strip plot
//! of per-pair ratios with the interval and the A/A band, and (in `plots`) the forest plot of
//! every verdict, per-round ratios over time and the request share bars. Written by hand: each
//! is a few rectangles, circles and labels; a plotting crate would add a font and layout stack
//! for no gain in what a reviewer sees.

use crate::format::fixed;
use crate::format::html_escape as esc;

mod plots;
mod roofline;

pub use plots::Verdicts;
pub(crate) use plots::{forest, rounds, share_bars, ShareBar};
pub(crate) use roofline::roofline_chart;

/// Tick values between `lo` and `hi`: about `n` steps of 1, 2 or 5 × 10^k.
pub(crate) fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).abs().max(1e-12);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let (k0, k1) = ((lo / step).ceil() as i64, (hi / step + 1e-9).floor() as i64);
    (k0..=k1).map(|k| k as f64 * step).collect()
}

/// `v` as [`fixed`] writes it, with a `+` when above 0.
fn signed(v: f64, decimals: usize) -> String {
    if v.is_finite() && v.is_sign_positive() {
        format!("+{}", fixed(v, decimals))
    } else {
        fixed(v, decimals)
    }
}

/// Decimals that tell ticks `step` apart.
pub(crate) fn decimals(step: f64) -> usize {
    if step <= 0.0 || !step.is_finite() {
        return 2;
    }
    (-(step.log10().floor())).max(0.0) as usize
}

/// The opening of a chart: the `<svg>` element with its accessible name, and the title.
pub(crate) fn open(title: &str, w: f64, h: f64, class: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart {class}\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{}\">\n<text x=\"4\" y=\"18\" class=\"title\">{}</text>\n",
        esc(title),
        esc(title)
    )
}

/// The widest a 12 px label may be drawn, in characters (at most 7.4 px each, measured on the
/// system sans-serif of headless Chromium): names are shortened to fit the space they have.
pub(crate) fn chars_for(px: f64) -> usize {
    ((px / 7.4).floor() as usize).max(4)
}

/// A label `text` shortened to `max` characters (an ellipsis in the middle keeps the start and
/// the end of a long kernel name), with the full text as its tooltip: never clipped by the SVG
/// edge. `anchor` is `start` or `end`.
pub(crate) fn label(x: f64, y: f64, class: &str, anchor: &str, text: &str, max: usize) -> String {
    let n = text.chars().count();
    let shown = if n <= max {
        text.to_string()
    } else {
        let head = (max - 1) * 2 / 3;
        let tail = max - 1 - head;
        let start: String = text.chars().take(head).collect();
        let end: String = text.chars().skip(n - tail).collect();
        format!("{start}…{end}")
    };
    format!(
        "<text x=\"{x:.1}\" y=\"{y:.1}\" class=\"{class}\" text-anchor=\"{anchor}\"><title>{}</title>{}</text>",
        esc(text),
        esc(&shown)
    )
}

/// Horizontal bars: (label, value, value text). Negative values extend left of the axis.
pub(crate) fn bars(title: &str, rows: &[(String, f64, String)]) -> String {
    let (w, label_w, row_h) = (760.0, 300.0, 22.0);
    let h = 30.0 + row_h * rows.len() as f64 + 10.0;
    let max = rows
        .iter()
        .map(|r| r.1.abs())
        .fold(0.0f64, f64::max)
        .max(1e-12);
    let has_neg = rows.iter().any(|r| r.1 < 0.0);
    let plot_w = w - label_w - 150.0;
    let zero = if has_neg {
        label_w + plot_w / 2.0
    } else {
        label_w
    };
    let scale = if has_neg {
        plot_w / 2.0 / max
    } else {
        plot_w / max
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{}\">\n<text x=\"4\" y=\"18\" class=\"title\">{}</text>\n",
        esc(title),
        esc(title)
    );
    for (i, (name, v, text)) in rows.iter().enumerate() {
        let y = 30.0 + row_h * i as f64;
        let len = v.abs() * scale;
        let x = if *v < 0.0 { zero - len } else { zero };
        s += &label(
            label_w - 6.0,
            y + 14.0,
            "label",
            "end",
            name,
            chars_for(label_w - 10.0),
        );
        s += &format!(
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"{:.1}\" class=\"{}\"><title>{}: {}</title></rect><text x=\"{:.1}\" y=\"{}\" class=\"value\">{}</text>\n",
            y + 3.0,
            row_h - 6.0,
            if *v < 0.0 { "bar neg" } else { "bar" },
            esc(name),
            esc(text),
            zero.max(x + len) + 4.0,
            y + 14.0,
            esc(text)
        );
    }
    s += &format!(
        "<line x1=\"{zero}\" y1=\"26\" x2=\"{zero}\" y2=\"{}\" class=\"axis\"/>\n</svg>\n",
        h - 6.0
    );
    s
}

/// A strip plot of per-pair changes (%), with the interval as a band and the A/A range.
/// Values that are not finite (a change past what f64 holds) are left out, and an interval
/// with such an end is not drawn: the chart never places a point at `NaN`.
pub(crate) fn strip(title: &str, changes: &[f64], ci: Option<(f64, f64)>, aa: &[f64]) -> String {
    let finite = |v: &[f64]| -> Vec<f64> { v.iter().copied().filter(|x| x.is_finite()).collect() };
    let (changes, aa) = (&finite(changes)[..], &finite(aa)[..]);
    let ci = ci.filter(|(l, u)| l.is_finite() && u.is_finite());
    let (w, h) = (760.0, 170.0);
    let all = changes
        .iter()
        .chain(aa)
        .copied()
        .chain(ci.into_iter().flat_map(|(l, u)| [l, u]))
        .chain([0.0]);
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let pad = ((hi - lo) * 0.1).max(0.5);
    let (lo, hi) = (lo - pad, hi + pad);
    let x = |v: f64| 40.0 + (v - lo) / (hi - lo) * (w - 80.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{}\">\n<text x=\"4\" y=\"18\" class=\"title\">{}</text>\n",
        esc(title),
        esc(title)
    );
    if let Some((l, u)) = ci {
        s += &format!("<rect x=\"{:.1}\" y=\"30\" width=\"{:.1}\" height=\"70\" class=\"band\"><title>interval {}% to {}%</title></rect>\n", x(l), (x(u) - x(l)).max(1.0), fixed(l, 2), fixed(u, 2));
    }
    for (i, c) in changes.iter().enumerate() {
        let jitter = 40.0 + (i * 37 % 50) as f64;
        s += &format!("<circle cx=\"{:.1}\" cy=\"{jitter:.1}\" r=\"3\" class=\"pt\"><title>pair {}: {}%</title></circle>\n", x(*c), i + 1, signed(*c, 2));
    }
    if !aa.is_empty() {
        let (al, ah) = aa
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        s += &format!("<rect x=\"{:.1}\" y=\"110\" width=\"{:.1}\" height=\"14\" class=\"aa\"><title>A/A pairs range {}% to {}%</title></rect><text x=\"{:.1}\" y=\"121\" class=\"label\">A/A</text>\n", x(al), (x(ah) - x(al)).max(1.0), fixed(al, 2), fixed(ah, 2), x(ah) + 4.0);
        for c in aa {
            s += &format!(
                "<circle cx=\"{:.1}\" cy=\"117\" r=\"2\" class=\"aapt\"/>\n",
                x(*c)
            );
        }
    }
    s += &format!(
        "<line x1=\"{0:.1}\" y1=\"26\" x2=\"{0:.1}\" y2=\"130\" class=\"axis\"/>\n",
        x(0.0)
    );
    let t = ticks(lo, hi, 6);
    let d = t.windows(2).next().map_or(1, |p| decimals(p[1] - p[0]));
    for v in t {
        s += &format!(
            "<line x1=\"{0:.1}\" y1=\"130\" x2=\"{0:.1}\" y2=\"135\" class=\"axis\"/><text x=\"{0:.1}\" y=\"148\" class=\"tick\" text-anchor=\"middle\">{1}%</text>\n",
            x(v),
            signed(v, d)
        );
    }
    s += &format!(
        "<line x1=\"{:.1}\" y1=\"130\" x2=\"{:.1}\" y2=\"130\" class=\"axis\"/>\n",
        x(lo),
        x(hi)
    );
    s += "<text x=\"380\" y=\"166\" class=\"axistitle\" text-anchor=\"middle\">change per pair, (candidate − baseline) / baseline (%); band: interval; A/A: pre-flight pairs</text>\n</svg>\n";
    s
}
