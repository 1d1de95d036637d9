//! AMDGPU target IDs as LLVM defines them (<https://llvm.org/docs/AMDGPUUsage.html>, "Target
//! Triples" and "Target ID"): an optional offload kind (`hipv4-`, `hip-`, `openmp-`, from clang
//! offload bundle entry ids), the target triple `arch-vendor-os-environment` (the environment
//! is usually empty, hence the `--`), the processor, then `:feature+` / `:feature-` settings:
//! `amdgcn-amd-amdhsa--gfx90a:xnack-`, `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`,
//! `hipv4-amdgcn-amd-amdhsa--gfx9-4-generic`. A bare target ID (`gfx90a:xnack-`, as given to
//! `--offload-arch`) is read too, and so are the subarch-bearing triples of newer LLVM (22 on),
//! whose architecture names the processor (`amdgpu9.42` is gfx942, `amdgpu9.0a` gfx90a,
//! `amdgpu11.00` gfx1100): `amdgpu9.42-amd-amdhsa-unknown-gfx942`, as Triton 3.9 writes into
//! a code object's note, or `amdgpu9.42-amd-amdhsa` alone. Every caller that needs the processor of an AMD code object,
//! offload bundle entry or compiler `.s` file reads it here.
//!
//! ```
//! use kernelab_code::target_id::{parse, Feature};
//! let t = parse("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-").unwrap();
//! assert_eq!(t.processor, "gfx942");
//! assert_eq!(t.feature("xnack"), Some(Feature::Off));
//! assert_eq!(t.feature("sramecc"), Some(Feature::On));
//! ```

use std::fmt;

/// A target feature's setting: `+` (on) or `-` (off). A feature not named is "any".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// `feature+`.
    On,
    /// `feature-`.
    Off,
}

/// The parts of a target ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetId {
    /// Offload kind of a bundle entry id (`hipv4`, `hip`, `openmp`), if any.
    pub offload_kind: Option<String>,
    /// Triple architecture (`amdgcn`), empty for a bare target ID.
    pub arch: String,
    /// Triple vendor (`amd`).
    pub vendor: String,
    /// Triple operating system (`amdhsa`).
    pub os: String,
    /// Triple environment (usually empty).
    pub environment: String,
    /// The processor: `gfx90a`, `gfx942`, `gfx1100`, `gfx9-4-generic`.
    pub processor: String,
    /// Feature settings in the order written.
    pub features: Vec<(String, Feature)>,
}

impl TargetId {
    /// The setting of `name` (`xnack`, `sramecc`), or `None` when the ID leaves it as "any".
    pub fn feature(&self, name: &str) -> Option<Feature> {
        self.features
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| *f)
    }
}

/// Why a text is not a target ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetIdError {
    /// The text as given.
    pub text: String,
    /// What was expected.
    pub expected: &'static str,
}

impl fmt::Display for TargetIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "target ID {:?}: expected {} (as in `amdgcn-amd-amdhsa--gfx90a:xnack-`)",
            self.text, self.expected
        )
    }
}

impl std::error::Error for TargetIdError {}

/// Triple architectures of AMD GPUs (besides the subarch-bearing `amdgpu<version>`).
const ARCHES: &[&str] = &["amdgcn", "r600"];

/// Whether `arch` is a triple architecture of AMD GPUs.
fn is_arch(arch: &str) -> bool {
    ARCHES.contains(&arch) || arch.starts_with("amdgpu")
}

/// The processor a subarch-bearing architecture names: `amdgpu9.42` → `gfx942`, `amdgpu9.0a`
/// → `gfx90a`, `amdgpu11.00` → `gfx1100` (major version, then minor and stepping as one hex
/// digit each); `None` for `amdgpu` alone or another form.
pub fn subarch_processor(arch: &str) -> Option<String> {
    let (major, rest) = arch.strip_prefix("amdgpu")?.split_once('.')?;
    let ok = !major.is_empty()
        && major.len() <= 2
        && major.bytes().all(|b| b.is_ascii_digit())
        && rest.len() == 2
        && rest.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| format!("gfx{major}{}", rest.to_ascii_lowercase()))
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.')
}

/// Parses a target ID (see the module documentation for the grammar).
pub fn parse(text: &str) -> Result<TargetId, TargetIdError> {
    let err = |expected| TargetIdError {
        text: text.to_string(),
        expected,
    };
    let s = text.trim();
    let mut pieces = s.split(':');
    let head = pieces.next().unwrap_or("");
    let mut features = Vec::new();
    for f in pieces {
        let (name, setting) = match f.as_bytes().last() {
            Some(b'+') => (&f[..f.len() - 1], Feature::On),
            Some(b'-') => (&f[..f.len() - 1], Feature::Off),
            _ => return Err(err("each feature to end in `+` or `-`")),
        };
        if !is_name(name) || name.contains('-') {
            return Err(err("a feature name such as `xnack` or `sramecc`"));
        }
        features.push((name.to_string(), setting));
    }
    let parts: Vec<&str> = head.split('-').collect();
    // Where the triple starts: at an AMD architecture, first or after an offload kind.
    let start = parts.iter().take(2).position(|p| is_arch(p));
    let (offload_kind, arch, vendor, os, environment, processor) = match start {
        // A subarch-bearing triple alone names its processor.
        Some(i) if parts.len() == i + 3 || parts.len() == i + 4 => {
            let Some(processor) = subarch_processor(parts[i]) else {
                return Err(err("`arch-vendor-os-environment-processor`"));
            };
            let kind = (i == 1).then(|| parts[0].to_string());
            let environment = parts.get(i + 3).copied().unwrap_or("");
            (
                kind,
                parts[i],
                parts[i + 1],
                parts[i + 2],
                environment,
                processor,
            )
        }
        Some(i) => {
            if parts.len() < i + 5 {
                return Err(err("`arch-vendor-os-environment-processor`"));
            }
            let kind = (i == 1).then(|| parts[0].to_string());
            (
                kind,
                parts[i],
                parts[i + 1],
                parts[i + 2],
                parts[i + 3],
                parts[i + 4..].join("-"),
            )
        }
        None if !head.is_empty() && head.starts_with("gfx") => {
            (None, "", "", "", "", head.to_string())
        }
        None => return Err(err("a triple starting `amdgcn-` or a processor `gfx…`")),
    };
    if !is_name(&processor) || (arch != "r600" && !processor.starts_with("gfx")) {
        return Err(err("a processor such as `gfx90a` after the triple"));
    }
    if let Some(named) = subarch_processor(arch) {
        if named != processor {
            return Err(err(
                "a processor that agrees with the triple's subarch (`amdgpu9.42` is `gfx942`)",
            ));
        }
    }
    Ok(TargetId {
        offload_kind,
        arch: arch.to_string(),
        vendor: vendor.to_string(),
        os: os.to_string(),
        environment: environment.to_string(),
        processor,
        features,
    })
}

/// The processor of a target ID, or `None` when `text` is not one.
pub fn processor(text: &str) -> Option<String> {
    parse(text).ok().map(|t| t.processor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_switched_off_keep_the_processor() {
        // The cases a split on the last `-` got wrong (issue 26 item 2).
        let t = parse("amdgcn-amd-amdhsa--gfx90a:xnack-").expect("parses");
        assert_eq!(t.processor, "gfx90a");
        assert_eq!(t.features, vec![("xnack".to_string(), Feature::Off)]);
        let t = parse("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-").expect("parses");
        assert_eq!(
            (t.arch.as_str(), t.vendor.as_str(), t.os.as_str()),
            ("amdgcn", "amd", "amdhsa")
        );
        assert_eq!(t.environment, "");
        assert_eq!(t.processor, "gfx942");
        assert_eq!(t.feature("sramecc"), Some(Feature::On));
        assert_eq!(t.feature("xnack"), Some(Feature::Off));
        assert_eq!(t.feature("tgsplit"), None);
    }

    #[test]
    fn bundle_ids_generic_processors_and_bare_ids() {
        let t = parse("hipv4-amdgcn-amd-amdhsa--gfx942").expect("parses");
        assert_eq!(t.offload_kind.as_deref(), Some("hipv4"));
        assert_eq!(t.processor, "gfx942");
        assert!(t.features.is_empty());
        let t = parse("hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack+").expect("parses");
        assert_eq!(t.processor, "gfx9-4-generic");
        assert_eq!(t.feature("xnack"), Some(Feature::On));
        assert_eq!(processor("gfx90a:xnack-").as_deref(), Some("gfx90a"));
        assert_eq!(
            processor("amdgcn-amd-amdhsa--gfx1100").as_deref(),
            Some("gfx1100")
        );
        assert_eq!(
            processor(" amdgcn-amd-amdhsa-gnu-gfx1151 ").as_deref(),
            Some("gfx1151")
        );
    }

    #[test]
    fn subarch_bearing_triples_of_newer_llvm_name_the_processor() {
        // As Triton 3.9 (its LLVM) writes them into code object notes.
        for (id, want) in [
            ("amdgpu9.42-amd-amdhsa-unknown-gfx942", "gfx942"),
            ("amdgpu9.0a-amd-amdhsa-unknown-gfx90a", "gfx90a"),
            ("amdgpu9.50-amd-amdhsa-unknown-gfx950", "gfx950"),
            ("amdgpu11.00-amd-amdhsa-unknown-gfx1100", "gfx1100"),
            ("amdgpu12.01-amd-amdhsa-unknown-gfx1201", "gfx1201"),
            ("amdgpu9.42-amd-amdhsa", "gfx942"),
            (
                "hipv4-amdgpu9.42-amd-amdhsa-unknown-gfx942:sramecc+:xnack-",
                "gfx942",
            ),
        ] {
            let t = parse(id).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(t.processor, want, "{id}");
        }
        let t = parse("amdgpu9.42-amd-amdhsa-unknown-gfx942:xnack-").expect("parses");
        assert_eq!(
            (t.arch.as_str(), t.environment.as_str()),
            ("amdgpu9.42", "unknown")
        );
        assert_eq!(t.feature("xnack"), Some(Feature::Off));
        assert_eq!(subarch_processor("amdgpu"), None);
        assert_eq!(subarch_processor("amdgpu9.4"), None);
        assert_eq!(subarch_processor("amdgpu9.4z"), None);
        // The processor must agree with the subarch; a bare subarch-less triple names none.
        assert!(parse("amdgpu9.42-amd-amdhsa-unknown-gfx90a").is_err());
        assert!(parse("amdgcn-amd-amdhsa").is_err());
        assert!(parse("amdgpu-amd-amdhsa").is_err());
    }

    #[test]
    fn bad_ids_are_errors_that_say_what_was_expected() {
        for bad in [
            "",
            "amdgcn-amd-amdhsa",
            "amdgcn-amd-amdhsa--",
            "amdgcn-amd-amdhsa--gfx90a:xnack",
            "amdgcn-amd-amdhsa--gfx90a:+",
            "x86_64-unknown-linux-gnu",
            "amdgcn-amd-amdhsa--gfx90a:xn ack-",
        ] {
            let e = parse(bad).expect_err(bad);
            assert!(e.to_string().contains("expected"), "{e}");
        }
    }
}
