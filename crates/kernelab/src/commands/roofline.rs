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
    if let Some((key, value)) = doc.body.non_positive() {
        bail!(
            "{}: key `{key}`: {value} is not a positive number; a ceiling, bandwidth or peak must be above zero",
            path.display()
        );
    }
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

/// Most bytes of a Kineto trace (inflated) read for its `Input Dims`: 2 GiB. The trace is
/// streamed into the few fields needed, never held as a JSON tree.
const MAX_TRACE_BYTES: u64 = 2 << 30;

/// The fields of one Kineto event the dims lookup needs (everything else is skipped).
#[derive(serde::Deserialize)]
struct Event {
    #[serde(default)]
    cat: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    tid: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    ts: Option<f64>,
    #[serde(default)]
    dur: Option<f64>,
    #[serde(default)]
    args: Option<EventArgs>,
}

#[derive(serde::Deserialize)]
struct EventArgs {
    #[serde(default)]
    correlation: Option<serde_json::Value>,
    #[serde(default, rename = "Input Dims")]
    dims: Option<Box<serde_json::value::RawValue>>,
}

#[derive(serde::Deserialize)]
struct Trace {
    #[serde(default, rename = "traceEvents")]
    events: Vec<Event>,
}

/// The `Input Dims` of the op that launched each family's first kernel in a Kineto trace:
/// the kernel's correlation gives its runtime or driver launch call, and the innermost CPU op
/// around that call on the same thread with `Input Dims` is the launching op. Empty for a file
/// that is not a Kineto JSON trace. One sweep per thread over the ops sorted by start finds
/// every launch's op: no search of every op per family.
fn kineto_dims(path: &Path) -> BTreeMap<String, Vec<Vec<i64>>> {
    let name = path.to_string_lossy();
    if !(name.ends_with(".json") || name.ends_with(".json.gz")) {
        return BTreeMap::new();
    }
    let Ok(f) = kernelab_model::open_regular(path) else {
        return BTreeMap::new();
    };
    let reader: Box<dyn Read> = if name.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(f).take(MAX_TRACE_BYTES))
    } else {
        Box::new(f.take(MAX_TRACE_BYTES))
    };
    let Ok(trace) = serde_json::from_reader::<_, Trace>(std::io::BufReader::new(reader)) else {
        return BTreeMap::new();
    };
    let tid = |e: &Event| {
        e.tid
            .as_ref()
            .map(|t| t.get().to_string())
            .unwrap_or_default()
    };
    let correlation = |e: &Event| {
        e.args
            .as_ref()
            .and_then(|a| a.correlation.as_ref())
            .and_then(|c| c.as_i64())
    };
    // Per thread: (start, duration, index into `dims`) of every CPU op with non-empty Input Dims.
    let mut ops: std::collections::HashMap<String, Vec<(f64, f64, usize)>> = Default::default();
    let mut all_dims: Vec<Vec<Vec<i64>>> = Vec::new();
    let mut launches = std::collections::HashMap::new();
    // Every kernel launch in trace order: (family, correlation).
    let mut kernels: Vec<(String, i64)> = Vec::new();
    for e in &trace.events {
        match e.cat.as_deref().unwrap_or("") {
            "cpu_op" | "user_annotation" => {
                let dims: Option<Vec<Vec<i64>>> = e
                    .args
                    .as_ref()
                    .and_then(|a| a.dims.as_ref())
                    .and_then(|d| serde_json::from_str(d.get()).ok());
                if let (Some(d), Some(ts), Some(dur)) = (dims, e.ts, e.dur) {
                    if d.iter().any(|x| !x.is_empty()) && ts.is_finite() && dur.is_finite() {
                        all_dims.push(d);
                        ops.entry(tid(e))
                            .or_default()
                            .push((ts, dur, all_dims.len() - 1));
                    }
                }
            }
            "kernel" => {
                if let (Some(n), Some(c)) = (&e.name, correlation(e)) {
                    kernels.push((family_key(n), c));
                }
            }
            "gpu_memcpy" | "gpu_memset" => {}
            _ => {
                if let (Some(c), Some(ts)) = (correlation(e), e.ts) {
                    launches.insert(c, (tid(e), ts));
                }
            }
        }
    }
    // Queries per thread: (launch time, family index), swept in time order.
    let mut queries: std::collections::HashMap<&str, Vec<(f64, usize)>> = Default::default();
    for (i, (_, c)) in kernels.iter().enumerate() {
        if let Some((t, ts)) = launches.get(c) {
            queries.entry(t.as_str()).or_default().push((*ts, i));
        }
    }
    let mut found: Vec<Option<usize>> = vec![None; kernels.len()];
    for (t, mut qs) in queries {
        let Some(list) = ops.get_mut(t) else { continue };
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
        qs.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Ops begun by the current query time and not yet ended before it.
        let mut open: Vec<(f64, f64, usize)> = Vec::new();
        let mut next = 0;
        for (ts, q) in qs {
            while let Some(&op) = list.get(next) {
                if op.0 > ts {
                    break;
                }
                open.push(op);
                next += 1;
            }
            // An op that ended before this query ends before every later one too.
            open.retain(|&(s, d, _)| s + d >= ts);
            found[q] = open
                .iter()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|&(_, _, i)| i);
        }
    }
    // Each family's first kernel whose launching op is known.
    let mut out = BTreeMap::new();
    for ((family, _), at) in kernels.into_iter().zip(found) {
        if let Some(d) = at.and_then(|i| all_dims.get(i)) {
            out.entry(family).or_insert_with(|| d.clone());
        }
    }
    out
}

/// Runs `kernelab roofline`.
pub fn run(a: RooflineArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if let Some(svg) = &a.svg {
        output::check_file("--svg", svg, a.output.force)?;
    }
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
