//! Several inputs ranked together (ranks, nodes: one profiler file each), with each input's own
//! share: its kernel time, kernel count and longest families, as `rocpd summary` breaks a
//! multi-process run down.

use kernelab_model::{family_key, NameId, Profile};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One input's part of the kernel time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankRow {
    /// The input file.
    pub input: String,
    /// Its rank, when the input names one (rocpd: `host/pid`).
    pub rank: Option<String>,
    /// Kernels it executed.
    pub kernels: u64,
    /// Their GPU time, ns.
    pub kernel_ns: u64,
    /// Its fraction of every input's kernel time.
    pub share: f64,
    /// Its families by GPU time, the longest first (at most 3): (family, ns).
    pub top: Vec<(String, u64)>,
}

/// One row per input of `profile`, in input order, from each source's dispatch range (inputs
/// without per-dispatch records have no kernels here).
pub fn ranks(profile: &Profile) -> Vec<RankRow> {
    let mut family_of: HashMap<NameId, String> = HashMap::new();
    let mut rows: Vec<RankRow> = profile
        .sources
        .iter()
        .map(|s| {
            let mut per: HashMap<String, u64> = HashMap::new();
            let (mut kernels, mut kernel_ns) = (0u64, 0u64);
            for i in s.dispatches.clone() {
                if let Some(d) = profile.dispatches.get(i) {
                    kernels += 1;
                    kernel_ns += d.duration.ns();
                    let f = family_of
                        .entry(d.name)
                        .or_insert_with(|| family_key(profile.names.name(d.name)));
                    *per.entry(f.clone()).or_default() += d.duration.ns();
                }
            }
            let mut top: Vec<(String, u64)> = per.into_iter().collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            top.truncate(3);
            RankRow {
                input: s.path.display().to_string(),
                rank: s
                    .facts
                    .iter()
                    .find(|(k, _)| k == "rank")
                    .map(|(_, v)| v.clone()),
                kernels,
                kernel_ns,
                share: 0.0,
                top,
            }
        })
        .collect();
    let total: u64 = rows.iter().map(|r| r.kernel_ns).sum();
    for r in &mut rows {
        r.share = if total > 0 {
            r.kernel_ns as f64 / total as f64
        } else {
            0.0
        };
    }
    rows
}
