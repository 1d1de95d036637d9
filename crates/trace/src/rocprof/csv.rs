//! rocprofv3 / rocprof CSV readers of traces (kernels, API calls, copies) and the rows they share
//! with the statistics reader.

use crate::agents::AgentMap;
use crate::error::{Error, ErrorKind, Result};
use kernelab_model::exact::SubNs;
use kernelab_model::{
    parse_scaled_decimal, parse_scaled_decimal_wide, Annotation, AnnotationScope, Dispatches,
    KernelDispatch, Launch, LaunchConfig, Location, Nanos, Profile, Resources, SourceInfo,
    Timestamp, Transfer, TransferKind,
};
use std::io::Read;

/// Column synonyms: the first name is the one rocprofv3 writes today.
const NAME: &[&str] = &["Kernel_Name", "KernelName"];
const START: &[&str] = &["Start_Timestamp", "BeginNs"];
const END: &[&str] = &["End_Timestamp", "EndNs"];
const AGENT: &[&str] = &["Agent_Id", "GPU_ID", "gpu-id"];
const STREAM: &[&str] = &["Stream_Id"];
const QUEUE: &[&str] = &["Queue_Id", "queue-id"];
const CORRELATION: &[&str] = &["Correlation_Id", "Correlation_ID"];
const LDS: &[&str] = &[
    "LDS_Block_Size",
    "Lds_Block_Size",
    "Group_Segment_Size",
    "lds_size",
    "lds",
    "LDS_Per_Workgroup",
];
const SCRATCH: &[&str] = &[
    "Scratch_Size",
    "Private_Segment_Size",
    "scr",
    "Scratch_Per_Workitem",
];
const VGPR: &[&str] = &[
    "VGPR_Count",
    "Vgpr_Count",
    "arch_vgpr",
    "Arch_VGPR",
    "arch_vgpr_count",
];
const AGPR: &[&str] = &[
    "Accum_VGPR_Count",
    "Accum_Vgpr_Count",
    "accum_vgpr",
    "Accum_VGPR",
];
const SGPR: &[&str] = &["SGPR_Count", "Sgpr_Count", "sgpr", "SGPR"];

/// Column indexes found by name.
pub(super) struct Columns {
    pub(super) names: Vec<String>,
}

impl Columns {
    pub(super) fn find(&self, synonyms: &[&str]) -> Option<usize> {
        synonyms
            .iter()
            .find_map(|s| self.names.iter().position(|c| c.eq_ignore_ascii_case(s)))
    }
    pub(super) fn require(&self, synonyms: &[&str], line: u64) -> Result<usize> {
        self.find(synonyms).ok_or_else(|| {
            Error::syntax(
                Location::line(line).with_field(synonyms[0]),
                format!("a column named {}", synonyms.join(" or ")),
                format!("header {}", self.names.join(",")),
            )
        })
    }
    fn xyz(&self, base: &str) -> Option<[usize; 3]> {
        Some([
            self.find(&[&format!("{base}_X")])?,
            self.find(&[&format!("{base}_Y")])?,
            self.find(&[&format!("{base}_Z")])?,
        ])
    }
}

/// One record being read, for located errors.
pub(super) struct Row<'a> {
    pub(super) rec: &'a csv::StringRecord,
    pub(super) line: u64,
    pub(super) header: &'a Columns,
}

impl Row<'_> {
    pub(super) fn text(&self, col: usize) -> &str {
        self.rec.get(col).unwrap_or("").trim()
    }
    pub(super) fn loc(&self, col: usize) -> Location {
        Location::line(self.line)
            .with_field(self.header.names.get(col).cloned().unwrap_or_default())
    }
    /// An exact integer; scientific notation that lost digits is refused.
    pub(super) fn int(&self, col: usize, what: &str) -> Result<i64> {
        let t = self.text(col);
        if t.contains(['e', 'E']) {
            // rocprof writes integers in full; scientific notation means the value was
            // rounded on the way (a spreadsheet round-trip), so nanoseconds are lost.
            return Err(Error::syntax(
                self.loc(col),
                format!("{what} as an exact integer"),
                format!("{t:?} in scientific notation (digits were lost; was the file saved through a spreadsheet?)"),
            ));
        }
        parse_scaled_decimal(t, 0)
            .ok_or_else(|| Error::syntax(self.loc(col), what.to_string(), format!("{t:?}")))
    }
    /// A decimal number of nanoseconds, exact, in 10⁻⁹ ns; scientific notation that lost
    /// digits is refused as in [`Row::int`].
    fn exact_ns(&self, col: usize, what: &str) -> Result<i128> {
        let t = self.text(col);
        if t.contains(['e', 'E']) {
            self.int(col, what)?;
        }
        parse_scaled_decimal_wide(t, 9)
            .ok_or_else(|| Error::syntax(self.loc(col), what.to_string(), format!("{t:?}")))
    }
    /// Start and duration from two timestamp columns, each rounded once to whole nanoseconds,
    /// with their sub-nanosecond remainders (rocprof-compute averages its passes, so its
    /// timestamps may be fractional); the end may not precede the start.
    fn interval(&self, start: usize, end: usize) -> Result<(Timestamp, Nanos, SubNs)> {
        let s = self.exact_ns(start, "a start timestamp in nanoseconds")?;
        let e = self.exact_ns(end, "an end timestamp in nanoseconds")?;
        let (start, duration, sub) = SubNs::split(s, e).ok_or_else(|| {
            let show = |v: i128| kernelab_model::exact::e9_to_f64(v).to_string();
            Error::syntax(
                self.loc(end),
                "an end timestamp not before the start (times within 64-bit nanoseconds)",
                format!("{} < {}", show(e), show(s)),
            )
        })?;
        Ok((start, duration, sub))
    }
    fn opt_u32(&self, col: Option<usize>, what: &str) -> Result<Option<u32>> {
        match col {
            None => Ok(None),
            Some(c) if self.text(c).is_empty() => Ok(None),
            Some(c) => {
                let v = self.int(c, what)?;
                u32::try_from(v)
                    .map(Some)
                    .map_err(|_| Error::syntax(self.loc(c), what.to_string(), v.to_string()))
            }
        }
    }
    /// An agent or device id: `1`, `"Agent 4"`, `"GPU 0"`.
    fn agent(&self, col: Option<usize>) -> Result<u32> {
        let Some(c) = col else { return Ok(0) };
        let t = self.text(c);
        let digits: String = t
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        digits.parse::<u32>().map_err(|_| {
            Error::syntax(
                self.loc(c),
                "an agent id such as 1 or \"Agent 4\"",
                format!("{t:?}"),
            )
        })
    }
}

/// The header row as column indexes by name.
pub(super) fn header(rdr: &mut csv::Reader<impl Read>) -> Result<Columns> {
    let h = rdr.headers().map_err(|e| csv_error(&e, 0))?;
    Ok(Columns {
        names: h.iter().map(|s| s.trim().to_string()).collect(),
    })
}

pub(super) fn csv_error(e: &csv::Error, offset: u64) -> Error {
    let mut loc = Location::default();
    if let Some(p) = e.position() {
        loc.line = Some(p.line() + offset);
        loc.byte = Some(p.byte());
    }
    match e.kind() {
        csv::ErrorKind::Io(io) => Error::new(
            loc,
            ErrorKind::Io(std::io::Error::new(io.kind(), io.to_string())),
        ),
        csv::ErrorKind::Utf8 { .. } => Error::syntax(loc, "UTF-8 text", "invalid UTF-8"),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => Error::syntax(
            loc,
            format!("{expected_len} fields as in the header"),
            format!("{len} fields"),
        ),
        _ => Error::syntax(loc, "CSV", e.to_string()),
    }
}

/// A CSV reader with a header row; `flexible` lets rows be longer than the header.
pub(super) fn reader<R: Read>(r: R, flexible: bool) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .flexible(flexible)
        .has_headers(true)
        .from_reader(r)
}

/// A CSV reader and the correction to its line numbers.
pub(super) struct Lines<R> {
    pub(super) rdr: csv::Reader<R>,
    pub(super) offset: u64,
}

/// Calls `f` with every data row, located by its physical line.
pub(super) fn records<R: Read>(
    lines: &mut Lines<R>,
    header: &Columns,
    mut f: impl FnMut(&Row<'_>) -> Result<()>,
) -> Result<()> {
    let mut rec = csv::StringRecord::new();
    let (rdr, offset) = (&mut lines.rdr, lines.offset);
    loop {
        match rdr.read_record(&mut rec) {
            Ok(true) => {
                let line = rec.position().map(|p| p.line()).unwrap_or(0) + offset;
                f(&Row {
                    rec: &rec,
                    line,
                    header,
                })?;
            }
            Ok(false) => return Ok(()),
            Err(e) => return Err(csv_error(&e, offset)),
        }
    }
}

/// A kernel trace (rocprofv3 `kernel_trace.csv`, or legacy rocprof with `BeginNs`/`EndNs`): one
/// dispatch per row.
pub(super) fn kernel_trace<R: Read>(
    rdr: &mut Lines<R>,
    cols: &Columns,
    p: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let name = cols.require(NAME, 1)?;
    let start = cols.require(START, 1)?;
    let end = cols.require(END, 1)?;
    let agent = cols.find(AGENT);
    let stream = cols.find(STREAM).or(cols.find(QUEUE));
    let corr = cols.find(CORRELATION);
    let (lds, scratch, vgpr, agpr, sgpr) = (
        cols.find(LDS),
        cols.find(SCRATCH),
        cols.find(VGPR),
        cols.find(AGPR),
        cols.find(SGPR),
    );
    let grid = cols.xyz("Grid_Size");
    let block = cols.xyz("Workgroup_Size");
    let layout = if cols.find(&["Guid"]).is_some() {
        "rocpd convert (Guid first, title-cased columns)"
    } else if cols.find(&["Stream_Id"]).is_some() {
        "rocprofv3 22-column (ROCm 6.4/7.x)"
    } else if cols.find(&["Dispatch_Id"]).is_some() && cols.find(&["Thread_Id"]).is_some() {
        "rocprofv3 18-column (SDK 0.5)"
    } else if cols.find(&["Kind"]).is_some() {
        "rocprofv3 16-column (ROCm 6.2)"
    } else {
        // rocprof-compute's timestamps.csv and rocprof's results.csv: copies are elsewhere.
        source.copies_unrecorded = true;
        "rocprof / omniperf per-dispatch table"
    };
    source.facts.push((
        "layout".into(),
        format!("{layout}, {} columns", cols.names.len()),
    ));
    if vgpr.is_some() {
        source.notes.push(
            "register counts are allocation granules from the kernel descriptor, not compiler counts (docs/formats/amd.md §1.12)".into(),
        );
    }
    if let Some(l) = lds {
        let n = &cols.names[l];
        if n.eq_ignore_ascii_case("Group_Segment_Size") {
            source
                .notes
                .push("LDS is the dispatch's group segment (static + dynamic), bytes".into());
        } else if n.eq_ignore_ascii_case("LDS_Block_Size") && cols.find(&["Guid"]).is_none() {
            source.notes.push(
                "LDS is the kernel's static LDS rounded up to 512-byte blocks (LDS_Block_Size)"
                    .into(),
            );
        }
    }
    let first = p.dispatches.len();
    let mut gpu_numbered = false;
    records(rdr, cols, |row| {
        let (start, duration, sub) = row.interval(start, end)?;
        let sub_ns = p.remainders.handle(sub);
        let tri = |c: Option<[usize; 3]>| -> Result<Option<[u32; 3]>> {
            let Some(c) = c else { return Ok(None) };
            let mut v = [0u32; 3];
            for (k, &i) in c.iter().enumerate() {
                v[k] = row.opt_u32(Some(i), "a size")?.unwrap_or(0);
            }
            Ok(Some(v))
        };
        let launch = p.launches.intern(LaunchConfig {
            grid: tri(grid)?,
            block: tri(block)?,
            resources: Resources {
                registers: row.opt_u32(vgpr, "a VGPR count")?,
                agprs: row.opt_u32(agpr, "an AGPR count")?,
                sgprs: row.opt_u32(sgpr, "an SGPR count")?,
                shared_bytes: row.opt_u32(lds, "an LDS size in bytes")?,
                scratch_bytes: row.opt_u32(scratch, "a scratch size in bytes")?,
                granules: vgpr.is_some(),
            },
        });
        let correlation = match corr {
            Some(c) => row.int(c, "a correlation id")?.try_into().ok(),
            None => None,
        };
        let stream = match stream {
            Some(c) => row.int(c, "a stream or queue id")?.try_into().unwrap_or(0),
            None => 0,
        };
        gpu_numbered |= agent.is_some_and(|c| row.text(c).starts_with("GPU"));
        p.dispatches.push(KernelDispatch {
            name: p.names.intern_str(row.text(name)),
            device: row.agent(agent)?,
            stream,
            start,
            duration,
            launch,
            correlation,
            sub_ns,
        });
        Ok(())
    })?;
    if agent.is_some() && !gpu_numbered {
        renumber_agents(&mut p.dispatches, first, source);
    }
    Ok(())
}

/// Agent ids (HSA agents, CPUs counted: `Agent_Id`, `gpu-id`, `GPU_ID`) become GPU indexes,
/// the meaning `--device` has for every format: the agents that ran kernels, in id order, are
/// GPU 0, 1, …; the mapping is stated in the facts.
fn renumber_agents(ds: &mut Dispatches, first: usize, source: &mut SourceInfo) {
    let map = AgentMap::new(ds.iter().skip(first).map(|d| d.device), []);
    ds.map_devices(first, |device| map.gpu(device));
    source.facts.push((
        "device numbers".into(),
        format!(
            "GPU index, as --device selects it; this file numbers HSA agents (CPUs counted), renumbered among the agents that ran kernels: {}",
            map.describe()
        ),
    ));
}

/// Host API calls (`hip_api_trace.csv`, older `hip_runtime_trace.csv`) become launch calls for
/// `--by-phase`; marker rows (`marker_api_trace.csv`, domains `MARKER_*`) with a duration become
/// annotated ranges named by their `Function` text.
pub(super) fn api_trace<R: Read>(
    rdr: &mut Lines<R>,
    cols: &Columns,
    p: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let domain = cols.require(&["Domain"], 1)?;
    let function = cols.require(&["Function"], 1)?;
    let corr = cols.require(CORRELATION, 1)?;
    let start = cols.require(START, 1)?;
    let end = cols.require(END, 1)?;
    let pid = cols.find(&["Process_Id"]);
    let tid = cols.find(&["Thread_Id"]);
    let (mut ranges, mut calls) = (0u64, 0u64);
    records(rdr, cols, |row| {
        // Range and call boundaries only place kernels in phases: rounded once, no remainder.
        let (start, duration, _) = row.interval(start, end)?;
        let pid = pid
            .map(|c| row.int(c, "a process id"))
            .transpose()?
            .unwrap_or(0);
        let tid = tid
            .map(|c| row.int(c, "a thread id"))
            .transpose()?
            .unwrap_or(0);
        if row.text(domain).starts_with("MARKER") {
            if duration.ns() > 0 {
                p.annotations.push(Annotation {
                    name: p.names.intern_str(row.text(function)),
                    scope: AnnotationScope::Cpu { pid, tid },
                    start,
                    duration,
                });
                ranges += 1;
            }
        } else if let Ok(correlation) = u64::try_from(row.int(corr, "a correlation id")?) {
            p.host_launches.push(Launch {
                correlation,
                pid,
                tid,
                start,
            });
            calls += 1;
        }
        Ok(())
    })?;
    source
        .facts
        .push(("marker ranges".into(), ranges.to_string()));
    source.facts.push(("API calls".into(), calls.to_string()));
    Ok(())
}

/// Which end of a copy is the GPU: the destination, or the source of a copy to the host;
/// `None` for a copy between two host agents.
fn gpu_end(direction: &str, src: &str, dst: &str) -> Option<bool> {
    // Type-relative agent names (`--agent-index type-relative`) say it themselves.
    if dst.starts_with("GPU") || src.starts_with("GPU") {
        return Some(dst.starts_with("GPU"));
    }
    if dst.starts_with("CPU") && src.starts_with("CPU") {
        return None;
    }
    let d = direction.to_ascii_uppercase();
    match (d.contains("HOST_TO"), d.contains("TO_HOST")) {
        (true, true) => None,
        (_, true) => Some(false),
        _ => Some(true),
    }
}

/// rocprofv3 `memory_copy_trace.csv`: each copy on the GPU at its GPU end, numbered like the
/// kernel trace's agents (GPU indexes; HSA agent ids renumbered in id order, stated in the
/// facts). Copies between two host agents are not GPU transfers and are left out.
pub(super) fn memory_copies<R: Read>(
    rdr: &mut Lines<R>,
    cols: &Columns,
    p: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let start = cols.require(START, 1)?;
    let end = cols.require(END, 1)?;
    let src = cols.find(&["Source_Agent_Id"]);
    let dst = cols.find(&["Destination_Agent_Id"]);
    let direction = cols.find(&["Direction"]);
    let stream = cols.find(STREAM);
    let first = p.transfers.len();
    let (mut typed, mut host_only) = (false, 0u64);
    records(rdr, cols, |row| {
        let (start, duration, sub) = row.interval(start, end)?;
        let text = |c: Option<usize>| c.map(|c| row.text(c)).unwrap_or("");
        let Some(to_dst) = gpu_end(text(direction), text(src), text(dst)) else {
            host_only += 1;
            return Ok(());
        };
        let end_col = if to_dst { dst } else { src };
        typed |= text(end_col).starts_with("GPU");
        let sub_ns = p.remainders.handle(sub);
        p.transfers.push(Transfer {
            kind: TransferKind::Memcpy,
            device: row.agent(end_col)?,
            stream: match stream {
                Some(c) => row.int(c, "a stream id")?.try_into().unwrap_or(0),
                None => 0,
            },
            start,
            duration,
            bytes: None,
            sub_ns,
        });
        Ok(())
    })?;
    let copies = &mut p.transfers[first..];
    let how = if typed || dst.is_none() {
        "GPU index, as --device selects it: the GPU end of each copy".to_string()
    } else {
        let map = AgentMap::new([], copies.iter().map(|t| t.device));
        for t in copies.iter_mut() {
            t.device = map.gpu(t.device);
        }
        format!(
            "GPU index, as --device selects it: the GPU end of each copy (the destination, or the source of a copy to the host); this file numbers HSA agents (CPUs counted), renumbered among the agents at a GPU end: {}",
            map.describe()
        )
    };
    source.facts.push(("device numbers".into(), how));
    if host_only > 0 {
        source.notes.push(format!(
            "{host_only} copies between host agents are not GPU transfers and were left out"
        ));
    }
    Ok(())
}
