//! Turning shared command-line arguments into library settings.

use crate::cli::{GroupArg, RankArgs};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_model::{FamilyRules, Grouping};
use kernelab_trace::{parse_time_range, Filters, RankOptions};
use regex::Regex;
use std::io::Read;

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
    if args.top > MAX_TOP {
        bail!("--top {}: expected at most {MAX_TOP}", args.top);
    }
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
        ..RankOptions::default()
    })
}
