//! `kernelab ab` and `kernelab ab analyze`.

use crate::cli::{AbAnalyzeArgs, AbArgs, AbCommand, DesignArgs};
use crate::emit::emit;
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{anyhow, bail, Context, Result};
use kernelab_commands::ab::{self, ab_analysis, ab_doc};
use kernelab_runner::metric::{MetricSpec, Source};
use kernelab_runner::pairs::{read_pairs, PairedSamples};
use kernelab_runner::preflight::{require, Tool};
use kernelab_runner::record::{self, Record, Writer};
use kernelab_runner::run::{RunKind, RunState};
use kernelab_runner::{pairs_from, run_ab, AbSettings, ProcessExecutor};
use kernelab_stats::{Design, DesignSettings, Direction};
use regex::Regex;

/// `value` of `option` if it is at most [`kernelab_stats::MAX_PAIRS`].
fn bounded(option: &str, value: usize) -> Result<usize> {
    kernelab_stats::settings::bounded(option, value).map_err(|e| anyhow!(e))
}

/// Refuses run options that are out of range before anything runs or is written.
fn check_run_args(args: &AbArgs) -> Result<()> {
    bounded("--warmup", args.warmup)?;
    bounded("--aa-pairs", args.aa_pairs)?;
    bounded("--max-failures", args.max_failures)?;
    // --timeout is range-checked by its parser (cli::positive_seconds).
    design(&args.design, Direction::LowerIsBetter).map(|_| ())
}

fn settings(d: &DesignArgs) -> DesignSettings {
    DesignSettings {
        threshold: d.threshold.clone(),
        resolution: d.resolution.clone(),
        until: d.until.clone(),
        watch: d.watch,
        fixed: d.fixed,
        alpha: d.alpha,
        min_pairs: d.min_pairs,
        max_pairs: d.max_pairs,
    }
}

fn design(d: &DesignArgs, direction: Direction) -> Result<Design> {
    settings(d).design(direction).map_err(|e| anyhow!(e))
}

fn direction(d: &DesignArgs, name: &str) -> Direction {
    if d.higher_is_better.iter().any(|n| n == name) {
        Direction::HigherIsBetter
    } else {
        Direction::LowerIsBetter
    }
}

/// Runs the command.
pub fn run(args: AbArgs, session: &mut Session) -> Result<ExitStatus> {
    if let Some(AbCommand::Analyze(a)) = args.analyze {
        return analyze_cmd(a, session);
    }
    check_run_args(&args)?;
    output::check_target(&args.output)?;
    let run = match &args.resume {
        Some(p) => Some(
            kernelab_runner::run::resume(p, RunKind::Ab, kernelab_model::SCHEMA_VERSION)
                .map_err(|e| anyhow!(e))?,
        ),
        None => None,
    };
    let resumed: Vec<Record> = match &run {
        Some(r) => record::read(&r.samples).map_err(|e| anyhow!(e))?,
        None => Vec::new(),
    };
    let header = resumed.iter().find_map(|r| match r {
        Record::Header {
            baseline,
            candidate,
            metrics,
            start,
            ..
        } => Some((baseline.clone(), candidate.clone(), metrics.clone(), *start)),
        _ => None,
    });
    let split = |s: &Option<String>, what: &str| -> Result<Vec<String>> {
        let s = s
            .as_deref()
            .ok_or_else(|| anyhow!("--{what} is required (or --resume FILE)"))?;
        shlex::split(s)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| anyhow!("--{what} {s:?}: unbalanced quotes or empty"))
    };
    let (baseline, candidate) = match (&header, &run) {
        (Some((b, c, _, _)), Some(_)) => (b.clone(), c.clone()),
        (None, Some(r)) => bail!(
            "{}: no header record; not a kernelab samples file",
            r.samples.display()
        ),
        _ => (
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
            direction: direction(&args.design, name),
        });
    }
    for k in &args.metric_json {
        metrics.push(MetricSpec {
            name: k.clone(),
            source: Source::JsonKey(k.clone()),
            direction: direction(&args.design, k),
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
    // A coin flip for the first pair's order, recorded in the header.
    let start = header
        .as_ref()
        .map_or_else(kernelab_runner::run::coin_flip, |h| h.3);
    let design = design(&args.design, primary_dir)?;
    let run = match run {
        Some(r) => r,
        None => {
            let label = format!("{} vs {}", baseline.join(" "), candidate.join(" "));
            let r = kernelab_runner::run::create(RunKind::Ab, &label, args.samples.as_deref())
                .map_err(|e| anyhow!(e))?;
            let mut w =
                Writer::append(&r.samples).with_context(|| r.samples.display().to_string())?;
            w.write(&Record::Header {
                schema_version: kernelab_model::SCHEMA_VERSION,
                baseline: baseline.clone(),
                candidate: candidate.clone(),
                metrics: metrics.iter().map(|m| m.name.clone()).collect(),
                start,
                run: r.identity.clone(),
                design: Some(design),
            })?;
            r
        }
    };
    let path = run.samples.clone();
    output::to_stderr(&format!(
        "kernelab ab: run {}, samples in {}",
        run.id,
        path.display()
    ));
    let mut writer = Writer::append(&path).with_context(|| path.display().to_string())?;
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
    };
    let mut exec = ProcessExecutor {
        baseline: baseline.clone(),
        candidate: candidate.clone(),
        shell: args.shell,
        timeout: args.timeout.map(kernelab_model::duration_clamped),
    };
    let quiet = !std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut progress = |s: &kernelab_runner::Step<'_>| {
        if !quiet {
            let message = kernelab_report::format::escape_controls(s.message, &[]);
            eprint!("\r\x1b[2K{message}");
        }
        crate::progress::runner_step(s);
    };
    let result = run_ab(&mut exec, &settings, &mut writer, &resumed, &mut progress);
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            // The run may be resumed; `kernelab runs` shows it stopped.
            let _ = run.finish(RunState::Stopped);
            return Err(anyhow!(e).context(format!(
                "samples so far are in {} (--resume {} continues)",
                path.display(),
                run.id
            )));
        }
    };
    run.finish(RunState::Complete).map_err(|e| anyhow!(e))?;
    if !quiet {
        eprintln!();
    }
    let head = vec![
        format!("baseline  {}", baseline.join(" ")),
        format!("candidate {}", candidate.join(" ")),
        format!(
            "design   ABBA pairs of fresh processes (first pair {:?}), samples in {}",
            start,
            path.display()
        ),
    ];
    let recs = record::read(&path).map_err(|e| anyhow!(e))?;
    let primary = settings
        .metrics
        .first()
        .map(|m| m.name.clone())
        .unwrap_or_default();
    let (main, aa) = (
        pairs_from(&recs, false, &primary),
        pairs_from(&recs, true, &primary),
    );
    let harness_bias = result.aa.as_ref().is_some_and(|a| a.harness_bias);
    let outcome = ab::outcome(ab_doc(Some(&path), result, &main, &aa), head)?;
    emit(outcome, &args.output, session)?;
    if harness_bias && !args.accept_bias {
        bail!("the A/A pre-flight interval excludes 1 (harness bias); the verdict above is not trustworthy (use --accept-bias to accept it)");
    }
    Ok(ExitStatus::Success)
}

fn analyze_cmd(a: AbAnalyzeArgs, session: &mut Session) -> Result<ExitStatus> {
    design(&a.design, Direction::LowerIsBetter)?;
    output::check_target(&a.output)?;
    let PairedSamples {
        metric: name,
        main,
        aa,
        failures,
        runs,
        design: recorded,
    } = read_pairs(&a.file, a.metric.as_deref())?;
    if main.is_empty() {
        bail!("{}: no complete pairs to analyse", a.file.display());
    }
    let d = settings(&a.design)
        .analysis_design(direction(&a.design, &name), recorded)
        .map_err(|e| anyhow!(e))?;
    let doc = ab_analysis(Some(&a.file), name, &main, &aa, (failures, runs), &d);
    let outcome = ab::outcome(doc, vec![format!("samples  {}", a.file.display())])?;
    emit(outcome, &a.output, session)
}
