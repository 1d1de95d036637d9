//! The gate's kernel benchmarks: a launch spec (`[kernel]`, `kernel run` with the baseline
//! build from the base's work tree and the candidate from the head's) and a Python kernel
//! comparison (`[python]`, `kernel run --python` of each side's own file). Both end in a
//! `kernel_run` document whose gates and verdict decide, with the machine code compared first
//! where it is known: a FASTER or SLOWER call on identical code is no change.

use super::config::{KernelBench, PythonBench};
use super::{GateReport, Plan, Trees};
use crate::{Hooks, Outcome};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_report::documents::KernelRunBody;
use kernelab_report::kinds::gate::{Decision, MetricVerdict};
use kernelab_stats::Verdict;
use std::path::{Path, PathBuf};

/// The most bytes of the Python comparison's JSON document kept.
const MAX_DOCUMENT: usize = 64 << 20;
/// The last bytes of its standard error kept, for the reason it failed.
const STDERR_TAIL: usize = 16 << 10;

/// What a kernel benchmark measured: the `kernel_run` outcome and document, what was measured,
/// and the machine code comparison (its line, and whether the code is identical).
pub(super) struct Measured {
    outcome: Outcome,
    body: KernelRunBody,
    benchmark: String,
    code: Option<(String, bool)>,
}

impl Measured {
    /// What was measured, its records made now: their inputs are hashed while the work trees
    /// that hold them exist (the gate removes the trees before it writes the bundle).
    fn new(
        mut outcome: Outcome,
        body: KernelRunBody,
        benchmark: String,
        code: Option<(String, bool)>,
    ) -> Result<Measured> {
        let lazy = std::mem::take(&mut outcome.records);
        for make in lazy {
            let record = make()?.hashed_now();
            outcome.records.push(Box::new(move || Ok(record)));
        }
        Ok(Measured {
            outcome,
            body,
            benchmark,
            code,
        })
    }
}

/// `[kernel]`: the spec read from the head's work tree, its baseline build's files resolved in
/// the base's, both builds resolved and their machine code compared before the GPU is opened;
/// then `kernel run` at the gate's threshold.
pub(super) fn spec(k: &KernelBench, sides: &Trees<'_>, hooks: &dyn Hooks) -> Result<Measured> {
    let Trees {
        base,
        head,
        threshold,
        controls,
    } = *sides;
    let path = head.join(&k.spec);
    let mut spec = crate::kernel::read_spec(&path, k.rounds)
        .with_context(|| format!("[kernel] spec {} in the head", k.spec.display()))?;
    let folder = k.spec.parent().unwrap_or(Path::new(""));
    spec.baseline_in(&base.join(folder));
    spec.timing.threshold = threshold;
    kernelab_launcher::plan::plan(&spec)
        .with_context(|| format!("[kernel] spec {}: resolving both builds", k.spec.display()))?;
    let code = crate::kernel::code_sameness(&spec);
    hooks.say(&format!("kernelab gate: {}", code.line));
    let outcome = crate::kernel::run(&path, &spec, None, None, controls, hooks)?;
    let body: KernelRunBody = serde_json::from_str(&(outcome.view.json)()?)
        .context("reading back the kernel run document")?;
    Measured::new(
        outcome,
        body,
        format!(
            "kernel run of the launch spec {} ({} ABBA rounds of both builds in one process)",
            k.spec.display(),
            spec.timing.rounds
        ),
        Some((code.line, code.identical)),
    )
}

/// The interpreter of a `[python]` benchmark: its own, else `KERNELAB_PYTHON`, else `python3`.
fn interpreter(p: &PythonBench) -> String {
    p.interpreter
        .clone()
        .or_else(|| std::env::var("KERNELAB_PYTHON").ok())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// `[python]`: `kernel run --python BASE/FILE:FUNCTION HEAD/FILE:FUNCTION --inputs
/// HEAD/FILE:INPUTS` run by the Python module in the head's work tree; its JSON document read
/// back (exit 0 or 1), its error said (exit 2 or anything else).
pub(super) fn python(p: &PythonBench, sides: &Trees<'_>, hooks: &dyn Hooks) -> Result<Measured> {
    let Trees {
        base,
        head,
        threshold,
        controls,
    } = *sides;
    use kernelab_runner::process::{Keep, PipeReader};
    use std::process::{Command, Stdio};
    let file = |tree: &Path, side: &str| -> Result<PathBuf> {
        let f = tree.join(&p.module);
        if !f.is_file() {
            bail!(
                "[python] module {}: no such file in the {side}'s work tree (after its build)",
                p.module.display()
            );
        }
        Ok(f)
    };
    let (b, h) = (file(base, "base")?, file(head, "head")?);
    let refer = |f: &Path, name: &str| format!("{}:{name}", f.display());
    let python = interpreter(p);
    // The ledger as this process names it: the comparison runs in the head's work tree.
    let controls = controls
        .map(std::path::absolute)
        .transpose()
        .context("--controls: the ledger's path")?;
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "kernelab", "kernel", "run", "--python"])
        .arg(refer(&b, &p.function))
        .arg(refer(&h, &p.function))
        .arg("--inputs")
        .arg(refer(&h, &p.inputs))
        .args(["--threshold", &threshold.to_string(), "--format", "json"])
        .args(&p.options)
        .args(
            controls
                .iter()
                .flat_map(|l| [std::ffi::OsStr::new("--controls"), l.as_os_str()]),
        )
        .current_dir(head)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    hooks.say(&format!(
        "kernelab gate: {python} -m kernelab kernel run --python …/{0}:{1} …/{0}:{1}",
        p.module.display(),
        p.function
    ));
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow!("[python] cannot start {python}: {e} (set `interpreter`)"))?;
    let out = child
        .stdout
        .take()
        .map(|o| PipeReader::spawn(o, Keep::Head(MAX_DOCUMENT)));
    let err = child
        .stderr
        .take()
        .map(|e| PipeReader::spawn(e, Keep::Tail(STDERR_TAIL)));
    let status = child
        .wait()
        .context("[python] waiting for the comparison")?;
    let (stdout, _) = out.map(PipeReader::finish).unwrap_or_default();
    let (stderr, _) = err.map(PipeReader::finish).unwrap_or_default();
    let said = String::from_utf8_lossy(&stderr).trim().to_string();
    if !matches!(status.code(), Some(0 | 1)) {
        bail!(
            "[python] the comparison ended with {status}{}",
            if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            }
        );
    }
    if stdout.len() >= MAX_DOCUMENT {
        bail!("[python] the comparison's document is over {MAX_DOCUMENT} bytes");
    }
    let doc: kernelab_model::Document<KernelRunBody> = serde_json::from_slice(&stdout)
        .map_err(|e| anyhow!("[python] the comparison's JSON document: {e}"))?;
    let record = crate::Recordable::of(&doc, &[b, h], None)?;
    let view = crate::View::shared(doc.clone(), |doc, _| {
        kernelab_report::kernel_sections(&doc.body.run)
    });
    let outcome = Outcome::new(view, crate::Status::of(doc.body.pass)).recording(record);
    // The pairs of kernels the capture compared: identical only when every pair is.
    let code = doc.body.run.launched.as_ref().filter(|l| !l.pairs.is_empty()).map(|l| {
        let same = l.pairs.iter().filter(|q| q.identical).count();
        let all = same == l.pairs.len();
        let line = if all {
            format!("identical machine code in all {same} launched kernel pairs: any difference is noise")
        } else {
            format!("machine code differs in {} of {} launched kernel pairs", l.pairs.len() - same, l.pairs.len())
        };
        (line, all)
    });
    Measured::new(
        outcome,
        doc.body,
        format!(
            "kernelab.kernel.compare of {}:{}, each side's own file",
            p.module.display(),
            p.function
        ),
        code,
    )
}

/// The gate's decision on a kernel benchmark: a failed correctness gate (1), changed
/// conditions (2), a build above the device's roof (2), SLOWER beyond the threshold (1),
/// INCONCLUSIVE (3), else pass (0). On identical machine code the timing decides nothing: a
/// call is a false positive of the timing setup, and an undecided one passes too.
pub(super) fn report(plan: &Plan, m: Measured) -> Result<(Outcome, GateReport)> {
    let run = &m.body.run;
    let identical = m.code.as_ref().is_some_and(|(_, same)| *same);
    let metric = plan.metric();
    let metrics: Vec<MetricVerdict> = run
        .analysis
        .iter()
        // On identical machine code the time is shown, and decides nothing.
        .map(|a| MetricVerdict::of(&metric, a, !identical))
        .collect();
    let mut reasons = Vec::new();
    let failed: Vec<&str> = run
        .gates
        .iter()
        .filter(|g| !g.passed)
        .map(|g| g.name.as_str())
        .collect();
    let verdict = run.analysis.as_ref().map(|a| a.verdict);
    let decision = if let Some(why) = crate::ab::refused_conditions(m.body.conditions.as_ref()) {
        reasons.push(why);
        Decision::Refused
    } else if !m.body.pass {
        reasons.push(format!("failed: {}", failed.join(", ")));
        Decision::GatesFailed
    } else if !run.above_roof.is_empty() {
        reasons.push(format!(
            "a build runs above the device's roof (a timing or work-model error): {}",
            run.above_roof.join("; ")
        ));
        Decision::Unreliable
    } else {
        match verdict {
            Some(v @ (Verdict::Slower | Verdict::Faster)) if identical => {
                reasons.push(format!(
                    "{} on identical machine code is a false positive of the timing setup \
                     (order, clocks, warm-up, co-tenants), not a change of the kernel",
                    v.name()
                ));
                Decision::Pass
            }
            Some(Verdict::Inconclusive) if identical => {
                reasons.push(format!(
                    "not decided after {} rounds, on identical machine code: no change of the \
                     kernel is possible, so the timing decides nothing",
                    run.rounds.len()
                ));
                Decision::Pass
            }
            Some(Verdict::Slower) => Decision::Regression,
            Some(Verdict::Inconclusive) => {
                reasons.push(format!("not decided after {} rounds", run.rounds.len()));
                Decision::Inconclusive
            }
            Some(_) => Decision::Pass,
            None => {
                reasons.push("no timing was analysed".into());
                Decision::Inconclusive
            }
        }
    };
    let report = GateReport {
        aa: "No A/A pre-flight: both sides alternate in one process (ABBA rounds)".into(),
        samples: Some(m.body.samples.clone()),
        conditions: m.body.conditions.as_ref().map(|c| c.fingerprint.line()),
        benchmark: m.benchmark,
        code: m.code.map(|(line, _)| line),
        ..plan.report(decision, metrics, reasons)
    };
    Ok((m.outcome, report))
}
