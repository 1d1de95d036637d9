//! `kernelab profile`: read files, rank, render.

use crate::cli::{FormatArg, GroupArg, ProfileArgs};
use crate::output;
use crate::progress::BarProgress;
use crate::ExitStatus;
use anyhow::{anyhow, Context, Result};
use kernelab_model::{FamilyRules, Grouping, Profile};
use kernelab_report::{profile_csv, profile_document, profile_tables, render, OutputFormat};
use kernelab_trace::{parse_time_range, rank, read_file, Filters, RankOptions, ReadOptions};
use regex::Regex;

fn options(args: &ProfileArgs) -> Result<RankOptions> {
    let rules = match &args.rules {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
            FamilyRules::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?
        }
        None => FamilyRules::default(),
    };
    let name = match &args.name {
        Some(re) => {
            Some(Regex::new(re).map_err(|e| anyhow!("--name: invalid regular expression: {e}"))?)
        }
        None => None,
    };
    let time_range = match &args.time_range {
        Some(t) => Some(parse_time_range(t).map_err(|e| anyhow!("--time-range {e}"))?),
        None => None,
    };
    Ok(RankOptions {
        grouping: match args.group {
            GroupArg::None => Grouping::None,
            GroupArg::Family => Grouping::Family,
        },
        rules,
        top: args.top,
        filters: Filters {
            device: args.device,
            stream: args.stream,
            name,
            time_range,
        },
        by_phase: args.by_phase,
        ..RankOptions::default()
    })
}

/// Runs the command.
pub fn run(args: ProfileArgs) -> Result<ExitStatus> {
    let opts = options(&args)?;
    output::check_target(&args.output)?;
    let read_opts = ReadOptions {
        host_launches: args.by_phase,
        ..ReadOptions::default()
    };
    let mut profile = Profile::default();
    for path in &args.files {
        let progress = BarProgress::new(path);
        read_file(path, &read_opts, &mut profile, &progress)?;
    }
    let ranking = rank(&profile, &opts)?;
    let family = opts.grouping == Grouping::Family;
    let text = match args.output.format {
        FormatArg::Table => render(
            &profile_tables(&ranking, &profile.sources, family, 80),
            OutputFormat::Terminal,
            output::terminal_width(&args.output),
        ),
        FormatArg::Md => render(
            &profile_tables(&ranking, &profile.sources, family, 120),
            OutputFormat::Markdown,
            None,
        ),
        FormatArg::Json => {
            let doc = profile_document(
                &ranking,
                &profile.sources,
                if family { "family" } else { "none" },
            );
            let mut s = serde_json::to_string_pretty(&doc).context("serializing JSON")?;
            s.push('\n');
            s
        }
        FormatArg::Csv => profile_csv(&ranking).map_err(|e| anyhow!("writing CSV: {e}"))?,
    };
    output::write(&args.output, &text)?;
    Ok(ExitStatus::Success)
}
