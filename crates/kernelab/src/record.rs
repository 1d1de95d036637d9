//! `--record DIR` / `KERNELAB_BUNDLE`: appends each command's result, with its provenance, to an
//! evidence bundle.

use anyhow::{Context, Result};
use kernelab_model::{Document, GitState, InputFile, Provenance, SCHEMA_VERSION};
use kernelab_report::bundle::{self, Record};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

struct Recorder {
    dir: Option<PathBuf>,
    argv: Vec<String>,
    started: String,
}

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// RFC 3339 UTC time of `t` (days-from-civil, Howard Hinnant's algorithm).
pub fn rfc3339(t: SystemTime) -> String {
    let d = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, secs) = (d.div_euclid(86_400), d.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Remembers where to record (the `--record` option, else `KERNELAB_BUNDLE`) and the start time.
pub fn init(dir: Option<PathBuf>) {
    let dir = dir.or_else(|| {
        std::env::var_os("KERNELAB_BUNDLE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let _ = RECORDER.set(Recorder {
        dir,
        argv: std::env::args().collect(),
        started: rfc3339(SystemTime::now()),
    });
}

fn sha256_file(p: &Path) -> Option<(String, u64)> {
    use sha2::Digest;
    let mut f = std::fs::File::open(p).ok()?;
    let mut h = sha2::Sha256::new();
    let n = std::io::copy(&mut f, &mut h).ok()?;
    Some((h.finalize().iter().map(|b| format!("{b:02x}")).collect(), n))
}

fn git() -> Option<GitState> {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let status = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()?;
    Some(GitState {
        commit,
        dirty: !status.stdout.is_empty(),
    })
}

fn host() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .or_else(|| std::env::var("HOSTNAME").ok())
}

/// Records `doc` (its kind names the record) when a bundle was requested; `inputs` are hashed.
pub fn record<T: Serialize>(
    doc: &Document<T>,
    inputs: &[PathBuf],
    gpu: Option<String>,
) -> Result<()> {
    let Some(r) = RECORDER.get() else {
        return Ok(());
    };
    let Some(dir) = &r.dir else { return Ok(()) };
    let inputs = inputs
        .iter()
        .map(|p| {
            let h = if p.is_file() { sha256_file(p) } else { None };
            InputFile {
                path: p.display().to_string(),
                sha256: h.as_ref().map(|x| x.0.clone()),
                bytes: h.map(|x| x.1),
            }
        })
        .collect();
    let provenance = Provenance {
        argv: r.argv.clone(),
        kernelab_version: env!("CARGO_PKG_VERSION").to_string(),
        inputs,
        host: host(),
        gpu,
        git: git(),
        started: r.started.clone(),
        finished: rfc3339(SystemTime::now()),
    };
    let result = serde_json::to_value(doc).context("serializing the record")?;
    let rec = Record {
        schema_version: SCHEMA_VERSION,
        kind: doc.kind.clone(),
        provenance,
        result,
    };
    bundle::write(dir, &rec).with_context(|| format!("{}: writing the record", dir.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::rfc3339;
    use std::time::{Duration, SystemTime};

    #[test]
    fn dates() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // Expected values from `date -u -d @1795000000` and `date -u -d @951782400` (GNU coreutils).
        assert_eq!(
            rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000)),
            "2026-11-18T11:06:40Z"
        );
        assert_eq!(
            rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
    }
}
