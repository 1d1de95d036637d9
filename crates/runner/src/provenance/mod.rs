//! Where a result came from: the command line, the inputs' SHA-256, the host, the git state of
//! the working directory and RFC 3339 times. No program runs: the git state is read from the
//! repository's files ([`git`]), and every file is read through `kernelab_model`'s confined
//! layer (an input outside the confining root is listed unhashed). The one exception is the
//! environment fingerprint of a measurement's rounds ([`fingerprint`]), which asks the GPU
//! vendor's tool.

pub mod fingerprint;
pub mod git;

use kernelab_model::{GitState, InputFile, Provenance};
use std::path::PathBuf;
use std::time::SystemTime;

/// RFC 3339 UTC time of `t`, to the second (`2026-11-18T11:06:40Z`); times before 1970 or
/// outside jiff's range are written as the epoch.
pub fn rfc3339(t: SystemTime) -> String {
    jiff::Timestamp::try_from(t)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn git_state() -> Option<GitState> {
    let cwd = std::env::current_dir().ok()?;
    let s = git::state(&cwd)?;
    // Clean only when known clean: what git alone could tell counts as not verified.
    Some(GitState {
        commit: s.commit,
        dirty: s.dirty != Some(false),
    })
}

fn host() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .or_else(|| std::env::var("HOSTNAME").ok())
}

/// Each of `inputs` with its SHA-256 and size now (none where it cannot be read).
pub fn hash_inputs(inputs: &[PathBuf]) -> Vec<InputFile> {
    inputs
        .iter()
        .map(|p| {
            let h = kernelab_model::open_regular(p)
                .ok()
                .and_then(|f| kernelab_model::sha256_reader(f).ok());
            InputFile {
                path: p.display().to_string(),
                sha256: h.as_ref().map(|x| x.0.clone()),
                bytes: h.map(|x| x.1),
            }
        })
        .collect()
}

/// The provenance of a result of `argv` started at `started`: every input that is a regular
/// file is hashed; `gpu` where the inputs name the device.
pub fn collect(
    argv: Vec<String>,
    started: String,
    inputs: &[PathBuf],
    gpu: Option<String>,
) -> Provenance {
    let inputs = hash_inputs(inputs);
    Provenance {
        argv,
        kernelab_version: kernelab_model::KERNELAB_VERSION.to_string(),
        inputs,
        host: host(),
        gpu,
        git: git_state(),
        started,
        finished: rfc3339(SystemTime::now()),
    }
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
            rfc3339(SystemTime::UNIX_EPOCH + Duration::from_millis(951_782_400_999)),
            "2000-02-29T00:00:00Z"
        );
    }
}
