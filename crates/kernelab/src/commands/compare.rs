//! `kernelab compare`: baseline versus candidate, per family.

use crate::cli::{CompareArgs, FormatArg};
use crate::output;
use crate::progress::BarProgress;
use crate::record::Session;
use crate::settings::{rank_options, view_top};
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_report::make::{compare_doc, read_runs};
use kernelab_report::{compare_csv, compare_tables, render, OutputFormat};
use kernelab_trace::{CompareOptions, RankOptions};
use std::path::PathBuf;

/// Runs the command.
pub fn run(args: CompareArgs, session: &mut Session) -> Result<ExitStatus> {
    let (base_paths, cand_paths) = match (
        args.pair.as_slice(),
        args.base.is_empty(),
        args.cand.is_empty(),
    ) {
        ([b, c], true, true) => (vec![b.clone()], vec![c.clone()]),
        ([], false, false) => (args.base.clone(), args.cand.clone()),
        _ => bail!("give BASE CAND, or --base FILE... and --cand FILE..."),
    };
    let machine = matches!(args.output.format, FormatArg::Json | FormatArg::Csv);
    let shown_top = view_top(&args.rank, machine);
    let options = CompareOptions {
        rank: RankOptions {
            top: shown_top,
            ..rank_options(&args.rank)?
        },
        controls: args.controls.clone(),
        by_graph: args.by_graph,
    };
    output::check_target(&args.output)?;
    let progress = |p: &std::path::Path| -> Box<dyn kernelab_trace::Progress> {
        Box::new(BarProgress::new(p))
    };
    let base = read_runs(&base_paths, args.by_graph, &progress)?;
    let cand = read_runs(&cand_paths, args.by_graph, &progress)?;
    let doc = compare_doc(&base, &cand, &options)?;
    let (bi, ci, comparison) = (
        &doc.body.base_inputs,
        &doc.body.cand_inputs,
        &doc.body.comparison,
    );
    let all_inputs: Vec<PathBuf> = base_paths.iter().chain(&cand_paths).cloned().collect();
    // A bundle record holds every row whatever --top says (see `profile`).
    if session.enabled() && shown_top != usize::MAX {
        let all = CompareOptions {
            rank: RankOptions {
                top: usize::MAX,
                ..options.rank.clone()
            },
            controls: options.controls.clone(),
            by_graph: options.by_graph,
        };
        session.record(&compare_doc(&base, &cand, &all)?, &all_inputs, None)?;
    } else {
        session.record(&doc, &all_inputs, None)?;
    }
    let text = match args.output.format {
        FormatArg::Table => render(
            &compare_tables(comparison, bi, ci, 70),
            OutputFormat::Terminal,
            output::terminal_width(&args.output),
        ),
        FormatArg::Md => render(
            &compare_tables(comparison, bi, ci, 100),
            OutputFormat::Markdown,
            None,
        ),
        FormatArg::Json => output::json(&doc)?,
        FormatArg::Csv => compare_csv(comparison)?,
    };
    output::write(&args.output, &text)?;
    Ok(ExitStatus::Success)
}
