//! Chrome traces written by legacy rocprof (`rocprof --hip-trace` → `results.json`): events have
//! no `cat`; GPU kernels live on processes named `GPU<n>`, copies on `COPY`, and exact
//! nanosecond times are in `args.BeginNs` / `args.EndNs` (strings).

use super::{int_of, json_error, State};
use crate::error::{Error, Result};
use kernelab_model::{
    parse_scaled_decimal, KernelDispatch, LaunchConfig, Location, Nanos, Timestamp, Transfer,
    TransferKind,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

#[derive(Deserialize)]
struct LegacyEvent<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pid: Option<&'a RawValue>,
    #[serde(borrow)]
    ts: Option<&'a RawValue>,
    #[serde(borrow)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<LegacyArgs<'a>>,
}

#[derive(Deserialize, Default)]
struct LegacyArgs<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(rename = "BeginNs", borrow)]
    begin: Option<Cow<'a, str>>,
    #[serde(rename = "EndNs", borrow)]
    end: Option<Cow<'a, str>>,
    #[serde(rename = "dev-id", borrow)]
    device: Option<&'a RawValue>,
    #[serde(rename = "queue-id", borrow)]
    queue: Option<&'a RawValue>,
}

fn pid_key(pid: Option<&RawValue>) -> String {
    pid.map(|p| p.get().trim_matches('"').to_string())
        .unwrap_or_default()
}

/// Handles one event without `cat`; returns whether it was used.
pub(crate) fn handle(text: &[u8], at: u64, ph: &[u8], st: &mut State<'_, '_>) -> Result<bool> {
    if ph != b"X" && ph != b"M" {
        return Ok(false);
    }
    let ev: LegacyEvent<'_> = serde_json::from_slice(text).map_err(|e| json_error(&e, text, at))?;
    let args = ev.args.unwrap_or_default();
    if ph == b"M" {
        if ev.name.as_deref() == Some("process_name") {
            if let Some(n) = args.name {
                st.process_names.insert(pid_key(ev.pid), n.into_owned());
            }
        }
        return Ok(false);
    }
    let process = st
        .process_names
        .get(&pid_key(ev.pid))
        .map(String::as_str)
        .unwrap_or("");
    let is_kernel = process.starts_with("GPU") && !process.starts_with("GPU Barrier");
    let is_copy = process == "COPY";
    if !is_kernel && !is_copy {
        return Ok(false);
    }
    let (start, end) = match (&args.begin, &args.end) {
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
            let s = super::time_field(ev.ts, "ts", at)?;
            (s, s + super::time_field(ev.dur, "dur", at)?)
        }
    };
    let duration = u64::try_from(end - start).map_err(|_| {
        Error::syntax(
            Location::byte(at).with_field("EndNs"),
            "an end not before the start",
            format!("{end} < {start}"),
        )
    })?;
    let device = int_of(args.device)
        .or_else(|| process.trim_start_matches("GPU").parse::<i64>().ok())
        .and_then(|d| u32::try_from(d).ok())
        .unwrap_or(0);
    let stream = int_of(args.queue)
        .and_then(|q| u64::try_from(q).ok())
        .unwrap_or(0);
    let p = &mut *st.profile;
    if is_kernel {
        let name = p.names.intern_str(ev.name.as_deref().unwrap_or(""));
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
