//! The ranges a launch figure read from a profiler's output must lie in to be shown as a
//! measurement, in one place (docs/json.md, "Plausible ranges"). A figure outside its range
//! cannot be true of any part kernelab reads (a JAX profile of ROCm writes an uninitialised
//! register count of about two billion into every kernel): it is unavailable, and the input's
//! notes name the field and the value, never a measurement.

use crate::dispatch::LaunchConfig;
use crate::profile::Profile;
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// Registers per thread (NVIDIA: at most 255) or architectural VGPRs (AMD: at most 512).
pub const REGISTERS_PER_THREAD: RangeInclusive<u32> = 0..=512;
/// AMD accumulation VGPRs (AGPRs) per work-item: at most 256.
pub const AGPRS: RangeInclusive<u32> = 0..=256;
/// AMD scalar registers per wave: at most 128 (allocation granules included).
pub const SGPRS: RangeInclusive<u32> = 0..=128;
/// Shared memory (NVIDIA) or LDS (AMD) per block / work-group, bytes: at most 256 KiB (the
/// largest of any part: 228 KiB on H100/B200, 160 KiB of LDS on gfx950).
pub const SHARED_BYTES: RangeInclusive<u32> = 0..=256 * 1024;
/// Scratch / local memory per thread (work-item), bytes: at most 512 KiB (NVIDIA's limit on
/// local memory per thread; AMD's private segment is smaller).
pub const SCRATCH_BYTES: RangeInclusive<u32> = 0..=512 * 1024;
/// Threads per block / work-item per work-group, in each dimension and in all: at most 1024.
pub const BLOCK_THREADS: RangeInclusive<u64> = 1..=1024;
/// Each grid dimension (blocks, or work-items on rocprofv3): at least 1.
pub const GRID_DIM: RangeInclusive<u64> = 1..=u32::MAX as u64;

/// `cfg` with every figure outside its range made unavailable, and a note per such figure
/// (`registers per thread 2147483647: outside 0..=512, shown as unavailable`).
pub fn launch(cfg: LaunchConfig) -> (LaunchConfig, Vec<String>) {
    let mut out = cfg;
    let mut notes = Vec::new();
    let mut check = |field: &mut Option<u32>, what: &str, range: &RangeInclusive<u32>| {
        if let Some(v) = *field {
            if !range.contains(&v) {
                notes.push(note(what, &v.to_string(), &format!("{range:?}")));
                *field = None;
            }
        }
    };
    let r = &mut out.resources;
    check(
        &mut r.registers,
        "registers per thread",
        &REGISTERS_PER_THREAD,
    );
    check(&mut r.agprs, "AGPRs per work-item", &AGPRS);
    check(&mut r.sgprs, "SGPRs", &SGPRS);
    check(
        &mut r.shared_bytes,
        "shared memory / LDS bytes per block",
        &SHARED_BYTES,
    );
    check(
        &mut r.scratch_bytes,
        "scratch bytes per thread",
        &SCRATCH_BYTES,
    );
    if let Some(b) = out.block {
        let threads: u64 = b.iter().map(|&x| u64::from(x)).product();
        if !BLOCK_THREADS.contains(&threads) {
            let text = format!("{}x{}x{}", b[0], b[1], b[2]);
            let range = format!("{BLOCK_THREADS:?} threads");
            notes.push(note("block", &text, &range));
            out.block = None;
        }
    }
    if let Some(g) = out.grid {
        if g.iter().any(|&x| !GRID_DIM.contains(&u64::from(x))) {
            let text = format!("{}x{}x{}", g[0], g[1], g[2]);
            notes.push(note("grid", &text, &format!("{GRID_DIM:?} per dimension")));
            out.grid = None;
        }
    }
    (out, notes)
}

fn note(what: &str, value: &str, range: &str) -> String {
    format!("{what} {value}: outside {range}, shown as unavailable")
}

/// Applies [`launch`] to the launch configs interned from index `from` on (those one input
/// added), in place; returns one note per distinct finding with the number of launch configs it
/// touched, for the input's notes.
pub fn check_profile(profile: &mut Profile, from: usize) -> Vec<String> {
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    profile.launches.map_from(from, |cfg| {
        let (fixed, notes) = launch(*cfg);
        for n in notes {
            *found.entry(n).or_insert(0) += 1;
        }
        fixed
    });
    found
        .into_iter()
        .map(|(n, k)| {
            if k == 1 {
                n
            } else {
                format!("{n} (in {k} launch configurations)")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Resources;

    #[test]
    fn figures_outside_their_range_are_unavailable_with_a_note() {
        let cfg = LaunchConfig {
            grid: Some([1, 1, 0]),
            block: Some([2048, 1, 1]),
            resources: Resources {
                registers: Some(2_147_483_647),
                shared_bytes: Some(49_280),
                scratch_bytes: Some(u32::MAX),
                ..Resources::default()
            },
        };
        let (c, notes) = launch(cfg);
        assert_eq!(c.resources.registers, None);
        assert_eq!(c.resources.shared_bytes, Some(49_280));
        assert_eq!(c.resources.scratch_bytes, None);
        assert_eq!((c.grid, c.block), (None, None));
        assert!(
            notes.contains(
                &"registers per thread 2147483647: outside 0..=512, shown as unavailable"
                    .to_string()
            ),
            "{notes:?}"
        );
        assert_eq!(notes.len(), 4, "{notes:?}");
        let fine = LaunchConfig {
            grid: Some([69_840, 1, 1]),
            block: Some([256, 1, 1]),
            resources: Resources {
                registers: Some(128),
                ..Resources::default()
            },
        };
        assert_eq!(launch(fine), (fine, vec![]));
    }
}
