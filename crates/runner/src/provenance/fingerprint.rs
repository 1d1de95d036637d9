//! The environment fingerprint of a measurement round ([`Fingerprint`]): the GPUs' identity and
//! settings as `nvidia-smi` reports them (`--query-gpu=… --format=csv,noheader,nounits`, read
//! by column name), else `rocm-smi --json` on AMD, and the CUDA version `nvidia-smi --version`
//! reports. Unlike the rest of the provenance, this runs a program: the vendor's tool, found on
//! PATH, with a time limit. A tool that is not there, fails, or reports a value as `[N/A]` or
//! `[Not Supported]` gives `null` for what it did not say, never a guess.

use kernelab_model::fingerprint::{Fingerprint, GpuState};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The longest a GPU tool may take to answer.
const TOOL_TIMEOUT: Duration = Duration::from_secs(20);
/// The most bytes of a tool's output kept.
const MAX_TOOL_OUTPUT: usize = 1 << 20;

/// The `nvidia-smi --query-gpu` columns read, in the order asked.
pub const NVIDIA_COLUMNS: [&str; 12] = [
    "uuid",
    "name",
    "driver_version",
    "clocks.applications.graphics",
    "clocks.applications.memory",
    "clocks.default_applications.graphics",
    "clocks.default_applications.memory",
    "clocks_event_reasons.applications_clocks_setting",
    "enforced.power.limit",
    "ecc.mode.current",
    "persistence_mode",
    "compute_mode",
];

/// The `rocm-smi` options whose `--json` answer is read.
const ROCM_ARGS: [&str; 6] = [
    "--showuniqueid",
    "--showproductname",
    "--showdriverversion",
    "--showmaxpower",
    "--showperflevel",
    "--json",
];

/// The fingerprint of this machine now, with `command` the benchmark command (where the run
/// has one for both sides).
pub fn read(command: Option<&str>) -> Fingerprint {
    let mut f = nvidia().or_else(amd).unwrap_or_default();
    f.command = command.map(str::to_string);
    f
}

/// The standard output of `program args`, when it is on PATH, may run, and exits 0 in time.
fn output(program: &str, args: &[&str]) -> Option<String> {
    let path = crate::preflight::find(Path::new(program))?;
    crate::process::permitted(program).ok()?;
    let mut cmd = Command::new(path);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut tracked = crate::process::Tracked::prepare(&mut cmd, false);
    let mut child = cmd.spawn().ok()?;
    tracked.started(child.id());
    let out = child.stdout.take()?;
    let reader =
        crate::process::PipeReader::spawn(out, crate::process::Keep::Head(MAX_TOOL_OUTPUT));
    let status = wait_timeout::ChildExt::wait_timeout(&mut child, TOOL_TIMEOUT)
        .ok()
        .flatten();
    tracked.kill_all();
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let (bytes, _) = reader.finish();
    status
        .filter(std::process::ExitStatus::success)
        .and_then(|_| String::from_utf8(bytes).ok())
}

/// A value as reported, `None` for what the tool says it does not know.
fn reported(v: &str) -> Option<String> {
    let v = v.trim();
    let unknown = v.is_empty()
        || [
            "N/A",
            "[N/A]",
            "Not Supported",
            "[Not Supported]",
            "Unknown",
            "[Unknown Error]",
        ]
        .contains(&v);
    (!unknown).then(|| v.to_string())
}

/// The GPUs of `nvidia-smi --query-gpu=NVIDIA_COLUMNS --format=csv,noheader,nounits` output,
/// one line per GPU, each value taken by its column's name. A line of another number of
/// values is a GPU whose every field is unavailable.
pub fn parse_nvidia_csv(text: &str) -> Vec<GpuState> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let values: Vec<&str> = line.split(',').collect();
            let col: BTreeMap<&str, Option<String>> = if values.len() == NVIDIA_COLUMNS.len() {
                NVIDIA_COLUMNS
                    .iter()
                    .zip(&values)
                    .map(|(c, v)| (*c, reported(v)))
                    .collect()
            } else {
                BTreeMap::new()
            };
            let get = |c: &str| col.get(c).cloned().flatten();
            let (app, default) = (
                (
                    get("clocks.applications.graphics"),
                    get("clocks.applications.memory"),
                ),
                (
                    get("clocks.default_applications.graphics"),
                    get("clocks.default_applications.memory"),
                ),
            );
            let held = get("clocks_event_reasons.applications_clocks_setting");
            let clocks_locked = match (&app, &default, held.as_deref()) {
                (_, _, Some("Active")) => Some(true),
                ((Some(g), Some(m)), (Some(dg), Some(dm)), Some("Not Active")) => {
                    Some(g != dg || m != dm)
                }
                _ => None,
            };
            GpuState {
                uuid: get("uuid"),
                name: get("name"),
                driver: get("driver_version"),
                sm_clock_mhz: app.0,
                memory_clock_mhz: app.1,
                clocks_locked,
                power_limit_w: get("enforced.power.limit"),
                ecc: get("ecc.mode.current"),
                persistence: get("persistence_mode"),
                compute_mode: get("compute_mode"),
            }
        })
        .collect()
}

/// The CUDA version of `nvidia-smi --version` output (`CUDA Version : 13.0`).
pub fn parse_cuda_version(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "CUDA Version")
            .then(|| reported(v))
            .flatten()
            .map(|v| format!("CUDA {v}"))
    })
}

fn nvidia() -> Option<Fingerprint> {
    let query = format!("--query-gpu={}", NVIDIA_COLUMNS.join(","));
    let csv = output("nvidia-smi", &[&query, "--format=csv,noheader,nounits"])?;
    Some(Fingerprint {
        tool: Some("nvidia-smi".into()),
        runtime: output("nvidia-smi", &["--version"]).and_then(|t| parse_cuda_version(&t)),
        gpus: parse_nvidia_csv(&csv),
        command: None,
    })
}

/// The GPUs of `rocm-smi … --json` output (`{"card0": {"Unique ID": …}, "system": {…}}`),
/// cards in their number's order; the driver is the system's.
pub fn parse_rocm_json(text: &str) -> Option<Vec<GpuState>> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let o = v.as_object()?;
    let driver = o
        .get("system")
        .and_then(|s| s.get("Driver version"))
        .and_then(|d| d.as_str())
        .and_then(reported);
    let mut cards: Vec<(u32, &serde_json::Value)> = o
        .iter()
        .filter_map(|(k, c)| Some((k.strip_prefix("card")?.parse().ok()?, c)))
        .collect();
    cards.sort_by_key(|(n, _)| *n);
    Some(
        cards
            .into_iter()
            .map(|(_, c)| {
                let get = |k: &str| c.get(k).and_then(|x| x.as_str()).and_then(reported);
                GpuState {
                    uuid: get("Unique ID"),
                    name: get("Card series").or_else(|| get("Device Name")),
                    driver: driver.clone(),
                    power_limit_w: get("Max Graphics Package Power (W)"),
                    clocks_locked: get("Performance Level").map(|p| p != "auto"),
                    ..GpuState::default()
                }
            })
            .collect(),
    )
}

fn amd() -> Option<Fingerprint> {
    let json = output("rocm-smi", &ROCM_ARGS)?;
    let runtime = kernelab_model::read_regular_text(Path::new("/opt/rocm/.info/version"), 256)
        .ok()
        .and_then(|t| reported(&t))
        .map(|v| format!("ROCm {v}"));
    Some(Fingerprint {
        tool: Some("rocm-smi".into()),
        runtime,
        gpus: parse_rocm_json(&json)?,
        command: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as an H100 with driver 580.159.04 gave them (the device machine, 2026-12-06).
    const H100: &str = "GPU-8b407799-36d2-0743-babd-293f8944a796, NVIDIA H100 80GB HBM3, \
                        580.159.04, 1980, 2619, 1980, 2619, Not Active, 700.00, Enabled, \
                        Enabled, Default\n";

    #[test]
    fn nvidia_smi_columns_are_read_by_name() {
        let g = parse_nvidia_csv(H100);
        assert_eq!(g.len(), 1);
        assert_eq!(
            g[0].uuid.as_deref(),
            Some("GPU-8b407799-36d2-0743-babd-293f8944a796")
        );
        assert_eq!(g[0].name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(g[0].driver.as_deref(), Some("580.159.04"));
        assert_eq!(g[0].sm_clock_mhz.as_deref(), Some("1980"));
        assert_eq!(g[0].memory_clock_mhz.as_deref(), Some("2619"));
        assert_eq!(g[0].clocks_locked, Some(false));
        assert_eq!(g[0].power_limit_w.as_deref(), Some("700.00"));
        assert_eq!(g[0].ecc.as_deref(), Some("Enabled"));
        assert_eq!(g[0].persistence.as_deref(), Some("Enabled"));
        assert_eq!(g[0].compute_mode.as_deref(), Some("Default"));
    }

    #[test]
    fn set_clocks_are_locked_and_unreported_values_are_unavailable() {
        let set = H100.replacen(", 1980, 2619, 1980", ", 1410, 2619, 1980", 1);
        assert_eq!(parse_nvidia_csv(&set)[0].clocks_locked, Some(true));
        let na = "GPU-1, X, 1, [N/A], [N/A], [N/A], [N/A], [Not Supported], [N/A], N/A, \
                  Disabled, Default\n";
        let g = &parse_nvidia_csv(na)[0];
        assert_eq!((g.sm_clock_mhz.as_ref(), g.clocks_locked), (None, None));
        assert_eq!(g.ecc, None);
        // A line of another shape: a GPU, nothing known of it.
        assert_eq!(parse_nvidia_csv("a, b\n"), vec![GpuState::default()]);
    }

    #[test]
    fn the_cuda_version_line_is_read() {
        let v = "NVIDIA-SMI version  : 580.159.04\nNVML version        : 580.159\n\
                 DRIVER version      : 580.159.04\nCUDA Version        : 13.0\n";
        assert_eq!(parse_cuda_version(v).as_deref(), Some("CUDA 13.0"));
        assert_eq!(parse_cuda_version("no such line"), None);
    }

    #[test]
    fn rocm_smi_cards_are_read_in_order() {
        let j = r#"{"card1": {"Unique ID": "0x2", "Card series": "AMD Instinct MI300X",
            "Max Graphics Package Power (W)": "750.0", "Performance Level": "manual"},
            "card0": {"Unique ID": "0x1", "Performance Level": "auto"},
            "system": {"Driver version": "6.8.5"}}"#;
        let g = parse_rocm_json(j).expect("parses");
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].uuid.as_deref(), Some("0x1"));
        assert_eq!(g[0].clocks_locked, Some(false));
        assert_eq!(g[1].clocks_locked, Some(true));
        assert_eq!(g[1].power_limit_w.as_deref(), Some("750.0"));
        assert_eq!(g[1].driver.as_deref(), Some("6.8.5"));
        assert_eq!(parse_rocm_json("not json"), None);
    }
}
