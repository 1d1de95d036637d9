//! `kernelab profile`: read files, rank, render.

use crate::cli::{FormatArg, ProfileArgs};
use crate::output;
use crate::progress::BarProgress;
use crate::record::Session;
use crate::settings::{rank_options, view_top};
use crate::ExitStatus;
use anyhow::Result;
use kernelab_model::Grouping;
use kernelab_report::make::{profile_doc, profile_gpu, read_profile, ProfileReads};
use kernelab_report::{
    graph_sections, profile_csv, profile_tables, rank_sections, render, OutputFormat,
};
use kernelab_trace::RankOptions;

/// Runs the command.
pub fn run(args: ProfileArgs, session: &mut Session) -> Result<ExitStatus> {
    let opts = RankOptions {
        by_phase: args.by_phase,
        ..rank_options(&args.rank)?
    };
    output::check_target(&args.output)?;
    let reads = ProfileReads {
        by_phase: args.by_phase,
        by_graph: args.by_graph,
        correlations: false,
    };
    let profile = read_profile(&args.files, reads, &|p| Box::new(BarProgress::new(p)))?;
    let machine = matches!(args.output.format, FormatArg::Json | FormatArg::Csv);
    let shown_top = view_top(&args.rank, machine);
    let with_top = |top| RankOptions {
        top,
        ..opts.clone()
    };
    let (ranking, doc) = profile_doc(&profile, &with_top(shown_top), args.by_graph, args.by_rank)?;
    // A bundle record is evidence other commands (`impact`) read: it holds every row whatever
    // --top says, so the ranking is done twice only when the output is cut and a record is kept.
    let gpu = profile_gpu(&profile);
    if session.enabled() && shown_top != usize::MAX {
        let (_, all) = profile_doc(&profile, &with_top(usize::MAX), args.by_graph, args.by_rank)?;
        session.record(&all, &args.files, gpu)?;
    } else {
        session.record(&doc, &args.files, gpu)?;
    }
    let family = opts.grouping == Grouping::Family;
    let (ranks, graphs) = (&doc.body.ranks, &doc.body.graphs);
    let sections = |width| {
        let mut s = profile_tables(&ranking, &profile.sources, family, width);
        if let Some(r) = ranks {
            s.extend(rank_sections(r));
        }
        if let Some(g) = graphs {
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
