//! The sweep engine of `kernelab sweep` and `kernelab check sweep`: a sweep file read into
//! points (a grid over sizes, scalar values and builds, or explicit `[[config]]` points), each
//! point run and gated, results kept one file per point, merged into one matrix. Kernel points
//! are run by the GPU launcher through [`KernelPoints`]; tensor points run here, on the CPU.
//! The file format is in `docs/sweep.md`.

mod error;
mod point;
mod store;

use kernelab_code::{load_build, load_file, matrix, Build, LoadOptions};
use kernelab_model::sweep::{BuildChange, Size};
use kernelab_model::Location;
use kernelab_tensor::DType;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use error::{Error, Result};
pub use point::{run_point, unfinished, KernelPoints};
pub use store::{done_ids, read_results, write_result, MAX_POINT_FILE_BYTES};

/// A sweep file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    spec: Option<PathBuf>,
    tensor: Option<TensorTemplates>,
    #[serde(default)]
    timing: bool,
    rounds: Option<usize>,
    grid: Option<GridFile>,
    /// Explicit tensor points (`check sweep`'s manifest).
    #[serde(default, rename = "config")]
    configs: Vec<ConfigEntry>,
    /// Element type of the `[[config]]` points' files.
    dtype: Option<String>,
    /// Tolerance of the `[[config]]` points' oracle gate.
    tolerance: Option<ToleranceEntry>,
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

/// One `[[config]]` point: its own files.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigEntry {
    name: String,
    baseline: PathBuf,
    candidate: PathBuf,
    #[serde(default)]
    repeats: Vec<PathBuf>,
    oracle: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToleranceEntry {
    rtol: f64,
    atol: f64,
}

/// Which comparison of baseline and candidate a tensor point requires.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TensorGate {
    /// Every element bit-identical.
    Bitwise,
    /// Within tolerance (rtol/atol, or the dtype's default); bitwise equality is reported.
    Close,
}

/// The `[tensor]` table: the gates of grid tensor points, and their files as templates
/// (`{T}`, `{build}`) relative to the sweep file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TensorTemplates {
    gate: TensorGate,
    baseline: String,
    candidate: String,
    #[serde(default)]
    repeats: Vec<String>,
    oracle: Option<String>,
    rtol: Option<f64>,
    atol: Option<f64>,
    dtype: Option<String>,
}

/// What every tensor point checks: the comparison of baseline and candidate, then (each where
/// the point has the files) repeated candidate runs bit-identical, the candidate finite, the
/// candidate within tolerance of an oracle.
#[derive(Clone, Debug)]
pub struct TensorGates {
    /// The baseline–candidate comparison.
    pub gate: TensorGate,
    /// Relative tolerance of the close and oracle gates (the dtype's default when absent).
    pub rtol: Option<f64>,
    /// Absolute tolerance of the close and oracle gates.
    pub atol: Option<f64>,
    /// Element type for files that need one (raw files, bf16 stored as uint16).
    pub dtype: Option<DType>,
    /// Most bytes a compressed member of a point's file may inflate to (default 4 GiB).
    pub max_decompressed: Option<u64>,
}

/// A tensor point's files, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorFiles {
    /// Output of the baseline build.
    pub baseline: PathBuf,
    /// Output of the candidate build.
    pub candidate: PathBuf,
    /// Repeated candidate outputs.
    pub repeats: Vec<PathBuf>,
    /// High-precision reference.
    pub oracle: Option<PathBuf>,
}

/// A kernel sweep's spec, as the sweep file names it.
#[derive(Clone, Debug)]
pub struct KernelMode {
    /// The launch spec, resolved against the sweep file.
    pub spec: PathBuf,
    /// Timing rounds per point (overrides the spec's), and the sweep file's line giving them.
    pub rounds: Option<(usize, Option<u64>)>,
    /// Time each point.
    pub timing: bool,
    /// Where the spec's own baseline build is resolved, when the baseline's files are in
    /// another tree ([`Sweep::read_sides`]); none: the spec's folder.
    pub baseline_spec_dir: Option<PathBuf>,
}

/// What a sweep's points run.
#[derive(Clone, Debug)]
pub enum Mode {
    /// `kernel run` gates (and timing) through the GPU launcher.
    Kernel(KernelMode),
    /// Tensor gates over files, on the CPU.
    Tensor(TensorGates),
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

/// One point.
#[derive(Clone, Debug)]
pub struct Point {
    /// Id: its coordinates (or its config name), file-name safe.
    pub id: String,
    /// Build key.
    pub build: Option<BuildKey>,
    /// Sizes.
    pub sizes: BTreeMap<String, i64>,
    /// Scalar values.
    pub values: BTreeMap<String, Size>,
    /// A tensor point's files.
    pub files: Option<TensorFiles>,
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
            p.insert(k.clone(), v.to_string());
        }
        p
    }
}

/// A loaded sweep: its mode and every point in order.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The sweep file.
    pub path: PathBuf,
    /// What the points run.
    pub mode: Mode,
    /// The build keys.
    pub builds: Vec<BuildKey>,
    /// The points.
    pub points: Vec<Point>,
    /// The folder the baseline's files were resolved against, when not the sweep file's
    /// ([`Sweep::read_sides`]; a gate's base work tree).
    pub baseline_dir: Option<PathBuf>,
}

/// Most points of a sweep: a grid's size (the product of its value lists and build keys) is
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
    Error::File {
        location: Location {
            line,
            ..Location::default()
        }
        .with_path(path),
        message: message.into(),
    }
}

/// A `dtype` setting read, or an error naming its line.
fn dtype(path: &Path, text: &str, d: Option<&str>) -> Result<Option<DType>> {
    d.map(|d| {
        DType::parse(d).ok_or_else(|| {
            bad(
                path,
                key_line(text, "dtype"),
                format!("`dtype` = {d:?}: expected bf16, f16, f32, f64, f8e4m3fn, f8e5m2, i8..i64, u8..u64 or bool"),
            )
        })
    })
    .transpose()
}

impl Sweep {
    /// Reads a sweep file and expands its points; compressed members of tensor points' files
    /// inflate to at most `max_decompressed` bytes each (default 4 GiB).
    pub fn read(path: &Path, max_decompressed: Option<u64>) -> Result<Sweep> {
        Self::read_sides(path, max_decompressed, None)
    }

    /// Reads a sweep file whose baseline files (each build's `baseline`, `build_dirs.baseline`,
    /// the tensor `baseline` template and the spec's own baseline build) are resolved against
    /// `baseline_dir` instead of the sweep file's folder: the same relative paths, another
    /// tree (`kernelab gate` measures the base's build against the head's). The candidate's
    /// files, the spec, repeats and oracles stay where the sweep file is.
    pub fn read_sides(
        path: &Path,
        max_decompressed: Option<u64>,
        baseline_dir: Option<&Path>,
    ) -> Result<Sweep> {
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
        let sides = Sides {
            dir,
            baseline: baseline_dir.unwrap_or(dir),
        };
        if !f.configs.is_empty() {
            return Self::configs(path, sides, &text, f, max_decompressed);
        }
        let grid = f.grid.clone().unwrap_or_default();
        if f.dtype.is_some() || f.tolerance.is_some() {
            let line = key_line(&text, "dtype").or_else(|| key_line(&text, "[tolerance]"));
            if f.spec.is_some() || f.tensor.is_some() {
                return Err(bad(
                    path,
                    line,
                    "top-level `dtype` and [tolerance] go with [[config]] entries; a [tensor] table takes its own `dtype`, `rtol` and `atol`",
                ));
            }
        }
        let mode = match (&f.spec, &f.tensor) {
            (Some(s), None) => Mode::Kernel(KernelMode {
                spec: dir.join(s),
                rounds: f.rounds.map(|r| (r, key_line(&text, "rounds"))),
                timing: f.timing,
                baseline_spec_dir: baseline_dir
                    .map(|b| b.join(s.parent().unwrap_or(Path::new("")))),
            }),
            (None, Some(_)) if f.timing || f.rounds.is_some() => {
                return Err(bad(
                    path,
                    key_line(&text, "timing").or_else(|| key_line(&text, "rounds")),
                    "a [tensor] sweep compares files and is not timed: give it without `timing` or `rounds`",
                ))
            }
            (None, Some(t)) => Mode::Tensor(TensorGates {
                gate: t.gate,
                rtol: t.rtol,
                atol: t.atol,
                dtype: dtype(path, &text, t.dtype.as_deref())?,
                max_decompressed,
            }),
            (Some(_), Some(_)) => {
                return Err(bad(
                    path,
                    key_line(&text, "[tensor]"),
                    "give `spec` (kernel points) or a [tensor] table (tensor points), not both",
                ))
            }
            (None, None) => {
                return Err(bad(
                    path,
                    None,
                    "nothing to run: no [[config]] entries, no `spec` and no [tensor] table (see docs/sweep.md)",
                ))
            }
        };
        let builds = builds(path, sides, &grid)?;
        let count = grid_size(&grid, &builds);
        if count > MAX_POINTS as u128 {
            return Err(bad(
                path,
                key_line(&text, "[grid"),
                format!(
                    "the grid has {count} points (the product of its value lists); at most {MAX_POINTS}"
                ),
            ));
        }
        let mut points = expand(path, &grid, &builds)?;
        if let Some(t) = &f.tensor {
            for p in &mut points {
                let fill = |template: &str| dir.join(fill(template, p));
                p.files = Some(TensorFiles {
                    baseline: sides.baseline.join(self::fill(&t.baseline, p)),
                    candidate: fill(&t.candidate),
                    repeats: t.repeats.iter().map(|r| fill(r)).collect(),
                    oracle: t.oracle.as_deref().map(fill),
                });
            }
        }
        Ok(Sweep {
            path: path.to_path_buf(),
            mode,
            builds,
            points,
            baseline_dir: baseline_dir.map(Path::to_path_buf),
        })
    }

    /// A sweep of explicit `[[config]]` points (`check sweep`'s manifest).
    fn configs(
        path: &Path,
        sides: Sides<'_>,
        text: &str,
        f: SweepFile,
        max_decompressed: Option<u64>,
    ) -> Result<Sweep> {
        if f.spec.is_some()
            || f.tensor.is_some()
            || f.grid.is_some()
            || f.rounds.is_some()
            || f.timing
        {
            return Err(bad(
                path,
                key_line(text, "[[config]]"),
                "[[config]] entries are points of their own: give them without `spec`, [tensor], [grid], `rounds` or `timing` (tensor points are not timed)",
            ));
        }
        if f.configs.len() > MAX_POINTS {
            return Err(bad(
                path,
                None,
                format!(
                    "{} [[config]] entries; at most {MAX_POINTS}",
                    f.configs.len()
                ),
            ));
        }
        let mode = Mode::Tensor(TensorGates {
            gate: TensorGate::Bitwise,
            rtol: f.tolerance.map(|t| t.rtol),
            atol: f.tolerance.map(|t| t.atol),
            dtype: dtype(path, text, f.dtype.as_deref())?,
            max_decompressed,
        });
        let mut seen = BTreeSet::new();
        let mut points = Vec::with_capacity(f.configs.len());
        for c in f.configs {
            let id = safe(&c.name);
            if id.is_empty() || !seen.insert(id.clone()) {
                return Err(bad(
                    path,
                    key_line(text, &format!("name = {:?}", c.name)),
                    format!(
                        "config name {:?}: every [[config]] needs a name of its own (as a file name: {id:?})",
                        c.name
                    ),
                ));
            }
            points.push(Point {
                id,
                build: None,
                sizes: BTreeMap::new(),
                values: BTreeMap::new(),
                files: Some(TensorFiles {
                    baseline: sides.baseline.join(c.baseline),
                    candidate: sides.dir.join(c.candidate),
                    repeats: c.repeats.iter().map(|r| sides.dir.join(r)).collect(),
                    oracle: c.oracle.map(|o| sides.dir.join(o)),
                }),
            });
        }
        Ok(Sweep {
            path: path.to_path_buf(),
            mode,
            builds: Vec::new(),
            points,
            baseline_dir: (sides.baseline != sides.dir).then(|| sides.baseline.to_path_buf()),
        })
    }

    /// `kernel` or `tensor`.
    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            Mode::Kernel(_) => "kernel",
            Mode::Tensor(_) => "tensor",
        }
    }

    /// The ids of every point, in order.
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

    /// Every file the sweep reads: itself, its code objects, its spec, its points' tensors.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut out = vec![self.path.clone()];
        out.extend(
            self.builds
                .iter()
                .flat_map(|b| b.baseline.iter().chain(b.candidate.iter()).cloned()),
        );
        if let Mode::Kernel(k) = &self.mode {
            out.push(k.spec.clone());
        }
        for f in self.points.iter().filter_map(|p| p.files.as_ref()) {
            out.extend([f.baseline.clone(), f.candidate.clone()]);
            out.extend(f.repeats.iter().cloned());
            out.extend(f.oracle.iter().cloned());
        }
        let mut seen = BTreeSet::new();
        out.retain(|p| seen.insert(p.clone()));
        out
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

/// The folders a sweep's relative paths are resolved against: the sweep file's, and the
/// baseline's (the same folder, or the same place in another tree).
#[derive(Clone, Copy)]
struct Sides<'a> {
    dir: &'a Path,
    baseline: &'a Path,
}

fn builds(path: &Path, sides: Sides<'_>, g: &GridFile) -> Result<Vec<BuildKey>> {
    let mut out: Vec<BuildKey> = g
        .builds
        .iter()
        .map(|b| BuildKey {
            key: b.key.clone(),
            baseline: b.baseline.as_ref().map(|p| sides.baseline.join(p)),
            candidate: b.candidate.as_ref().map(|p| sides.dir.join(p)),
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
        let load = |p: PathBuf, label| {
            load_build(Some(&p), &[], key.as_ref(), &opts).map_err(|e| Error::Code {
                label,
                source: Box::new(e),
            })
        };
        let (base, cand) = (
            load(sides.baseline.join(&d.baseline), "baseline")?,
            load(sides.dir.join(&d.candidate), "candidate")?,
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
    let mut seen = BTreeSet::new();
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
        .enumerate()
        .map(|(i, c)| {
            // A leading `.` would make a hidden result file, which is never read back.
            if c.is_ascii_alphanumeric() || "_-=".contains(c) || (c == '.' && i > 0) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `template` with `{name}` replaced by the point's coordinates and `{build}` by its key.
fn fill(template: &str, point: &Point) -> String {
    let mut s = template.to_string();
    if let Some(b) = &point.build {
        s = s.replace("{build}", &b.key);
    }
    for (k, v) in point.params() {
        s = s.replace(&format!("{{{k}}}"), &v);
    }
    s
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
        files: None,
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
    let mut seen = BTreeSet::new();
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
