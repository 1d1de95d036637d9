//! `kernelab sweep`: a grid over a kernel spec's sizes, scalar values and builds (pairs of code
//! objects), each point checked like `kernel run` (or, for CPU-only sweeps, by tensor gates over
//! files named per point). The file format is in `docs/sweep.md`.

mod point;
mod store;

use crate::error::{Error, Result};
use crate::spec::{Overrides, Size, Spec};
use kernelab_code::{load_build, load_file, matrix, Build, LoadOptions};
use kernelab_model::sweep::BuildChange;
use kernelab_model::Location;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use point::{run_point, unfinished};
pub use store::{done_ids, read_results, write_result};

/// A sweep file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    spec: Option<PathBuf>,
    tensor: Option<TensorPoints>,
    #[serde(default)]
    timing: bool,
    rounds: Option<usize>,
    #[serde(default)]
    grid: GridFile,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GridFile {
    #[serde(default)]
    sizes: BTreeMap<String, Vec<i64>>,
    #[serde(default)]
    values: BTreeMap<String, Vec<Size>>,
    #[serde(default, rename = "build")]
    builds: Vec<BuildEntry>,
    build_dirs: Option<BuildDirs>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildEntry {
    key: String,
    baseline: Option<PathBuf>,
    candidate: Option<PathBuf>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildDirs {
    baseline: PathBuf,
    candidate: PathBuf,
    key: Option<String>,
}

/// Which tensor gate a CPU point runs.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TensorGate {
    /// Every element bit-identical.
    Bitwise,
    /// Within tolerance (rtol/atol, or the dtype's default).
    Close,
}

/// CPU-only points: a tensor gate over two files whose paths are templates (`{T}`, `{build}`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorPoints {
    /// The gate.
    pub gate: TensorGate,
    /// Baseline file template, relative to the sweep file.
    pub baseline: String,
    /// Candidate file template.
    pub candidate: String,
    /// Relative tolerance of the close gate.
    pub rtol: Option<f64>,
    /// Absolute tolerance of the close gate.
    pub atol: Option<f64>,
    /// Element type for files that need one (raw files, bf16 stored as uint16).
    pub dtype: Option<String>,
}

/// What a sweep's points run.
#[derive(Clone, Debug)]
pub enum Mode {
    /// `kernel run` gates (and timing) through the launcher.
    Kernel(Box<Spec>),
    /// Tensor gates over files.
    Tensor(TensorPoints),
}

/// One build key: a pair of code objects (either may be absent for tensor sweeps).
#[derive(Clone, Debug)]
pub struct BuildKey {
    /// The key.
    pub key: String,
    /// Baseline code object, resolved.
    pub baseline: Option<PathBuf>,
    /// Candidate code object, resolved.
    pub candidate: Option<PathBuf>,
}

/// One grid point.
#[derive(Clone, Debug)]
pub struct Point {
    /// Id: its coordinates, file-name safe.
    pub id: String,
    /// Build key.
    pub build: Option<BuildKey>,
    /// Sizes.
    pub sizes: BTreeMap<String, i64>,
    /// Scalar values.
    pub values: BTreeMap<String, Size>,
}

impl Point {
    /// Sizes and values as text, by name.
    pub fn params(&self) -> BTreeMap<String, String> {
        let mut p: BTreeMap<String, String> = self
            .sizes
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        for (k, v) in &self.values {
            p.insert(k.clone(), size_text(v));
        }
        p
    }

    /// The spec overrides of this point.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            sizes: self.sizes.clone(),
            values: self.values.clone(),
            baseline: self.build.as_ref().and_then(|b| b.baseline.clone()),
            candidate: self.build.as_ref().and_then(|b| b.candidate.clone()),
        }
    }
}

fn size_text(s: &Size) -> String {
    match s {
        Size::Int(i) => i.to_string(),
        Size::Float(f) => f.to_string(),
        Size::Expr(e) => e.clone(),
    }
}

/// A loaded sweep: its mode and every point in grid order.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep file.
    pub path: PathBuf,
    /// What the points run.
    pub mode: Mode,
    /// Time each kernel point.
    pub timing: bool,
    /// The build keys.
    pub builds: Vec<BuildKey>,
    /// The points.
    pub points: Vec<Point>,
}

/// Most points of a sweep grid: its size (the product of its value lists and build keys) is
/// counted before anything is expanded.
pub const MAX_POINTS: usize = 100_000;
/// Largest sweep file read: 1 MiB.
pub const MAX_SWEEP_BYTES: u64 = 1 << 20;

/// The number of points of a grid, counted without expanding it (saturating).
fn grid_size(g: &GridFile, builds: &[BuildKey]) -> u128 {
    let mut n: u128 = builds.len().max(1) as u128;
    for v in g.sizes.values() {
        n = n.saturating_mul(v.len() as u128);
    }
    for v in g.values.values() {
        n = n.saturating_mul(v.len() as u128);
    }
    n
}

/// The 1-based line of the first line of `text` starting with `key` (after spaces).
fn key_line(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .position(|l| l.trim_start().starts_with(key))
        .map(|i| i as u64 + 1)
}

fn bad(path: &Path, line: Option<u64>, message: impl Into<String>) -> Error {
    Error::Spec {
        location: Location {
            line,
            ..Location::default()
        },
        message: message.into(),
    }
    .with_path(Some(path))
}

impl Sweep {
    /// Reads a sweep file and expands its grid.
    pub fn read(path: &Path) -> Result<Sweep> {
        let text = kernelab_model::read_regular_text(path, MAX_SWEEP_BYTES).map_err(|source| {
            Error::Read {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let f: SweepFile = toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|s| {
                text.as_bytes()[..s.start.min(text.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count() as u64
                    + 1
            });
            bad(path, line, e.message().to_string())
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mode = match (&f.spec, &f.tensor) {
            (Some(s), None) => {
                let mut spec = Spec::read(&dir.join(s))?;
                if let Some(r) = f.rounds {
                    if !(2..=crate::spec::MAX_ROUNDS).contains(&r) {
                        return Err(bad(
                            path,
                            key_line(&text, "rounds"),
                            format!(
                                "`rounds` = {r}: expected 2 to {} rounds",
                                crate::spec::MAX_ROUNDS
                            ),
                        ));
                    }
                    spec.timing.rounds = r;
                }
                Mode::Kernel(Box::new(spec))
            }
            (None, Some(t)) => Mode::Tensor(t.clone()),
            _ => {
                return Err(bad(
                    path,
                    None,
                    "give either `spec` (kernel points) or a [tensor] table (CPU points)",
                ))
            }
        };
        let builds = builds(path, dir, &f.grid)?;
        let count = grid_size(&f.grid, &builds);
        if count > MAX_POINTS as u128 {
            return Err(bad(
                path,
                key_line(&text, "[grid"),
                format!(
                    "the grid has {count} points (the product of its value lists); at most {MAX_POINTS}"
                ),
            ));
        }
        let points = expand(path, &f.grid, &builds)?;
        Ok(Sweep {
            path: path.to_path_buf(),
            mode,
            timing: f.timing,
            builds,
            points,
        })
    }

    /// `kernel` or `tensor`.
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            Mode::Kernel(_) => "kernel",
            Mode::Tensor(_) => "tensor",
        }
    }

    /// The ids of every point, in grid order.
    pub fn ids(&self) -> Vec<String> {
        self.points.iter().map(|p| p.id.clone()).collect()
    }

    /// Finds a point by id.
    pub fn point(&self, id: &str) -> Result<&Point> {
        self.points
            .iter()
            .find(|p| p.id == id)
            .ok_or_else(|| bad(&self.path, None, format!("no point `{id}` in this sweep")))
    }

    /// Per build key with both code objects: whether the machine code changed (`code matrix`).
    pub fn code_changes(&self) -> Result<Vec<BuildChange>> {
        let opts = LoadOptions::default();
        let (mut base, mut cand) = (Build::new(), Build::new());
        for b in &self.builds {
            let (Some(x), Some(y)) = (&b.baseline, &b.candidate) else {
                continue;
            };
            for (side, p, label) in [(&mut base, x, "baseline"), (&mut cand, y, "candidate")] {
                let objects = load_file(p, &opts).map_err(|e| Error::Code {
                    label,
                    source: Box::new(e),
                })?;
                side.insert(b.key.clone(), (p.display().to_string(), objects));
            }
        }
        Ok(matrix(&base, &cand)
            .pairs
            .into_iter()
            .map(|p| BuildChange {
                key: p.key,
                changed: p.changed,
                changed_kernels: p.changed_kernels,
            })
            .collect())
    }
}

fn builds(path: &Path, dir: &Path, g: &GridFile) -> Result<Vec<BuildKey>> {
    let mut out: Vec<BuildKey> = g
        .builds
        .iter()
        .map(|b| BuildKey {
            key: b.key.clone(),
            baseline: b.baseline.as_ref().map(|p| dir.join(p)),
            candidate: b.candidate.as_ref().map(|p| dir.join(p)),
        })
        .collect();
    if let Some(d) = &g.build_dirs {
        let key = d
            .key
            .as_deref()
            .map(regex::Regex::new)
            .transpose()
            .map_err(|e| bad(path, None, format!("grid.build_dirs.key: {e}")))?;
        let opts = LoadOptions::default();
        let load = |p: &Path, label| {
            load_build(Some(&dir.join(p)), &[], key.as_ref(), &opts).map_err(|e| Error::Code {
                label,
                source: Box::new(e),
            })
        };
        let (base, cand) = (
            load(&d.baseline, "baseline")?,
            load(&d.candidate, "candidate")?,
        );
        for (k, (label, _)) in &base {
            if let Some((clabel, _)) = cand.get(k) {
                out.push(BuildKey {
                    key: k.clone(),
                    baseline: Some(PathBuf::from(label)),
                    candidate: Some(PathBuf::from(clabel)),
                });
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for b in &out {
        if !seen.insert(b.key.as_str()) {
            return Err(bad(
                path,
                None,
                format!("build key `{}` is listed twice", b.key),
            ));
        }
    }
    Ok(out)
}

/// File-name-safe text: anything but letters, digits, `.`, `_`, `-` and `=` becomes `_`.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-=".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn expand(path: &Path, g: &GridFile, builds: &[BuildKey]) -> Result<Vec<Point>> {
    for (k, v) in &g.sizes {
        if v.is_empty() {
            return Err(bad(path, None, format!("grid.sizes.{k} has no values")));
        }
    }
    for (k, v) in &g.values {
        if v.is_empty() {
            return Err(bad(path, None, format!("grid.values.{k} has no values")));
        }
    }
    let mut points = vec![Point {
        id: String::new(),
        build: None,
        sizes: BTreeMap::new(),
        values: BTreeMap::new(),
    }];
    if !builds.is_empty() {
        points = builds
            .iter()
            .map(|b| Point {
                build: Some(b.clone()),
                ..points[0].clone()
            })
            .collect();
    }
    for (k, vs) in &g.sizes {
        points = points
            .iter()
            .flat_map(|p| {
                vs.iter().map(move |v| {
                    let mut q = p.clone();
                    q.sizes.insert(k.clone(), *v);
                    q
                })
            })
            .collect();
    }
    for (k, vs) in &g.values {
        points = points
            .iter()
            .flat_map(|p| {
                vs.iter().map(move |v| {
                    let mut q = p.clone();
                    q.values.insert(k.clone(), v.clone());
                    q
                })
            })
            .collect();
    }
    let mut seen = std::collections::BTreeSet::new();
    for p in &mut points {
        let mut parts: Vec<String> = p.build.iter().map(|b| b.key.clone()).collect();
        parts.extend(p.params().iter().map(|(k, v)| format!("{k}={v}")));
        p.id = if parts.is_empty() {
            "all".into()
        } else {
            safe(&parts.join("-"))
        };
        if !seen.insert(p.id.clone()) {
            return Err(bad(
                path,
                None,
                format!(
                    "two points share the id `{}`: make the build keys or values distinct",
                    p.id
                ),
            ));
        }
    }
    Ok(points)
}
