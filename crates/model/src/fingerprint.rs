//! The conditions a measurement ran under (issue #43, "same machine, same conditions"): each
//! GPU's identity and settings as its vendor's tool reports them, the CUDA or ROCm version and
//! the benchmark command. A value the tool does not report, or a tool that is not there, is
//! `null` (unavailable), never guessed.

use serde::{Deserialize, Serialize};

/// One GPU's identity and settings, as reported (`null`: unavailable).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpuState {
    /// The GPU's UUID (`GPU-…`) or unique id.
    pub uuid: Option<String>,
    /// The part (`NVIDIA H100 80GB HBM3`).
    pub name: Option<String>,
    /// The driver version.
    pub driver: Option<String>,
    /// The application (target) SM clock, MHz.
    pub sm_clock_mhz: Option<String>,
    /// The application (target) memory clock, MHz.
    pub memory_clock_mhz: Option<String>,
    /// Whether the clocks are set or locked away from their defaults (application clocks
    /// other than the default ones, or the clocks held by that setting).
    pub clocks_locked: Option<bool>,
    /// The power cap in force, W.
    pub power_limit_w: Option<String>,
    /// ECC mode (`Enabled`, `Disabled`).
    pub ecc: Option<String>,
    /// Persistence mode (`Enabled`, `Disabled`).
    pub persistence: Option<String>,
    /// Compute mode (`Default`, `Exclusive_Process`, `Prohibited`).
    pub compute_mode: Option<String>,
}

/// The conditions of one round of a measurement: the machine's GPUs and the command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fingerprint {
    /// The tool that reported the GPUs (`nvidia-smi`, `rocm-smi`); `null` when none is there.
    pub tool: Option<String>,
    /// The CUDA or ROCm version the driver reports (`CUDA 13.0`).
    pub runtime: Option<String>,
    /// Every GPU the tool reports, in its order.
    pub gpus: Vec<GpuState>,
    /// The benchmark command, where the run has one command for both sides.
    pub command: Option<String>,
}

/// A field whose value differs between two fingerprints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FingerprintChange {
    /// The field (`gpu 0 sm_clock_mhz`).
    pub field: String,
    /// Its value in the first fingerprint (`null`: unavailable).
    pub was: Option<String>,
    /// Its value in the other (`null`: unavailable).
    pub now: Option<String>,
    /// Where the other was taken (`pair 12`).
    pub at: String,
}

impl FingerprintChange {
    /// `field: was → now (at)`, unavailable values written as such.
    pub fn describe(&self) -> String {
        let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "unavailable".into());
        format!(
            "{}: {} → {} ({})",
            self.field,
            v(&self.was),
            v(&self.now),
            self.at
        )
    }
}

/// The conditions of a measurement: the fingerprint of its first round and every field that
/// differed in a later one (a verdict whose sides ran under other conditions is refused).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Conditions {
    /// The first round's fingerprint.
    pub fingerprint: Fingerprint,
    /// The fields that differed from it in a later round, first difference of each field.
    pub changed: Vec<FingerprintChange>,
}

impl Conditions {
    /// The conditions of `rounds` (each fingerprint with where it was taken): the first one,
    /// and the first difference of each field in the others. `None` when there is none.
    pub fn of<'a>(rounds: impl IntoIterator<Item = (&'a Fingerprint, String)>) -> Option<Self> {
        let mut it = rounds.into_iter();
        let (first, _) = it.next()?;
        let mut changed: Vec<FingerprintChange> = Vec::new();
        for (f, at) in it {
            for (field, was, now) in first.differences(f) {
                if !changed.iter().any(|c| c.field == field) {
                    changed.push(FingerprintChange {
                        field,
                        was,
                        now,
                        at: at.clone(),
                    });
                }
            }
        }
        Some(Conditions {
            fingerprint: first.clone(),
            changed,
        })
    }
}

/// A value as text (`null` stays `None`).
fn text(v: &Option<bool>) -> Option<String> {
    v.map(|b| if b { "yes" } else { "no" }.to_string())
}

impl GpuState {
    /// Every field, by name, as text.
    pub fn fields(&self) -> [(&'static str, Option<String>); 10] {
        [
            ("uuid", self.uuid.clone()),
            ("name", self.name.clone()),
            ("driver", self.driver.clone()),
            ("sm_clock_mhz", self.sm_clock_mhz.clone()),
            ("memory_clock_mhz", self.memory_clock_mhz.clone()),
            ("clocks_locked", text(&self.clocks_locked)),
            ("power_limit_w", self.power_limit_w.clone()),
            ("ecc", self.ecc.clone()),
            ("persistence", self.persistence.clone()),
            ("compute_mode", self.compute_mode.clone()),
        ]
    }
}

impl Fingerprint {
    /// Every field, by name (a GPU's as `gpu N FIELD`), as text.
    pub fn fields(&self) -> Vec<(String, Option<String>)> {
        let mut out = vec![
            ("tool".to_string(), self.tool.clone()),
            ("runtime".to_string(), self.runtime.clone()),
            ("gpus".to_string(), Some(self.gpus.len().to_string())),
            ("command".to_string(), self.command.clone()),
        ];
        for (i, g) in self.gpus.iter().enumerate() {
            out.extend(
                g.fields()
                    .into_iter()
                    .map(|(name, v)| (format!("gpu {i} {name}"), v)),
            );
        }
        out
    }

    /// The fields whose values differ from `other`'s: `(field, self's, other's)`. A GPU only
    /// one of them has counts its every field as differing.
    pub fn differences(
        &self,
        other: &Fingerprint,
    ) -> Vec<(String, Option<String>, Option<String>)> {
        let (a, b) = (self.fields(), other.fields());
        let mut out: Vec<(String, Option<String>, Option<String>)> = Vec::new();
        for (name, va) in &a {
            let vb = b
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.clone());
            if *va != vb {
                out.push((name.clone(), va.clone(), vb));
            }
        }
        for (name, vb) in &b {
            if !a.iter().any(|(n, _)| n == name) && vb.is_some() {
                out.push((name.clone(), None, vb.clone()));
            }
        }
        out
    }

    /// One line for people: the tool, the runtime and each GPU's part, UUID and settings.
    pub fn line(&self) -> String {
        let Some(tool) = &self.tool else {
            return "no GPU tool (nvidia-smi, rocm-smi) found: conditions unavailable".into();
        };
        let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "unavailable".into());
        let mut parts = vec![format!("{tool}, {}", v(&self.runtime))];
        for (i, g) in self.gpus.iter().enumerate() {
            parts.push(format!(
                "gpu {i} {} {} driver {}, SM {} MHz, memory {} MHz, clocks {}, power cap {} W, \
                 ECC {}, persistence {}, compute mode {}",
                v(&g.name),
                v(&g.uuid),
                v(&g.driver),
                v(&g.sm_clock_mhz),
                v(&g.memory_clock_mhz),
                match g.clocks_locked {
                    Some(true) => "locked",
                    Some(false) => "default",
                    None => "unavailable",
                },
                v(&g.power_limit_w),
                v(&g.ecc),
                v(&g.persistence),
                v(&g.compute_mode),
            ));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(clock: &str) -> Fingerprint {
        Fingerprint {
            tool: Some("nvidia-smi".into()),
            runtime: Some("CUDA 13.0".into()),
            gpus: vec![GpuState {
                uuid: Some("GPU-1".into()),
                sm_clock_mhz: Some(clock.into()),
                ..Default::default()
            }],
            command: Some("./bench".into()),
        }
    }

    #[test]
    fn a_changed_clock_is_named_with_both_values_and_where() {
        let (a, b) = (gpu("1980"), gpu("1410"));
        let c = Conditions::of([
            (&a, "pair 0".into()),
            (&a, "pair 1".into()),
            (&b, "pair 2".into()),
        ])
        .expect("rounds");
        assert_eq!(c.fingerprint, a);
        assert_eq!(c.changed.len(), 1);
        assert_eq!(
            c.changed[0].describe(),
            "gpu 0 sm_clock_mhz: 1980 → 1410 (pair 2)"
        );
    }

    #[test]
    fn same_conditions_have_no_change_and_a_lost_gpu_is_one() {
        let a = gpu("1980");
        let c = Conditions::of([(&a, "pair 0".into()), (&a, "pair 1".into())]).expect("rounds");
        assert!(c.changed.is_empty());
        let none = Fingerprint::default();
        let d = a.differences(&none);
        assert!(d.iter().any(|(f, _, _)| f == "gpus"), "{d:?}");
        assert!(d.iter().any(|(f, _, _)| f == "gpu 0 uuid"), "{d:?}");
        assert!(Conditions::of(std::iter::empty()).is_none());
    }
}
