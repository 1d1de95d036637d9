//! `ab analyze` and the end of `ab`: paired samples analysed into the `ab` document.

use crate::Hooks;
use crate::Outcome;
use anyhow::{anyhow, Result};
use kernelab_model::ab::{AbResult, MetricAnalysis};
use kernelab_model::Document;
use kernelab_report::documents::AbBody;
use kernelab_runner::metric::{MetricSpec, Source};
use kernelab_runner::preflight::{require, Tool};
use kernelab_runner::record::{self, AbPlan, Record};
use kernelab_runner::run::{New, RunKind, RunState, Session};
use kernelab_runner::{pairs_from, run_ab, AbSettings, ProcessExecutor};
use kernelab_stats::{Design, DesignSettings, Direction, Pair};
use regex::Regex;
use std::path::{Path, PathBuf};

/// `ab` (a run) as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct RunSettings {
    /// The baseline's command line (shell words).
    pub baseline: Option<String>,
    /// The candidate's command line.
    pub candidate: Option<String>,
    /// Run both through `sh -c`.
    pub shell: bool,
    /// Warm-up runs of each side, not analysed.
    pub warmup: usize,
    /// Seconds one run may take.
    pub timeout: Option<f64>,
    /// Metrics as `NAME=REGEX` on the output.
    pub metric_regex: Vec<String>,
    /// Metrics as keys of a JSON line of the output.
    pub metric_json: Vec<String>,
    /// A/A pairs run first.
    pub aa_pairs: usize,
    /// No A/A pre-flight.
    pub no_aa: bool,
    /// A verdict stands even when the A/A shows harness bias.
    pub accept_bias: bool,
    /// Failed runs tolerated.
    pub max_failures: usize,
    /// Where the samples go.
    pub samples: Option<PathBuf>,
    /// A run (folder, samples file or id) to continue.
    pub resume: Option<PathBuf>,
    /// The stopping design.
    pub design: DesignSettings,
    /// Metrics for which higher is better.
    pub higher_is_better: Vec<String>,
    /// Wall time after which no further pair starts (`kernelab gate`'s `budget`).
    pub budget: Option<std::time::Duration>,
    /// The benchmark command both sides run (`kernelab gate`'s), named in each pair's
    /// environment fingerprint.
    pub command: Option<String>,
}

/// `value` of `option` if it is at most [`kernelab_stats::MAX_PAIRS`].
fn bounded(option: &str, value: usize) -> Result<usize> {
    kernelab_stats::settings::bounded(option, value).map_err(|e| anyhow!(e))
}

impl RunSettings {
    /// Refuses run settings that are out of range before anything runs or is written.
    pub fn check(&self) -> Result<()> {
        bounded("--warmup", self.warmup)?;
        bounded("--aa-pairs", self.aa_pairs)?;
        bounded("--max-failures", self.max_failures)?;
        self.design(Direction::LowerIsBetter).map(|_| ())
    }

    fn design(&self, direction: Direction) -> Result<Design> {
        self.design.design(direction).map_err(|e| anyhow!(e))
    }

    /// The direction of the metric `name`.
    pub fn direction(&self, name: &str) -> Direction {
        direction_of(&self.higher_is_better, name)
    }
}

/// The direction of the metric `name`: higher is better when `higher` names it.
pub fn direction_of(higher: &[String], name: &str) -> Direction {
    if higher.iter().any(|n| n == name) {
        Direction::HigherIsBetter
    } else {
        Direction::LowerIsBetter
    }
}

/// The `ab` document of paired samples analysed under `design` (`ab analyze`): `main` the A/B
/// pairs of `metric`, `aa` the A/A pairs, `failures` and `runs` as the samples recorded.
pub fn ab_analysis(
    samples: Option<&Path>,
    metric: String,
    main: &[Pair],
    aa: &[Pair],
    counts: (usize, usize),
    design: &kernelab_stats::Design,
) -> Document<AbBody> {
    let result = AbResult {
        aa: (!aa.is_empty()).then(|| kernelab_stats::aa_check(aa, design)),
        analyses: vec![MetricAnalysis {
            metric,
            analysis: kernelab_stats::analyze(main, design),
        }],
        failures: counts.0,
        runs: counts.1,
    };
    ab_doc(samples, result, main, aa)
}

/// The `ab` document of `result`, with the log ratios of the primary metric's pairs it used
/// and of the A/A pairs, for plots.
pub fn ab_doc(
    samples: Option<&Path>,
    result: AbResult,
    main: &[Pair],
    aa: &[Pair],
) -> Document<AbBody> {
    let used = result
        .analyses
        .first()
        .map_or(main.len(), |m| m.analysis.pairs.min(main.len()));
    Document::of(AbBody {
        samples: samples.map(|p| p.display().to_string()),
        log_ratios: kernelab_stats::log_ratios(&main[..used]),
        aa_log_ratios: kernelab_stats::log_ratios(aa),
        result,
        conditions: None,
    })
}

/// The outcome of an `ab` document: recorded with its samples file as input, shown under the
/// lines of `header` (what ran, how), with no CSV (the samples file is the raw data).
pub fn outcome(doc: Document<AbBody>, header: Vec<String>) -> anyhow::Result<crate::Outcome> {
    let inputs: Vec<std::path::PathBuf> = doc
        .body
        .samples
        .iter()
        .map(std::path::PathBuf::from)
        .collect();
    let record = crate::Recordable::of(&doc, &inputs, None)?;
    let view = crate::View::shared(doc, move |doc, _| {
        kernelab_report::ab_sections(&doc.body.result, &header)
    })
    .without_csv("--format csv is not offered for ab; the samples file is the raw data");
    Ok(crate::Outcome::new(view, crate::Status::Pass).recording(record))
}

/// A baseline whose runs of the primary metric form two separated groups (a GPU at one of two
/// clocks): a single median of it misleads, and the verdict rests on the paired ratios under
/// the planned looks.
#[derive(Clone, Debug)]
pub struct BimodalBase {
    /// The primary metric.
    pub metric: String,
    /// The two groups of the baseline's runs (the pairs' baselines and both slots of the A/A
    /// pairs).
    pub groups: kernelab_stats::modes::TwoGroups,
    /// The change of the pairs whose baseline ran in the lower and in the upper group, with
    /// their counts.
    pub by_group: [(Option<f64>, usize); 2],
    /// The practical threshold.
    pub threshold: f64,
    /// The metric's direction.
    pub direction: Direction,
}

/// The fewest pairs in each group for [`BimodalBase::unstable`] to judge.
pub const MIN_PAIRS_PER_GROUP: usize = 3;

impl BimodalBase {
    /// The groups of the baseline's runs of `doc`'s primary metric (read from its samples
    /// file), when they form two separated by more than `threshold` of their median.
    pub fn of(doc: &AbBody, threshold: f64) -> Option<BimodalBase> {
        let analysis = doc.result.analyses.first()?;
        let metric = &analysis.metric;
        let recs = record::read(Path::new(doc.samples.as_deref()?)).ok()?;
        let main = pairs_from(&recs, false, metric);
        let aa = pairs_from(&recs, true, metric);
        let base: Vec<f64> = main
            .iter()
            .map(|p| p.a)
            .chain(aa.iter().flat_map(|p| [p.a, p.b]))
            .collect();
        let groups = kernelab_stats::modes::two_groups(&base, threshold)?;
        Some(BimodalBase {
            metric: metric.clone(),
            by_group: kernelab_stats::modes::change_by_group(&main, &groups),
            groups,
            threshold,
            direction: analysis.analysis.direction,
        })
    }

    /// The line naming the groups: a single median is not enough.
    pub fn line(&self) -> String {
        let g = &self.groups;
        format!(
            "the base's {} runs form two separated groups ({} around {}, {} around {}): a \
             single median of the base misleads; the verdict rests on the paired ratios under \
             the planned looks",
            self.metric,
            g.low.count,
            kernelab_stats::fixed(g.low.median, 4),
            g.high.count,
            kernelab_stats::fixed(g.high.median, 4)
        )
    }

    /// Why the decision is unstable, when it is: the pairs whose base ran in one group change
    /// beyond the threshold (in the metric's worse direction) and those in the other do not,
    /// each group holding at least [`MIN_PAIRS_PER_GROUP`] pairs. The decision then depends on
    /// which group the runs fall in.
    pub fn unstable(&self) -> Option<String> {
        let [(Some(low), nl), (Some(high), nh)] = self.by_group else {
            return None;
        };
        if nl < MIN_PAIRS_PER_GROUP || nh < MIN_PAIRS_PER_GROUP {
            return None;
        }
        let worse = |c: f64| match self.direction {
            Direction::LowerIsBetter => c > self.threshold,
            Direction::HigherIsBetter => c < -self.threshold,
        };
        (worse(low) != worse(high)).then(|| {
            format!(
                "the decision is unstable across the base's two groups: the {nl} pairs whose \
                 base ran in the lower group change by {:+.1}%, the {nh} in the upper group by \
                 {:+.1}%, on either side of the ±{:.1}% threshold; which group the runs fall in \
                 decides, so it is left inconclusive",
                low * 100.0,
                high * 100.0,
                self.threshold * 100.0
            )
        })
    }
}

/// Why a verdict is refused when its pairs ran under other conditions: every field of the
/// environment fingerprint that changed during the run, with both values and where.
pub fn refused_conditions(c: Option<&kernelab_model::fingerprint::Conditions>) -> Option<String> {
    let c = c.filter(|c| !c.changed.is_empty())?;
    let what: Vec<String> = c.changed.iter().map(|x| x.describe()).collect();
    Some(format!(
        "the conditions changed during the run ({}): the sides were not measured under the \
         same conditions; the verdict above is refused",
        what.join("; ")
    ))
}

/// `ab analyze FILE`: the pairs of `file` (kernelab's samples JSONL, another harness's CSV or
/// JSON) for `metric` (else the file's primary metric), analysed with `design` (the design the
/// file records when the settings plan none) in the direction `direction` gives the metric.
pub fn analyze_file(
    file: &Path,
    metric: Option<&str>,
    design: &DesignSettings,
    direction: impl FnOnce(&str) -> Direction,
) -> Result<Document<AbBody>> {
    let p = kernelab_runner::pairs::read_pairs(file, metric)?;
    if p.main.is_empty() {
        anyhow::bail!("{}: no complete pairs to analyse", file.display());
    }
    let d = design
        .analysis_design(direction(&p.metric), p.design)
        .map_err(crate::setting)?;
    let mut doc = ab_analysis(
        Some(file),
        p.metric,
        &p.main,
        &p.aa,
        (p.failures, p.runs),
        &d,
    );
    // kernelab's own samples file holds the fingerprint taken before each pair: the
    // conditions are read back, as `ab` itself concluded (another harness's file has none).
    if let Ok(recs) = record::read(file) {
        doc.body.conditions = record::conditions(&recs);
    }
    Ok(doc)
}

/// The outcome of `ab analyze`'s document: refused (status incomplete, the error said after
/// the output) when the conditions its samples file recorded changed between pairs.
pub fn analysis_outcome(doc: Document<AbBody>, header: Vec<String>) -> Result<Outcome> {
    let changed = refused_conditions(doc.body.conditions.as_ref());
    let mut outcome = outcome(doc, header)?;
    if let Some(why) = changed {
        outcome.status = crate::Status::Incomplete;
        outcome.late_notes.push(format!("error: {why}"));
    }
    Ok(outcome)
}

/// `ab`: the baseline and candidate commands run in ABBA pairs of fresh processes (after
/// warm-up and an A/A pre-flight), every run written to the samples file, analysed as the
/// design plans. A resumed run continues its samples file.
pub fn run(args: &RunSettings, hooks: &dyn Hooks) -> Result<Outcome> {
    args.check()?;
    let session = match &args.resume {
        Some(p) => Some(
            Session::<AbPlan>::resume(RunKind::Ab, kernelab_model::SCHEMA_VERSION, p, None)
                .map_err(|e| anyhow!(e))?,
        ),
        None => None,
    };
    let resumed: Vec<Record> = match &session {
        Some(s) => record::read(&s.run.samples).map_err(|e| anyhow!(e))?,
        None => Vec::new(),
    };
    let split = |s: &Option<String>, what: &str| -> Result<Vec<String>> {
        let s = s
            .as_deref()
            .ok_or_else(|| anyhow!("--{what} is required (or --resume FILE)"))?;
        shlex::split(s)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| anyhow!("--{what} {s:?}: unbalanced quotes or empty"))
    };
    let (baseline, candidate) = match &session {
        Some(s) => (
            s.header.plan.baseline.clone(),
            s.header.plan.candidate.clone(),
        ),
        None => (
            split(&args.baseline, "baseline")?,
            split(&args.candidate, "candidate")?,
        ),
    };
    let mut metrics = Vec::new();
    for m in &args.metric_regex {
        let (name, re) = m
            .split_once('=')
            .ok_or_else(|| anyhow!("--metric-regex {m:?}: expected NAME=REGEX"))?;
        let re = Regex::new(re).map_err(|e| anyhow!("--metric-regex {name}: {e}"))?;
        metrics.push(MetricSpec {
            name: name.to_string(),
            source: Source::Regex(re),
            direction: args.direction(name),
        });
    }
    for k in &args.metric_json {
        metrics.push(MetricSpec {
            name: k.clone(),
            source: Source::JsonKey(k.clone()),
            direction: args.direction(k),
        });
    }
    if metrics.is_empty() {
        metrics.push(MetricSpec {
            name: "wall_s".into(),
            source: Source::Wall,
            direction: Direction::LowerIsBetter,
        });
    }
    let primary_dir = metrics[0].direction;
    // Every program is found before anything runs or is written.
    let programs: Vec<Tool> = if args.shell {
        vec![Tool::new(
            "sh",
            "a POSIX shell (--shell runs the commands through sh -c)",
            None,
        )]
    } else {
        [(&baseline, "--baseline"), (&candidate, "--candidate")]
            .iter()
            .filter_map(|(argv, opt)| {
                argv.first().map(|p| {
                    Tool::new(
                        p,
                        &format!("it, or give its path in {opt} (or use --shell)"),
                        None,
                    )
                })
            })
            .collect()
    };
    require(&programs)?;
    let design = args.design(primary_dir)?;
    let session = match session {
        Some(s) => s,
        None => {
            let label = format!("{} vs {}", baseline.join(" "), candidate.join(" "));
            let new = New::labelled(&label, args.samples.as_deref());
            // A coin flip for the first pair's order, recorded in the header.
            let plan = AbPlan {
                baseline: baseline.clone(),
                candidate: candidate.clone(),
                metrics: metrics.iter().map(|m| m.name.clone()).collect(),
                start: kernelab_runner::run::coin_flip(),
                design: Some(design),
            };
            Session::create(RunKind::Ab, kernelab_model::SCHEMA_VERSION, new, plan)
                .map_err(|e| anyhow!(e))?
        }
    };
    let start = session.header.plan.start;
    let path = session.run.samples.clone();
    let id = session.run.id.clone();
    hooks.say(&format!(
        "kernelab ab: run {id}, samples in {}",
        path.display()
    ));
    let settings = AbSettings {
        design,
        metrics,
        warmup: if args.resume.is_some() {
            0
        } else {
            args.warmup
        },
        aa_pairs: if args.no_aa { 0 } else { args.aa_pairs },
        max_failures: args.max_failures,
        start,
        budget: args.budget,
    };
    let mut exec = ProcessExecutor {
        baseline: baseline.clone(),
        candidate: candidate.clone(),
        shell: args.shell,
        timeout: args.timeout.map(kernelab_model::duration_clamped),
        fingerprint: true,
        command: args.command.clone(),
    };
    let mut progress = |s: &kernelab_runner::Step<'_>| hooks.step(s);
    let body = |s: &mut Session<AbPlan>| {
        run_ab(&mut exec, &settings, &mut s.writer, &resumed, &mut progress).map_err(|e| {
            anyhow!(e).context(format!(
                "samples so far are in {} (--resume {id} continues)",
                path.display()
            ))
        })
    };
    // A run that broke off may be resumed: `kernelab runs` shows it stopped.
    let (_, result) = session.drive(body, |r| match r {
        Ok(_) => RunState::Complete,
        Err(_) => RunState::Stopped,
    })?;
    let head = vec![
        format!("baseline  {}", baseline.join(" ")),
        format!("candidate {}", candidate.join(" ")),
        format!(
            "design   ABBA pairs of fresh processes (first pair {:?}), samples in {}",
            start,
            path.display()
        ),
    ];
    let primary = settings
        .metrics
        .first()
        .map(|m| m.name.clone())
        .unwrap_or_default();
    concluded(
        &path,
        result,
        &primary,
        head,
        design.threshold,
        args.accept_bias,
    )
}

/// The outcome of a finished `ab` run whose samples are in `path`: the document of `result`
/// with the conditions of its pairs, refused when they changed or (unless `accept_bias`) when
/// the A/A pre-flight shows a harness bias; a baseline at two clocks named after the output.
fn concluded(
    path: &Path,
    result: AbResult,
    primary: &str,
    head: Vec<String>,
    threshold: f64,
    accept_bias: bool,
) -> Result<Outcome> {
    let recs = record::read(path).map_err(|e| anyhow!(e))?;
    let (main, aa) = (
        pairs_from(&recs, false, primary),
        pairs_from(&recs, true, primary),
    );
    let harness_bias = result.aa.as_ref().is_some_and(|a| a.harness_bias);
    let mut doc = ab_doc(Some(path), result, &main, &aa);
    doc.body.conditions = record::conditions(&recs);
    let bimodal = BimodalBase::of(&doc.body, threshold);
    let changed = refused_conditions(doc.body.conditions.as_ref());
    let mut outcome = outcome(doc, head)?;
    if let Some(b) = bimodal {
        outcome.late_notes.push(format!("note: {}", b.line()));
        outcome
            .late_notes
            .extend(b.unstable().map(|why| format!("warning: {why}")));
    }
    if let Some(why) = changed {
        outcome.status = crate::Status::Incomplete;
        outcome.late_notes.push(format!("error: {why}"));
    }
    if harness_bias && !accept_bias {
        outcome.status = crate::Status::Incomplete;
        outcome.late_notes.push(
            "error: the A/A pre-flight interval excludes 1 (harness bias); the verdict above is not trustworthy (use --accept-bias to accept it)".into(),
        );
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A base at two clocks (12 pairs near 100, 8 near 111) whose head changes by `fast` when
    /// the base ran fast and by `slow` when it ran slow, judged against a 2% threshold.
    fn planted(fast: f64, slow: f64, direction: Direction) -> BimodalBase {
        let jitter = |k: usize| ((k * 7) % 5) as f64 * 0.15 - 0.3;
        let pairs: Vec<Pair> = (0..20)
            .map(|k| {
                let at_fast = k % 5 < 3;
                let a = if at_fast { 100.0 } else { 111.0 } + jitter(k);
                Pair {
                    order: kernelab_stats::Order::AB,
                    a,
                    b: a * (1.0 + if at_fast { fast } else { slow }),
                }
            })
            .collect();
        let base: Vec<f64> = pairs.iter().map(|p| p.a).collect();
        let groups = kernelab_stats::modes::two_groups(&base, 0.02).expect("two groups");
        BimodalBase {
            metric: "t".into(),
            by_group: kernelab_stats::modes::change_by_group(&pairs, &groups),
            groups,
            threshold: 0.02,
            direction,
        }
    }

    #[test]
    fn a_change_only_at_one_clock_makes_the_decision_unstable() {
        let b = planted(0.05, 0.0, Direction::LowerIsBetter);
        assert!(
            b.line()
                .starts_with("the base's t runs form two separated groups (12 around 100."),
            "{}",
            b.line()
        );
        assert!(b.line().contains("a single median of the base misleads"));
        let why = b.unstable().expect("unstable");
        assert!(
            why.contains("the 12 pairs whose base ran in the lower group change by +5.0%, the 8 in the upper group by +0.0%"),
            "{why}"
        );
        // The same change at both clocks, or changes on the same side of the threshold: stable.
        assert_eq!(
            planted(0.05, 0.05, Direction::LowerIsBetter).unstable(),
            None
        );
        assert_eq!(
            planted(0.0, 0.01, Direction::LowerIsBetter).unstable(),
            None
        );
        // Higher is better: a fall beyond the threshold at one clock only is unstable.
        assert!(planted(-0.05, 0.0, Direction::HigherIsBetter)
            .unstable()
            .is_some());
        assert_eq!(
            planted(0.05, 0.0, Direction::HigherIsBetter).unstable(),
            None
        );
    }

    #[test]
    fn too_few_pairs_in_a_group_cannot_be_judged() {
        let mut b = planted(0.05, 0.0, Direction::LowerIsBetter);
        b.by_group[1].1 = MIN_PAIRS_PER_GROUP - 1;
        assert_eq!(b.unstable(), None);
        b.by_group[1] = (None, 0);
        assert_eq!(b.unstable(), None);
    }
}
