//! GPU telemetry while a server runs: peak device memory in use and the SM clock range, sampled
//! every 100 ms through NVML; "unavailable" (with the reason) where NVML is not there.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the sampler saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Telemetry {
    /// Peak memory in use, summed over the GPUs (device-wide: other processes count too).
    pub peak_gpu_memory_bytes: Option<u64>,
    /// Lowest SM clock seen on any GPU, MHz.
    pub sm_mhz_min: Option<u32>,
    /// Highest SM clock seen on any GPU, MHz.
    pub sm_mhz_max: Option<u32>,
    /// Samples taken.
    pub samples: u64,
    /// Why the figures are unavailable, when they are.
    pub unavailable: Option<String>,
}

/// A running sampler thread.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Telemetry>,
}

impl Sampler {
    /// Starts sampling.
    pub fn start() -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || sample(&flag));
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

fn sample(stop: &AtomicBool) -> Telemetry {
    use nvml_wrapper::enum_wrappers::device::Clock;
    let mut t = Telemetry::default();
    let nvml = match nvml_wrapper::Nvml::init() {
        Ok(n) => n,
        Err(e) => {
            t.unavailable = Some(format!("NVML not available ({e})"));
            return t;
        }
    };
    let count = nvml.device_count().unwrap_or(0);
    if count == 0 {
        t.unavailable = Some("NVML sees no GPU".into());
        return t;
    }
    while !stop.load(Ordering::Relaxed) {
        let mut used = 0u64;
        for i in 0..count {
            let Ok(d) = nvml.device_by_index(i) else {
                continue;
            };
            if let Ok(m) = d.memory_info() {
                used += m.used;
            }
            if let Ok(c) = d.clock_info(Clock::SM) {
                t.sm_mhz_min = Some(t.sm_mhz_min.map_or(c, |x| x.min(c)));
                t.sm_mhz_max = Some(t.sm_mhz_max.map_or(c, |x| x.max(c)));
            }
        }
        t.peak_gpu_memory_bytes = Some(t.peak_gpu_memory_bytes.map_or(used, |p| p.max(used)));
        t.samples += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampler_reports_figures_or_why_not() {
        let t = Sampler::start();
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
}
