//! The roofline chart: log-log axes (FLOP/byte, TFLOP/s), the DRAM roof and each compute roof,
//! one point per kernel family.

use super::{esc, open};

/// A roofline chart. `bandwidth` in byte/s, `peaks` as (label, FLOP/s), `points` as (label,
/// FLOP/byte, FLOP/s). Non-positive or non-finite values are left out.
pub(crate) fn roofline_chart(
    title: &str,
    bandwidth: f64,
    peaks: &[(String, f64)],
    points: &[(String, f64, f64)],
) -> String {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    let peaks: Vec<&(String, f64)> = peaks.iter().filter(|p| ok(p.1)).collect();
    let points: Vec<&(String, f64, f64)> = points.iter().filter(|p| ok(p.1) && ok(p.2)).collect();
    let (w, h) = (760.0, 420.0);
    let (left, right, top, bottom) = (70.0, 150.0, 30.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let bw = if ok(bandwidth) { bandwidth } else { 1e12 };
    let max_peak = peaks.iter().map(|p| p.1).fold(0.0f64, f64::max);
    let ridge = if max_peak > 0.0 { max_peak / bw } else { 100.0 };
    let ai_lo = points.iter().map(|p| p.1).fold(ridge / 100.0, f64::min);
    let ai_hi = points.iter().map(|p| p.1).fold(ridge * 10.0, f64::max);
    let x0 = ai_lo.log10().floor();
    let x1 = ai_hi.log10().ceil().max(x0 + 1.0);
    let y_top = points.iter().map(|p| p.2).fold(max_peak.max(bw), f64::max) * 2.0;
    let y_low = points
        .iter()
        .map(|p| p.2)
        .fold(bw * 10f64.powf(x0), f64::min);
    let y0 = y_low.log10().floor();
    let y1 = y_top.log10().ceil().max(y0 + 1.0);
    let sx = |ai: f64| left + (ai.log10() - x0) / (x1 - x0) * pw;
    let sy = |r: f64| top + ph - (r.log10() - y0) / (y1 - y0) * ph;
    let mut s = open(title, w, h, "roofline");
    s += &format!(
        "<rect x=\"{left}\" y=\"{top}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#999\"/>\n"
    );
    for k in x0 as i64..=x1 as i64 {
        let x = sx(10f64.powi(k as i32));
        s += &format!(
            "<line x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>\n<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"tick\">{}</text>\n",
            top + ph,
            top + ph + 16.0,
            esc(&format!("{}", 10f64.powi(k as i32)))
        );
    }
    for k in y0 as i64..=y1 as i64 {
        let y = sy(10f64.powi(k as i32));
        s += &format!(
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" class=\"tick\">{}</text>\n",
            left + pw,
            left - 4.0,
            y + 4.0,
            esc(&format!("{}", 10f64.powi(k as i32) / 1e12))
        );
    }
    s += &format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"axis\">arithmetic intensity (FLOP/byte, log)</text>\n<text x=\"14\" y=\"{:.1}\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\" class=\"axis\">TFLOP/s (log)</text>\n",
        left + pw / 2.0,
        h - 10.0,
        top + ph / 2.0,
        top + ph / 2.0
    );
    // The DRAM roof up to the highest peak (or the plot's edge).
    let (xa, xb) = (10f64.powf(x0), 10f64.powf(x1));
    let end = if max_peak > 0.0 { ridge.min(xb) } else { xb };
    s += &format!(
        "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#555\" stroke-width=\"2\"><title>DRAM {:.3} TB/s</title></line>\n",
        sx(xa),
        sy(xa * bw),
        sx(end),
        sy(end * bw),
        bw / 1e12
    );
    for (label, p) in &peaks {
        let r = (p / bw).max(xa);
        s += &format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" class=\"label\">{} {:.1} TFLOP/s</text>\n",
            sx(r),
            sy(*p),
            left + pw,
            sy(*p),
            left + pw + 4.0,
            sy(*p) + 4.0,
            esc(label),
            p / 1e12
        );
    }
    for (label, ai, r) in &points {
        let (px, py) = (sx(*ai), sy(*r));
        s += &format!(
            "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"4\" fill=\"#c33\"><title>{}: {:.2} FLOP/byte, {:.2} TFLOP/s</title></circle>\n",
            esc(label),
            ai,
            r / 1e12,
        );
        // The label goes on the side of the point with more room, shortened to fit the chart.
        let (room_right, room_left) = (w - px - 10.0, px - 10.0);
        s += &if room_right >= room_left {
            super::label(
                px + 6.0,
                py - 6.0,
                "label",
                "start",
                label,
                super::chars_for(room_right),
            )
        } else {
            super::label(
                px - 6.0,
                py - 6.0,
                "label",
                "end",
                label,
                super::chars_for(room_left),
            )
        };
        s.push('\n');
    }
    s += "</svg>\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roofs_and_points_on_log_axes() {
        let s = roofline_chart(
            "roofline",
            4.217e12,
            &[("BF16 matrix".into(), 774.7e12)],
            &[
                ("recompute".into(), 28.3, 104.4e12),
                ("bad".into(), 0.0, 1.0),
            ],
        );
        assert!(s.starts_with("<svg"));
        assert!(s.contains("BF16 matrix 774.7 TFLOP/s"));
        assert!(s.contains("recompute: 28.30 FLOP/byte, 104.40 TFLOP/s"));
        assert!(!s.contains(">bad<"));
        assert!(s.contains("FLOP/byte, log"));
        assert!(s.trim_end().ends_with("</svg>"));
    }
}
