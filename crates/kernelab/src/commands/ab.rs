//! `kernelab ab` and `kernelab ab analyze`.

use crate::cli::{AbAnalyzeArgs, AbArgs, AbCommand, DesignArgs};
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{anyhow, Result};
use kernelab_commands::ab;
use kernelab_stats::{DesignSettings, Direction};

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

fn direction(d: &DesignArgs, name: &str) -> Direction {
    ab::direction_of(&d.higher_is_better, name)
}

/// Runs the command.
pub(crate) fn run(args: AbArgs, session: &mut Session) -> Result<ExitStatus> {
    if let Some(AbCommand::Analyze(a)) = args.analyze {
        return analyze_cmd(a, session);
    }
    let d = &args.design;
    let settings = ab::RunSettings {
        baseline: args.baseline,
        candidate: args.candidate,
        shell: args.shell,
        warmup: args.warmup,
        timeout: args.timeout,
        metric_regex: args.metric_regex,
        metric_json: args.metric_json,
        aa_pairs: args.aa_pairs,
        no_aa: args.no_aa,
        accept_bias: args.accept_bias,
        max_failures: args.max_failures,
        samples: args.samples,
        resume: args.resume,
        design: settings(d),
        higher_is_better: d.higher_is_better.clone(),
        budget: None,
        command: None,
    };
    settings.check()?;
    output::check_target(&args.output)?;
    let outcome = {
        let hooks = CliHooks::in_place();
        ab::run(&settings, &hooks)?
    };
    emit(outcome, &args.output, session)
}

fn analyze_cmd(a: AbAnalyzeArgs, session: &mut Session) -> Result<ExitStatus> {
    settings(&a.design)
        .design(Direction::LowerIsBetter)
        .map_err(|e| anyhow!(e))?;
    output::check_target(&a.output)?;
    let doc = ab::analyze_file(&a.file, a.metric.as_deref(), &settings(&a.design), |name| {
        direction(&a.design, name)
    })?;
    let outcome = ab::analysis_outcome(doc, vec![format!("samples  {}", a.file.display())])?;
    emit(outcome, &a.output, session)
}
