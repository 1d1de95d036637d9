//! `gate`: the kernel pull-request gate. The base and head revisions are each checked out in a
//! temporary work tree, built, and measured against each other in this one job by the `ab`
//! engine ([`crate::ab::run`]: ABBA pairs of fresh processes, the A/A pre-flight, the planned
//! looks with the threshold); the verdicts of the metrics that must not regress decide.

pub mod annotate;
pub mod config;
pub mod git;
mod kernel_bench;
pub mod publish;
mod sweep_bench;

use crate::{Hooks, Outcome, View};
use anyhow::{anyhow, Context, Result};
use config::{Benchmark, Config};
use kernelab_report::documents::AbBody;
use kernelab_report::Block;
use kernelab_stats::{DesignSettings, Verdict};
use publish::{Decision, GateReport, MetricVerdict, Side};
use std::path::{Path, PathBuf};

/// Where the configuration is looked for in the repository when none is named.
pub const DEFAULT_CONFIG: &str = ".kernelab/gate.toml";

/// `gate` as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct GateSettings {
    /// A folder of the repository's checkout (default: the current folder).
    pub repo: Option<PathBuf>,
    /// The configuration file (default: [`DEFAULT_CONFIG`] at the top of the checkout).
    pub config: Option<PathBuf>,
    /// The base revision (default: the merge base of the head and the default branch).
    pub base: Option<String>,
    /// The head revision (default: `HEAD`).
    pub head: Option<String>,
    /// The branch a pull request targets, when a CI names it (`GITHUB_BASE_REF`,
    /// `CI_MERGE_REQUEST_TARGET_BRANCH_NAME`): the default base is the merge base with it.
    pub target_branch: Option<String>,
    /// What to do when a GPU wait of a `[kernel]` benchmark passes its timeout (the CLI says
    /// so and exits 2); none: no watchdog is installed.
    pub on_gpu_hang: Option<fn(&str, std::time::Duration)>,
    /// The ledger of identical-code runs (`--controls`) a `[kernel]` or `[python]` benchmark
    /// reads its noise floor from and adds to.
    pub controls: Option<PathBuf>,
    /// The kernelab program, which runs a `[sweep]` benchmark's points (`sweep run-point`).
    pub exe: Option<PathBuf>,
}

/// What a gate produced: the outcome to emit (the `ab` record and view, under the gate's
/// lines) and the report reviewers read.
pub struct GateOutcome {
    /// The outcome to emit.
    pub outcome: Outcome,
    /// The decision, the verdicts and their renderings.
    pub report: GateReport,
    /// The kernel source lines the head changed (`[annotate] paths`), for annotations.
    pub changed: Vec<annotate::ChangedLines>,
    /// What the measurement itself found, in its own words (a sweep's matrix lines): shown
    /// under the decision in the summary and the comment, and held against the measurement's
    /// record in the bundle (not the gate's).
    pub details: Vec<String>,
}

impl GateOutcome {
    /// The Markdown summary: the decision, then the measurement's own lines.
    pub fn summary_markdown(&self) -> String {
        use publish::Publish;
        let mut s = self.report.summary_markdown();
        if !self.details.is_empty() {
            s.push_str("\nWhat the measurement found:\n\n");
            for d in &self.details {
                s.push_str(&format!("- {}\n", publish::md_escape(d)));
            }
        }
        s
    }

    /// The pull-request comment body: the marker on its first line, then the summary.
    pub fn comment(&self) -> String {
        format!("{}\n{}", publish::COMMENT_MARKER, self.summary_markdown())
    }
}

/// What a kernel, Python or sweep benchmark measures with: both work trees (the base's files
/// are the baseline, the head's the candidate), the gate's threshold and the ledger of
/// identical-code controls.
struct Trees<'a> {
    base: &'a Path,
    head: &'a Path,
    threshold: f64,
    controls: Option<&'a Path>,
}

/// The configuration and both sides, resolved before anything is built.
struct Plan {
    config: Config,
    config_path: PathBuf,
    threshold: f64,
    budget: Option<std::time::Duration>,
    base: Side,
    head: Side,
}

impl Plan {
    /// The benchmark's primary metric (`kernel_time`, `call_time`, or `[bench]`'s first).
    fn metric(&self) -> String {
        self.config
            .metric_names()
            .into_iter()
            .next()
            .unwrap_or_default()
    }

    /// The report of `decision` on this plan's sides at its threshold, with `metrics` and
    /// `reasons`; what was measured and how is the caller's to fill in.
    fn report(
        &self,
        decision: Decision,
        metrics: Vec<MetricVerdict>,
        reasons: Vec<String>,
    ) -> GateReport {
        GateReport {
            decision,
            exit_status: decision.code(),
            base: self.base.clone(),
            head: self.head.clone(),
            threshold: self.threshold,
            metrics,
            aa: String::new(),
            reasons,
            samples: None,
            conditions: None,
            benchmark: String::new(),
            code: None,
        }
    }
}

/// Reads the configuration and resolves both revisions (every setting checked before work).
fn plan(s: &GateSettings, repo: &Path) -> Result<Plan> {
    let top = PathBuf::from(git::git(repo, &["rev-parse", "--show-toplevel"])?);
    let path = s.config.clone().unwrap_or_else(|| top.join(DEFAULT_CONFIG));
    let config = Config::read(&path)?;
    let (table, text) = config.threshold();
    let threshold = kernelab_stats::settings::fraction("threshold", text, true)
        .map_err(|e| anyhow!("{}: {table} {e}", path.display()))?;
    let budget = config
        .budget()
        .map(kernelab_runner::serve::rounds::parse_budget)
        .transpose()
        .map_err(|e| anyhow!("{}: [bench] budget {e}", path.display()))?;
    let head_rev = s.head.clone().unwrap_or_else(|| "HEAD".into());
    let head = Side {
        commit: git::commit(repo, &head_rev)?,
        name: head_rev,
    };
    let base = match &s.base {
        Some(b) => Side {
            commit: git::commit(repo, b)?,
            name: b.clone(),
        },
        None => {
            let branch = git::default_branch(repo, s.target_branch.as_deref())?;
            Side {
                commit: git::git(repo, &["merge-base", &branch, &head.commit])
                    .with_context(|| format!("no merge base of {branch} and the head"))?,
                name: format!("merge base of {} and {branch}", head.name),
            }
        }
    };
    Ok(Plan {
        config,
        config_path: path,
        threshold,
        budget,
        base,
        head,
    })
}

/// A command line that runs the shell command `command` in the folder `dir` (the ab engine
/// runs it as a fresh process each time, with no shell of its own).
fn in_dir(dir: &Path, command: &str) -> Result<String> {
    let d = dir
        .to_str()
        .ok_or_else(|| anyhow!("{}: not UTF-8", dir.display()))?;
    let argv = [
        "sh",
        "-c",
        "cd -- \"$1\" && eval \"$2\"",
        "kernelab-gate",
        d,
        command,
    ];
    shlex::try_join(argv).map_err(|e| anyhow!("the bench command: {e}"))
}

/// The `ab` settings of the gate: the bench command in each work tree, the design the
/// configuration plans (defaults as `kernelab ab`'s).
fn ab_settings(
    p: &Plan,
    b: &config::Bench,
    base: &Path,
    head: &Path,
) -> Result<crate::ab::RunSettings> {
    let defaults = DesignSettings::default();
    let ab_defaults = crate::ab::RunSettings {
        warmup: 1,
        aa_pairs: 16,
        max_failures: 5,
        ..Default::default()
    };
    Ok(crate::ab::RunSettings {
        baseline: Some(in_dir(base, &b.command)?),
        candidate: Some(in_dir(head, &b.command)?),
        shell: false,
        warmup: b.warmup.unwrap_or(ab_defaults.warmup),
        timeout: b.timeout,
        metric_regex: b.metric_regex.clone(),
        metric_json: b.metric_json.clone(),
        aa_pairs: b.aa_pairs.unwrap_or(ab_defaults.aa_pairs),
        no_aa: b.aa_pairs == Some(0),
        accept_bias: false,
        max_failures: b.max_failures.unwrap_or(ab_defaults.max_failures),
        samples: None,
        resume: None,
        design: DesignSettings {
            threshold: b.threshold.clone(),
            resolution: b.resolution.clone().unwrap_or(defaults.resolution),
            min_pairs: b.min_pairs.unwrap_or(defaults.min_pairs),
            max_pairs: b.max_pairs.unwrap_or(defaults.max_pairs),
            ..defaults
        },
        higher_is_better: b.higher_is_better.clone(),
        budget: p.budget,
        command: Some(b.command.clone()),
    })
}

/// The decision of the verdicts (`gated` metrics decide) and why it was reached.
fn decide(plan: &Plan, body: &AbBody, bias: bool) -> (Decision, Vec<MetricVerdict>, Vec<String>) {
    let gated = plan.config.gated();
    let metrics: Vec<MetricVerdict> = body
        .result
        .analyses
        .iter()
        .map(|m| MetricVerdict::of(&m.metric, &m.analysis, gated.contains(&m.metric)))
        .collect();
    let mut reasons = Vec::new();
    let decided = |v: Verdict| metrics.iter().any(|m| m.gated && m.verdict == v);
    let decision = if let Some(why) = crate::ab::refused_conditions(body.conditions.as_ref()) {
        reasons.push(why);
        Decision::Refused
    } else if bias {
        reasons.push(
            "the A/A pre-flight interval excludes 1 (harness bias): the timing setup is not \
             trustworthy"
                .into(),
        );
        Decision::Unreliable
    } else if decided(Verdict::Slower) {
        Decision::Regression
    } else if decided(Verdict::Inconclusive) {
        Decision::Inconclusive
    } else {
        Decision::Pass
    };
    if let Some(a) = body.result.analyses.first() {
        // Only a budget ends the runner's pairs before the plan does.
        let spent = plan.budget.is_some() && a.analysis.stopped_by.starts_with("data ends");
        if spent && decision == Decision::Inconclusive {
            reasons.push(format!(
                "the budget was spent after {} pairs, before a planned look decided",
                a.analysis.pairs_available
            ));
        } else if decision == Decision::Inconclusive {
            reasons.push(format!("not decided: {}", a.analysis.stopped_by));
        }
    }
    if body.result.analyses.is_empty() {
        reasons.push("no metric was analysed".into());
    }
    let mut decision = decision;
    if let Some(b) = crate::ab::BimodalBase::of(body, plan.threshold) {
        reasons.push(b.line());
        let decisive = matches!(decision, Decision::Pass | Decision::Regression);
        if let Some(why) = b.unstable().filter(|_| decisive) {
            reasons.push(why);
            decision = Decision::Inconclusive;
        }
    }
    (decision, metrics, reasons)
}

/// `gate`: builds base and head in temporary work trees, measures them with the benchmark the
/// configuration names (the `ab` engine, `kernel run` of a launch spec, a Python kernel
/// comparison, or a sweep) and decides. An error (bad configuration, git, a failed build, no GPU) is exit
/// status 2 to the caller; the work trees are removed whatever happens.
pub fn run(s: &GateSettings, hooks: &dyn Hooks) -> Result<GateOutcome> {
    let repo = s.repo.clone().unwrap_or_else(|| PathBuf::from("."));
    let plan = plan(s, &repo)?;
    // The design is checked before anything is checked out or built.
    if let Benchmark::Ab(b) = &plan.config.benchmark {
        ab_settings(&plan, b, &repo, &repo)?.check()?;
    }
    let mut trees = git::Worktrees::new(&repo)?;
    let base_dir = trees.add("base", &plan.base.commit)?;
    let head_dir = trees.add("head", &plan.head.commit)?;
    if let Some(b) = &plan.config.build {
        for (dir, side) in [(&base_dir, "the base"), (&head_dir, "the head")] {
            hooks.say(&format!("kernelab gate: building {side}: {}", b.command));
            git::build(dir, &b.command, side)?;
        }
    }
    let sides = Trees {
        base: &base_dir,
        head: &head_dir,
        threshold: plan.threshold,
        controls: s.controls.as_deref(),
    };
    let mut details = Vec::new();
    let ((outcome, report), key) = match &plan.config.benchmark {
        Benchmark::Ab(b) => {
            let settings = ab_settings(&plan, b, &base_dir, &head_dir)?;
            settings.check()?;
            let ab = crate::ab::run(&settings, hooks)?;
            drop(trees);
            (ab_report(&plan, b, ab)?, "ab")
        }
        Benchmark::Kernel(k) => {
            if let Some(f) = s.on_gpu_hang {
                let wait = kernelab_model::duration_clamped(k.timeout.unwrap_or(60.0));
                kernelab_launcher::watchdog::install(wait, f);
            }
            let measured = kernel_bench::spec(k, &sides, hooks)?;
            drop(trees);
            (kernel_bench::report(&plan, measured)?, "kernel_run")
        }
        Benchmark::Python(p) => {
            let measured = kernel_bench::python(p, &sides, hooks)?;
            drop(trees);
            (kernel_bench::report(&plan, measured)?, "kernel_run")
        }
        Benchmark::Sweep(w) => {
            let measured = sweep_bench::run(w, &sides, s.exe.as_deref(), hooks)?;
            drop(trees);
            details = measured.lines();
            (sweep_bench::report(&plan, measured)?, "sweep")
        }
    };
    let changed = match &plan.config.annotate {
        Some(a) => {
            annotate::changed_lines(&repo, &report.base.commit, &report.head.commit, &a.paths)?
        }
        None => Vec::new(),
    };
    Ok(GateOutcome {
        outcome: wrap(outcome, &report, key, Some(plan.config_path.clone()))?,
        report,
        changed,
        details,
    })
}

/// The gate's report of an `ab` measurement.
fn ab_report(plan: &Plan, b: &config::Bench, ab: Outcome) -> Result<(Outcome, GateReport)> {
    let bias = ab.status == crate::Status::Incomplete;
    let body: AbBody =
        serde_json::from_str(&(ab.view.json)()?).context("reading back the A/B document")?;
    let (decision, metrics, reasons) = decide(plan, &body, bias);
    let report = GateReport {
        aa: body.result.aa.as_ref().map_or_else(
            || "No A/A pre-flight (aa_pairs = 0)".to_string(),
            |a| {
                format!(
                    "A/A pre-flight of {} pairs: {}",
                    a.analysis.pairs,
                    kernelab_report::aa_verdict(a)
                )
            },
        ),
        samples: body.samples.clone(),
        conditions: body.conditions.as_ref().map(|c| c.fingerprint.line()),
        benchmark: format!("ABBA pairs of fresh processes of `{}`", b.command),
        ..plan.report(decision, metrics, reasons)
    };
    Ok((ab, report))
}

/// The measurement's outcome under the gate's lines; its JSON the gate report with the
/// measurement's document (`ab`, or `kernel_run` for a kernel or Python benchmark).
fn wrap(ab: Outcome, report: &GateReport, key: &str, config: Option<PathBuf>) -> Result<Outcome> {
    let ab_json: serde_json::Value = serde_json::from_str(&(ab.view.json)()?)?;
    let doc = serde_json::json!({ "gate": report, key: ab_json });
    let lines = report.lines();
    let ab_blocks = ab.view.blocks;
    let view = View::new(
        move |m| {
            let mut b = vec![Block::Lines(lines.clone())];
            b.extend(ab_blocks(m)?);
            Ok(b)
        },
        move || crate::json(&doc),
    )
    .without_csv("--format csv is not offered for gate; the samples file is the raw data");
    // The bundle holds the decision first, then the `ab` record of the measurement.
    let gate = kernelab_model::Document::of(report.clone());
    // The configuration first: the record's default label is its name (`gate`).
    let inputs: Vec<PathBuf> = config
        .iter()
        .cloned()
        .chain(report.samples.iter().map(PathBuf::from))
        .collect();
    let mut records = ab.records;
    records.insert(
        0,
        Box::new(move || crate::Recordable::of(&gate, &inputs, None)),
    );
    Ok(Outcome {
        view,
        status: crate::Status::of(report.decision == Decision::Pass),
        records,
        ..ab
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_command_runs_in_its_work_tree_whatever_the_path_holds() {
        let line = in_dir(Path::new("/tmp/a b/it's"), "./bench --n \"4 096\"").expect("joins");
        let argv = shlex::split(&line).expect("splits");
        assert_eq!(
            argv,
            [
                "sh",
                "-c",
                "cd -- \"$1\" && eval \"$2\"",
                "kernelab-gate",
                "/tmp/a b/it's",
                "./bench --n \"4 096\""
            ]
        );
    }
}
