//! The `ab` view: the summary block of ab-statistics.md §5 ("What to print").

use crate::format::{interval, percent, ratio, thousands, UNAVAILABLE};
use crate::table::Block;
use kernelab_model::ab::AbResult;
use kernelab_stats::Analysis;

fn pct(x: f64) -> String {
    percent(x, true)
}

fn opt_pct(x: Option<f64>, prefix: &str) -> String {
    x.map(|v| format!("{prefix}{}", percent(v, false)))
        .unwrap_or_else(|| UNAVAILABLE.into())
}

fn ci(c: Option<kernelab_stats::Interval>) -> String {
    interval(c, "too few pairs")
}

/// Which way is better, for the line that shows a ratio.
pub(crate) fn direction(d: kernelab_stats::Direction) -> &'static str {
    match d {
        kernelab_stats::Direction::LowerIsBetter => "lower is better",
        kernelab_stats::Direction::HigherIsBetter => "higher is better",
    }
}

/// Lines describing one analysis.
pub fn analysis_lines(name: &str, a: &Analysis) -> Vec<String> {
    let mut l = vec![
        format!("metric   {name}"),
        format!(
            "looks    {}   (stopped: {})   pairs {} of {} ({} runs)",
            if a.looks.is_empty() {
                "–".to_string()
            } else {
                a.looks
                    .iter()
                    .map(|k| k.pairs.to_string())
                    .collect::<Vec<_>>()
                    .join(" → ")
            },
            a.stopped_by,
            thousands(a.pairs as u64),
            thousands(a.pairs_available as u64),
            thousands(2 * a.pairs as u64)
        ),
        format!(
            "result   ratio candidate / baseline {}  {:.1}% CI {}   (Hodges-Lehmann, exact Wilcoxon; {})",
            ratio(a.ratio()),
            a.level * 100.0,
            ci(a.interval()),
            direction(a.direction)
        ),
        format!("verdict  {}", a.verdict_text()),
    ];
    let res = opt_pct(a.resolution, "±");
    let mde = opt_pct(a.mde, "");
    l.push(format!(
        "resolution {res}   MDE(80%) ≈ {mde}   median+sign CI {}",
        ci(a.sign_interval)
    ));
    let mut noise = format!(
        "noise    per-pair robust sd {}   outlier pairs {}/{}",
        opt_pct(a.noise_sd, ""),
        a.outliers,
        a.pairs
    );
    if let Some(d) = &a.drift {
        noise += &format!(
            "   drift of A over the run {} (Kendall τ {:.2}; removed by pairing)",
            pct(d.change),
            d.tau
        );
    }
    l.push(noise);
    if let Some(o) = &a.order_effect {
        l.push(format!(
            "order    2nd-in-pair effect {} [{}, {}] (cancelled by ABBA)",
            pct(o.estimate),
            pct(o.interval.low),
            pct(o.interval.high)
        ));
    }
    if let Some(n) = a.pairs_for_resolution.filter(|&n| n > a.pairs) {
        l.push(format!(
            "plan     about {} more pairs for the requested resolution at this noise",
            thousands((n - a.pairs) as u64)
        ));
    }
    for w in &a.warnings {
        l.push(format!("warning  {w}"));
    }
    l
}

/// What the A/A pre-flight says, after its ratio and interval: that it found no harness bias,
/// that it found one, or that it had too few pairs for an interval (how many of how many).
pub fn aa_verdict(aa: &kernelab_stats::AaCheck) -> String {
    let a = &aa.analysis;
    if a.interval().is_none() {
        let needed = kernelab_stats::rank::min_pairs_for_interval(1.0 - a.level);
        return match needed.filter(|&n| n > a.pairs) {
            Some(n) => format!(
                "too few pairs for an A/A: {} of {} needed (the harness is not checked)",
                thousands(a.pairs as u64),
                thousands(n as u64)
            ),
            None => "no A/A interval (the harness is not checked)".to_string(),
        };
    }
    if aa.harness_bias {
        "HARNESS BIAS: the A/A interval excludes 1; the A/B verdict is not trustworthy".into()
    } else {
        "ok, the A/A interval holds 1 (no harness bias)".into()
    }
}

/// The sections of an A/B result.
pub fn ab_sections(r: &AbResult, header: &[String]) -> Vec<Block> {
    let mut lines: Vec<String> = header.to_vec();
    if let Some(aa) = &r.aa {
        let interval = aa
            .analysis
            .interval()
            .map(|i| format!(" {}", interval(Some(i), "")))
            .unwrap_or_default();
        lines.push(format!(
            "A/A      ratio {}{interval}: {}",
            ratio(aa.analysis.ratio()),
            aa_verdict(aa)
        ));
    }
    lines.push(format!(
        "runs     {} measured, {} failed (recorded)",
        thousands(r.runs as u64),
        thousands(r.failures as u64)
    ));
    let mut out = vec![Block::List {
        title: "kernelab ab".into(),
        lines,
    }];
    for m in &r.analyses {
        out.push(Block::List {
            title: format!("Result: {}", m.metric),
            lines: analysis_lines(&m.metric, &m.analysis),
        });
    }
    out
}
