//! `kernel run`: a launch spec's plan (`--dry-run`) and the `kernel_run` document of a timed
//! run, with its achieved rates checked against the device's roofs.

use crate::{Outcome, Recordable, Status, View};
use anyhow::Result;
use kernelab_launcher::plan::plan;
use kernelab_launcher::Spec;
use kernelab_model::kernel_run::KernelRun;
use kernelab_model::Document;
use kernelab_report::documents::KernelRunBody;
use kernelab_report::{kernel_plan_sections, kernel_sections};
use std::path::{Path, PathBuf};

/// `kernel run --dry-run`: both builds of the spec `path` resolved, no GPU opened.
pub fn dry_run(path: &Path, spec: &Spec) -> Result<Outcome> {
    let p = plan(spec)?;
    let title = format!("{}: both builds resolved (no GPU opened)", path.display());
    let view = View::shared(Document::of(p), move |doc, _| {
        kernel_plan_sections(&doc.body, &title)
    })
    .without_csv("--format csv is not offered for kernel run; use json");
    Ok(Outcome::new(view, Status::Pass))
}

/// Checks the achieved rates of `r` against the device's roofs (the ceilings file, else the
/// datasheet entry of the device): a build above them is flagged in `r.above_roof`.
pub fn check_roof(r: &mut KernelRun, spec: &Spec, ceilings: Option<&Path>) -> Result<()> {
    let Some(w) = &r.work else { return Ok(()) };
    let (c, source) = match ceilings {
        Some(p) => (
            crate::roofline::read_ceilings(p)?,
            format!("the ceilings in {}", p.display()),
        ),
        None => match kernelab_model::roofline::Ceilings::from_datasheet(&r.device) {
            Some(c) => (c, format!("the datasheet figures of {}", r.device)),
            None => return Ok(()),
        },
    };
    let roof = spec.work.as_ref().and_then(|w| w.roof);
    r.above_roof = kernelab_model::kernel_run::above_roof(w, &c, roof, &source);
    r.roof_checked = Some(source);
    Ok(())
}

/// What the two builds' machine code comparison found: the line stated beside the verdict, and
/// whether the kernels launched are identical in code and in launch configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeSameness {
    /// `identical machine code: any difference is noise`, or what differs.
    pub line: String,
    /// Identical code, target, resources and launch configuration: no difference is real.
    pub identical: bool,
}

/// The kernel `symbol` of the code object `path`, alone in its objects.
fn kernel_only(path: &Path, symbol: &str) -> Result<Vec<kernelab_code::CodeObject>> {
    let mut objects = kernelab_code::load_file(path, &kernelab_code::LoadOptions::default())?;
    for o in &mut objects {
        o.kernels.retain(|k| k.symbol == symbol);
    }
    Ok(objects)
}

/// Compares the machine code of the two builds of `spec` (resolved without a GPU) once build
/// ids, notes, debug sections and names are set aside: identical code with the same launch
/// configuration makes any timed difference noise. A build that cannot be compared says why.
pub fn code_sameness(spec: &Spec) -> CodeSameness {
    let not_compared = |why: String| CodeSameness {
        line: format!("machine code not compared: {why}"),
        identical: false,
    };
    let p = match plan(spec) {
        Ok(p) => p,
        Err(e) => return not_compared(e.to_string()),
    };
    let [b, c] = p.builds.as_slice() else {
        return not_compared("the spec does not resolve to two builds".into());
    };
    let (line, identical) = match kernel_pair(
        &spec.resolve(&spec.baseline.code),
        &b.symbol,
        &spec.resolve(&spec.candidate.code),
        &c.symbol,
    ) {
        Ok(p) => (p.line, p.identical),
        Err(e) => return not_compared(format!("{e:#}")),
    };
    let launch = |x: &kernelab_model::kernel_run::PlannedBuild| {
        (x.grid, x.block, x.shared, x.params.clone())
    };
    if identical && launch(b) != launch(c) {
        return CodeSameness {
            line: "identical machine code, other launch configuration (grid, block, shared \
                   memory or parameters): a difference may be real"
                .into(),
            identical: false,
        };
    }
    CodeSameness { identical, line }
}

/// The machine code of kernel `base_symbol` of the code object `base` against kernel
/// `cand_symbol` of `cand`, what does not execute set aside, with each one's registers and
/// stack frame: what `kernel run` and `kernelab.kernel.compare` state beside a verdict.
pub struct KernelPair {
    /// `identical machine code: any difference is noise`, or what differs.
    pub line: String,
    /// Identical code, target and resources.
    pub identical: bool,
    /// Registers per thread, `[baseline, candidate]`.
    pub registers: [Option<u32>; 2],
    /// Stack frame bytes per thread, `[baseline, candidate]`.
    pub frame_bytes: [Option<u64>; 2],
}

/// Compares kernel `base_symbol` of `base` with kernel `cand_symbol` of `cand` (see
/// [`KernelPair`]).
pub fn kernel_pair(
    base: &Path,
    base_symbol: &str,
    cand: &Path,
    cand_symbol: &str,
) -> Result<KernelPair> {
    let (base, cand) = (
        kernel_only(base, base_symbol)?,
        kernel_only(cand, cand_symbol)?,
    );
    let found = kernelab_code::same_code(&base, &cand);
    let resources = |objects: &[kernelab_code::CodeObject]| {
        objects
            .iter()
            .flat_map(|o| &o.kernels)
            .next()
            .map(|k| (k.resources.registers, k.resources.frame_bytes))
            .unwrap_or_default()
    };
    let ((rb, fb), (rc, fc)) = (resources(&base), resources(&cand));
    Ok(KernelPair {
        line: kernelab_code::sameness_line(&found),
        identical: kernelab_code::all_identical(&found),
        registers: [rb, rc],
        frame_bytes: [fb, fc],
    })
}

/// The notes stated beside the verdict of `r` on what `code` found: its line, and on
/// identical code a FASTER or SLOWER call flagged as a false positive of the timing setup.
pub fn code_notes(code: &CodeSameness, r: &KernelRun) -> Vec<String> {
    let mut out = vec![code.line.clone()];
    if let Some(a) = r.analysis.as_ref().filter(|a| a.verdict.is_call()) {
        if code.identical {
            out.push(format!(
                "{} on identical machine code is a false positive of the timing setup (order, \
                 clocks, warm-up, co-tenants), not a change of the kernel",
                a.verdict.name()
            ));
        }
    }
    out
}

/// The outcome of the timed run `r` of the spec `path` (samples in `samples`): checked against
/// the roofs of `ceilings` (else the datasheet), recorded with the spec and the files it names;
/// failing when a gate failed or a build ran above a roof. `code`, the builds' machine code
/// comparison, is stated beside the verdict (late notes).
pub fn outcome(
    mut r: KernelRun,
    path: &Path,
    spec: &Spec,
    samples: &Path,
    ceilings: Option<&Path>,
    code: Option<&CodeSameness>,
    conditions: Option<kernelab_model::fingerprint::Conditions>,
) -> Result<Outcome> {
    let mut late = code.map(|c| code_notes(c, &r)).unwrap_or_default();
    let refused = crate::ab::refused_conditions(conditions.as_ref());
    late.extend(refused.iter().map(|why| format!("error: {why}")));
    let pass = r.gates_passed();
    check_roof(&mut r, spec, ceilings)?;
    let beats_roof = !r.above_roof.is_empty();
    let doc = Document::of(KernelRunBody {
        pass,
        samples: samples.display().to_string(),
        run: r,
        conditions,
    });
    // The record hashes everything the result depends on: the spec and the files it names.
    let mut inputs: Vec<PathBuf> = vec![
        path.to_path_buf(),
        spec.resolve(&spec.baseline.code),
        spec.resolve(&spec.candidate.code),
    ];
    inputs.extend(spec.gates.oracle.as_ref().map(|o| spec.resolve(o)));
    let record = Recordable::of(&doc, &inputs, None)?;
    let view = View::shared(doc, |doc, _| kernel_sections(&doc.body.run)).without_csv(
        "--format csv is not offered for kernel run; use json (every sample is in the --samples JSONL)",
    );
    let mut out = Outcome::new(view, Status::of(pass && !beats_roof)).recording(record);
    if refused.is_some() {
        out.status = Status::Incomplete;
    }
    out.late_notes.extend(late);
    Ok(out)
}

/// A launch spec read for `kernel run`, with `rounds` (at least 2) in place of its own.
pub fn read_spec(path: &Path, rounds: Option<usize>) -> Result<Spec> {
    let mut spec = Spec::read(path)?;
    if let Some(r) = rounds {
        spec.timing.rounds = r.max(2);
    }
    Ok(spec)
}

/// The environment fingerprint now (the command: the spec `spec_name`), written to the
/// samples file as taken `after_round` (`None`: before the first), with where it was taken.
fn conditions_line(
    writer: &mut kernelab_runner::run::JsonlWriter,
    after_round: Option<usize>,
    spec_name: &str,
) -> Result<(kernelab_model::fingerprint::Fingerprint, String)> {
    use anyhow::Context;
    let f = kernelab_runner::provenance::fingerprint::read(Some(spec_name));
    let line: kernelab_runner::run::SampleLine<'_, ()> =
        kernelab_runner::run::SampleLine::Fingerprint {
            after_round,
            fingerprint: &f,
        };
    writer
        .write(&line)
        .with_context(|| format!("{}: cannot write", writer.path.display()))?;
    let at = after_round.map_or("before round 0".into(), |k| format!("after round {k}"));
    Ok((f, at))
}

/// `kernel run`: both builds of `spec` (read from `path`) gated and timed on its GPU, every
/// sample written to a run's samples file (`samples`, else one in the state folder); the
/// achieved rates checked against the roofs of `ceilings`. The caller installs the watchdog
/// that ends a GPU wait that never returns.
pub fn run(
    path: &Path,
    spec: &Spec,
    samples: Option<&Path>,
    ceilings: Option<&Path>,
    controls: Option<&Path>,
    hooks: &dyn crate::Hooks,
) -> Result<Outcome> {
    use anyhow::{anyhow, Context};
    use kernelab_runner::run::{New, OwnPlan, Plan, RunKind, RunState, SampleLine, Session};
    // A ledger that cannot be read is refused before any timing.
    if let Some(l) = controls {
        crate::controls::read(l, "")?;
    }
    let mut gpu = kernelab_launcher::open(spec)?;
    // Before timing: whether both builds carry the same machine code.
    let code = code_sameness(spec);
    hooks.say(&format!("kernelab kernel run: {}", code.line));
    let label = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let spec_bytes = kernelab_model::read_regular(path, 16 << 20)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let spec_name = path.display().to_string();
    let spec_sha256 = kernelab_model::sha256_hex(&spec_bytes);
    let session = Session::create(
        RunKind::KernelRun,
        kernelab_model::SCHEMA_VERSION,
        New::labelled(&label, samples),
        OwnPlan {
            spec_sha256: Some(&spec_sha256),
            plan: Plan::KernelRun {
                rounds: spec.timing.rounds,
                spec: &spec_name,
            },
        },
    )
    .map_err(|e| anyhow!(e))?;
    let samples_path = session.run.samples.clone();
    hooks.say(&format!(
        "kernelab kernel run: run {}, samples in {}",
        session.run.id,
        samples_path.display()
    ));
    let bar = hooks.counter(
        spec.timing.rounds as u64,
        "timing {bar:30} round {pos}/{len} eta {eta}",
        "rounds",
    );
    // The conditions before the first round and after the last, each written as it is taken:
    // not between rounds, where the tool's pause would let the GPU's clocks drop mid-timing.
    let mut taken = Vec::new();
    let body = |s: &mut Session<OwnPlan<'_>>| -> Result<_> {
        taken.push(conditions_line(&mut s.writer, None, &spec_name)?);
        let result = kernelab_launcher::run(
            gpu.as_mut(),
            spec,
            &mut |sample| {
                let line = SampleLine::Sample {
                    point: None,
                    sample,
                    spec: &spec_name,
                };
                s.writer
                    .write(&line)
                    .map_err(|source| kernelab_launcher::Error::Write {
                        path: samples_path.clone(),
                        source,
                    })
            },
            &mut |done, _| bar.set_position(done as u64),
        );
        bar.finish();
        let r = result.map_err(anyhow::Error::from)?;
        taken.push(conditions_line(
            &mut s.writer,
            r.rounds.len().checked_sub(1),
            &spec_name,
        )?);
        Ok(r)
    };
    let (_, result) = session.drive(body, |r| match r {
        Ok(_) => RunState::Complete,
        Err(_) => RunState::Failed,
    })?;
    let conditions =
        kernelab_model::fingerprint::Conditions::of(taken.iter().map(|(f, at)| (f, at.clone())));
    let mut result = result;
    if let Some(ledger) = controls {
        keep_control(
            &mut result,
            spec,
            &spec_name,
            &code,
            taken.first().map(|t| &t.0),
            ledger,
        )?;
    }
    outcome(
        result,
        path,
        spec,
        &samples_path,
        ceilings,
        Some(&code),
        conditions,
    )
}

/// The noise floor of `r`'s kernel on its GPU from the ledger `ledger` (the earlier
/// identical-code runs of its key), and, when `code` is identical and the gates passed, this
/// run appended to it as one more control.
fn keep_control(
    r: &mut KernelRun,
    spec: &Spec,
    spec_name: &str,
    code: &CodeSameness,
    fingerprint: Option<&kernelab_model::fingerprint::Fingerprint>,
    ledger: &Path,
) -> Result<()> {
    // The GPU by its UUID where the fingerprint has one (nvidia-smi's index = the ordinal).
    let gpu = usize::try_from(spec.device)
        .ok()
        .and_then(|i| fingerprint?.gpus.get(i)?.uuid.clone())
        .unwrap_or_else(|| r.device.clone());
    let symbol = r.builds.first().map_or("", |b| b.symbol.as_str());
    let key = crate::controls::key(symbol, &spec.sizes, &gpu);
    ledger_step(r, key, code.identical, spec_name, ledger)
}

/// The ledger step of a run under `key`: the noise floor from its earlier controls, then the
/// run itself appended as a control when `identical` (machine code) and its gates passed and
/// it was timed. `what` names what ran (a spec, the callables).
fn ledger_step(
    r: &mut KernelRun,
    key: String,
    identical: bool,
    what: &str,
    ledger: &Path,
) -> Result<()> {
    let earlier = crate::controls::read(ledger, &key)?;
    r.noise_floor = crate::controls::floor(&earlier, &key, ledger);
    let change = r.analysis.as_ref().and_then(|a| {
        let c = a.change.change()?;
        let i = a.change.change_interval().map(|i| (i.low, i.high));
        Some((c, i))
    });
    if let (true, true, Some((change, interval))) = (identical, r.gates_passed(), change) {
        let control = crate::controls::Control {
            key,
            change,
            interval,
            rounds: r.rounds.len(),
            at: kernelab_runner::provenance::rfc3339(std::time::SystemTime::now()),
            spec: what.to_string(),
        };
        crate::controls::append(ledger, &control)?;
    }
    Ok(())
}

/// The ledger step of a comparison of two callables (the Python module's
/// `kernel.compare(..., controls=FILE)`): keyed by the kernels the baseline launched (their
/// symbols and grids) on the GPU (its UUID where the fingerprint names one GPU, else the
/// device); a control when every launched kernel is paired with one of identical machine code.
/// Callables whose launches were not captured (host code, a launcher without a hook) give no
/// control and no floor: nothing says their code is the same.
pub fn callable_controls(
    doc: &mut Document<KernelRunBody>,
    source: &str,
    ledger: &Path,
) -> Result<()> {
    let Some(launched) = doc.body.run.launched.clone() else {
        return Ok(());
    };
    let base: Vec<&kernelab_model::kernel_run::LaunchedKernel> = launched
        .kernels
        .iter()
        .filter(|k| k.side == "baseline")
        .collect();
    if base.is_empty() {
        return Ok(());
    }
    let cands = launched.kernels.len() - base.len();
    let identical = launched.pairs.len() == base.len()
        && cands == base.len()
        && launched.pairs.iter().all(|p| p.identical);
    let mut symbols: Vec<&str> = base.iter().map(|k| k.name.as_str()).collect();
    symbols.sort_unstable();
    let sizes: std::collections::BTreeMap<String, i64> = base
        .iter()
        .map(|k| {
            let g = k.grid.iter().map(|&x| i64::from(x)).product::<i64>();
            (format!("grid:{}", k.name), g)
        })
        .collect();
    let fingerprint = doc.body.conditions.as_ref().map(|c| &c.fingerprint);
    let gpu = match fingerprint.map(|f| f.gpus.as_slice()) {
        Some([one]) => one.uuid.clone(),
        _ => None,
    }
    .unwrap_or_else(|| doc.body.run.device.clone());
    let key = crate::controls::key(&symbols.join("+"), &sizes, &gpu);
    ledger_step(&mut doc.body.run, key, identical, source, ledger)
}

/// What an A/B of two host-driven callables measured (the Python module's
/// `kernelab.kernel.compare`): the gates it ran and every timed sample, each in its round.
/// Rounds, their order and the verdict are made here, by `kernel run`'s own functions.
#[derive(Debug, serde::Deserialize)]
pub struct Measured {
    /// Where the callables ran (`cpu (perf_counter_ns)` or the GPU's name).
    pub device: String,
    /// The two sides, baseline then candidate: `code` names the callable.
    pub builds: Vec<kernelab_model::kernel_run::BuildInfo>,
    /// The gates, in order.
    pub gates: Vec<kernelab_model::kernel_run::Gate>,
    /// Calls per timed sample.
    pub batch: usize,
    /// Whether L2 was flushed before each timed sample.
    pub l2_flush: bool,
    /// Every timed sample (none when a gate failed).
    pub samples: Vec<kernelab_model::kernel_run::Sample>,
    /// Timed rounds.
    pub rounds: usize,
    /// Practical threshold δ of the SAME verdict.
    pub threshold: f64,
    /// The kernels the callables launched, when they were captured.
    #[serde(default)]
    pub launched: Option<kernelab_model::kernel_run::Launched>,
    /// The environment fingerprint before the first round and after the last, as `kernel
    /// run` takes them (none when nothing was timed): a field that changed refuses the verdict.
    #[serde(default)]
    pub fingerprints: Vec<kernelab_model::fingerprint::Fingerprint>,
}

/// The ABBA order of each of `rounds` rounds (`AB`: baseline first), as `kernel run` times
/// them.
pub fn abba_orders(rounds: usize) -> Vec<kernelab_stats::Order> {
    (0..rounds)
        .map(|k| kernelab_stats::abba_order(k, kernelab_stats::Order::AB))
        .collect()
}

/// A kernel run's samples file written as the samples are measured (the Python module's
/// `kernelab.kernel.compare`): the run's header when it is created, then one line per sample,
/// so that a run cut short keeps every sample it took.
pub struct SampleStream {
    session: kernelab_runner::run::Session<serde_json::Value>,
    source: String,
}

impl SampleStream {
    /// Creates the run (its folder and samples file: `samples`, else one in the state folder)
    /// under `label`, with a plan of `rounds` rounds of the callables `source` names.
    pub fn create(
        label: &str,
        source: &str,
        rounds: usize,
        samples: Option<&Path>,
    ) -> Result<Self> {
        use kernelab_runner::run::{New, OwnPlan, Plan, RunKind, Session};
        let plan = serde_json::to_value(OwnPlan {
            spec_sha256: None,
            plan: Plan::KernelRun {
                rounds,
                spec: source,
            },
        })?;
        let session = Session::create(
            RunKind::KernelRun,
            kernelab_model::SCHEMA_VERSION,
            New::labelled(label, samples),
            plan,
        )
        .map_err(|e| anyhow::anyhow!(e))?;
        Ok(SampleStream {
            session,
            source: source.to_string(),
        })
    }

    /// The samples file.
    pub fn path(&self) -> &Path {
        &self.session.run.samples
    }

    /// Appends one sample.
    pub fn write(&mut self, sample: &kernelab_model::kernel_run::Sample) -> Result<()> {
        let line = kernelab_runner::run::SampleLine::Sample {
            point: None,
            sample,
            spec: &self.source,
        };
        let path = self.session.run.samples.clone();
        self.session
            .writer
            .write(&line)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// Ends the run: complete, or failed (`complete` false: the measurement stopped on an
    /// error). Returns the samples file.
    pub fn finish(self, complete: bool) -> Result<PathBuf> {
        use kernelab_runner::run::RunState;
        let path = self.session.run.samples.clone();
        self.session
            .drive(
                |_| Ok::<(), anyhow::Error>(()),
                |_| {
                    if complete {
                        RunState::Complete
                    } else {
                        RunState::Failed
                    }
                },
            )
            .map(|_| path)
    }
}

/// The `kernel_run` document of `m`: its samples written to a run's samples file (`samples`,
/// else one in the state folder) under `label`, the rounds and the verdict computed as
/// `kernel run` computes them. `source` names the callables in the run's header.
pub fn measured(
    m: Measured,
    label: &str,
    source: &str,
    samples: Option<&Path>,
) -> Result<Document<KernelRunBody>> {
    if !(0.0..1.0).contains(&m.threshold) {
        anyhow::bail!("threshold {}: expected a fraction in [0, 1)", m.threshold);
    }
    let mut stream = SampleStream::create(label, source, m.rounds, samples)?;
    let written = m.samples.iter().try_for_each(|s| stream.write(s));
    let path = stream.finish(written.is_ok())?;
    written?;
    measured_from(m, path)
}

/// The `kernel_run` document of `m` whose samples are already in the samples file `path`
/// (written by a [`SampleStream`]): rounds and verdict computed as `kernel run` computes them.
pub fn measured_from(m: Measured, samples_path: PathBuf) -> Result<Document<KernelRunBody>> {
    use kernelab_launcher::run::{analysis_of, round_of};
    if !(0.0..1.0).contains(&m.threshold) {
        anyhow::bail!("threshold {}: expected a fraction in [0, 1)", m.threshold);
    }
    let timed = !m.samples.is_empty();
    let mut rounds = Vec::new();
    if timed {
        for (k, order) in abba_orders(m.rounds).into_iter().enumerate() {
            let of = |build: &str| -> Vec<f64> {
                m.samples
                    .iter()
                    .filter(|s| s.round == k && s.build == build)
                    .map(|s| s.ns_per_launch)
                    .collect()
            };
            let (a, b) = (of("baseline"), of("candidate"));
            if a.is_empty() || b.is_empty() {
                anyhow::bail!("round {k}: no sample of the baseline or of the candidate");
            }
            // The telemetry at the end of the round: its last sample's.
            let telemetry = m
                .samples
                .iter()
                .rev()
                .find(|s| s.round == k)
                .map(|s| s.telemetry)
                .unwrap_or_default();
            rounds.push(round_of(k, order, &a, &b, telemetry));
        }
    }
    let last = m.rounds.saturating_sub(1);
    let conditions = kernelab_model::fingerprint::Conditions::of(
        m.fingerprints.iter().enumerate().map(|(i, f)| {
            let at = match i {
                0 => "before round 0".to_string(),
                _ => format!("after round {last}"),
            };
            (f, at)
        }),
    );
    let run = KernelRun {
        device: m.device,
        builds: m.builds,
        gates: m.gates,
        batch: m.batch,
        l2_flush: m.l2_flush,
        analysis: timed.then(|| analysis_of(&rounds, m.threshold)),
        rounds,
        work: None,
        above_roof: Vec::new(),
        roof_checked: None,
        launched: m.launched,
        noise_floor: None,
    };
    Ok(Document::of(KernelRunBody {
        pass: run.gates_passed(),
        samples: samples_path.display().to_string(),
        run,
        conditions,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> Spec {
        Spec::read(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/kernel")
                .join(name),
        )
        .expect("a launch spec")
    }

    /// A timed run of 8 rounds, the candidate 10% faster, its verdict then set to `verdict`.
    fn timed(verdict: kernelab_stats::Verdict) -> KernelRun {
        use kernelab_launcher::run::{analysis_of, round_of};
        let rounds: Vec<_> = abba_orders(8)
            .into_iter()
            .enumerate()
            .map(|(k, order)| {
                let a = [100.0, 101.0, 99.0 + k as f64 * 0.1];
                let b = [90.0, 91.0, 89.0 + k as f64 * 0.1];
                round_of(k, order, &a, &b, Default::default())
            })
            .collect();
        let mut analysis = analysis_of(&rounds, 0.01);
        analysis.verdict = verdict;
        KernelRun {
            device: "test".into(),
            builds: Vec::new(),
            gates: Vec::new(),
            batch: 1,
            l2_flush: false,
            analysis: Some(analysis),
            rounds,
            work: None,
            above_roof: Vec::new(),
            roof_checked: None,
            launched: None,
            noise_floor: None,
        }
    }

    /// A comparison of two callables whose captured kernels are `identical` (or not).
    fn compared(identical: bool) -> Document<KernelRunBody> {
        use kernelab_model::kernel_run::{Launched, LaunchedKernel, LaunchedPair};
        let kernel = |side: &str| LaunchedKernel {
            side: side.into(),
            name: "add_kernel".into(),
            function: "vec:add_kernel".into(),
            launches: 1.0,
            grid: [4096, 1, 1],
            block: [128, 1, 1],
            shared: 0,
            ns: Some(10_000.0),
            share: Some(1.0),
            code_sha256: "00".into(),
            code: None,
        };
        let mut run = timed(kernelab_stats::Verdict::Same);
        run.launched = Some(Launched {
            kernels: vec![kernel("baseline"), kernel("candidate")],
            call_ns: [Some(10_000.0), Some(10_000.0)],
            pairs: vec![LaunchedPair {
                baseline: "add_kernel".into(),
                candidate: "add_kernel".into(),
                identical,
                machine_code: String::new(),
                registers: [Some(16), Some(16)],
                frame_bytes: [Some(0), Some(0)],
                spec: None,
            }],
            capture: None,
            notes: Vec::new(),
        });
        Document::of(KernelRunBody {
            pass: true,
            samples: "s.jsonl".into(),
            run,
            conditions: None,
        })
    }

    /// Issue 43, item 3, for Python comparisons: a run whose captured kernels all have
    /// identical machine code joins the ledger as a control of its key; from the fifth on, the
    /// floor is stated. A run whose code differs reads the floor and joins nothing; a run with
    /// nothing captured neither reads nor writes.
    #[test]
    fn a_callable_comparison_on_identical_code_joins_the_ledger_and_reads_its_floor() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ledger = dir.path().join("controls.jsonl");
        let mut nothing = compared(true);
        nothing.body.run.launched = None;
        callable_controls(&mut nothing, "python:a vs python:b", &ledger).expect("ok");
        assert!(!ledger.exists());
        for n in 0..crate::controls::MIN_CONTROLS {
            let mut doc = compared(true);
            callable_controls(&mut doc, "python:a vs python:b", &ledger).expect("ok");
            assert!(doc.body.run.noise_floor.is_none(), "run {n}");
        }
        let text = std::fs::read_to_string(&ledger).expect("ledger");
        assert_eq!(text.lines().count(), crate::controls::MIN_CONTROLS);
        assert!(
            text.contains("add_kernel [grid:add_kernel=4096] on test"),
            "{text}"
        );
        let mut differs = compared(false);
        callable_controls(&mut differs, "python:a vs python:c", &ledger).expect("ok");
        let floor = differs
            .body
            .run
            .noise_floor
            .expect("a floor from five controls");
        assert_eq!(floor.controls, crate::controls::MIN_CONTROLS);
        let expected = differs
            .body
            .run
            .analysis
            .as_ref()
            .and_then(|a| a.change.change())
            .expect("timed")
            .abs();
        assert!((floor.largest_change - expected).abs() < 1e-12, "{floor:?}");
        let after = std::fs::read_to_string(&ledger).expect("ledger");
        assert_eq!(after, text, "a run on other code is not a control");
    }

    #[test]
    fn one_cubin_on_both_sides_is_identical_code_and_a_call_on_it_is_flagged() {
        let code = code_sameness(&spec("recompute_w4s3_aa.toml"));
        assert!(code.identical, "{code:?}");
        assert!(
            code.line
                .starts_with("identical machine code: any difference is noise"),
            "{}",
            code.line
        );
        let notes = code_notes(&code, &timed(kernelab_stats::Verdict::Faster));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[1].starts_with("FASTER on identical machine code is a false positive"),
            "{notes:?}"
        );
        // SAME on identical code: the line alone.
        let notes = code_notes(&code, &timed(kernelab_stats::Verdict::Same));
        assert_eq!(notes, vec![code.line.clone()]);
    }

    #[test]
    fn other_kernels_or_other_builds_differ_and_their_calls_stand() {
        for name in ["copy_scalar_vs_vec4.toml", "recompute_w4s3_vs_w4s4.toml"] {
            let code = code_sameness(&spec(name));
            assert!(!code.identical, "{name}: {code:?}");
            assert!(
                code.line.starts_with("machine code differs: "),
                "{name}: {}",
                code.line
            );
            let notes = code_notes(&code, &timed(kernelab_stats::Verdict::Slower));
            assert_eq!(notes, vec![code.line.clone()], "{name}");
        }
    }
}
