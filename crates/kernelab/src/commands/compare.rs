//! `kernelab compare`: baseline versus candidate, per family.

use crate::cli::{CompareArgs, FormatArg};
use crate::output;
use crate::progress::BarProgress;
use crate::record::Session;
use crate::settings::{rank_options, view_top};
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_model::{Document, Profile};
use kernelab_report::documents::CompareBody;
use kernelab_report::{compare_csv, compare_tables, input_docs, render, OutputFormat};
use kernelab_trace::{compare, read_file, CompareOptions, RankOptions, ReadOptions};
use std::path::PathBuf;

fn read_runs(paths: &[PathBuf], by_graph: bool) -> Result<Vec<Profile>> {
    paths
        .iter()
        .map(|path| {
            let mut p = Profile::default();
            // A comparison has no phases: correlation ids are needed only to tie replayed
            // kernels to their graph launches.
            let options = ReadOptions {
                skip_correlations: !by_graph,
                graphs: by_graph,
                ..ReadOptions::default()
            };
            read_file(path, &options, &mut p, &BarProgress::new(path))?;
            Ok(p)
        })
        .collect()
}

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
    let base = read_runs(&base_paths, args.by_graph)?;
    let cand = read_runs(&cand_paths, args.by_graph)?;
    let comparison = compare(&base, &cand, &options)?;
    // A bundle record holds every row whatever --top says (see `profile`).
    let full = if session.enabled() && shown_top != usize::MAX {
        let all = CompareOptions {
            rank: RankOptions {
                top: usize::MAX,
                ..options.rank.clone()
            },
            controls: options.controls.clone(),
            by_graph: options.by_graph,
        };
        Some(compare(&base, &cand, &all)?)
    } else {
        None
    };
    let bi = input_docs(
        &base
            .iter()
            .flat_map(|p| p.sources.clone())
            .collect::<Vec<_>>(),
    );
    let ci = input_docs(
        &cand
            .iter()
            .flat_map(|p| p.sources.clone())
            .collect::<Vec<_>>(),
    );
    let doc = Document::new(
        "compare",
        CompareBody {
            base_inputs: bi,
            cand_inputs: ci,
            comparison,
        },
    );
    let (bi, ci, comparison) = (
        &doc.body.base_inputs,
        &doc.body.cand_inputs,
        &doc.body.comparison,
    );
    let all_inputs: Vec<PathBuf> = base_paths.iter().chain(&cand_paths).cloned().collect();
    match full {
        Some(all) => {
            let whole = Document::new(
                "compare",
                CompareBody {
                    base_inputs: bi.clone(),
                    cand_inputs: ci.clone(),
                    comparison: all,
                },
            );
            session.record(&whole, &all_inputs, None)?;
        }
        None => session.record(&doc, &all_inputs, None)?,
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
