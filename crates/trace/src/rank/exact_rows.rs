//! Rows of fractional inputs (rocprof-compute averages, whose times carry sub-nanosecond
//! remainders): every dispatch of a group is looked at with its exact duration, sums are exact
//! and rounded once. Such inputs are small; whole-nanosecond inputs (every other format) take
//! the compact path of `groups.rs`.

use super::rows::{assemble, KernelRow};
use super::{Outlier, RankOptions};
use kernelab_model::{KernelDispatch, LaunchConfig, NameId, Profile};
use std::collections::HashMap;

/// Builds one row from the dispatches of a group.
fn row(
    profile: &Profile,
    name: String,
    family: String,
    ds: &[&KernelDispatch],
    kernel_time: u64,
) -> KernelRow {
    // Exact sums rounded once, per-call figures from the exact values.
    let stats = crate::durations::call_stats(&profile.remainders, ds);
    let n = ds.len();
    let mut launch_ids: Vec<u32> = ds.iter().map(|d| d.launch).collect();
    launch_ids.sort_unstable();
    launch_ids.dedup();
    let configs: Vec<LaunchConfig> = launch_ids
        .iter()
        .filter_map(|&i| profile.launches.get(i).copied())
        .collect();
    let mut names: Vec<NameId> = ds.iter().map(|d| d.name).collect();
    names.sort_unstable();
    names.dedup();
    assemble(
        name,
        family,
        names.len(),
        n as u64,
        &stats,
        &configs,
        kernel_time,
    )
}

type Ranked = (Vec<KernelRow>, Option<KernelRow>, usize);

/// Groups dispatches into rows, ranks them by total time, keeps the top rows and folds the rest
/// into "other".
pub(super) fn rank_dispatches(
    profile: &Profile,
    selected: &[&KernelDispatch],
    options: &RankOptions,
    kernel_time: u64,
    key_of: &mut dyn FnMut(NameId) -> String,
) -> Ranked {
    let mut groups: HashMap<String, Vec<&KernelDispatch>> = HashMap::new();
    let mut family_of: HashMap<String, String> = HashMap::new();
    let mut key_cache: HashMap<NameId, String> = HashMap::new();
    for d in selected {
        let key = key_cache
            .entry(d.name)
            .or_insert_with(|| key_of(d.name))
            .clone();
        if !family_of.contains_key(&key) {
            let fam = if options.grouping == kernelab_model::Grouping::None {
                options.rules.family_of(&key)
            } else {
                key.clone()
            };
            family_of.insert(key.clone(), fam);
        }
        groups.entry(key).or_default().push(d);
    }
    let mut rows: Vec<KernelRow> = groups
        .iter()
        .map(|(k, ds)| {
            row(
                profile,
                k.clone(),
                family_of.get(k).cloned().unwrap_or_default(),
                ds,
                kernel_time,
            )
        })
        .collect();
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    let n_groups = rows.len();
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    let other = if rows.len() > options.top {
        let rest = rows.split_off(options.top);
        let ds: Vec<&KernelDispatch> = rest
            .iter()
            .flat_map(|r| groups[&r.name].iter().copied())
            .collect();
        let label = format!(
            "other ({} {})",
            rest.len(),
            if options.grouping == kernelab_model::Grouping::None {
                "kernels"
            } else {
                "families"
            }
        );
        let mut o = row(profile, label.clone(), label, &ds, kernel_time);
        o.variants = rest.iter().map(|r| r.variants).sum();
        Some(o)
    } else {
        None
    };
    (rows, other, n_groups)
}

/// Kernels (exact names, whatever the grouping) whose slowest call exceeds `factor` times their
/// median, slowest first.
pub(super) fn outliers(
    profile: &Profile,
    selected: &[&KernelDispatch],
    factor: f64,
) -> Vec<Outlier> {
    let mut by_name: HashMap<NameId, Vec<&KernelDispatch>> = HashMap::new();
    for d in selected {
        by_name.entry(d.name).or_default().push(d);
    }
    let mut out: Vec<Outlier> = by_name
        .into_iter()
        .filter_map(|(name, ds)| {
            let durs = crate::durations::sorted_ns(&profile.remainders, &ds);
            let n = durs.len();
            let median = if n % 2 == 1 {
                durs[n / 2]
            } else {
                (durs[n / 2 - 1] + durs[n / 2]) / 2.0
            };
            let max = ds.iter().map(|d| d.duration.ns()).max()?;
            if median > 0.0 && *durs.last()? > factor * median {
                let over = durs.iter().filter(|&&x| x > factor * median).count() as u64;
                Some(Outlier {
                    name: profile.names.name(name).to_string(),
                    max_ns: max,
                    median_ns: median,
                    calls_over: over,
                    factor,
                })
            } else {
                None
            }
        })
        .collect();
    out.sort_by(|a, b| b.max_ns.cmp(&a.max_ns).then_with(|| a.name.cmp(&b.name)));
    out
}
