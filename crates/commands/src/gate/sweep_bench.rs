//! The gate's sweep benchmark (`[sweep]`): the repository's sweep file run over the base's
//! build against the head's — each build's baseline files resolved in the base's work tree,
//! the rest in the head's — on local workers, as `kernelab sweep` runs it. Every point's gates
//! must hold; each timed point is judged against the gate's threshold, and a call on a build
//! whose machine code is identical on both sides is a false positive of the timing setup.

use super::config::SweepBench;
use super::{GateReport, Plan, Trees};
use crate::{Hooks, Outcome};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_model::sweep::{PointResult, PointVerdict, SweepMatrix};
use kernelab_report::kinds::gate::{Decision, MetricVerdict};
use kernelab_runner::sweep::{Mode, Sweep};
use kernelab_stats::{Direction, Verdict};
use std::path::Path;

/// What a sweep benchmark measured: the `sweep` outcome and its matrix, the timed points'
/// rounds, and per point whether its machine code is identical on both sides.
pub(super) struct Measured {
    outcome: Outcome,
    matrix: SweepMatrix,
    file: String,
    rounds: Option<usize>,
    identical: Vec<(String, bool)>,
    code: Option<String>,
}

/// `[sweep]`: the sweep file read from the head's work tree with its baseline files in the
/// base's, every point run by `exe` workers (`sweep run-point`, one per GPU named), the
/// matrix merged; the records hashed while the trees exist.
pub(super) fn run(
    w: &SweepBench,
    sides: &Trees<'_>,
    exe: Option<&Path>,
    hooks: &dyn Hooks,
) -> Result<Measured> {
    // The threshold judges the matrix afterwards ([`report`]).
    let Trees {
        base,
        head,
        controls,
        ..
    } = *sides;
    let exe = exe.ok_or_else(|| {
        anyhow!("[sweep] the points run as `kernelab sweep run-point`: run the gate from the kernelab program")
    })?;
    let path = head.join(&w.file);
    if !path.is_file() {
        bail!(
            "[sweep] file {}: no such file in the head's work tree (after its build)",
            w.file.display()
        );
    }
    let folder = w.file.parent().unwrap_or(Path::new(""));
    let baseline_dir = base.join(folder);
    let sweep = Sweep::read_sides(&path, None, Some(&baseline_dir))
        .with_context(|| format!("[sweep] file {} in the head", w.file.display()))?;
    let kernel = crate::sweep::kernel_points(&sweep)?;
    // Points without a build key run the spec's own builds: their sameness is the spec's.
    let spec_code = kernel
        .as_ref()
        .map(|k| crate::kernel::code_sameness(k.spec()));
    let builds = sweep.code_changes()?;
    let identical: Vec<(String, bool)> = sweep
        .points
        .iter()
        .map(|p| {
            let same = match &p.build {
                Some(b) => builds.iter().any(|c| c.key == b.key && !c.changed),
                None => spec_code.as_ref().is_some_and(|c| c.identical),
            };
            (p.id.clone(), same)
        })
        .collect();
    let code = code_line(&identical, &sweep);
    if let Some(c) = &code {
        hooks.say(&format!("kernelab gate: {c}"));
    }
    // The points' results live as long as the gate: the bundle keeps the matrix (and the
    // samples' figures), and a gate's sweep is never resumed.
    let results = tempfile::Builder::new()
        .prefix("kernelab-gate-sweep-")
        .tempdir()
        .context("[sweep] a folder for the points' results")?;
    let settings = crate::sweep::LocalSettings {
        sweep: path.clone(),
        dir: Some(results.path().to_path_buf()),
        gpus: w.gpus.clone(),
        jobs: w.jobs.unwrap_or(1),
        timeout: w.timeout.unwrap_or(600.0),
        controls: controls.map(Path::to_path_buf),
        baseline_dir: Some(baseline_dir),
    };
    let mut outcome = crate::sweep::local(&settings, exe, hooks)?;
    // `matrix.json` belongs to a results folder a user keeps; this one goes with the gate.
    outcome.files.clear();
    let lazy = std::mem::take(&mut outcome.records);
    for make in lazy {
        let record = make()?.hashed_now();
        outcome.records.push(Box::new(move || Ok(record)));
    }
    let doc: kernelab_model::Document<SweepMatrix> =
        serde_json::from_str(&(outcome.view.json)()?).context("reading back the sweep document")?;
    let rounds = match (&sweep.mode, &kernel) {
        (Mode::Kernel(m), Some(k)) if m.timing => Some(k.spec().timing.rounds),
        _ => None,
    };
    Ok(Measured {
        outcome,
        matrix: doc.body,
        file: w.file.display().to_string(),
        rounds,
        identical,
        code,
    })
}

impl Measured {
    /// What the matrix found, as `kernelab sweep` says it.
    pub(super) fn lines(&self) -> Vec<String> {
        self.matrix.lines.clone()
    }
}

/// `identical machine code in 3 of 4 configs` (none for a tensor sweep: no code is compared).
fn code_line(identical: &[(String, bool)], sweep: &Sweep) -> Option<String> {
    if !matches!(sweep.mode, Mode::Kernel(_)) {
        return None;
    }
    let same = identical.iter().filter(|(_, s)| *s).count();
    let all = identical.len();
    Some(if same == all {
        format!("identical machine code in all {all} configs: any difference is noise")
    } else {
        format!(
            "machine code differs in {} of {all} configs (identical in {same})",
            all - same
        )
    })
}

/// The points named, at most a few.
fn named(ids: &[&str]) -> String {
    const SHOWN: usize = 8;
    let mut s = ids
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        s.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    s
}

/// The gate's decision on a sweep: a point that could not run or did not run (2: the answer
/// is not known), a failed gate (1), a timing under changed conditions (2), a timed point
/// SLOWER beyond the threshold on changed code (1), one INCONCLUSIVE (3), else pass (0). A
/// call on identical machine code is named a false positive, and decides nothing.
pub(super) fn report(plan: &Plan, m: Measured) -> Result<(Outcome, GateReport)> {
    let x = &m.matrix;
    if x.errors > 0 || !x.pending.is_empty() {
        let first = x
            .points
            .iter()
            .find(|p| p.verdict == PointVerdict::Error)
            .map(|p| format!(": {} ({})", p.id, p.error.clone().unwrap_or_default()))
            .unwrap_or_default();
        bail!(
            "[sweep] {}: {} of {} points could not run and {} did not run{first}",
            m.file,
            x.errors,
            x.total,
            x.pending.len()
        );
    }
    let metric = plan.metric();
    let same = |p: &PointResult| m.identical.iter().any(|(id, s)| id == &p.id && *s);
    let timed: Vec<(&PointResult, Verdict)> = x
        .points
        .iter()
        .filter(|p| p.change.change().is_some())
        .map(|p| {
            let v = kernelab_stats::verdict(&p.change, plan.threshold, Direction::LowerIsBetter);
            (p, v)
        })
        .collect();
    let metrics: Vec<MetricVerdict> = timed
        .iter()
        .map(|(p, v)| MetricVerdict {
            metric: format!("{metric} at {}", p.id),
            // A config of identical machine code is shown, and decides nothing.
            gated: !same(p),
            verdict: *v,
            change: p.change.change(),
            interval: p.change.change_interval().map(|i| (i.low, i.high)),
            level: 1.0 - kernelab_stats::Design::default().alpha,
            pairs: m.rounds.unwrap_or_default(),
        })
        .collect();
    let ids = |f: &dyn Fn(&PointResult, Verdict) -> bool| -> Vec<&str> {
        timed
            .iter()
            .filter(|(p, v)| f(p, *v))
            .map(|(p, _)| p.id.as_str())
            .collect()
    };
    let failed: Vec<&str> = x
        .points
        .iter()
        .filter(|p| p.verdict == PointVerdict::Fail)
        .map(|p| p.id.as_str())
        .collect();
    let shifted: Vec<&str> = x
        .points
        .iter()
        .filter(|p| p.conditions.as_ref().is_some_and(|c| !c.changed.is_empty()))
        .map(|p| p.id.as_str())
        .collect();
    let slower = ids(&|p, v| v == Verdict::Slower && !same(p));
    let false_calls = ids(&|p, v| v.is_call() && same(p));
    let open = ids(&|p, v| v == Verdict::Inconclusive && !same(p));
    let mut reasons = Vec::new();
    let decision = if !failed.is_empty() {
        reasons.push(format!(
            "a correctness gate failed in {} of {} configs: {}",
            failed.len(),
            x.total,
            named(&failed)
        ));
        Decision::GatesFailed
    } else if !shifted.is_empty() {
        reasons.push(format!(
            "the conditions changed during {} configs ({}): their timings are not verdicts",
            shifted.len(),
            named(&shifted)
        ));
        Decision::Refused
    } else if !slower.is_empty() {
        reasons.push(format!(
            "SLOWER beyond the threshold in {} of {} timed configs: {}",
            slower.len(),
            timed.len(),
            named(&slower)
        ));
        Decision::Regression
    } else if !open.is_empty() {
        reasons.push(format!(
            "not decided in {} of {} timed configs: {}",
            open.len(),
            timed.len(),
            named(&open)
        ));
        Decision::Inconclusive
    } else {
        Decision::Pass
    };
    let undecided_same = ids(&|p, v| v == Verdict::Inconclusive && same(p));
    if !undecided_same.is_empty() {
        reasons.push(format!(
            "{} of {} timed configs on identical machine code were not decided ({}): no change \
             of their kernel is possible, so they decide nothing",
            undecided_same.len(),
            timed.len(),
            named(&undecided_same)
        ));
    }
    if !false_calls.is_empty() {
        reasons.push(format!(
            "{} of {} timed configs on identical machine code were called FASTER or SLOWER \
             ({}): false positives of the timing setup, not changes of the kernel",
            false_calls.len(),
            timed.len(),
            named(&false_calls)
        ));
    }
    if timed.is_empty() && decision == Decision::Pass {
        reasons.push("no config was timed: the gates decide".into());
    }
    let conditions = x
        .points
        .iter()
        .find_map(|p| p.conditions.as_ref())
        .map(|c| c.fingerprint.line());
    let report = GateReport {
        aa: if m.rounds.is_some() {
            "No A/A pre-flight: both sides alternate in one process at each config (ABBA rounds)"
        } else {
            "Not timed: the configs' correctness gates decide"
        }
        .into(),
        samples: None,
        conditions,
        benchmark: format!(
            "sweep {} of {} configs{}, the base's build against the head's",
            m.file,
            x.total,
            m.rounds
                .map(|r| format!(" ({r} ABBA rounds of both builds at each)"))
                .unwrap_or_default()
        ),
        code: m.code,
        ..plan.report(decision, metrics, reasons)
    };
    Ok((m.outcome, report))
}
