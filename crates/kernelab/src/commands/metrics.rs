//! `kernelab metrics`: per-launch metric tables from Nsight Compute CSV.

use crate::cli::{FormatArg, MetricsArgs};
use crate::output;
use crate::progress::BarProgress;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_model::{Document, Profile};
use kernelab_report::documents::MetricsBody;
use kernelab_report::{metric_columns, metrics_csv, metrics_tables, render, OutputFormat};
use kernelab_trace::{read_file, ReadOptions};

/// Runs the command.
pub fn run(args: MetricsArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    let mut profile = Profile::default();
    for path in &args.files {
        read_file(
            path,
            &ReadOptions {
                metrics_only: true,
                ..ReadOptions::default()
            },
            &mut profile,
            &BarProgress::new(path),
        )?;
        if profile.launch_metrics.is_empty() {
            bail!(
                "{}: has no per-launch metrics (expected Nsight Compute CSV output)",
                path.display()
            );
        }
    }
    let launches = &profile.launch_metrics;
    let columns = metric_columns(launches, &args.metrics);
    let doc = Document::of(MetricsBody {
        launches: launches.clone(),
    });
    session.record(&doc, &args.files, None)?;
    let text = match args.output.format {
        FormatArg::Table => render(
            &metrics_tables(launches, &columns, 60),
            OutputFormat::Terminal,
            output::terminal_width(&args.output),
        ),
        FormatArg::Md => render(
            &metrics_tables(launches, &columns, 100),
            OutputFormat::Markdown,
            None,
        ),
        FormatArg::Json => output::json(&doc)?,
        FormatArg::Csv => metrics_csv(launches, &columns)?,
    };
    output::write(&args.output, &text)?;
    Ok(ExitStatus::Success)
}
