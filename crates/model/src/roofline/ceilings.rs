//! The ceilings document: a device's identity and clocks, and each ceiling measured (with how)
//! and quoted from a datasheet (with where), side by side; the measured figure wins.

use crate::roofline::ceiling_kind::{CeilingKind, Measured, Quoted};
use crate::roofline::datasheet::datasheet_for;
use crate::roofline::Figure;
use serde::{Deserialize, Serialize};

/// One ceiling, measured and quoted where each is known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ceiling {
    /// Which ceiling.
    pub kind: CeilingKind,
    /// Its unit.
    pub unit: String,
    /// The measured figure, or why there is none.
    pub measured: Option<Measured>,
    /// Why it was not measured, when it was not.
    pub not_measured: Option<String>,
    /// The datasheet figure, when the device is in the table.
    pub datasheet: Option<Quoted>,
}

impl Ceiling {
    /// The figure used: measured when there is one, else the datasheet's.
    pub fn used(&self) -> Figure {
        match (&self.measured, &self.datasheet) {
            (Some(m), _) => Figure::Value(m.value),
            (None, Some(q)) => Figure::Value(q.value),
            (None, None) => Figure::unavailable(format!(
                "no {} ceiling: {}",
                self.kind.label(),
                self.not_measured
                    .as_deref()
                    .unwrap_or("not measured and not in the datasheet table")
            )),
        }
    }
}

/// Who the device is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceIdentity {
    /// Name as the driver gives it.
    pub name: String,
    /// Compute capability (`9.0`) or GPU architecture (`gfx942`).
    pub arch: Option<String>,
    /// Multiprocessors (compute units).
    pub multiprocessors: Option<u32>,
    /// L2 size, bytes.
    pub l2_bytes: Option<u64>,
    /// Device memory, bytes.
    pub memory_bytes: Option<u64>,
    /// Driver version.
    pub driver: Option<String>,
    /// The datasheet entry matched, when one was.
    pub datasheet_entry: Option<String>,
}

/// Clocks read around the measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Clocks {
    /// SM clock after the measurement, MHz.
    pub sm_mhz: Option<u32>,
    /// Maximum SM clock, MHz.
    pub sm_max_mhz: Option<u32>,
    /// Memory clock, MHz.
    pub memory_mhz: Option<u32>,
}

/// The `ceilings` document body.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ceilings {
    /// The device.
    pub device: DeviceIdentity,
    /// Clocks.
    pub clocks: Clocks,
    /// Every ceiling, in [`CeilingKind::ALL`] order.
    pub ceilings: Vec<Ceiling>,
}

impl crate::Body for Ceilings {
    const KIND: &'static str = "ceilings";
}

impl Ceilings {
    /// The first figure that is not a finite number above zero, as (JSON key path, value):
    /// a ceiling of zero or below is refused, never divided by.
    pub fn non_positive(&self) -> Option<(String, f64)> {
        for (i, c) in self.ceilings.iter().enumerate() {
            let figures = [
                ("measured", c.measured.as_ref().map(|m| m.value)),
                ("datasheet", c.datasheet.as_ref().map(|q| q.value)),
            ];
            for (which, v) in figures {
                if let Some(v) = v {
                    if !(v.is_finite() && v > 0.0) {
                        return Some((
                            format!("ceilings[{i}].{which}.value ({})", c.kind.label()),
                            v,
                        ));
                    }
                }
            }
        }
        None
    }

    /// Ceilings from the datasheet table alone, for a device name (`None` when the table has
    /// no entry for it).
    pub fn from_datasheet(device: &str) -> Option<Ceilings> {
        let sheet = datasheet_for(device)?;
        let mut c = Ceilings::merge(
            DeviceIdentity {
                name: device.to_string(),
                ..DeviceIdentity::default()
            },
            Clocks::default(),
            Vec::new(),
        );
        c.device.datasheet_entry = Some(sheet.name.to_string());
        for x in &mut c.ceilings {
            x.not_measured = Some("datasheet only".into());
        }
        Some(c)
    }

    /// Measured figures (kind, figure or why not) merged with the datasheet entry matching
    /// the device's name.
    pub fn merge(
        mut device: DeviceIdentity,
        clocks: Clocks,
        measured: Vec<(CeilingKind, Result<Measured, String>)>,
    ) -> Ceilings {
        let sheet = datasheet_for(&device.name);
        device.datasheet_entry = sheet.map(|s| s.name.to_string());
        let ceilings = CeilingKind::ALL
            .iter()
            .map(|&kind| {
                let m = measured.iter().find(|(k, _)| *k == kind).map(|(_, m)| m);
                Ceiling {
                    kind,
                    unit: kind.unit().to_string(),
                    measured: m.and_then(|m| m.as_ref().ok().cloned()),
                    not_measured: match m {
                        Some(Err(why)) => Some(why.clone()),
                        Some(Ok(_)) => None,
                        None => Some("not measured".into()),
                    },
                    datasheet: sheet.and_then(|s| s.quote(kind)),
                }
            })
            .collect();
        Ceilings {
            device,
            clocks,
            ceilings,
        }
    }

    /// The ceiling of one kind.
    pub fn get(&self, kind: CeilingKind) -> Option<&Ceiling> {
        self.ceilings.iter().find(|c| c.kind == kind)
    }

    /// The figure used for one kind (measured wins), or why there is none.
    pub fn used(&self, kind: CeilingKind) -> Figure {
        match self.get(kind) {
            Some(c) => c.used(),
            None => Figure::unavailable(format!("no {} ceiling", kind.label())),
        }
    }

    /// The DRAM bandwidth a roofline uses: the copy figure, else the read-only one.
    pub fn bandwidth(&self) -> Figure {
        match self.used(CeilingKind::DramCopy) {
            Figure::Value(v) => Figure::Value(v),
            u => match self.used(CeilingKind::DramRead) {
                Figure::Value(v) => Figure::Value(v),
                _ => u,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_wins_and_both_are_kept() {
        let c = Ceilings::merge(
            DeviceIdentity {
                name: "NVIDIA H200".into(),
                ..DeviceIdentity::default()
            },
            Clocks::default(),
            vec![
                (
                    CeilingKind::DramCopy,
                    Ok(Measured {
                        value: 4.2e12,
                        method: "copy".into(),
                    }),
                ),
                (CeilingKind::Fp8Tensor, Err("no cuBLASLt".into())),
            ],
        );
        assert_eq!(c.device.datasheet_entry.as_deref(), Some("NVIDIA H200 SXM"));
        let copy = c.get(CeilingKind::DramCopy).expect("copy");
        assert_eq!(copy.used(), Figure::Value(4.2e12));
        assert_eq!(copy.datasheet.as_ref().map(|q| q.value), Some(4.8e12));
        assert_eq!(c.used(CeilingKind::Fp8Tensor).value(), Some(1979e12));
        assert_eq!(c.bandwidth(), Figure::Value(4.2e12));
        let none = Ceilings::merge(
            DeviceIdentity {
                name: "Mystery GPU".into(),
                ..DeviceIdentity::default()
            },
            Clocks::default(),
            vec![],
        );
        assert_eq!(
            none.used(CeilingKind::L2Read).to_string(),
            "unavailable (no L2 read ceiling: not measured)"
        );
        assert!(Ceilings::from_datasheet("Mystery GPU").is_none());
    }
}
