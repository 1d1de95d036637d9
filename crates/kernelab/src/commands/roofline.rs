//! `kernelab roofline`: kernel time per family from profiler files, the work model's FLOPs
//! and bytes, and each family's place under the device's roofs.

use crate::cli::FormatArg;
use crate::cli_roofline::RooflineArgs;
use crate::output;
use crate::progress::BarProgress;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{anyhow, bail, Context, Result};
use kernelab_model::roofline::{
    place, Ceilings, FamilyRoofline, Figure, RoofPeak, Roofline, WorkRules, ROOFS,
};
use kernelab_model::{family_key, Document, Profile};
use kernelab_report::{roofline_csv, roofline_sections, roofline_svg};
use kernelab_trace::{rank, read_file, RankOptions, ReadOptions};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

const MAX_TEXT_BYTES: u64 = 64 << 20;

fn read_text(path: &Path) -> Result<String> {
    let mut text = String::new();
    kernelab_model::open_regular(path)
        .and_then(|f| f.take(MAX_TEXT_BYTES).read_to_string(&mut text))
        .with_context(|| format!("{}", path.display()))?;
    Ok(text)
}

/// A `ceilings` document, or a bundle record holding one.
fn read_ceilings(path: &Path) -> Result<Ceilings> {
    let mut v: serde_json::Value = serde_json::from_str(&read_text(path)?)
        .with_context(|| format!("{}: not JSON", path.display()))?;
    if v.get("result").is_some_and(|r| r.is_object()) {
        v = v["result"].take();
    }
    if v.get("kind").and_then(|k| k.as_str()) != Some("ceilings") {
        bail!(
            "{}: not a ceilings document (kernelab ceilings --format json)",
            path.display()
        );
    }
    let doc: Document<Ceilings> = serde_json::from_value(v)
        .with_context(|| format!("{}: not a ceilings document", path.display()))?;
    Ok(doc.body)
}

fn parse_sizes(given: &[String]) -> Result<BTreeMap<String, i64>> {
    let mut out = BTreeMap::new();
    for s in given {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| anyhow!("--size {s}: expected NAME=VALUE"))?;
        let v: i64 = v
            .trim()
            .parse()
            .map_err(|_| anyhow!("--size {s}: `{v}` is not an integer"))?;
        out.insert(k.trim().to_string(), v);
    }
    Ok(out)
}

/// Mean measured DRAM bytes of one launch per family key, with the launch count:
/// `dram__bytes.sum`, else `dram__bytes_read.sum + dram__bytes_write.sum`.
fn measured_bytes(path: &Path) -> Result<BTreeMap<String, (f64, u64)>> {
    let f = kernelab_model::open_regular(path).with_context(|| format!("{}", path.display()))?;
    let launches = kernelab_trace::read_ncu_launches(f.take(MAX_TEXT_BYTES))
        .with_context(|| format!("{}", path.display()))?;
    let mut sums: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    for l in &launches {
        let bytes = l.number("dram__bytes.sum").or_else(|| {
            Some(l.number("dram__bytes_read.sum")? + l.number("dram__bytes_write.sum")?)
        });
        if let Some(b) = bytes {
            let e = sums.entry(family_key(&l.kernel)).or_default();
            e.0 += b;
            e.1 += 1;
        }
    }
    if sums.is_empty() {
        bail!(
            "{}: no launch has dram__bytes.sum (or dram__bytes_read.sum and dram__bytes_write.sum)",
            path.display()
        );
    }
    Ok(sums
        .into_iter()
        .map(|(k, (s, n))| (k, (s / n as f64, n)))
        .collect())
}

const MAX_TRACE_BYTES: u64 = 2 << 30;

/// The `Input Dims` of the op that launched each family's first kernel in a Kineto trace:
/// the kernel's correlation gives its runtime or driver launch call, and the innermost CPU op
/// around that call on the same thread with `Input Dims` is the launching op. Empty for a file
/// that is not a Kineto JSON trace.
fn kineto_dims(path: &Path) -> BTreeMap<String, Vec<Vec<i64>>> {
    let name = path.to_string_lossy();
    if !(name.ends_with(".json") || name.ends_with(".json.gz")) {
        return BTreeMap::new();
    }
    let Ok(f) = kernelab_model::open_regular(path) else {
        return BTreeMap::new();
    };
    let mut bytes = Vec::new();
    let read = if name.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(f)
            .take(MAX_TRACE_BYTES)
            .read_to_end(&mut bytes)
    } else {
        f.take(MAX_TRACE_BYTES).read_to_end(&mut bytes)
    };
    if read.is_err() {
        return BTreeMap::new();
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return BTreeMap::new();
    };
    let Some(events) = v.get("traceEvents").and_then(|e| e.as_array()) else {
        return BTreeMap::new();
    };
    let tid = |e: &serde_json::Value| e.get("tid").map(|t| t.to_string()).unwrap_or_default();
    let num = |e: &serde_json::Value, k: &str| e.get(k).and_then(|x| x.as_f64());
    fn cat(e: &serde_json::Value) -> &str {
        e.get("cat").and_then(|c| c.as_str()).unwrap_or("")
    }
    let correlation = |e: &serde_json::Value| {
        e.get("args")
            .and_then(|a| a.get("correlation"))
            .and_then(|c| c.as_i64())
    };
    // (tid, start, duration, dims) of every CPU op with non-empty Input Dims.
    let mut ops = Vec::new();
    let mut launches = BTreeMap::new();
    for e in events {
        match cat(e) {
            "cpu_op" | "user_annotation" => {
                let dims: Option<Vec<Vec<i64>>> = e
                    .get("args")
                    .and_then(|a| a.get("Input Dims"))
                    .and_then(|d| serde_json::from_value(d.clone()).ok());
                if let (Some(d), Some(ts), Some(dur)) = (dims, num(e, "ts"), num(e, "dur")) {
                    if d.iter().any(|x| !x.is_empty()) {
                        ops.push((tid(e), ts, dur, d));
                    }
                }
            }
            "kernel" | "gpu_memcpy" | "gpu_memset" => {}
            _ => {
                if let (Some(c), Some(ts)) = (correlation(e), num(e, "ts")) {
                    launches.insert(c, (tid(e), ts));
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for e in events.iter().filter(|e| cat(e) == "kernel") {
        let Some(name) = e.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        let family = family_key(name);
        if out.contains_key(&family) {
            continue;
        }
        let Some((t, ts)) = correlation(e).and_then(|c| launches.get(&c)) else {
            continue;
        };
        let op = ops
            .iter()
            .filter(|(ot, s, d, _)| ot == t && *s <= *ts && *ts <= s + d)
            .min_by(|a, b| a.2.total_cmp(&b.2));
        if let Some((_, _, _, d)) = op {
            out.insert(family, d.clone());
        }
    }
    out
}

/// Runs `kernelab roofline`.
pub fn run(a: RooflineArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    let rules =
        WorkRules::parse(&read_text(&a.work)?).map_err(|e| anyhow!("{}: {e}", a.work.display()))?;
    let (ceilings, ceilings_source) = match (&a.ceilings, &a.datasheet) {
        (Some(p), _) => (read_ceilings(p)?, p.display().to_string()),
        (None, Some(name)) => match Ceilings::from_datasheet(name) {
            Some(c) => (c, format!("datasheet `{name}`")),
            None => bail!("no datasheet entry matches `{name}`"),
        },
        (None, None) => {
            bail!("give --ceilings FILE (kernelab ceilings --format json) or --datasheet NAME")
        }
    };
    // A spec's [sizes], then --size, later ones winning.
    let mut sizes = match &a.spec {
        Some(p) => {
            kernelab_launcher::Spec::read(p)
                .with_context(|| format!("{}", p.display()))?
                .sizes
        }
        None => BTreeMap::new(),
    };
    sizes.extend(parse_sizes(&a.sizes)?);
    let measured = match &a.ncu {
        Some(p) => Some(measured_bytes(p)?),
        None => None,
    };
    let mut profile = Profile::default();
    let mut dims = BTreeMap::new();
    for path in &a.inputs {
        let progress = BarProgress::new(path);
        read_file(path, &ReadOptions::default(), &mut profile, &progress)?;
        for (k, v) in kineto_dims(path) {
            dims.entry(k).or_insert(v);
        }
    }
    let ranking = rank(
        &profile,
        &RankOptions {
            top: 1_000_000,
            ..RankOptions::default()
        },
    )?;
    let bandwidth = ceilings.bandwidth();
    let peaks: Vec<RoofPeak> = ROOFS
        .iter()
        .map(|&roof| RoofPeak {
            roof,
            peak: ceilings.used(roof.ceiling()),
        })
        .collect();
    let mut families = Vec::new();
    let mut notes = Vec::new();
    for row in &ranking.rows {
        let rule = rules.rule_for(&row.name, &row.family);
        let seconds = row.total_ns as f64 / 1e9;
        let (flops, bytes) = match rule {
            Some(r) => {
                let w = r.work(&r.sizes_with(dims.get(&row.family).map(Vec::as_slice), &sizes));
                (w.flops, w.bytes)
            }
            None => {
                let none = Figure::unavailable("no work-model rule");
                (none.clone(), none)
            }
        };
        let calls = row.calls as f64;
        let peak = rule
            .map(|r| ceilings.used(r.roof.ceiling()))
            .unwrap_or_else(|| Figure::unavailable("no work-model rule"));
        let placement = place(
            &flops.map(|f| f * calls),
            &bytes.map(|b| b * calls),
            seconds,
            &peak,
            &bandwidth,
        );
        let m = measured.as_ref().and_then(|m| m.get(&row.family));
        families.push(FamilyRoofline {
            family: row.family.clone(),
            calls: row.calls,
            total_ns: row.total_ns,
            rule_line: rule.map(|r| r.line),
            roof: rule.map(|r| r.roof),
            flops_per_launch: flops,
            bytes_per_launch: bytes,
            measured_bytes_per_launch: m.map(|m| m.0),
            measured_launches: m.map(|m| m.1),
            placement,
        });
    }
    let without = families.iter().filter(|f| f.rule_line.is_none()).count();
    if without > 0 {
        notes.push(format!(
            "{without} of {} families have no work-model rule in {}",
            families.len(),
            a.work.display()
        ));
    }
    if measured.is_some() {
        notes.push(
            "MB/launch (ncu): mean DRAM bytes of one launch measured by Nsight Compute \
             (dram__bytes.sum); written lines still in L2 when a kernel ends are not counted"
                .into(),
        );
    }
    let body = Roofline {
        device: ceilings.device.name.clone(),
        ceilings_source,
        bandwidth,
        peaks,
        sizes,
        families,
        notes,
    };
    let doc = Document::new("roofline", body);
    let mut inputs = a.inputs.clone();
    inputs.push(a.work.clone());
    inputs.extend(a.ceilings.iter().cloned());
    inputs.extend(a.ncu.iter().cloned());
    session.record(&doc, &inputs, Some(doc.body.device.clone()))?;
    let text = match output::sections_text(&a.output, |_| roofline_sections(&doc.body)) {
        Some(t) => t,
        None => match a.output.format {
            FormatArg::Csv => roofline_csv(&doc.body)?,
            _ => output::json(&doc)?,
        },
    };
    if let Some(path) = &a.svg {
        let chart = roofline_svg(&doc.body).ok_or_else(|| {
            anyhow!("--svg: no family has both a FLOP rate and an intensity to draw")
        })?;
        output::write_file(path, chart.as_bytes(), a.output.force)?;
    }
    output::write(&a.output, &text)?;
    Ok(ExitStatus::Success)
}
