//! GPU telemetry while a server runs, sampled every 100 ms: peak memory in use on the server's
//! GPUs (device-wide), peak memory of the server's own processes, and the SM clock range.
//!
//! - NVIDIA, through NVML. The GPUs are those the server may use: its `CUDA_VISIBLE_DEVICES`
//!   (indices, read in NVML's PCI order, or `GPU-` UUIDs), else all. The server's own memory is
//!   the sum of NVML's per-process figures of the processes in the server's session (each server
//!   is started as a session leader, so its session id is its pid).
//! - AMD, where NVML is absent, through the amdgpu driver's sysfs files
//!   (`/sys/class/drm/card*/device/`): `mem_info_vram_used` + `mem_info_gtt_used` (bytes; GTT
//!   counts on APUs, whose GPU memory is mostly system memory) and the `*`-marked line of
//!   `pp_dpm_sclk` (e.g. `1: 1200Mhz *`). Per-process memory is unavailable there.
//! - Otherwise every figure is "unavailable", with the reason.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the sampler saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Telemetry {
    /// Peak memory in use, summed over the sampled GPUs (device-wide: other processes count too).
    pub peak_gpu_memory_bytes: Option<u64>,
    /// Peak memory of the server's own processes (NVML per-process figures).
    #[serde(default)]
    pub peak_server_memory_bytes: Option<u64>,
    /// Lowest SM clock seen on any sampled GPU, MHz.
    pub sm_mhz_min: Option<u32>,
    /// Highest SM clock seen on any sampled GPU, MHz.
    pub sm_mhz_max: Option<u32>,
    /// Samples taken.
    pub samples: u64,
    /// The GPUs sampled (NVML indices or sysfs card names).
    #[serde(default)]
    pub gpus: Vec<String>,
    /// Why the figures are unavailable, when they are.
    pub unavailable: Option<String>,
}

/// Which GPUs and processes belong to one server.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// The server's `CUDA_VISIBLE_DEVICES` (`None`: all GPUs).
    pub visible: Option<String>,
    /// The server's session id (its pid: it is a session leader).
    pub session: Option<u32>,
    /// Where the amdgpu sysfs cards are (default `/sys/class/drm`).
    pub drm_root: Option<PathBuf>,
}

impl Scope {
    /// The scope of a server started with `env` (its own variables over kernelab's) as `pid`.
    pub fn of_server(env: &std::collections::BTreeMap<String, String>, pid: u32) -> Scope {
        let visible = env
            .get("CUDA_VISIBLE_DEVICES")
            .cloned()
            .or_else(|| std::env::var("CUDA_VISIBLE_DEVICES").ok());
        Scope {
            visible,
            session: Some(pid),
            drm_root: None,
        }
    }
}

/// A running sampler thread.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Telemetry>,
}

impl Sampler {
    /// Starts sampling the GPUs and processes of `scope`.
    pub fn start(scope: Scope) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || sample(&scope, &flag));
        Sampler { stop, handle }
    }

    /// Stops sampling and returns what was seen.
    pub fn finish(self) -> Telemetry {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_else(|_| Telemetry {
            unavailable: Some("the sampler thread panicked".into()),
            ..Default::default()
        })
    }
}

fn sample(scope: &Scope, stop: &AtomicBool) -> Telemetry {
    match nvml_wrapper::Nvml::init() {
        Ok(nvml) => sample_nvml(&nvml, scope, stop),
        Err(e) => {
            let root = scope
                .drm_root
                .clone()
                .unwrap_or_else(|| PathBuf::from("/sys/class/drm"));
            let cards = amd_cards(&root);
            if cards.is_empty() {
                return Telemetry {
                    unavailable: Some(format!(
                        "NVML not available ({e}) and no amdgpu card in {}",
                        root.display()
                    )),
                    ..Default::default()
                };
            }
            sample_amd(&cards, stop)
        }
    }
}

/// The GPU energy counter of a scope's GPUs, millijoules, summed: NVML's total energy since
/// the driver loaded, else the amdgpu cards' `hwmon*/energy1_input` (microjoules, where the
/// driver has one). `Err`: why there is none. Two readings around a point give its energy.
pub fn energy_mj(scope: &Scope) -> Result<u64, String> {
    match nvml_wrapper::Nvml::init() {
        Ok(nvml) => {
            let devices = nvml_devices(&nvml, scope.visible.as_deref())?;
            let mut total: u64 = 0;
            for (name, d) in &devices {
                let mj = d
                    .total_energy_consumption()
                    .map_err(|e| format!("GPU {name}: NVML total energy: {e}"))?;
                total = total.saturating_add(mj);
            }
            Ok(total)
        }
        Err(e) => {
            let root = scope
                .drm_root
                .clone()
                .unwrap_or_else(|| PathBuf::from("/sys/class/drm"));
            let cards = amd_cards(&root);
            if cards.is_empty() {
                return Err(format!(
                    "NVML not available ({e}) and no amdgpu card in {}",
                    root.display()
                ));
            }
            let mut total: u64 = 0;
            for (name, dev) in &cards {
                let uj = std::fs::read_dir(dev.join("hwmon"))
                    .ok()
                    .into_iter()
                    .flatten()
                    .flatten()
                    .find_map(|h| read_u64(&h.path().join("energy1_input")))
                    .ok_or_else(|| format!("{name}: no hwmon energy1_input"))?;
                total = total.saturating_add(uj / 1000);
            }
            Ok(total)
        }
    }
}

/// The NVML devices a `CUDA_VISIBLE_DEVICES` value names (`None`: all `count`).
fn nvml_devices<'n>(
    nvml: &'n nvml_wrapper::Nvml,
    visible: Option<&str>,
) -> Result<Vec<(String, nvml_wrapper::Device<'n>)>, String> {
    let count = nvml.device_count().map_err(|e| format!("NVML: {e}"))?;
    let mut out = Vec::new();
    match visible.map(str::trim) {
        None => {
            for i in 0..count {
                if let Ok(d) = nvml.device_by_index(i) {
                    out.push((i.to_string(), d));
                }
            }
        }
        Some(v) => {
            for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let d = if item.starts_with("GPU-") || item.starts_with("MIG-") {
                    nvml.device_by_uuid(item)
                } else {
                    match item.parse::<u32>() {
                        Ok(i) => nvml.device_by_index(i),
                        // CUDA stops at the first invalid entry; so do we.
                        Err(_) => break,
                    }
                };
                match d {
                    Ok(d) => out.push((item.to_string(), d)),
                    Err(e) => return Err(format!("CUDA_VISIBLE_DEVICES entry {item}: {e}")),
                }
            }
        }
    }
    if out.is_empty() {
        return Err("NVML sees no GPU for this server".into());
    }
    Ok(out)
}

fn sample_nvml(nvml: &nvml_wrapper::Nvml, scope: &Scope, stop: &AtomicBool) -> Telemetry {
    use nvml_wrapper::enum_wrappers::device::Clock;
    use nvml_wrapper::enums::device::UsedGpuMemory;
    let mut t = Telemetry::default();
    let devices = match nvml_devices(nvml, scope.visible.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            t.unavailable = Some(e);
            return t;
        }
    };
    t.gpus = devices.iter().map(|(n, _)| n.clone()).collect();
    let mut per_process_ok = true;
    while !stop.load(Ordering::Relaxed) {
        let mut used = 0u64;
        let mut own = 0u64;
        for (_, d) in &devices {
            if let Ok(m) = d.memory_info() {
                used += m.used;
            }
            if let Ok(c) = d.clock_info(Clock::SM) {
                t.sm_mhz_min = Some(t.sm_mhz_min.map_or(c, |x| x.min(c)));
                t.sm_mhz_max = Some(t.sm_mhz_max.map_or(c, |x| x.max(c)));
            }
            match (scope.session, d.running_compute_processes()) {
                (Some(sid), Ok(ps)) => {
                    for p in ps {
                        if session_of(p.pid) == Some(sid) {
                            if let UsedGpuMemory::Used(b) = p.used_gpu_memory {
                                own += b;
                            }
                        }
                    }
                }
                _ => per_process_ok = false,
            }
        }
        t.peak_gpu_memory_bytes = Some(t.peak_gpu_memory_bytes.map_or(used, |p| p.max(used)));
        if per_process_ok {
            t.peak_server_memory_bytes =
                Some(t.peak_server_memory_bytes.map_or(own, |p| p.max(own)));
        }
        t.samples += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    if !per_process_ok {
        t.peak_server_memory_bytes = None;
    }
    t
}

/// The session id of a process (field 6 of `/proc/PID/stat`), `None` when unreadable.
fn session_of(pid: u32) -> Option<u32> {
    let stat = read_small(Path::new(&format!("/proc/{pid}/stat")))?;
    // The command name (field 2) is in parentheses and may hold spaces: count after its end.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(3)?.parse().ok()
}

/// The amdgpu card folders (`cardN/device` holding `mem_info_vram_used`) under `root`.
fn amd_cards(root: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut cards: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let ok = name
                .strip_prefix("card")?
                .bytes()
                .all(|b| b.is_ascii_digit());
            let dev = e.path().join("device");
            (ok && dev.join("mem_info_vram_used").is_file()).then_some((name, dev))
        })
        .collect();
    cards.sort();
    cards
}

/// The current SM clock from `pp_dpm_sclk` text: the MHz of the line marked `*`.
pub fn current_sclk_mhz(text: &str) -> Option<u32> {
    let line = text.lines().find(|l| l.trim_end().ends_with('*'))?;
    let value = line.split_once(':')?.1.trim().trim_end_matches('*').trim();
    let digits = value
        .strip_suffix("Mhz")
        .or_else(|| value.strip_suffix("MHz"))?;
    digits.trim().parse().ok()
}

/// A small sysfs or procfs text file: a regular file only (a FIFO put there never blocks the
/// sampler) and at most 64 KiB.
fn read_small(path: &Path) -> Option<String> {
    let file = kernelab_model::open_regular(path).ok()?;
    String::from_utf8(kernelab_model::read_capped(file, 64 * 1024).ok()?).ok()
}

/// A sysfs integer file.
fn read_u64(path: &Path) -> Option<u64> {
    read_small(path)?.trim().parse().ok()
}

fn sample_amd(cards: &[(String, PathBuf)], stop: &AtomicBool) -> Telemetry {
    let mut t = Telemetry {
        gpus: cards.iter().map(|(n, _)| n.clone()).collect(),
        ..Default::default()
    };
    loop {
        let mut used = 0u64;
        for (_, dev) in cards {
            used += read_u64(&dev.join("mem_info_vram_used")).unwrap_or(0);
            used += read_u64(&dev.join("mem_info_gtt_used")).unwrap_or(0);
            let sclk = read_small(&dev.join("pp_dpm_sclk"));
            if let Some(c) = sclk.as_deref().and_then(current_sclk_mhz) {
                t.sm_mhz_min = Some(t.sm_mhz_min.map_or(c, |x| x.min(c)));
                t.sm_mhz_max = Some(t.sm_mhz_max.map_or(c, |x| x.max(c)));
            }
        }
        t.peak_gpu_memory_bytes = Some(t.peak_gpu_memory_bytes.map_or(used, |p| p.max(used)));
        t.samples += 1;
        if stop.load(Ordering::Relaxed) {
            return t;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampler_reports_figures_or_why_not() {
        let t = Sampler::start(Scope::default());
        std::thread::sleep(Duration::from_millis(250));
        let t = t.finish();
        match &t.unavailable {
            Some(why) => {
                assert!(why.contains("NVML"), "{why}");
                assert_eq!(t.peak_gpu_memory_bytes, None);
            }
            None => {
                assert!(t.samples >= 1);
                assert!(t.peak_gpu_memory_bytes.is_some());
            }
        }
    }

    #[test]
    fn the_marked_sclk_line_is_the_clock() {
        let text = "0: 600Mhz \n1: 1200Mhz *\n2: 2900Mhz \n";
        assert_eq!(current_sclk_mhz(text), Some(1200));
        assert_eq!(current_sclk_mhz("0: 600Mhz\n1: 1200Mhz\n"), None);
        assert_eq!(current_sclk_mhz("1: fastMhz *\n"), None);
    }

    #[test]
    fn amdgpu_energy_is_read_from_hwmon_in_microjoules() {
        let dir = tempfile::tempdir().expect("tmp");
        let dev = dir.path().join("card0/device");
        std::fs::create_dir_all(dev.join("hwmon/hwmon3")).expect("mkdir");
        std::fs::write(dev.join("mem_info_vram_used"), "1\n").expect("write");
        std::fs::write(dev.join("hwmon/hwmon3/energy1_input"), "123456789\n").expect("write");
        let scope = Scope {
            drm_root: Some(dir.path().to_path_buf()),
            ..Scope::default()
        };
        // On a machine with NVML the NVIDIA counter is read instead; either way a number or a
        // reason, and here (no NVML) the card's counter in millijoules.
        if nvml_wrapper::Nvml::init().is_err() {
            assert_eq!(energy_mj(&scope), Ok(123_456));
            std::fs::remove_file(dev.join("hwmon/hwmon3/energy1_input")).expect("rm");
            let e = energy_mj(&scope).expect_err("no counter");
            assert!(e.contains("no hwmon energy1_input"), "{e}");
        }
    }

    #[test]
    fn amdgpu_sysfs_cards_are_sampled() {
        let root = tempfile::tempdir().expect("tmp");
        for (card, vram, gtt, sclk) in [
            ("card0", "1048576\n", "4096\n", "0: 500Mhz \n1: 2100Mhz *\n"),
            ("card1", "2097152\n", "0\n", "0: 800Mhz *\n1: 2100Mhz \n"),
        ] {
            let dev = root.path().join(card).join("device");
            std::fs::create_dir_all(&dev).expect("dir");
            std::fs::write(dev.join("mem_info_vram_used"), vram).expect("w");
            std::fs::write(dev.join("mem_info_gtt_used"), gtt).expect("w");
            std::fs::write(dev.join("pp_dpm_sclk"), sclk).expect("w");
        }
        // A connector folder is not a card.
        std::fs::create_dir_all(root.path().join("card0-DP-1")).expect("dir");
        let cards = amd_cards(root.path());
        assert_eq!(cards.len(), 2);
        let stop = AtomicBool::new(true);
        let t = sample_amd(&cards, &stop);
        assert_eq!(t.peak_gpu_memory_bytes, Some(1048576 + 4096 + 2097152));
        assert_eq!((t.sm_mhz_min, t.sm_mhz_max), (Some(800), Some(2100)));
        assert_eq!(t.gpus, ["card0", "card1"]);
        assert_eq!(t.peak_server_memory_bytes, None);
    }

    #[test]
    fn a_fifo_in_place_of_a_sysfs_file_reads_as_absent_without_blocking() {
        let dir = tempfile::tempdir().expect("tmp");
        let fifo = dir.path().join("pp_dpm_sclk");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            kernelab_testkit::skip("mkfifo", "mkfifo is not available");
            return;
        }
        // Nothing writes to the FIFO: opening it for reading would block forever.
        assert_eq!(read_small(&fifo), None);
        let file = dir.path().join("mem_info_vram_used");
        std::fs::write(&file, "4096\n").expect("w");
        assert_eq!(read_u64(&file), Some(4096));
    }

    #[test]
    fn a_session_leaders_session_is_its_pid() {
        // `setsid` (util-linux) makes itself a session leader and execs `sleep`, keeping its pid,
        // as kernelab starts a server.
        let Ok(mut child) = std::process::Command::new("setsid")
            .args(["sleep", "5"])
            .spawn()
        else {
            kernelab_testkit::skip("setsid", "setsid (util-linux) is not available");
            return;
        };
        let pid = child.id();
        let mut sid = None;
        for _ in 0..50 {
            sid = session_of(pid);
            if sid == Some(pid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(sid, Some(pid));
        assert_ne!(session_of(std::process::id()), Some(pid));
    }
}
