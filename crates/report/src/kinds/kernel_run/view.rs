//! The `kernel run` view: builds, the gates as a list, a timing table per round and the
//! verdict with its interval.

use crate::kinds::ab::view::analysis_lines;
use crate::table::{Align, Block, Table};
use kernelab_model::kernel_run::{KernelRun, Plan};

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "–".into())
}

/// The sections of a kernel run.
pub fn kernel_sections(r: &KernelRun) -> Vec<Block> {
    let mut builds = Table::new(
        format!("kernelab kernel run on {}", r.device),
        &[
            ("build", Align::Left),
            ("symbol", Align::Left),
            ("grid", Align::Left),
            ("block", Align::Left),
            ("dyn shared B", Align::Right),
            ("params", Align::Right),
            ("code object", Align::Left),
        ],
    );
    for b in &r.builds {
        builds.push(vec![
            b.label.clone(),
            b.symbol.clone(),
            format!("{}×{}×{}", b.grid[0], b.grid[1], b.grid[2]),
            format!("{}×{}×{}", b.block[0], b.block[1], b.block[2]),
            b.shared.to_string(),
            b.params.to_string(),
            b.code.clone(),
        ]);
    }
    let mut out = vec![Block::Table(builds)];
    out.extend(launched_sections(r));
    let passed = r.gates.iter().filter(|g| g.passed).count();
    out.push(Block::List {
        title: format!("Gates: {passed} of {} passed", r.gates.len()),
        lines: r
            .gates
            .iter()
            .map(|g| {
                format!(
                    "{} {}: {}",
                    if g.passed { "PASS" } else { "FAIL" },
                    g.name,
                    g.detail
                )
            })
            .collect(),
    });
    if !r.gates_passed() {
        out.push(Block::List {
            title: "Timing".into(),
            lines: vec!["not run: a gate failed".into()],
        });
        return out;
    }
    let mut t = Table::new(
        format!(
            "Timing: {} rounds, ABBA, µs per launch (batch of {} launches per event pair{})",
            r.rounds.len(),
            r.batch,
            if r.l2_flush {
                ", L2 flushed before each"
            } else {
                ""
            }
        ),
        &[
            ("round", Align::Right),
            ("order", Align::Left),
            ("baseline µs", Align::Right),
            ("candidate µs", Align::Right),
            ("ratio cand / base", Align::Right),
            ("status", Align::Left),
            ("SM MHz", Align::Right),
            ("°C", Align::Right),
            ("W", Align::Right),
        ],
    );
    for x in &r.rounds {
        let status = match x.change.better(kernelab_stats::Direction::LowerIsBetter) {
            Some(true) => "candidate faster",
            Some(false) => "candidate slower",
            None if x.change.ratio().is_some() => "equal",
            None => "unavailable",
        };
        t.push(vec![
            x.round.to_string(),
            format!("{:?}", x.order),
            format!("{:.3}", x.baseline_ns / 1e3),
            format!("{:.3}", x.candidate_ns / 1e3),
            crate::format::ratio(x.change.ratio()),
            status.into(),
            opt(x.telemetry.sm_mhz),
            opt(x.telemetry.temp_c),
            opt(x.telemetry.power_w.map(|w| format!("{w:.0}"))),
        ]);
    }
    out.push(Block::Table(t));
    if !r.above_roof.is_empty() {
        out.push(Block::List {
            title: "Above the roof: a timing or work-model error, not a speedup".into(),
            lines: r.above_roof.clone(),
        });
    }
    if let Some(f) = &r.noise_floor {
        let mut lines = vec![format!(
            "±{}: the largest change of {} identical-code runs of {} ({})",
            kernelab_stats::percent(f.largest_change, false),
            f.controls,
            f.key,
            f.ledger
        )];
        let within = r.analysis.as_ref().and_then(|a| a.change.change());
        if let Some(c) = within.filter(|c| c.abs() <= f.largest_change) {
            lines.push(format!(
                "this run's change {} is within it: identical code has moved this much here",
                kernelab_stats::percent(c, true)
            ));
        }
        out.push(Block::List {
            title: "Noise floor of this kernel on this GPU".into(),
            lines,
        });
    }
    if let Some(a) = &r.analysis {
        out.push(Block::List {
            title: if r.above_roof.is_empty() {
                "Verdict (candidate / baseline time)".into()
            } else {
                "Verdict (candidate / baseline time; not to be trusted: a build beats the roof)"
                    .into()
            },
            lines: analysis_lines("µs per launch", a),
        });
    }
    if let Some(w) = &r.work {
        let mut lines = achieved_lines(w);
        if let Some(c) = &r.roof_checked {
            lines.push(format!("checked against {c}"));
        }
        out.push(Block::List {
            title: "Achieved (the spec's [work] model at the median round)".into(),
            lines,
        });
    }
    out
}

/// Per build, the FLOP/s and bytes/s its median launch reaches (unavailable where the model
/// gives no such figure).
fn achieved_lines(w: &kernelab_model::kernel_run::Achieved) -> Vec<String> {
    use crate::format::{with_unit, Unit};
    let rate = |v: Option<f64>, unit: Unit| {
        v.map(|x| with_unit(x, 3, unit))
            .unwrap_or_else(|| crate::format::UNAVAILABLE.to_string())
    };
    let mut lines = vec![format!(
        "per launch: {} FLOP, {} bytes",
        w.flops
            .map(|f| crate::format::thousands(f as u64))
            .unwrap_or_else(|| crate::format::UNAVAILABLE.into()),
        w.bytes
            .map(|b| crate::format::thousands(b as u64))
            .unwrap_or_else(|| crate::format::UNAVAILABLE.into())
    )];
    for (name, f, b) in [
        ("baseline", w.baseline_flop_per_s, w.baseline_byte_per_s),
        ("candidate", w.candidate_flop_per_s, w.candidate_byte_per_s),
    ] {
        lines.push(format!(
            "{name}: {}, {}",
            rate(f, Unit::TeraFlopPerS),
            rate(b, Unit::GigaBytesPerS)
        ));
    }
    lines
}

/// The sections of a dry run: both builds as they would launch.
pub fn kernel_plan_sections(p: &Plan, title: &str) -> Vec<Block> {
    let mut t = Table::new(
        title,
        &[
            ("build", Align::Left),
            ("symbol", Align::Left),
            ("grid", Align::Left),
            ("block", Align::Left),
            ("dyn shared B", Align::Right),
            ("params", Align::Left),
        ],
    );
    for b in &p.builds {
        t.push(vec![
            b.label.clone(),
            b.symbol.clone(),
            format!("{:?}", b.grid),
            format!("{:?}", b.block),
            b.shared.to_string(),
            b.params.join(", "),
        ]);
    }
    vec![Block::Table(t)]
}

/// What the Python callables launched (captured Triton kernels): each side's kernels with
/// their GPU time per call and share of the call, the paired kernels' machine code, and what
/// was not captured. Empty when nothing was captured.
pub(crate) fn launched_sections(r: &KernelRun) -> Vec<Block> {
    use crate::format::{opt_duration_ns, share, UNAVAILABLE};
    let Some(l) = &r.launched else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // One table per side: each side's shares are of its own call.
    for (i, side) in ["baseline", "candidate"].into_iter().enumerate() {
        let kernels: Vec<_> = l.kernels.iter().filter(|k| k.side == side).collect();
        if kernels.is_empty() {
            continue;
        }
        let title = match l.call_ns[i] {
            Some(ns) => format!(
                "Kernels the {side} launched per call (captured); GPU time per call {}",
                crate::format::duration_ns(ns)
            ),
            None => format!(
                "Kernels the {side} launched per call (captured; no GPU time: host callables)"
            ),
        };
        let mut t = Table::new(
            title,
            &[
                ("kernel", Align::Left),
                ("launched by", Align::Left),
                ("launches", Align::Right),
                ("grid", Align::Left),
                ("block", Align::Left),
                ("GPU time", Align::Right),
                ("share", Align::Right),
            ],
        );
        for k in kernels {
            t.push(vec![
                k.name.clone(),
                k.function.clone(),
                crate::format::fixed(k.launches, 2),
                format!("{}×{}×{}", k.grid[0], k.grid[1], k.grid[2]),
                format!("{}×{}×{}", k.block[0], k.block[1], k.block[2]),
                opt_duration_ns(k.ns),
                k.share.map(share).unwrap_or_else(|| UNAVAILABLE.into()),
            ]);
        }
        out.push(Block::Table(t));
    }
    if !l.pairs.is_empty() {
        let arrow = |v: [Option<String>; 2]| {
            let [a, b] = v.map(|x| x.unwrap_or_else(|| UNAVAILABLE.into()));
            format!("{a} → {b}")
        };
        let lines = l
            .pairs
            .iter()
            .map(|p| {
                let names = if p.baseline == p.candidate {
                    p.baseline.clone()
                } else {
                    format!("{} → {}", p.baseline, p.candidate)
                };
                let mut line = format!(
                    "{names}: {}; registers {}; stack frame {} B",
                    p.machine_code,
                    arrow(p.registers.map(|x| x.map(|v| v.to_string()))),
                    arrow(p.frame_bytes.map(|x| x.map(|v| v.to_string())))
                );
                if let Some(s) = &p.spec {
                    line.push_str(&format!(
                        "; reproduce without Python: kernelab kernel run {s}"
                    ));
                }
                line
            })
            .collect();
        out.push(Block::List {
            title: "Machine code of the paired kernels".into(),
            lines,
        });
    }
    if !l.notes.is_empty() {
        out.push(Block::List {
            title: "Capture notes".into(),
            lines: l.notes.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::achieved_lines;
    use kernelab_model::kernel_run::Achieved;

    #[test]
    fn achieved_rates_are_drawn_by_the_one_rate_formatter() {
        // 1 GB per launch: 437.527 µs is 2,285.573 GB/s, 441.969 µs 2,262.602 GB/s (Python:
        // 1e9 / 437527e-9 / 1e9), with the separator every rate has.
        let w = Achieved::at(Some(2e12 * 437.527e-6), Some(1e9), 437_527.0, 441_969.0);
        let lines = achieved_lines(&w);
        assert_eq!(lines[1], "baseline: 2.000 TFLOP/s, 2,285.573 GB/s");
        assert!(
            lines[2].starts_with("candidate: 1.980 TFLOP/s, 2,262.602 GB/s"),
            "{lines:?}"
        );
        let none = Achieved::at(None, None, 1.0, 1.0);
        assert_eq!(
            achieved_lines(&none)[1],
            "baseline: unavailable, unavailable"
        );
    }
}
