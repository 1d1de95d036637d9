//! The work the inputs record for their kernels (PyTorch Inductor's `kernel_flop` and
//! `kernel_num_gb`, Proton's `flops*` and `bytes`), summed per family, and how it stands
//! against a work model's.

use kernelab_model::roofline::{Figure, Roof};
use kernelab_model::{family_key, FlopWidth, Profile, WorkOf};
use kernelab_report::format::decimal;
use std::collections::{BTreeMap, BTreeSet};

/// A relative difference between the work model and the trace beyond this is listed.
pub(super) const DISAGREEMENT: f64 = 0.01;

/// One family's recorded work: sums over the launches that record each figure.
#[derive(Debug, Default)]
pub(super) struct Recorded {
    flops: f64,
    flop_launches: u64,
    bytes: f64,
    byte_launches: u64,
    widths: BTreeSet<FlopWidth>,
    flops_keys: BTreeSet<&'static str>,
    bytes_keys: BTreeSet<&'static str>,
}

/// The recorded work of every family that has some.
pub(super) fn by_family(profile: &Profile) -> BTreeMap<String, Recorded> {
    let mut out: BTreeMap<String, Recorded> = BTreeMap::new();
    let mut family_of: std::collections::HashMap<kernelab_model::NameId, String> =
        Default::default();
    for w in &profile.recorded_work {
        let (name, calls) = match w.of {
            WorkOf::Dispatch(i) => match profile.dispatches.get(i) {
                Some(d) => (d.name, 1),
                None => continue,
            },
            WorkOf::Aggregate(i) => match profile.aggregates.get(i) {
                Some(a) => (a.name, a.calls),
                None => continue,
            },
        };
        let family = family_of
            .entry(name)
            .or_insert_with(|| family_key(profile.names.name(name)));
        let r = out.entry(family.clone()).or_default();
        if let Some(f) = w.flops {
            r.flops += f;
            r.flop_launches += calls;
            r.widths.insert(w.width);
            r.flops_keys.insert(w.flops_key);
        }
        if let Some(b) = w.bytes {
            r.bytes += b;
            r.byte_launches += calls;
            r.bytes_keys.insert(w.bytes_key);
        }
    }
    out
}

/// Keys as a list: `kernel_flop, kernel_num_gb`.
fn keys(k: &BTreeSet<&'static str>) -> String {
    k.iter().copied().collect::<Vec<_>>().join(", ")
}

impl Recorded {
    /// The keys the figures were read from: `kernel_flop, kernel_num_gb`.
    pub(super) fn keys(&self) -> String {
        let all: Vec<&str> = self
            .flops_keys
            .iter()
            .chain(&self.bytes_keys)
            .copied()
            .collect();
        all.join(", ")
    }

    /// The FLOPs of the family's `calls` launches: every launch must record them, and a count
    /// of 0 (Inductor's "no formula for this kernel") is no count.
    pub(super) fn flops(&self, calls: u64) -> Figure {
        let key = keys(&self.flops_keys);
        match self.flop_launches {
            0 => Figure::unavailable("no work-model rule, and the trace records no FLOPs"),
            n if n != calls => Figure::unavailable(format!(
                "the trace records FLOPs ({key}) for {n} of {calls} launches"
            )),
            _ if self.flops == 0.0 => {
                Figure::unavailable(format!("the trace records 0 FLOPs ({key})"))
            }
            _ => Figure::Value(self.flops),
        }
    }

    /// The bytes of the family's `calls` launches (every launch must record them).
    pub(super) fn bytes(&self, calls: u64) -> Figure {
        let key = keys(&self.bytes_keys);
        match self.byte_launches {
            0 => Figure::unavailable("no work-model rule, and the trace records no bytes"),
            n if n != calls => Figure::unavailable(format!(
                "the trace records bytes ({key}) for {n} of {calls} launches"
            )),
            _ => Figure::Value(self.bytes),
        }
    }

    /// The roof the recorded FLOPs run against: their width where said, else FP32 (as for a
    /// rule without `roof`); none for FP64 or several widths.
    pub(super) fn roof(&self) -> Option<Roof> {
        let mut widths = self.widths.iter();
        match (widths.next(), widths.next()) {
            (Some(FlopWidth::Fp8), None) => Some(Roof::Fp8),
            (Some(FlopWidth::Fp16), None) => Some(Roof::Fp16),
            (Some(FlopWidth::Fp32 | FlopWidth::Unsaid), None) | (None, _) => Some(Roof::Fp32),
            _ => None,
        }
    }

    /// Whether the FLOPs' width is not said (so the roof is FP32 by default).
    pub(super) fn width_unsaid(&self) -> bool {
        self.widths.contains(&FlopWidth::Unsaid)
    }

    /// Where the work model's figures for `calls` launches differ from the recorded ones by
    /// more than [`DISAGREEMENT`]: `FLOPs/launch 2.147 GFLOP (model) against 1.074 GFLOP
    /// (trace: kernel_flop), +100.0%`, one part per figure.
    pub(super) fn disagreements(&self, model: (&Figure, &Figure), calls: u64) -> Vec<String> {
        let per = calls.max(1) as f64;
        let mut out = Vec::new();
        let pairs = [
            (
                "FLOPs/launch",
                model.0,
                self.flops(calls),
                &self.flops_keys,
                1e9,
                "GFLOP",
            ),
            (
                "bytes/launch",
                model.1,
                self.bytes(calls),
                &self.bytes_keys,
                1e6,
                "MB",
            ),
        ];
        for (what, m, t, k, scale, unit) in pairs {
            let show = |v: f64| format!("{} {unit}", decimal(v / scale, 3));
            let (Some(m), Some(t)) = (m.value(), t.value()) else {
                continue;
            };
            if t > 0.0 && ((m - t) / t).abs() <= DISAGREEMENT {
                continue;
            }
            let change = if t > 0.0 {
                format!(", {:+.1}%", 100.0 * (m - t) / t)
            } else {
                String::new()
            };
            out.push(format!(
                "{what} {} (model) against {} (trace: {}){change}",
                show(m / per),
                show(t / per),
                keys(k)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::{KernelAggregate, RecordedWork};

    fn work(of: WorkOf, flops: Option<f64>, width: FlopWidth, bytes: Option<f64>) -> RecordedWork {
        RecordedWork {
            of,
            flops,
            width,
            bytes,
            flops_key: "flops16",
            bytes_key: "bytes",
        }
    }

    #[test]
    fn families_sum_their_launches_and_partial_figures_say_how_many() {
        let mut p = Profile::default();
        for (name, calls) in [("k_a", 3), ("k_b", 2)] {
            let name = p.names.intern_str(name);
            p.aggregates.push(KernelAggregate {
                name,
                calls,
                total: kernelab_model::Nanos::from_ns(10),
                total_e9: 10_000_000_000,
                min: None,
                max: None,
                stddev_ns: None,
                median_ns: None,
            });
        }
        p.recorded_work = vec![
            work(WorkOf::Aggregate(0), Some(3e9), FlopWidth::Fp16, Some(6e6)),
            work(WorkOf::Aggregate(1), None, FlopWidth::Unsaid, Some(4e6)),
            work(WorkOf::Aggregate(9), Some(1.0), FlopWidth::Fp8, None),
        ];
        let r = by_family(&p);
        let a = &r[&family_key("k_a")];
        assert_eq!(a.flops(3), Figure::Value(3e9));
        assert_eq!(a.bytes(3), Figure::Value(6e6));
        assert_eq!(a.roof(), Some(Roof::Fp16));
        assert_eq!(
            a.flops(4).to_string(),
            "unavailable (the trace records FLOPs (flops16) for 3 of 4 launches)"
        );
        let b = &r[&family_key("k_b")];
        assert!(b.flops(2).value().is_none());
        assert_eq!(b.bytes(2), Figure::Value(4e6));
        assert_eq!(b.roof(), Some(Roof::Fp32));
        // 1% either way is agreement; past it, each figure is listed with its change.
        let model = (Figure::Value(3.03e9), Figure::Value(6.6e6));
        let d = a.disagreements((&model.0, &model.1), 3);
        assert_eq!(
            d,
            ["bytes/launch 2.200 MB (model) against 2.000 MB (trace: bytes), +10.0%"]
        );
    }
}
