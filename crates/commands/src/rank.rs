//! Ranking settings as a user gives them (`--group`, `--rules`, `--name`, `--device`,
//! `--stream`, `--time-range`, `--top`), checked and turned into the readers' options.

use crate::setting;
use anyhow::{anyhow, Context, Result};
use kernelab_model::{FamilyRules, Grouping};
use kernelab_trace::{parse_time_range, Filters, RankOptions};
use regex::Regex;
use std::io::Read;
use std::path::PathBuf;

/// Rows before "other" in the terminal and Markdown views when `--top` is not given.
pub const DEFAULT_TOP: usize = 20;

/// The rows before "other" of one view: `top` where given (0: every row); else every row for
/// JSON and CSV (`machine`), which other tools read and must not lose rows from, and
/// [`DEFAULT_TOP`] for the views people read.
pub fn view_top(top: Option<usize>, machine: bool) -> usize {
    match top {
        Some(0) => usize::MAX,
        Some(n) => n,
        None if machine => usize::MAX,
        None => DEFAULT_TOP,
    }
}

/// The most rows `top` may ask for.
pub const MAX_TOP: usize = 1_000_000;
/// The largest family rules file read.
const MAX_RULES_BYTES: u64 = 16 << 20;

/// Grouping, family rules, filters and row count as a user gives them (`--group`, `--rules`,
/// `--name`, `--device`, `--stream`, `--time-range`, `--top`).
#[derive(Clone, Debug, Default)]
pub struct RankSettings {
    /// Rows per family (`true`) or per exact name.
    pub family: bool,
    /// A TOML file of family rules.
    pub rules: Option<PathBuf>,
    /// A regular expression on full kernel names.
    pub name: Option<String>,
    /// Only this device.
    pub device: Option<u32>,
    /// Only this stream or queue.
    pub stream: Option<u64>,
    /// `START:END` after the first kernel.
    pub time_range: Option<String>,
    /// Rows before "other" (`None` or 0: every row).
    pub top: Option<usize>,
}

/// Ranking settings from `s` (rules file read, regular expression and time range parsed).
pub fn rank_options(s: &RankSettings) -> Result<RankOptions> {
    let rules = match &s.rules {
        Some(path) => {
            let mut text = String::new();
            kernelab_model::open_regular(path)
                .and_then(|f| f.take(MAX_RULES_BYTES).read_to_string(&mut text))
                .with_context(|| format!("{}", path.display()))?;
            FamilyRules::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?
        }
        None => FamilyRules::default(),
    };
    let name = match &s.name {
        Some(re) => Some(
            Regex::new(re)
                .map_err(|e| setting(format!("--name: invalid regular expression: {e}")))?,
        ),
        None => None,
    };
    let time_range = match &s.time_range {
        Some(t) => Some(parse_time_range(t).map_err(|e| setting(format!("--time-range {e}")))?),
        None => None,
    };
    if let Some(top) = s.top.filter(|t| *t > MAX_TOP) {
        return Err(setting(format!("--top {top}: expected at most {MAX_TOP}")));
    }
    Ok(RankOptions {
        grouping: if s.family {
            Grouping::Family
        } else {
            Grouping::None
        },
        rules,
        top: s.top.filter(|&t| t > 0).unwrap_or(usize::MAX),
        filters: Filters {
            device: s.device,
            stream: s.stream,
            name,
            time_range,
        },
        ..RankOptions::default()
    })
}
