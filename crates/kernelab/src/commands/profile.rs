//! `kernelab profile`: read files, rank, render.

use crate::cli::{FormatArg, ProfileArgs};
use crate::output;
use crate::progress::BarProgress;
use crate::record::Session;
use crate::settings::{rank_options, view_top};
use crate::ExitStatus;
use anyhow::Result;
use kernelab_model::{Grouping, Profile};
use kernelab_report::{
    graph_sections, profile_csv, profile_document, profile_tables, rank_sections, render,
    OutputFormat,
};
use kernelab_trace::{rank, read_file, RankOptions, ReadOptions};

/// Runs the command.
pub fn run(args: ProfileArgs, session: &mut Session) -> Result<ExitStatus> {
    let opts = RankOptions {
        by_phase: args.by_phase,
        ..rank_options(&args.rank)?
    };
    output::check_target(&args.output)?;
    let read_opts = ReadOptions {
        host_launches: args.by_phase,
        graphs: args.by_graph,
        // Only phases and graphs use correlation ids: without them a dispatch takes 12 bytes.
        skip_correlations: !(args.by_phase || args.by_graph),
        ..ReadOptions::default()
    };
    let mut profile = Profile::default();
    for path in &args.files {
        let progress = BarProgress::new(path);
        read_file(path, &read_opts, &mut profile, &progress)?;
    }
    let machine = matches!(args.output.format, FormatArg::Json | FormatArg::Csv);
    let shown_top = view_top(&args.rank, machine);
    // A bundle record is evidence other commands (`impact`) read: it holds every row whatever
    // --top says, so the ranking is done twice only when the output is cut and a record is kept.
    let full = if session.enabled() && shown_top != usize::MAX {
        Some(rank(
            &profile,
            &RankOptions {
                top: usize::MAX,
                ..opts.clone()
            },
        )?)
    } else {
        None
    };
    let ranking = rank(
        &profile,
        &RankOptions {
            top: shown_top,
            ..opts.clone()
        },
    )?;
    let family = opts.grouping == Grouping::Family;
    let grouping = if family { "family" } else { "none" };
    let gpu = profile.sources.iter().find_map(|s| {
        s.facts
            .iter()
            .find(|(k, _)| k == "device")
            .map(|(_, v)| v.clone())
    });
    let graphs = args.by_graph.then(|| kernelab_trace::graphs(&profile));
    let ranks = args.by_rank.then(|| kernelab_trace::ranks(&profile));
    let mut doc = profile_document(&ranking, &profile.sources, grouping);
    doc.body.graphs = graphs.clone();
    doc.body.ranks = ranks.clone();
    match &full {
        Some(all) => {
            let mut d = profile_document(all, &profile.sources, grouping);
            d.body.graphs = graphs.clone();
            d.body.ranks = ranks.clone();
            session.record(&d, &args.files, gpu)?
        }
        None => session.record(&doc, &args.files, gpu)?,
    }
    let sections = |width| {
        let mut s = profile_tables(&ranking, &profile.sources, family, width);
        if let Some(r) = &ranks {
            s.extend(rank_sections(r));
        }
        if let Some(g) = &graphs {
            s.extend(graph_sections(g));
        }
        s
    };
    let text = match args.output.format {
        FormatArg::Table => render(
            &sections(80),
            OutputFormat::Terminal,
            output::terminal_width(&args.output),
        ),
        FormatArg::Md => render(&sections(120), OutputFormat::Markdown, None),
        FormatArg::Json => output::json(&doc)?,
        FormatArg::Csv => profile_csv(&ranking)?,
    };
    output::write(&args.output, &text)?;
    Ok(ExitStatus::Success)
}
