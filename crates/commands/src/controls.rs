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
    let text = match kernelab_model::read_regular_text(path, MAX_LEDGER) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(anyhow!("--controls {}: cannot read: {e}", path.display())),
    };
    parse(&text, path, key)
}

/// The controls of `key` in the ledger text `text` (read from `path`, which errors name).
pub fn parse(text: &str, path: &Path, key: &str) -> Result<Vec<Control>> {
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
        if c.key == key {
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
