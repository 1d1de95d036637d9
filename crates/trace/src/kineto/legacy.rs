//! Chrome traces written by legacy rocprof (`rocprof --hip-trace` → `results.json`): events have
//! no `cat`; GPU kernels live on processes named `GPU<n>`, copies on `COPY`, and exact
//! nanosecond times are in `args.BeginNs` / `args.EndNs` (strings).

use super::scan::Fields;
use super::values::{int_of, raw, text, time_field};
use super::State;
use crate::agents::AgentMap;
use crate::error::{Error, Result};
use kernelab_model::exact::{e9_to_f64, SubNs, E9};
use kernelab_model::{
    parse_scaled_decimal_wide, ActivityAggregate, ActivityKind, KernelDispatch, LaunchConfig,
    Location, Nanos, Profile, Transfer, TransferKind,
};

/// The `pid` as a key of the process-name table (a string's content, or the number's text).
fn pid_key(ev: &[u8], f: &Fields) -> String {
    f.pid
        .map(|v| String::from_utf8_lossy(raw(ev, v)).into_owned())
        .unwrap_or_default()
}

/// Handles one event without `cat`; returns whether it was used.
pub(crate) fn handle(
    ev: &[u8],
    f: &Fields,
    at: u64,
    ph: &[u8],
    st: &mut State<'_, '_>,
) -> Result<bool> {
    if ph != b"X" && ph != b"M" {
        return Ok(false);
    }
    let string = |v, field| match v {
        Some(v) => text(ev, v, at, field),
        None => Ok(None),
    };
    let name = string(f.name, "name")?;
    let args = &f.args;
    if ph == b"M" {
        if name.as_deref() == Some("process_name") {
            if let Some(n) = string(args.name, "args.name")? {
                st.defer(super::Deferred::ProcessName(pid_key(ev, f), n.into_owned()));
            }
        }
        return Ok(false);
    }
    let process = st
        .process_names
        .get(&pid_key(ev, f))
        .map(String::as_str)
        .unwrap_or("");
    // Barrier and marker packets are queue activity, not kernels: newer rocprof puts them on
    // `GPU Barriers<n>` processes, older rocprof on `GPU<n>` under the name `"<barrier packet>"`.
    let on_gpu = process.starts_with("GPU");
    let is_queue = on_gpu
        && (process.starts_with("GPU Barrier")
            || name.as_deref().is_some_and(crate::rocprof::is_queue_packet));
    let is_kernel = on_gpu && !is_queue;
    let is_copy = process == "COPY";
    if !is_kernel && !is_copy && !is_queue {
        return Ok(false);
    }
    // BeginNs/EndNs are exact decimal text (kept to 10⁻⁹ ns); ts/dur are Kineto microseconds.
    let ns = |text: &str, field: &str| {
        parse_scaled_decimal_wide(text, 9).ok_or_else(|| {
            Error::syntax(
                Location::byte(at).with_field(field),
                "nanoseconds",
                text.to_string(),
            )
        })
    };
    let begin = string(args.begin_ns, "args.BeginNs")?;
    let end = string(args.end_ns, "args.EndNs")?;
    let (start, end) = match (&begin, &end) {
        (Some(b), Some(e)) => (ns(b, "BeginNs")?, ns(e, "EndNs")?),
        _ => {
            let s = i128::from(time_field(ev, f.ts, "ts", at)?);
            let e = s + i128::from(time_field(ev, f.dur, "dur", at)?);
            (s * E9, e * E9)
        }
    };
    let exact_duration = end.saturating_sub(start);
    let (start, duration, sub) = SubNs::split(start, end).ok_or_else(|| {
        Error::syntax(
            Location::byte(at).with_field("EndNs"),
            "an end not before the start (times within 64-bit nanoseconds)",
            format!("{} < {}", e9_to_f64(end), e9_to_f64(start)),
        )
    })?;
    let device = int_of(ev, args.dev_id)
        .or_else(|| process.trim_start_matches("GPU").parse::<i64>().ok())
        .and_then(|d| u32::try_from(d).ok())
        .unwrap_or(0);
    let stream = int_of(ev, args.queue_id)
        .and_then(|q| u64::try_from(q).ok())
        .unwrap_or(0);
    let p = &mut *st.profile;
    if is_queue {
        let label = name
            .as_deref()
            .map(|n| n.trim().trim_matches('"'))
            .filter(|n| !n.is_empty())
            .unwrap_or("<barrier packet>");
        add_queue_packet(p, label, u128::try_from(exact_duration).unwrap_or(0));
        return Ok(true);
    }
    let sub_ns = p.remainders.handle(sub);
    if is_kernel {
        let name = p.names.intern_str(name.as_deref().unwrap_or(""));
        let launch = p.launches.intern(LaunchConfig::default());
        p.dispatches.push(KernelDispatch {
            name,
            device,
            stream,
            start,
            duration,
            launch,
            correlation: None,
            sub_ns,
        });
    } else {
        p.transfers.push(Transfer {
            kind: TransferKind::Memcpy,
            device,
            stream,
            start,
            duration,
            bytes: None,
            sub_ns,
        });
    }
    Ok(true)
}

/// Counts one barrier or marker packet of `e9` × 10⁻⁹ ns under `name` (one activity row per name).
fn add_queue_packet(p: &mut Profile, name: &str, e9: u128) {
    let found = p
        .activities
        .iter_mut()
        .find(|a| a.kind == ActivityKind::Queue && a.name == name);
    let a = match found {
        Some(a) => a,
        None => {
            p.activities.push(ActivityAggregate {
                kind: ActivityKind::Queue,
                name: name.to_string(),
                calls: 0,
                total: Nanos::from_ns(0),
                total_e9: 0,
            });
            let last = p.activities.len() - 1;
            &mut p.activities[last]
        }
    };
    a.calls += 1;
    a.total_e9 += e9;
    a.total = crate::rocprof::round_e9(a.total_e9);
}

/// The device numbers of a legacy rocprof trace read into `p` from dispatch `first.0` and
/// transfer `first.1` on: `dev-id` is an HSA agent id (CPUs counted, so an MI300X's first GPU
/// is agent 2), renumbered like rocprof's CSV files (the agents that ran kernels, in id order,
/// then those that only copied); returns the fact that says so.
pub(crate) fn renumber(p: &mut Profile, first: (usize, usize)) -> String {
    let ts = p.transfers.get(first.1..).unwrap_or_default();
    let map = AgentMap::new(
        p.dispatches.iter().skip(first.0).map(|d| d.device),
        ts.iter().map(|t| t.device),
    );
    p.dispatches.map_devices(first.0, |device| map.gpu(device));
    for t in p.transfers.iter_mut().skip(first.1) {
        t.device = map.gpu(t.device);
    }
    format!(
        "GPU index, as --device selects it; rocprof numbers HSA agents (dev-id, CPUs counted), renumbered among the agents that ran kernels, then those that only copied: {}",
        map.describe()
    )
}
