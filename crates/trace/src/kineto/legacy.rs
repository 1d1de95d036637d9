//! Chrome traces written by legacy rocprof (`rocprof --hip-trace` → `results.json`): events have
//! no `cat`; GPU kernels live on processes named `GPU<n>`, copies on `COPY`, and exact
//! nanosecond times are in `args.BeginNs` / `args.EndNs` (strings).

use super::scan::Fields;
use super::values::{int_of, raw, text, time_field};
use super::State;
use crate::error::{Error, Result};
use kernelab_model::{
    parse_scaled_decimal, KernelDispatch, LaunchConfig, Location, Nanos, Timestamp, Transfer,
    TransferKind,
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
                st.process_names.insert(pid_key(ev, f), n.into_owned());
            }
        }
        return Ok(false);
    }
    let process = st
        .process_names
        .get(&pid_key(ev, f))
        .map(String::as_str)
        .unwrap_or("");
    let is_kernel = process.starts_with("GPU") && !process.starts_with("GPU Barrier");
    let is_copy = process == "COPY";
    if !is_kernel && !is_copy {
        return Ok(false);
    }
    let begin = string(args.begin_ns, "args.BeginNs")?;
    let end = string(args.end_ns, "args.EndNs")?;
    let (start, end) = match (&begin, &end) {
        (Some(b), Some(e)) => {
            let b = parse_scaled_decimal(b, 0).ok_or_else(|| {
                Error::syntax(
                    Location::byte(at).with_field("BeginNs"),
                    "integer nanoseconds",
                    b.to_string(),
                )
            })?;
            let e = parse_scaled_decimal(e, 0).ok_or_else(|| {
                Error::syntax(
                    Location::byte(at).with_field("EndNs"),
                    "integer nanoseconds",
                    e.to_string(),
                )
            })?;
            (b, e)
        }
        _ => {
            let s = time_field(ev, f.ts, "ts", at)?;
            let d = time_field(ev, f.dur, "dur", at)?;
            (s, s.saturating_add(d))
        }
    };
    let span = end.checked_sub(start).and_then(|d| u64::try_from(d).ok());
    let duration = span.ok_or_else(|| {
        Error::syntax(
            Location::byte(at).with_field("EndNs"),
            "an end not before the start",
            format!("{end} < {start}"),
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
    if is_kernel {
        let name = p.names.intern_str(name.as_deref().unwrap_or(""));
        let launch = p.launches.intern(LaunchConfig::default());
        p.dispatches.push(KernelDispatch {
            name,
            device,
            stream,
            start: Timestamp::from_ns(start),
            duration: Nanos::from_ns(duration),
            launch,
            correlation: None,
        });
    } else {
        p.transfers.push(Transfer {
            kind: TransferKind::Memcpy,
            device,
            stream,
            start: Timestamp::from_ns(start),
            duration: Nanos::from_ns(duration),
            bytes: None,
        });
    }
    Ok(true)
}
