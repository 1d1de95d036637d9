//! Per-kernel (or per-family) rows, and the ranking of aggregate-only inputs (stats files).

use super::{Filters, RankOptions, Ranking, Summary};
use kernelab_model::{NameId, Nanos, Profile};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// The smallest and largest value of a resource over a row's dispatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ValueRange {
    /// Smallest.
    pub min: u32,
    /// Largest.
    pub max: u32,
}

/// One ranked row: a kernel (grouping `none`) or a family. Figures the input lacks are `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelRow {
    /// 1-based rank by total time (0 for the "other" row).
    pub rank: usize,
    /// The row's name: the kernel name, or the family key.
    pub name: String,
    /// The family key.
    pub family: String,
    /// Number of distinct kernel names in the row.
    pub variants: usize,
    /// Number of calls.
    pub calls: u64,
    /// Total time.
    pub total_ns: u64,
    /// Mean time per call.
    pub mean_ns: f64,
    /// Median time per call.
    pub median_ns: Option<f64>,
    /// Fastest call.
    pub min_ns: Option<u64>,
    /// Slowest call.
    pub max_ns: Option<u64>,
    /// Sample standard deviation of call times.
    pub stddev_ns: Option<f64>,
    /// Share of all kernel time (0..1).
    pub share: f64,
    /// Grid: `[x, y, z]`, or `{"varies": N}` when the row's launches differ.
    pub grid: Option<Geometry>,
    /// Block: `[x, y, z]`, or `{"varies": N}`.
    pub block: Option<Geometry>,
    /// Registers per thread (NVIDIA) or architectural VGPRs (AMD).
    pub registers: Option<ValueRange>,
    /// AMD AGPRs.
    pub agprs: Option<ValueRange>,
    /// AMD SGPRs.
    pub sgprs: Option<ValueRange>,
    /// Shared memory / LDS bytes.
    pub shared_bytes: Option<ValueRange>,
    /// Scratch / local memory bytes per thread.
    pub scratch_bytes: Option<ValueRange>,
    /// True when register figures are allocation granules, not compiler counts.
    pub register_granules: bool,
}

/// A row from its figures: `variants` distinct names, `calls` calls with statistics `s`, run
/// with the launch configurations `configs`; `share` of `kernel_time`.
pub(super) fn assemble(
    name: String,
    family: String,
    variants: usize,
    calls: u64,
    s: &crate::durations::CallStats,
    configs: &[kernelab_model::LaunchConfig],
    kernel_time: u64,
) -> KernelRow {
    let res: Vec<kernelab_model::Resources> = configs.iter().map(|c| c.resources).collect();
    KernelRow {
        rank: 0,
        name,
        family,
        variants,
        calls,
        total_ns: s.total,
        mean_ns: s.mean,
        median_ns: s.median,
        min_ns: s.min,
        max_ns: s.max,
        stddev_ns: s.stddev,
        share: if kernel_time > 0 {
            s.total as f64 / kernel_time as f64
        } else {
            0.0
        },
        grid: shape(&configs.iter().map(|c| c.grid).collect()),
        block: shape(&configs.iter().map(|c| c.block).collect()),
        registers: range(res.iter().map(|r| r.registers)),
        agprs: range(res.iter().map(|r| r.agprs)),
        sgprs: range(res.iter().map(|r| r.sgprs)),
        shared_bytes: range(res.iter().map(|r| r.shared_bytes)),
        scratch_bytes: range(res.iter().map(|r| r.scratch_bytes)),
        register_granules: res.iter().any(|r| r.granules),
    }
}

/// A launch geometry of a row: one `[x, y, z]` for every launch, or how many distinct ones
/// its launches have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Geometry {
    /// Every launch of the row has these dimensions.
    Dims([u32; 3]),
    /// The launches differ.
    Varies {
        /// Distinct dimension triples.
        varies: usize,
    },
}

impl std::fmt::Display for Geometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Geometry::Dims([x, y, z]) => write!(f, "{x}x{y}x{z}"),
            Geometry::Varies { varies } => write!(f, "varies ({varies})"),
        }
    }
}

pub(super) fn shape(configs: &BTreeSet<Option<[u32; 3]>>) -> Option<Geometry> {
    let known: Vec<&[u32; 3]> = configs.iter().flatten().collect();
    match known.len() {
        0 => None,
        1 => Some(Geometry::Dims(*known[0])),
        n => Some(Geometry::Varies { varies: n }),
    }
}

pub(super) fn range(values: impl Iterator<Item = Option<u32>>) -> Option<ValueRange> {
    let mut r: Option<ValueRange> = None;
    for v in values.flatten() {
        r = Some(match r {
            None => ValueRange { min: v, max: v },
            Some(x) => ValueRange {
                min: x.min.min(v),
                max: x.max.max(v),
            },
        });
    }
    r
}

/// Per-kernel aggregates being combined; figures that cannot be combined exactly become `None`.
#[derive(Default)]
struct Aggregate {
    calls: u64,
    /// Exact total in units of 10⁻⁹ ns, rounded once when the row is made.
    total_e9: u128,
    min: Option<u64>,
    max: Option<u64>,
    stddev: Option<f64>,
    median: Option<f64>,
    parts: usize,
    variants: usize,
}

impl Aggregate {
    /// Adds one more part (a kernel's stats line, or a whole row).
    fn add(
        &mut self,
        calls: u64,
        total_e9: u128,
        min: Option<u64>,
        max: Option<u64>,
        stddev: Option<f64>,
        median: Option<f64>,
    ) {
        let first = self.parts == 0;
        self.calls += calls;
        self.total_e9 += total_e9;
        self.min = if first {
            min
        } else {
            self.min.zip(min).map(|(x, y)| x.min(y))
        };
        self.max = if first {
            max
        } else {
            self.max.zip(max).map(|(x, y)| x.max(y))
        };
        // Standard deviations and medians cannot be combined without the samples.
        self.stddev = if first { stddev } else { None };
        self.median = if first { median } else { None };
        self.parts += 1;
    }

    fn total(&self) -> u64 {
        crate::rocprof::round_e9(self.total_e9).ns()
    }

    fn row(&self, name: String, family: String, kernel_time: u64) -> KernelRow {
        let total = self.total();
        KernelRow {
            rank: 0,
            name,
            family,
            variants: self.variants,
            calls: self.calls,
            total_ns: total,
            mean_ns: if self.calls > 0 {
                self.total_e9 as f64 / 1e9 / self.calls as f64
            } else {
                0.0
            },
            median_ns: self.median,
            min_ns: self.min,
            max_ns: self.max,
            stddev_ns: self.stddev,
            share: if kernel_time > 0 {
                total as f64 / kernel_time as f64
            } else {
                0.0
            },
            grid: None,
            block: None,
            registers: None,
            agprs: None,
            sgprs: None,
            shared_bytes: None,
            scratch_bytes: None,
            register_granules: false,
        }
    }
}

/// Ranks aggregate-only inputs (stats files): figures they lack stay `None`.
pub(super) fn rank_aggregates(
    profile: &Profile,
    options: &RankOptions,
    key_of: &mut dyn FnMut(NameId) -> String,
) -> Ranking {
    let f = &options.filters;
    // Only the name filter applies to aggregates: only it is stated as applied.
    let applied = Filters {
        name: f.name.clone(),
        ..Filters::default()
    };
    let mut notes: Vec<String> = applied.describe().into_iter().collect();
    if f.device.is_some() || f.stream.is_some() || f.time_range.is_some() {
        notes.push(
            "--device, --stream and --time-range need per-dispatch records and were not applied"
                .into(),
        );
    }
    if options.by_phase {
        notes.push(
            "--by-phase needs per-dispatch records and annotations; the input has neither".into(),
        );
    }
    let mut groups: HashMap<String, (Aggregate, BTreeSet<NameId>)> = HashMap::new();
    for a in &profile.aggregates {
        if f.name
            .as_ref()
            .is_some_and(|re| !re.is_match(profile.names.name(a.name)))
        {
            continue;
        }
        let (acc, names) = groups
            .entry(key_of(a.name))
            .or_insert_with(|| (Aggregate::default(), BTreeSet::new()));
        acc.add(
            a.calls,
            a.total_e9,
            a.min.map(Nanos::ns),
            a.max.map(Nanos::ns),
            a.stddev_ns,
            a.median_ns,
        );
        names.insert(a.name);
        acc.variants = names.len();
    }
    let exact: u128 = groups.values().map(|(a, _)| a.total_e9).sum();
    let kernel_time = crate::rocprof::round_e9(exact).ns();
    let summary = Summary {
        kernel_time_ns: kernel_time,
        kernel_count: groups.values().map(|(a, _)| a.calls).sum(),
        distinct_kernels: groups.values().map(|(_, n)| n.len()).sum(),
        groups: groups.len(),
        ..Summary::default()
    };
    let none = options.grouping == kernelab_model::Grouping::None;
    let exact_of: HashMap<String, u128> = groups
        .iter()
        .map(|(k, (a, _))| (k.clone(), a.total_e9))
        .collect();
    let mut rows: Vec<KernelRow> = groups
        .into_iter()
        .map(|(k, (a, _))| {
            let family = if none {
                options.rules.family_of(&k)
            } else {
                k.clone()
            };
            a.row(k, family, kernel_time)
        })
        .collect();
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    let other = (rows.len() > options.top).then(|| {
        let rest = rows.split_off(options.top);
        let mut acc = Aggregate::default();
        for r in &rest {
            let exact = exact_of.get(&r.name).copied().unwrap_or_default();
            acc.add(r.calls, exact, r.min_ns, r.max_ns, None, None);
            acc.variants += r.variants;
        }
        let label = format!(
            "other ({} {})",
            rest.len(),
            kernelab_model::plural(rest.len(), "row", "rows")
        );
        acc.row(label.clone(), label, kernel_time)
    });
    Ranking {
        rows,
        other,
        summary,
        outliers: Vec::new(),
        phases: None,
        notes,
        activities: Vec::new(),
    }
}
