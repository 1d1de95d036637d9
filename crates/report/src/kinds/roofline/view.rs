//! The `ceilings` and `roofline` views: each ceiling measured beside its datasheet figure, and
//! each kernel family's time, work, rates and place under the roof.

use crate::format::decimal;
use crate::format::{with_unit, Unit};
use crate::table::{Align, Block, Table};
use kernelab_model::roofline::{
    Bound, Ceiling, CeilingKind, Ceilings, FamilyRoofline, Figure, Roof, Roofline,
};
use serde::Serialize;

/// A value of a ceiling's unit: `4.213 TB/s`, `780.1 TFLOP/s`, `2.51 µs`.
pub fn ceiling_value(kind: CeilingKind, v: f64) -> String {
    match kind.unit() {
        "byte/second" => with_unit(v, 3, Unit::TeraBytesPerS),
        "flop/second" => with_unit(v, 1, Unit::TeraFlopPerS),
        _ => with_unit(v, 2, Unit::SecondsAsUs),
    }
}

/// A figure with a formatter for its value, or "unavailable (why)".
pub fn figure(f: &Figure, show: impl Fn(f64) -> String) -> String {
    match f {
        Figure::Value(v) => show(*v),
        other => other.to_string(),
    }
}

fn row(c: &Ceiling) -> Vec<String> {
    let m = match (&c.measured, &c.not_measured) {
        (Some(m), _) => ceiling_value(c.kind, m.value),
        (None, Some(why)) => format!("not measured ({why})"),
        (None, None) => "not measured".into(),
    };
    let q = c
        .datasheet
        .as_ref()
        .map(|q| ceiling_value(c.kind, q.value))
        .unwrap_or_else(|| "–".into());
    let ratio = match (&c.measured, &c.datasheet) {
        (Some(m), Some(q)) if c.kind != CeilingKind::LaunchOverhead => {
            with_unit(m.value / q.value, 1, Unit::Percent)
        }
        _ => "–".into(),
    };
    let used = match (&c.measured, &c.datasheet) {
        (Some(_), _) => "measured",
        (None, Some(_)) => "datasheet",
        _ => "none",
    };
    vec![c.kind.label().into(), m, q, ratio, used.into()]
}

/// The sections of a ceilings document.
pub fn ceilings_sections(c: &Ceilings) -> Vec<Block> {
    let mut t = Table::new(
        format!("kernelab ceilings: {}", c.device.name),
        &[
            ("ceiling", Align::Left),
            ("measured", Align::Right),
            ("datasheet", Align::Right),
            ("measured/datasheet", Align::Right),
            ("used", Align::Left),
        ],
    );
    for x in &c.ceilings {
        t.push(row(x));
    }
    let d = &c.device;
    let opt = |v: Option<String>| v.unwrap_or_else(|| "unavailable".into());
    let mut lines = vec![
        format!("architecture: {}", opt(d.arch.clone())),
        format!(
            "multiprocessors: {}",
            opt(d.multiprocessors.map(|v| v.to_string()))
        ),
        format!("L2: {}", opt(d.l2_bytes.map(|v| format!("{v} bytes")))),
        format!(
            "memory: {}",
            opt(d.memory_bytes.map(|v| format!("{v} bytes")))
        ),
        format!("driver: {}", opt(d.driver.clone())),
        format!(
            "clocks: SM {} MHz after the measurement (max {}), memory {} MHz",
            opt(c.clocks.sm_mhz.map(|v| v.to_string())),
            opt(c.clocks.sm_max_mhz.map(|v| v.to_string())),
            opt(c.clocks.memory_mhz.map(|v| v.to_string()))
        ),
        format!(
            "datasheet entry: {}",
            opt(d.datasheet_entry.clone().map(|e| e.to_string()))
        ),
    ];
    let mut methods = Vec::new();
    for x in &c.ceilings {
        if let Some(m) = &x.measured {
            methods.push(format!("{}: {}", x.kind.label(), m.method));
        }
    }
    if let Some(q) = c.ceilings.iter().find_map(|x| x.datasheet.as_ref()) {
        lines.push(format!("datasheet source: {}", q.source));
    }
    let mut out = vec![
        Block::Table(t),
        Block::List {
            title: "Device".into(),
            lines,
        },
    ];
    if !methods.is_empty() {
        out.push(Block::List {
            title: "How each figure was measured".into(),
            lines: methods,
        });
    }
    out
}

/// The report part of a ceilings record and its headline.
pub(crate) fn ceilings_part(c: &Ceilings) -> (Vec<Block>, String) {
    let used = |k| figure(&c.used(k), |v| ceiling_value(k, v));
    let head = format!(
        "{}: DRAM copy {}, BF16 matrix {}",
        c.device.name,
        used(CeilingKind::DramCopy),
        used(CeilingKind::Bf16Tensor)
    );
    (ceilings_sections(c), head)
}

fn roof_label(r: Roof) -> &'static str {
    r.ceiling().label()
}

fn bound_label(b: Option<Bound>) -> &'static str {
    match b {
        Some(Bound::Memory) => "memory",
        Some(Bound::Compute) => "compute",
        None => "–",
    }
}

/// Whether the family has work to place: a work-model rule, or a FLOP or byte count (from the
/// trace when there is no rule).
fn has_work(f: &FamilyRoofline) -> bool {
    f.rule_line.is_some()
        || f.flops_per_launch.value().is_some()
        || f.bytes_per_launch.value().is_some()
        // A profiler's own roofline point (rocprof-compute): rates without counts.
        || f.placement.flop_per_s.value().is_some()
}

/// The sections of a roofline document: one row per family.
pub fn roofline_sections(r: &Roofline) -> Vec<Block> {
    let measured = r
        .families
        .iter()
        .any(|f| f.measured_bytes_per_launch.is_some());
    let mut cols = vec![
        ("family", Align::Left),
        ("calls", Align::Right),
        ("time", Align::Right),
        ("roof", Align::Left),
        ("GFLOP/launch", Align::Right),
        ("MB/launch (model)", Align::Right),
    ];
    if measured {
        cols.push(("MB/launch (ncu)", Align::Right));
    }
    cols.extend([
        ("TFLOP/s", Align::Right),
        ("GB/s", Align::Right),
        ("FLOP/byte", Align::Right),
        ("of roof", Align::Right),
        ("bound", Align::Left),
    ]);
    let mut t = Table::new(format!("kernelab roofline: {}", r.device), &cols);
    for f in &r.families {
        let p = &f.placement;
        let mut row = vec![
            f.family.clone(),
            f.calls.to_string(),
            with_unit(f.total_ns as f64, 3, Unit::NsAsMs),
            f.roof.map(roof_label).unwrap_or("no rule").into(),
        ];
        if has_work(f) {
            row.push(figure(&f.flops_per_launch, |v| decimal(v / 1e9, 3)));
            row.push(figure(&f.bytes_per_launch, |v| decimal(v / 1e6, 3)));
        } else {
            row.extend(["–".to_string(), "–".to_string()]);
        }
        if measured {
            row.push(
                f.measured_bytes_per_launch
                    .map(|v| decimal(v / 1e6, 3))
                    .unwrap_or_else(|| "–".into()),
            );
        }
        if has_work(f) {
            row.push(figure(&p.flop_per_s, |v| decimal(v / 1e12, 2)));
            row.push(figure(&p.byte_per_s, |v| decimal(v / 1e9, 1)));
            row.push(figure(&p.intensity, |v| decimal(v, 2)));
            let mut fraction = figure(&p.fraction, |v| with_unit(v, 1, Unit::Percent));
            if f.above_roof.is_some() {
                fraction.push_str(" (above roof!)");
            }
            row.push(fraction);
        } else {
            row.extend(["–", "–", "–", "–"].map(String::from));
        }
        row.push(bound_label(p.bound).into());
        t.push(row);
    }
    let mut lines = vec![
        format!("ceilings: {}", r.ceilings_source),
        format!(
            "DRAM bandwidth: {}",
            figure(&r.bandwidth, |v| ceiling_value(CeilingKind::DramCopy, v))
        ),
    ];
    for p in &r.peaks {
        lines.push(format!(
            "{} peak: {}",
            roof_label(p.roof),
            figure(&p.peak, |v| ceiling_value(p.roof.ceiling(), v))
        ));
    }
    if !r.sizes.is_empty() {
        lines.push(format!(
            "sizes: {}",
            r.sizes
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    lines.extend(r.notes.iter().cloned());
    let mut out = vec![
        Block::Table(t),
        Block::List {
            title: "Roofs".into(),
            lines,
        },
    ];
    let shapes: Vec<String> = r
        .families
        .iter()
        .filter(|f| !f.shapes.is_empty())
        .map(|f| {
            let each: Vec<String> = f
                .shapes
                .iter()
                .map(|s| {
                    let sizes: Vec<String> =
                        s.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    format!(
                        "{} × {} ({} GFLOP, {} MB each)",
                        sizes.join(" "),
                        s.launches,
                        figure(&s.flops, |v| decimal(v / 1e9, 3)),
                        figure(&s.bytes, |v| decimal(v / 1e6, 3))
                    )
                })
                .collect();
            format!("{}: {}", f.family, each.join("; "))
        })
        .collect();
    if !shapes.is_empty() {
        out.push(Block::List {
            title: "Sizes read from the trace (each launch's operator Input Dims)".into(),
            lines: shapes,
        });
    }
    let above: Vec<String> = r
        .families
        .iter()
        .filter_map(|f| Some(format!("{}: {}", f.family, f.above_roof.as_ref()?)))
        .collect();
    if !above.is_empty() {
        out.push(Block::List {
            title: "Above the roof".into(),
            lines: above,
        });
    }
    out
}

#[derive(Serialize, schemars::JsonSchema)]
struct RooflineCsvRow<'a> {
    family: &'a str,
    calls: u64,
    total_ns: u64,
    roof: &'static str,
    flops_per_launch: String,
    bytes_per_launch: String,
    measured_bytes_per_launch: String,
    flop_per_s: String,
    byte_per_s: String,
    intensity: String,
    fraction: String,
    bound: &'static str,
}

/// One CSV row per family; unavailable figures say why.
pub fn roofline_csv(r: &Roofline) -> crate::Result<String> {
    let plain = |f: &Figure| f.to_string();
    let rows: Vec<RooflineCsvRow<'_>> = r
        .families
        .iter()
        .map(|f| RooflineCsvRow {
            family: &f.family,
            calls: f.calls,
            total_ns: f.total_ns,
            roof: match f.roof {
                Some(Roof::Fp32) => "fp32",
                Some(Roof::Fp16) => "fp16",
                Some(Roof::Bf16) => "bf16",
                Some(Roof::Fp8) => "fp8",
                None => "",
            },
            flops_per_launch: plain(&f.flops_per_launch),
            bytes_per_launch: plain(&f.bytes_per_launch),
            measured_bytes_per_launch: f
                .measured_bytes_per_launch
                .map(|v| v.to_string())
                .unwrap_or_default(),
            flop_per_s: plain(&f.placement.flop_per_s),
            byte_per_s: plain(&f.placement.byte_per_s),
            intensity: plain(&f.placement.intensity),
            fraction: plain(&f.placement.fraction),
            bound: match f.placement.bound {
                Some(Bound::Memory) => "memory",
                Some(Bound::Compute) => "compute",
                None => "",
            },
        })
        .collect();
    crate::render::csv_rows(&rows)
}

/// The report part of a roofline record and its headline.
pub(crate) fn roofline_part(r: &Roofline) -> (Vec<Block>, String) {
    let head = match r.families.iter().find(|f| has_work(f)) {
        Some(f) => format!(
            "{}: {} at {} of its roof ({})",
            r.device,
            f.family,
            figure(&f.placement.fraction, |v| format!(
                "{}%",
                decimal(100.0 * v, 1)
            )),
            bound_label(f.placement.bound)
        ),
        None => format!("{}: no family has a work-model rule", r.device),
    };
    let mut b = roofline_sections(r);
    if let Some(chart) = roofline_svg(r) {
        b.push(Block::Chart(chart));
    }
    (b, head)
}

/// The roofline chart of a document: the DRAM roof, the roofs its families run against, one
/// point per family with both FLOP/s and intensity; `None` without a bandwidth or a point.
pub fn roofline_svg(r: &Roofline) -> Option<String> {
    let bw = r.bandwidth.value()?;
    let points: Vec<(String, f64, f64)> = r
        .families
        .iter()
        .filter_map(|f| {
            Some((
                f.family.clone(),
                f.placement.intensity.value()?,
                f.placement.flop_per_s.value()?,
            ))
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let mut peaks = Vec::new();
    for f in &r.families {
        if let (Some(roof), true) = (f.roof, f.placement.flop_per_s.value().is_some()) {
            if let Some(p) = r.peak(roof).value() {
                let label = roof_label(roof).to_string();
                if !peaks.iter().any(|(l, _): &(String, f64)| *l == label) {
                    peaks.push((label, p));
                }
            }
        }
    }
    Some(crate::svg::roofline_chart(
        &format!("Roofline: {}", r.device),
        bw,
        &peaks,
        &points,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::roofline::{Clocks, DeviceIdentity, Measured};

    #[test]
    fn measured_beside_datasheet() {
        let c = Ceilings::merge(
            DeviceIdentity {
                name: "NVIDIA H200".into(),
                ..DeviceIdentity::default()
            },
            Clocks::default(),
            vec![(
                CeilingKind::DramCopy,
                Ok(Measured {
                    value: 4.32e12,
                    method: "copy".into(),
                }),
            )],
        );
        let s = ceilings_sections(&c);
        let Block::Table(t) = &s[0] else {
            panic!("a table first")
        };
        assert_eq!(
            t.rows[0],
            ["DRAM copy", "4.320 TB/s", "4.800 TB/s", "90.0%", "measured"]
        );
        assert_eq!(t.rows[4][1], "not measured (not measured)");
        assert_eq!(t.rows[4][2], "989.4 TFLOP/s");
        assert_eq!(t.rows[4][4], "datasheet");
    }
}
