//! Turning shared command-line arguments into library settings.

use crate::cli::{GroupArg, RankArgs};
use anyhow::Result;
use kernelab_report::make::RankSettings;
use kernelab_trace::RankOptions;

/// Rows before "other" in the terminal and Markdown views when `--top` is not given.
pub const DEFAULT_TOP: usize = 20;

/// The rows before "other" of one output: `--top` where given; else every row for JSON and CSV
/// (`machine`), which other tools read and must not lose rows from, and [`DEFAULT_TOP`] for the
/// views people read.
pub fn view_top(args: &RankArgs, machine: bool) -> usize {
    match args.top {
        Some(n) => n,
        None if machine => usize::MAX,
        None => DEFAULT_TOP,
    }
}

/// Ranking settings from `RankArgs` (rules file read, regex and time range parsed); `top` is
/// `--top`, or [`DEFAULT_TOP`] when not given.
pub fn rank_options(args: &RankArgs) -> Result<RankOptions> {
    let settings = RankSettings {
        family: args.group == GroupArg::Family,
        rules: args.rules.clone(),
        name: args.name.clone(),
        device: args.device,
        stream: args.stream,
        time_range: args.time_range.clone(),
        top: args.top,
    };
    Ok(RankOptions {
        top: view_top(args, false),
        ..kernelab_report::make::rank_options(&settings)?
    })
}
