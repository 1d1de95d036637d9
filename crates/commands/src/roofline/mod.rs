//! `roofline`: kernel time per family from profiler files, the work model's FLOPs and bytes
//! (else those the trace records, or the roofline points of a rocprof-compute analysis
//! database), and each family's place under the device's roofs.

mod compute_db;
mod recorded;

use crate::{setting, Hooks, Outcome, OutputFile, Recordable, Status, View};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_model::roofline::{
    above_roof, place, Ceilings, FamilyRoofline, Figure, RoofPeak, Roofline, ShapeLaunches,
    WorkRule, WorkRules, ROOFS,
};
use kernelab_model::{family_key, Document, Profile};
use kernelab_report::{roofline_csv, roofline_sections, roofline_svg};
use kernelab_trace::{launch_shapes, rank, read_file, RankOptions, ReadOptions};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// `roofline` as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct RooflineSettings {
    /// Profiler files: kernel time per family.
    pub inputs: Vec<PathBuf>,
    /// The work model (TOML rules); without it, the work the inputs record.
    pub work: Option<PathBuf>,
    /// A `ceilings` document or record.
    pub ceilings: Option<PathBuf>,
    /// A datasheet entry instead of measured ceilings.
    pub datasheet: Option<String>,
    /// Sizes as `NAME=VALUE`.
    pub sizes: Vec<String>,
    /// A kernel spec whose `[sizes]` apply first.
    pub spec: Option<PathBuf>,
    /// Nsight Compute CSV with measured DRAM bytes.
    pub ncu: Option<PathBuf>,
    /// Where the SVG chart goes.
    pub svg: Option<PathBuf>,
}

const MAX_TEXT_BYTES: u64 = 64 << 20;

fn read_text(path: &Path) -> Result<String> {
    let mut text = String::new();
    kernelab_model::open_regular(path)
        .and_then(|f| f.take(MAX_TEXT_BYTES).read_to_string(&mut text))
        .with_context(|| format!("{}", path.display()))?;
    Ok(text)
}

/// A `ceilings` document, or a bundle record holding one.
pub fn read_ceilings(path: &Path) -> Result<Ceilings> {
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

/// The work of one family, summed launch by launch: each launch's own operator shapes
/// (`shapes` of its `Input Dims`), then the rule's and the given sizes.
struct FamilyWork {
    flops: Figure,
    bytes: Figure,
    shapes: Vec<ShapeLaunches>,
}

/// Sums `rule`'s work over `groups` (launch count per `Input Dims` id; `None`: not known).
fn family_work(
    rule: &WorkRule,
    groups: &BTreeMap<Option<u32>, u64>,
    profile: &Profile,
    given: &BTreeMap<String, i64>,
) -> FamilyWork {
    let mut shapes: Vec<ShapeLaunches> = Vec::new();
    let mut total = (Figure::Value(0.0), Figure::Value(0.0));
    let mut missing = (0u64, 0u64);
    let launches: u64 = groups.values().sum();
    for (&id, &n) in groups {
        let dims = id.and_then(|i| profile.shapes.get(i)).map(Vec::as_slice);
        let w = rule.work(&rule.sizes_with(dims, given));
        if let Some(d) = dims {
            let sizes: BTreeMap<String, i64> = rule
                .dims
                .iter()
                .filter_map(|(k, [i, j])| Some((k.clone(), *d.get(*i)?.get(*j)?)))
                .collect();
            if !sizes.is_empty() {
                match shapes.iter_mut().find(|s| s.sizes == sizes) {
                    Some(s) => s.launches += n,
                    None => shapes.push(ShapeLaunches {
                        sizes,
                        launches: n,
                        flops: w.flops.clone(),
                        bytes: w.bytes.clone(),
                    }),
                }
            }
        }
        let add = |t: &Figure, f: &Figure, missing: &mut u64| {
            if f.value().is_none() {
                *missing += n;
            }
            t.zip(f, |a, b| a + b * n as f64)
        };
        total.0 = add(&total.0, &w.flops, &mut missing.0);
        total.1 = add(&total.1, &w.bytes, &mut missing.1);
    }
    // A figure some launches lack says in how many.
    let count = |f: Figure, m: u64| match f {
        Figure::Unavailable { unavailable } if m < launches => {
            Figure::unavailable(format!("{unavailable} in {m} of {launches} launches"))
        }
        f => f,
    };
    shapes.sort_by(|a, b| b.launches.cmp(&a.launches).then(a.sizes.cmp(&b.sizes)));
    FamilyWork {
        flops: count(total.0, missing.0),
        bytes: count(total.1, missing.1),
        shapes,
    }
}

/// Per family key, the launch count of each operator shape (`None`: none known), from the
/// profile's dispatches (empty for stats-only inputs).
fn launches_by_shape(profile: &Profile) -> BTreeMap<String, BTreeMap<Option<u32>, u64>> {
    let shapes = launch_shapes(profile);
    let mut family_of: std::collections::HashMap<kernelab_model::NameId, String> =
        Default::default();
    let mut out: BTreeMap<String, BTreeMap<Option<u32>, u64>> = BTreeMap::new();
    for (d, shape) in profile.dispatches.iter().zip(shapes) {
        let family = family_of
            .entry(d.name)
            .or_insert_with(|| family_key(profile.names.name(d.name)));
        *out.entry(family.clone())
            .or_default()
            .entry(shape)
            .or_default() += 1;
    }
    out
}

/// `roofline`: each family of the profile placed under the device's roofs; the chart in
/// the outcome's files when `svg` names one.
pub fn roofline(a: &RooflineSettings, hooks: &dyn Hooks) -> Result<Outcome> {
    let rules = match &a.work {
        Some(w) => WorkRules::parse(&read_text(w)?).map_err(|e| anyhow!("{}: {e}", w.display()))?,
        None => WorkRules::default(),
    };
    const NO_CEILINGS: &str =
        "give --ceilings FILE (kernelab ceilings --format json) or --datasheet NAME";
    let given = match (&a.ceilings, &a.datasheet) {
        (Some(p), _) => Some((read_ceilings(p)?, p.display().to_string())),
        (None, Some(name)) => match Ceilings::from_datasheet(name) {
            Some(c) => Some((c, format!("datasheet `{name}`"))),
            None => bail!("no datasheet entry matches `{name}`"),
        },
        // A rocprof-compute database (SQLite) may carry its own; any other input cannot.
        (None, None) if !a.inputs.iter().any(|p| is_sqlite(p)) => return Err(setting(NO_CEILINGS)),
        (None, None) => None,
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
    let options = ReadOptions {
        op_shapes: true,
        host_work: true,
        ..ReadOptions::default()
    };
    for path in &a.inputs {
        read_file(path, &options, &mut profile, hooks.reading(path).as_ref())?;
    }
    // rocprof-compute analysis databases: their roofline points and benchmark peaks.
    let mut dbs = Vec::new();
    for path in &a.inputs {
        let is_db = profile
            .sources
            .iter()
            .any(|s| s.path == *path && s.format == "rocprof-compute-db");
        if is_db {
            dbs.push((path.clone(), kernelab_trace::read_compute_analysis(path)?));
        }
    }
    let (ceilings, ceilings_source) = match given {
        Some(g) => g,
        None => match dbs
            .iter()
            .find_map(|(p, db)| Some((compute_db::ceilings(db, p)?, p)))
        {
            Some((c, p)) => (
                c,
                format!(
                    "{} (rocprof-compute's roofline benchmark, roofline_bench_extdata)",
                    p.display()
                ),
            ),
            None if dbs.is_empty() => return Err(setting(NO_CEILINGS)),
            None => {
                return Err(setting(format!(
                    "the rocprof-compute database has no roofline benchmark \
                     (compute_workload.roofline_bench_extdata): {NO_CEILINGS}"
                )))
            }
        },
    };
    // Each family's stored points, with the index of their database.
    let mut db_points: BTreeMap<String, Vec<(usize, String, kernelab_trace::ComputePoint)>> =
        BTreeMap::new();
    for (i, (_, db)) in dbs.iter().enumerate() {
        for (family, points) in compute_db::points(db) {
            let e = db_points.entry(family).or_default();
            e.extend(points.into_iter().map(|(n, p)| (i, n, p)));
        }
    }
    if a.work.is_none() && profile.recorded_work.is_empty() && db_points.is_empty() {
        bail!(
            "the inputs record no FLOPs or bytes for their kernels (PyTorch Inductor's \
             kernel_flop/kernel_num_gb, Proton's flops/bytes, rocprof-compute's roofline \
             points): give --work RULES"
        );
    }
    let mut from_db: Vec<String> = Vec::new();
    let mut split: Vec<String> = Vec::new();
    let mut db_kernels = 0usize;
    let by_shape = launches_by_shape(&profile);
    let recorded = recorded::by_family(&profile);
    let mut from_trace: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unsaid_width = false;
    let mut disagree = Vec::new();
    let mut agree = 0usize;
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
    let mut over = 0;
    for row in &ranking.rows {
        let rule = rules.rule_for(&row.name, &row.family);
        let seconds = row.total_ns as f64 / 1e9;
        let calls = row.calls as f64;
        // Launch by launch where the profile has them; a stats-only input's calls all at the
        // given sizes.
        let stats_only = BTreeMap::from([(None, row.calls)]);
        let trace = recorded.get(&row.family);
        // A family rocprof-compute placed itself (and no rule for): its stored points, one
        // row per kernel when the family holds several (their rates are not combined).
        if let (None, Some(points)) = (rule, db_points.get(&row.family)) {
            let counts = "rocprof-compute stores rates per kernel, not counts per launch";
            let per_kernel = points.len() > 1;
            for (i, name, point) in points {
                let roof = dbs.get(*i).map(|(_, db)| compute_db::roof(db));
                let peak = match &roof {
                    Some(Ok(r)) => ceilings.used(r.ceiling()),
                    Some(Err(why)) => Figure::unavailable(why.clone()),
                    None => Figure::unavailable("no database"),
                };
                let placement = compute_db::place_point(point, &peak, &bandwidth);
                let above = above_roof(&placement.fraction, &ceilings_source);
                if above.is_some() {
                    over += 1;
                }
                let (family, calls, total_ns) = if per_kernel {
                    let (calls, ns) = kernel_time(&profile, name);
                    (name.clone(), calls, ns)
                } else {
                    (row.family.clone(), row.calls, row.total_ns)
                };
                db_kernels += 1;
                families.push(FamilyRoofline {
                    family,
                    calls,
                    total_ns,
                    rule_line: None,
                    roof: roof.and_then(Result::ok),
                    flops_per_launch: Figure::unavailable(counts),
                    bytes_per_launch: Figure::unavailable(counts),
                    measured_bytes_per_launch: None,
                    measured_launches: None,
                    placement,
                    shapes: Vec::new(),
                    above_roof: above,
                });
            }
            from_db.push(row.family.clone());
            if per_kernel {
                split.push(format!("{} ({} kernels)", row.family, points.len()));
            }
            continue;
        }
        let (work, roof) = match (rule, trace) {
            (Some(r), _) => {
                let w = family_work(
                    r,
                    by_shape.get(&row.family).unwrap_or(&stats_only),
                    &profile,
                    &sizes,
                );
                // The work model wins; where the trace records the work too, they are held
                // against each other.
                if let Some(t) = trace {
                    let d = t.disagreements((&w.flops, &w.bytes), row.calls);
                    if d.is_empty() {
                        agree += 1;
                    } else {
                        disagree.push(format!("{}: {}", row.family, d.join("; ")));
                    }
                }
                (w, Some(r.roof))
            }
            (None, Some(t)) => {
                from_trace
                    .entry(t.keys())
                    .or_default()
                    .push(row.family.clone());
                let w = FamilyWork {
                    flops: t.flops(row.calls),
                    bytes: t.bytes(row.calls),
                    shapes: Vec::new(),
                };
                unsaid_width |= t.width_unsaid() && w.flops.value().is_some();
                (w, t.roof())
            }
            (None, None) => {
                let none = Figure::unavailable("no work-model rule");
                let w = FamilyWork {
                    flops: none.clone(),
                    bytes: none,
                    shapes: Vec::new(),
                };
                (w, None)
            }
        };
        let peak = match (roof, rule, trace) {
            (Some(roof), _, _) => ceilings.used(roof.ceiling()),
            (None, None, None) => Figure::unavailable("no work-model rule"),
            (None, _, _) => {
                Figure::unavailable("the trace's FLOPs are FP64 or of several widths: no roof")
            }
        };
        let placement = place(&work.flops, &work.bytes, seconds, &peak, &bandwidth);
        let above = above_roof(&placement.fraction, &ceilings_source);
        if above.is_some() {
            over += 1;
        }
        let m = measured.as_ref().and_then(|m| m.get(&row.family));
        families.push(FamilyRoofline {
            family: row.family.clone(),
            calls: row.calls,
            total_ns: row.total_ns,
            rule_line: rule.map(|r| r.line),
            roof,
            flops_per_launch: work.flops.map(|f| f / calls),
            bytes_per_launch: work.bytes.map(|b| b / calls),
            measured_bytes_per_launch: m.map(|m| m.0),
            measured_launches: m.map(|m| m.1),
            placement,
            shapes: work.shapes,
            above_roof: above,
        });
    }
    if over > 0 {
        notes.push(format!(
            "{over} famil{} placed above 100% of the roof: a rate the device was measured not \
             to reach is a work-model or ceiling error, not a fast kernel (see each family's flag)",
            if over == 1 { "y is" } else { "ies are" }
        ));
    }
    let traced: usize = from_trace.values().map(Vec::len).sum::<usize>() + db_kernels;
    if !split.is_empty() {
        notes.push(format!(
            "one row per kernel where a family holds several rocprof-compute kernels, each \
             with its own point (rates are not combined): {}",
            split.join(", ")
        ));
    }
    let without = families.iter().filter(|f| f.rule_line.is_none()).count() - traced;
    if without > 0 {
        notes.push(match &a.work {
            Some(w) if traced == 0 => format!(
                "{without} of {} families have no work-model rule in {}",
                families.len(),
                w.display()
            ),
            Some(w) => format!(
                "{without} of {} families have no work-model rule in {} nor work recorded in the trace",
                families.len(),
                w.display()
            ),
            None => format!(
                "{without} of {} families have no work recorded in the trace (give --work RULES for them)",
                families.len()
            ),
        });
    }
    notes.extend(trace_notes(&from_trace, unsaid_width, agree, &disagree));
    if !from_db.is_empty() {
        let files: Vec<String> = dbs.iter().map(|(p, _)| p.display().to_string()).collect();
        let roofs: Vec<String> = dbs
            .iter()
            .map(|(_, db)| match compute_db::roof(db) {
                Ok(r) => format!("{r:?}").to_ascii_uppercase(),
                Err(why) => why,
            })
            .collect();
        notes.push(format!(
            "placed from rocprof-compute's own roofline points ({}: \
             compute_kernel_roofline_data, performance in GFLOP/s and FLOP per HBM byte as \
             stored; byte/s = the two's quotient), no work-model rule: {} ({} famil{}, {} \
             kernel{}); roof from its roofline_data_type: {}",
            files.join(", "),
            from_db.join(", "),
            from_db.len(),
            if from_db.len() == 1 { "y" } else { "ies" },
            db_kernels,
            if db_kernels == 1 { "" } else { "s" },
            roofs.join(", ")
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
    let doc = Document::of(body);
    let mut inputs = a.inputs.clone();
    inputs.extend(a.work.iter().cloned());
    inputs.extend(a.ceilings.iter().cloned());
    inputs.extend(a.ncu.iter().cloned());
    let record = Recordable::of(&doc, &inputs, Some(doc.body.device.clone()))?;
    let chart = match &a.svg {
        Some(path) => Some(OutputFile {
            option: "--svg",
            path: path.clone(),
            text: roofline_svg(&doc.body).ok_or_else(|| {
                anyhow!("--svg: no family has both a FLOP rate and an intensity to draw")
            })?,
            replace: false,
        }),
        None => None,
    };
    let view = View::shared_with_csv(
        doc,
        |d, _| roofline_sections(&d.body),
        |d| Ok(roofline_csv(&d.body)?),
    );
    let mut outcome = Outcome::new(view, Status::Pass).recording(record);
    outcome.files.extend(chart);
    Ok(outcome)
}

/// The calls and total time of the dispatches named exactly `name`.
fn kernel_time(profile: &Profile, name: &str) -> (u64, u64) {
    profile
        .dispatches
        .iter()
        .filter(|d| profile.names.name(d.name) == name)
        .fold((0, 0), |(n, t), d| (n + 1, t + d.duration.ns()))
}

/// Whether the file at `path` starts as a SQLite database does (a rocprof-compute analysis
/// database may carry its own ceilings).
fn is_sqlite(path: &Path) -> bool {
    let mut head = [0u8; 16];
    kernelab_model::open_regular(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"SQLite format 3\0"
}

/// What the reader needs to know of the work taken from the trace: which families, from which
/// keys; the roof of FLOPs whose width the trace does not say; and the work model held against
/// the trace (agreeing within 1%, or each disagreement).
fn trace_notes(
    from_trace: &BTreeMap<String, Vec<String>>,
    unsaid_width: bool,
    agree: usize,
    disagree: &[String],
) -> Vec<String> {
    let mut notes = Vec::new();
    for (keys, families) in from_trace {
        notes.push(format!(
            "work from the trace ({keys}), no work-model rule: {} ({} famil{})",
            families.join(", "),
            families.len(),
            if families.len() == 1 { "y" } else { "ies" }
        ));
    }
    if unsaid_width {
        notes.push(
            "the trace does not say the data type of its FLOPs (kernel_flop, flops): placed \
             under the fp32 roof; a work-model rule for the family sets its roof and work"
                .into(),
        );
    }
    if agree > 0 {
        notes.push(format!(
            "the work model and the trace agree within {}% for {agree} famil{}",
            100.0 * recorded::DISAGREEMENT,
            if agree == 1 { "y" } else { "ies" }
        ));
    }
    for d in disagree {
        notes.push(format!(
            "the work model (used) and the trace disagree beyond {}%: {d}",
            100.0 * recorded::DISAGREEMENT
        ));
    }
    notes
}
