//! Identical-code runs kept as free A/A controls (`--controls FILE`): a JSON-lines ledger the
//! user names, one line per `kernel run` whose builds carry identical machine code. A kernel
//! run looks its key up (kernel, sizes, GPU) before it appends: once the ledger holds
//! [`MIN_CONTROLS`] runs of that key, the largest change they showed is the kernel's noise
//! floor on that GPU, stated beside the verdict.

use anyhow::{anyhow, bail, Context, Result};
use kernelab_model::kernel_run::NoiseFloor;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// Identical-code runs of one key needed before a noise floor is stated.
pub const MIN_CONTROLS: usize = 5;
/// The most bytes of a ledger read.
const MAX_LEDGER: u64 = 64 << 20;

/// One identical-code run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    /// The kernel, its sizes and the GPU (`symbol [B=1 T=8192] on GPU-…`).
    pub key: String,
    /// Candidate / baseline − 1 of the run.
    pub change: f64,
    /// Its interval, `[low, high]` of the change.
    pub interval: Option<(f64, f64)>,
    /// Rounds timed.
    pub rounds: usize,
    /// When it ran (RFC 3339, UTC).
    pub at: String,
    /// The spec it ran.
    pub spec: String,
}

/// The ledger key of `symbol` at `sizes` on `gpu` (its UUID where known, else its name).
pub fn key(symbol: &str, sizes: &std::collections::BTreeMap<String, i64>, gpu: &str) -> String {
    let sizes: Vec<String> = sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{symbol} [{}] on {gpu}", sizes.join(" "))
}

/// The controls of `key` in the ledger `path` (none when the file does not exist yet). A line
/// that is not a control is an error naming the file and the line.
pub fn read(path: &Path, key: &str) -> Result<Vec<Control>> {
    let mut all = read_all(path)?;
    all.retain(|c| c.key == key);
    Ok(all)
}

/// Every control of the ledger `path`, checked line by line (none when it does not exist yet).
pub fn read_all(path: &Path) -> Result<Vec<Control>> {
    let text = match kernelab_model::read_regular_text(path, MAX_LEDGER) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(anyhow!("--controls {}: cannot read: {e}", path.display())),
    };
    parse(&text, path, None)
}

/// The controls of `key` (every key: `None`) in the ledger text `text` (read from `path`,
/// which errors name).
pub fn parse(text: &str, path: &Path, key: Option<&str>) -> Result<Vec<Control>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let c: Control = serde_json::from_str(line).map_err(|e| {
            anyhow!(
                "--controls {}: line {}: expected a control of kernelab kernel run (key, change, \
                 interval, rounds, at, spec): {e}",
                path.display(),
                i + 1
            )
        })?;
        if !c.change.is_finite() {
            bail!(
                "--controls {}: line {}: change is not a finite number",
                path.display(),
                i + 1
            );
        }
        if key.is_none_or(|k| c.key == k) {
            out.push(c);
        }
    }
    Ok(out)
}

/// The noise floor the `controls` of one key calibrate, once there are [`MIN_CONTROLS`].
pub fn floor(controls: &[Control], key: &str, ledger: &Path) -> Option<NoiseFloor> {
    if controls.len() < MIN_CONTROLS {
        return None;
    }
    let largest = controls.iter().map(|c| c.change.abs()).fold(0.0, f64::max);
    Some(NoiseFloor {
        key: key.to_string(),
        controls: controls.len(),
        largest_change: largest,
        ledger: ledger.display().to_string(),
    })
}

/// The ledger step of the timed points of a kernel sweep that ran now (`sweep --controls`):
/// keyed as `kernel run` keys its runs (the baseline's kernel, every size of the point's spec,
/// the GPU's UUID), each point first gets the noise floor of the ledger as it was before this
/// sweep; then the points whose machine code is identical on both sides (their build's in
/// `builds`, the sweep's code comparison, or the spec's own builds' for a point without one),
/// whose gates passed and whose timing is a verdict (conditions unchanged) join the ledger.
/// The points given a floor are returned.
pub fn sweep_points<'a>(
    sweep: &kernelab_runner::sweep::Sweep,
    kernel: &kernelab_launcher::sweep::KernelSweep,
    builds: &[kernelab_model::sweep::BuildChange],
    points: Vec<&'a mut kernelab_model::sweep::PointResult>,
    ledger: &Path,
) -> Result<Vec<&'a mut kernelab_model::sweep::PointResult>> {
    use kernelab_model::sweep::PointVerdict;
    let earlier = read_all(ledger)?;
    let spec_identical = crate::kernel::code_sameness(kernel.spec()).identical;
    let mut joined = Vec::new();
    let mut changed = Vec::new();
    for r in points {
        let Some(change) = r.change.change() else {
            continue;
        };
        let point = sweep.point(&r.id)?;
        // A point whose spec no longer resolves ran as an error; it has no key.
        let Ok((symbol, sizes)) = kernel.kernel_and_sizes(point) else {
            continue;
        };
        let key = key(&symbol, &sizes, &point_gpu(r, kernel.spec().device));
        let of_key: Vec<Control> = earlier.iter().filter(|c| c.key == key).cloned().collect();
        r.noise_floor = floor(&of_key, &key, ledger);
        let identical = match &r.build {
            Some(b) => builds.iter().any(|c| &c.key == b && !c.changed),
            None => spec_identical,
        };
        if identical && r.verdict == PointVerdict::Pass {
            joined.push(Control {
                key,
                change,
                interval: r.change.change_interval().map(|i| (i.low, i.high)),
                rounds: kernel.spec().timing.rounds,
                at: kernelab_runner::provenance::rfc3339(std::time::SystemTime::now()),
                spec: format!("{} point {}", sweep.path.display(), r.id),
            });
        }
        changed.push(r);
    }
    for c in &joined {
        append(ledger, c)?;
    }
    Ok(changed)
}

/// The GPU a sweep point ran on, by its UUID where its fingerprint says which: the only GPU
/// listed, else the one its worker is named for (`host gpu1`: `CUDA_VISIBLE_DEVICES` was that
/// index), else the spec's device; the device's name otherwise.
fn point_gpu(r: &kernelab_model::sweep::PointResult, device: i32) -> String {
    let gpus = r
        .conditions
        .as_ref()
        .map(|c| c.fingerprint.gpus.as_slice())
        .unwrap_or_default();
    let index = match gpus.len() {
        1 => Some(0),
        _ => r
            .worker
            .rsplit_once(" gpu")
            .and_then(|(_, g)| g.parse::<usize>().ok())
            .or_else(|| usize::try_from(device).ok()),
    };
    index
        .and_then(|i| gpus.get(i)?.uuid.clone())
        .unwrap_or_else(|| r.device.clone())
}

/// Appends `control` to the ledger `path` (made when missing; only a regular file).
pub fn append(path: &Path, control: &Control) -> Result<()> {
    let mut line = serde_json::to_string(control).context("serializing the control")?;
    line.push('\n');
    let mut f = kernelab_model::open_append_regular(path)
        .with_context(|| format!("--controls {}", path.display()))?;
    f.write_all(line.as_bytes())
        .with_context(|| format!("--controls {}: cannot write", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(key: &str, change: f64) -> Control {
        Control {
            key: key.into(),
            change,
            interval: Some((change - 0.001, change + 0.001)),
            rounds: 30,
            at: "2026-12-06T14:00:00Z".into(),
            spec: "k.toml".into(),
        }
    }

    #[test]
    fn a_floor_needs_five_controls_of_its_key_and_is_their_largest_change() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("controls.jsonl");
        assert!(read(&path, "k").expect("no ledger yet").is_empty());
        for (i, c) in [0.001, -0.004, 0.002, 0.0005].into_iter().enumerate() {
            append(&path, &control("k", c)).expect("append");
            append(&path, &control("other", 0.05 * (i as f64 + 1.0))).expect("append");
        }
        let four = read(&path, "k").expect("read");
        assert_eq!(four.len(), 4);
        assert_eq!(floor(&four, "k", &path), None);
        append(&path, &control("k", -0.0001)).expect("append");
        let five = read(&path, "k").expect("read");
        let f = floor(&five, "k", &path).expect("a floor");
        assert_eq!((f.controls, f.largest_change), (5, 0.004));
        assert_eq!(five[1], control("k", -0.004));
    }

    #[test]
    fn identical_code_sweep_points_join_the_ledger_and_later_points_read_their_floor() {
        use kernelab_model::sweep::PointVerdict;
        use kernelab_stats::{Change, Interval};
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        let code = |c: &str| fixtures.join(format!("code/recompute_w_u_fwd_kernel_{c}.cubin"));
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("sweep.toml");
        let text = format!(
            "spec = {:?}\ntiming = true\nrounds = 4\n\n[grid.sizes]\nT = [4096]\n\n\
             [[grid.build]]\nkey = \"same\"\nbaseline = {:?}\ncandidate = {:?}\n\n\
             [[grid.build]]\nkey = \"retuned\"\nbaseline = {:?}\ncandidate = {:?}\n",
            fixtures.join("kernel/recompute_w4s3_aa.toml"),
            code("w4s3"),
            code("w4s3"),
            code("w4s3"),
            code("w4s4"),
        );
        std::fs::write(&file, text).expect("write");
        let sweep = kernelab_runner::sweep::Sweep::read(&file, None).expect("sweep");
        let kernel = kernelab_launcher::sweep::KernelSweep::new(&sweep)
            .expect("spec")
            .expect("a kernel sweep");
        let builds = sweep.code_changes().expect("code");
        let ledger = dir.path().join("controls.jsonl");
        let timed = |id: &str, change: f64| {
            let mut r = kernelab_runner::sweep::unfinished(
                sweep.point(id).expect("point"),
                "host gpu0",
                0,
                None,
            );
            r.verdict = PointVerdict::Pass;
            r.device = "test".into();
            let i = Interval {
                low: 1.0 + change - 0.001,
                high: 1.0 + change + 0.001,
            };
            r.change = Change::from_ratio(1.0 + change, Some(i));
            r
        };
        let step = |r: &mut kernelab_model::sweep::PointResult| {
            sweep_points(&sweep, &kernel, &builds, vec![r], &ledger)
                .expect("step")
                .len()
        };
        // Five sweeps' identical-code points join; none states a floor yet.
        for (n, c) in [0.001, -0.003, 0.002, 0.0005, -0.001]
            .into_iter()
            .enumerate()
        {
            let mut r = timed("same-T=4096", c);
            assert_eq!(step(&mut r), 1);
            assert!(r.noise_floor.is_none(), "sweep {n}");
        }
        let lines = std::fs::read_to_string(&ledger).expect("ledger");
        assert_eq!(lines.lines().count(), 5);
        assert!(
            lines.contains("recompute_w_u_fwd_kernel")
                && lines.contains("T=4096")
                && lines.contains("on test"),
            "{lines}"
        );
        // A point on changed code reads the floor of its key and does not join.
        let mut r = timed("retuned-T=4096", 0.02);
        assert_eq!(step(&mut r), 1);
        let f = r.noise_floor.clone().expect("a floor of five controls");
        assert_eq!(f.controls, 5);
        assert!((f.largest_change - 0.003).abs() < 1e-12, "{f:?}");
        assert_eq!(std::fs::read_to_string(&ledger).expect("ledger"), lines);
        // A failed or untimed point neither joins nor changes.
        let mut failed = timed("same-T=4096", 0.0);
        failed.verdict = PointVerdict::Fail;
        step(&mut failed);
        let mut untimed = timed("same-T=4096", 0.0);
        untimed.change = Change::unavailable("not timed");
        assert_eq!(step(&mut untimed), 0);
        assert_eq!(std::fs::read_to_string(&ledger).expect("ledger"), lines);
        // Points of one sweep read the ledger as it was before it: the sixth identical-code
        // run, given with the changed one, does not count itself.
        let mut sixth = timed("same-T=4096", 0.05);
        let mut other = timed("retuned-T=4096", 0.0);
        sweep_points(
            &sweep,
            &kernel,
            &builds,
            vec![&mut sixth, &mut other],
            &ledger,
        )
        .expect("step");
        let f = other.noise_floor.clone().expect("floor");
        assert_eq!(f.controls, 5, "{f:?}");
        assert!((f.largest_change - 0.003).abs() < 1e-12, "{f:?}");
        assert_eq!(
            std::fs::read_to_string(&ledger)
                .expect("ledger")
                .lines()
                .count(),
            6
        );
        // The matrix states the floor beside its point.
        let m = kernelab_model::sweep::SweepMatrix::merge(
            "s.toml",
            "kernel",
            &sweep.ids(),
            vec![r.clone()],
            builds.clone(),
        );
        assert!(
            m.lines.iter().any(|l| l.contains(
                "noise floor of identical machine code on this GPU, beside 1 timed configs: \
                 retuned-T=4096 ±0.30% (5 controls)"
            )),
            "{:?}",
            m.lines
        );
    }

    #[test]
    fn a_line_that_is_not_a_control_names_the_file_and_line() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("controls.jsonl");
        let good = serde_json::to_string(&control("k", 0.0)).expect("json");
        std::fs::write(&path, format!("{good}\n{{\"key\": \"k\"}}\n")).expect("write");
        let e = read(&path, "k").expect_err("line 2 is not a control");
        assert!(
            format!("{e:#}").contains("controls.jsonl: line 2: expected a control"),
            "{e:#}"
        );
        std::fs::write(&path, format!("{}\n", good.replace("0.0", "1e999"))).expect("write");
        assert!(read(&path, "k").is_err());
        assert_eq!(
            key(
                "k",
                &[("T".to_string(), 8192), ("B".to_string(), 1)]
                    .into_iter()
                    .collect(),
                "GPU-1"
            ),
            "k [B=1 T=8192] on GPU-1"
        );
    }
}
