//! Turning shared command-line arguments into library settings.

use crate::cli::{GroupArg, RankArgs};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_model::{FamilyRules, Grouping};
use kernelab_trace::{parse_time_range, Filters, RankOptions};
use regex::Regex;
use std::io::Read;

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

/// The most rows `--top` may ask for.
pub const MAX_TOP: usize = 1_000_000;
/// The largest family rules file read.
const MAX_RULES_BYTES: u64 = 16 << 20;

/// Ranking settings from `RankArgs` (rules file read, regex and time range parsed).
pub fn rank_options(args: &RankArgs) -> Result<RankOptions> {
    let rules = match &args.rules {
        Some(path) => {
            let mut text = String::new();
            kernelab_model::open_regular(path)
                .and_then(|f| f.take(MAX_RULES_BYTES).read_to_string(&mut text))
                .with_context(|| format!("{}", path.display()))?;
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
    if let Some(top) = args.top.filter(|t| *t > MAX_TOP) {
        bail!("--top {top}: expected at most {MAX_TOP}");
    }
    Ok(RankOptions {
        grouping: match args.group {
            GroupArg::None => Grouping::None,
            GroupArg::Family => Grouping::Family,
        },
        rules,
        top: view_top(args, false),
        filters: Filters {
            device: args.device,
            stream: args.stream,
            name,
            time_range,
        },
        ..RankOptions::default()
    })
}
