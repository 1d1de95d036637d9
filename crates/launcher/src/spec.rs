//! The launch spec: a TOML file naming two builds of one kernel, its launch geometry and its
//! arguments in order. See `docs/kernel-spec.md` for the format with examples.

use crate::error::{Error, Result};
use kernelab_model::Location;
use kernelab_tensor::DType;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use kernelab_model::sweep::Size;

/// How a buffer is filled before the runs.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Init {
    /// Seeded normal values.
    Normal {
        /// Mean.
        #[serde(default)]
        mean: f64,
        /// Standard deviation.
        #[serde(default = "one")]
        std: f64,
    },
    /// Seeded uniform values in `[low, high)`.
    Uniform {
        /// Lower bound.
        #[serde(default)]
        low: f64,
        /// Upper bound.
        #[serde(default = "one")]
        high: f64,
    },
    /// Seeded integers in `[low, high]`.
    Int {
        /// Lower bound.
        low: i64,
        /// Upper bound (inclusive).
        high: i64,
    },
    /// One value everywhere.
    Constant {
        /// The value.
        value: f64,
    },
    /// A tensor file (npy, npz, safetensors); `key` picks the tensor when there are several.
    File {
        /// The file, relative to the spec.
        path: PathBuf,
        /// Tensor name inside the file.
        key: Option<String>,
    },
}

fn one() -> f64 {
    1.0
}

/// Role of a buffer.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Read only.
    In,
    /// Written (poisoned before each run, compared after).
    Out,
    /// Read and written (re-initialised before each run, compared after).
    Inout,
}

/// One kernel argument, in order.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Arg {
    /// Its name.
    pub name: String,
    /// Element type of a buffer, or the type of a scalar (`i32`, `i64`, `u32`, `u64`, `f32`, `f64`).
    #[serde(rename = "type")]
    pub ty: String,
    /// Buffer shape; absent for scalars and null pointers.
    pub shape: Option<Vec<Size>>,
    /// Buffer role (default `in`).
    pub role: Option<Role>,
    /// Buffer initialisation (default: normal(0, 1) for inputs).
    pub init: Option<Init>,
    /// Seed of a random initialisation (default: the argument's position).
    pub seed: Option<u64>,
    /// Scalar value.
    pub value: Option<Size>,
}

/// Launch settings shared by both builds unless a build overrides them.
#[derive(Clone, Debug, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// Kernel symbol.
    pub symbol: Option<String>,
    /// Grid (up to 3 sizes).
    pub grid: Option<Vec<Size>>,
    /// Block (up to 3 sizes).
    pub block: Option<Vec<Size>>,
    /// Dynamic shared memory, bytes.
    pub shared: Option<Size>,
    /// Triton metadata JSON: a path, or absent to use `<cubin stem>.json` when it sits beside.
    pub triton: Option<PathBuf>,
    /// Scalar values of this build, by argument name (overriding the argument's `value`).
    #[serde(default)]
    pub values: BTreeMap<String, Size>,
}

/// One build.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// The code object, relative to the spec.
    pub code: PathBuf,
    /// This build's own parameter list: names of `[[arg]]` entries in the order this build's
    /// kernel takes them (default: every `[[arg]]`, in order). Buffers stay shared by name.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Overrides.
    #[serde(flatten)]
    pub launch: Launch,
}

/// Correctness gate settings.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Gates {
    /// Candidate repeated executions compared bitwise with the first.
    pub repeat: usize,
    /// Capture the launch in a graph and compare its replay with eager.
    pub graph: bool,
    /// Reference outputs (npy/npz/safetensors, tensors named as the out arguments).
    pub oracle: Option<PathBuf>,
    /// Oracle relative tolerance.
    pub rtol: Option<f64>,
    /// Oracle absolute tolerance.
    pub atol: Option<f64>,
    /// Require baseline and candidate to agree bitwise (false: compare to the oracle only).
    pub bitwise: bool,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            repeat: 3,
            graph: true,
            oracle: None,
            rtol: None,
            atol: None,
            bitwise: true,
        }
    }
}

/// Timing settings.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Timing {
    /// Rounds; each round times both builds (ABBA order) and yields one pair.
    pub rounds: usize,
    /// Launches per timed sample: 0 times single launches of kernels of 20 µs or more and
    /// batches shorter ones to about 200 µs.
    pub batch: usize,
    /// Timed samples per build per round (the round's value is their median).
    pub samples: usize,
    /// Warm-up launches of each build before timing.
    pub warmup: usize,
    /// Write a buffer larger than L2 between launches (timed launches then run one per event pair).
    pub l2_flush: bool,
    /// Practical threshold (fraction) of the verdict.
    pub threshold: f64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            rounds: 30,
            batch: 0,
            samples: 5,
            warmup: 20,
            l2_flush: false,
            threshold: 0.01,
        }
    }
}

/// A whole spec.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// `cuda` (default) or `hip`.
    #[serde(default)]
    pub backend: Backend,
    /// Device ordinal.
    #[serde(default)]
    pub device: i32,
    /// Named sizes.
    #[serde(default)]
    pub sizes: BTreeMap<String, i64>,
    /// Shared launch settings.
    #[serde(default)]
    pub launch: Launch,
    /// The baseline build.
    pub baseline: Build,
    /// The candidate build.
    pub candidate: Build,
    /// Arguments in order.
    #[serde(rename = "arg", default)]
    pub args: Vec<Arg>,
    /// Gates.
    #[serde(default)]
    pub gates: Gates,
    /// Timing.
    #[serde(default)]
    pub timing: Timing,
    /// The work of one launch, for achieved FLOP/s and bytes/s (expressions of the sizes).
    #[serde(default)]
    pub work: Option<Work>,
    /// The directory relative paths are resolved against.
    #[serde(skip)]
    pub dir: PathBuf,
    /// The spec file, when it was read from one (errors name it).
    #[serde(skip)]
    pub path: Option<PathBuf>,
    /// The line of each top-level or table key's first occurrence (`block`, `rounds`), for
    /// errors found after parsing.
    #[serde(skip)]
    pub(crate) key_lines: BTreeMap<String, u64>,
}

/// Largest kernel spec file read: 1 MiB.
pub const MAX_SPEC_BYTES: u64 = 1 << 20;
/// Most timing rounds, samples per round, warm-up launches and launches per sample.
pub const MAX_ROUNDS: usize = 10_000;
/// Most timed samples per build per round.
pub const MAX_SAMPLES: usize = 10_000;
/// Most warm-up launches.
pub const MAX_WARMUP: usize = 1_000_000;
/// Most launches per timed sample (`batch`).
pub const MAX_BATCH: usize = 1_000_000;
/// Most gate repeats.
pub const MAX_REPEAT: usize = 1_000;
/// Most threads of one block (CUDA and HIP).
pub const MAX_BLOCK_THREADS: u64 = 1024;
/// Largest block dimensions x, y, z (CUDA and HIP).
pub const MAX_BLOCK_DIMS: [u64; 3] = [1024, 1024, 64];
/// Largest grid dimensions x, y, z (CUDA; HIP's are no smaller).
pub const MAX_GRID_DIMS: [u64; 3] = [(1 << 31) - 1, 65_535, 65_535];

/// Why a launch geometry exceeds the device limits every CUDA and HIP GPU has.
pub fn geometry_problem(grid: [u64; 3], block: [u64; 3]) -> Option<(&'static str, String)> {
    let axes = ["x", "y", "z"];
    for i in 0..3 {
        if block[i] > MAX_BLOCK_DIMS[i] {
            return Some((
                "block",
                format!(
                    "block {} = {}: at most {} (block limits {:?})",
                    axes[i], block[i], MAX_BLOCK_DIMS[i], MAX_BLOCK_DIMS
                ),
            ));
        }
        if grid[i] > MAX_GRID_DIMS[i] {
            return Some((
                "grid",
                format!(
                    "grid {} = {}: at most {} (grid limits {:?})",
                    axes[i], grid[i], MAX_GRID_DIMS[i], MAX_GRID_DIMS
                ),
            ));
        }
    }
    let threads = block[0].saturating_mul(block[1]).saturating_mul(block[2]);
    if threads > MAX_BLOCK_THREADS {
        return Some((
            "block",
            format!(
                "{} × {} × {} = {threads} threads per block: at most {MAX_BLOCK_THREADS}",
                block[0], block[1], block[2]
            ),
        ));
    }
    None
}

/// The line of each key's first occurrence (`key = ...`) in TOML text.
fn key_lines(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (i, l) in text.lines().enumerate() {
        let Some((lhs, _)) = l.split_once('=') else {
            continue;
        };
        let k = lhs.trim();
        if !k.is_empty() && !k.starts_with('#') && !k.starts_with('[') {
            out.entry(k.to_string()).or_insert(i as u64 + 1);
        }
    }
    out
}

/// The work model of one launch: FLOPs and bytes as size expressions (`"2*M*N*K"`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Work {
    /// Floating-point operations per launch.
    pub flops: Option<Size>,
    /// Bytes read and written per launch.
    pub bytes: Option<Size>,
    /// The compute roof the kernel runs against (`fp32`, `fp16`, `bf16`, `fp8`), for the
    /// check that no build beats it; without one, the highest peak of the ceilings.
    #[serde(default)]
    pub roof: Option<kernelab_model::roofline::Roof>,
}

impl Spec {
    /// The work of one launch from `[work]`, evaluated over the sizes: (FLOPs, bytes).
    pub fn work_per_launch(&self) -> Result<(Option<f64>, Option<f64>)> {
        let Some(w) = &self.work else {
            return Ok((None, None));
        };
        let value = |s: &Option<Size>, what: &str| -> Result<Option<f64>> {
            s.as_ref()
                .map(|s| {
                    eval(s, &self.sizes)
                        .map(|v| v as f64)
                        .map_err(|e| self.locate(e.within(format_args!("work.{what}"))))
                })
                .transpose()
        };
        Ok((value(&w.flops, "flops")?, value(&w.bytes, "bytes")?))
    }
}

/// Which GPU API.
#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// NVIDIA driver API.
    #[default]
    Cuda,
    /// AMD HIP runtime.
    Hip,
}

impl Spec {
    /// Reads and checks a spec file: a regular file (a FIFO or device is refused without
    /// blocking) of at most [`MAX_SPEC_BYTES`].
    pub fn read(path: &Path) -> Result<Spec> {
        let text = kernelab_model::read_regular_text(path, MAX_SPEC_BYTES).map_err(|source| {
            Error::Read {
                path: path.to_path_buf(),
                source,
            }
        })?;
        Spec::parse_in(&text, path.parent().unwrap_or(Path::new(".")), Some(path))
    }

    /// Parses spec text; relative paths resolve against `dir`.
    pub fn parse(text: &str, dir: &Path) -> Result<Spec> {
        Spec::parse_in(text, dir, None)
    }

    /// Parses spec text read from `path`, when it was.
    fn parse_in(text: &str, dir: &Path, path: Option<&Path>) -> Result<Spec> {
        let mut spec: Spec = toml::from_str(text).map_err(|e| {
            let location = Location {
                line: e.span().map(|s| {
                    let upto = &text.as_bytes()[..s.start.min(text.len())];
                    upto.iter().filter(|&&b| b == b'\n').count() as u64 + 1
                }),
                ..Location::default()
            };
            Error::Spec {
                location,
                message: shorten(e.message(), 300),
            }
            .with_path(path)
        })?;
        spec.dir = dir.to_path_buf();
        spec.path = path.map(Path::to_path_buf);
        spec.key_lines = key_lines(text);
        spec.check().map_err(|e| spec.locate(e))?;
        Ok(spec)
    }

    /// Places a spec problem in this spec's file (when it was read from one).
    pub(crate) fn locate(&self, e: Error) -> Error {
        e.with_path(self.path.as_deref())
    }

    /// A spec problem at key `key` (its line where the spec text has it).
    pub(crate) fn at_key(&self, key: &str, message: String) -> Error {
        Error::Spec {
            location: Location {
                line: self.key_lines.get(key).copied(),
                field: Some(key.to_string()),
                ..Location::default()
            },
            message,
        }
    }

    fn check(&self) -> Result<()> {
        if self.args.is_empty() {
            return Err(Error::spec(
                "no [[arg]] entries: list the kernel's arguments in order",
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for a in &self.args {
            if !seen.insert(a.name.as_str()) {
                return Err(Error::spec(format!(
                    "argument `{}` is listed twice",
                    a.name
                )));
            }
            let what = ArgKind::of(a)?;
            if let ArgKind::Buffer(_) = what {
                for s in a.shape.iter().flatten() {
                    eval(s, &self.sizes)
                        .map_err(|e| e.within(format_args!("argument `{}` shape", a.name)))?;
                }
            }
        }
        for (label, b) in [("baseline", &self.baseline), ("candidate", &self.candidate)] {
            let mut listed = std::collections::BTreeSet::new();
            for name in b.args.iter().flatten() {
                if !self.args.iter().any(|a| &a.name == name) {
                    return Err(Error::spec(format!(
                        "{label}.args: `{name}` is not an [[arg]] (declare every argument once, \
                         then list each build's own order)"
                    )));
                }
                if !listed.insert(name.as_str()) {
                    return Err(Error::spec(format!(
                        "{label}.args: `{name}` is listed twice"
                    )));
                }
            }
            for name in b.launch.values.keys() {
                match self.args.iter().find(|a| &a.name == name) {
                    Some(a) if matches!(ArgKind::of(a)?, ArgKind::Scalar(_)) => {}
                    _ => {
                        return Err(Error::spec(format!(
                            "values: `{name}` is not a scalar argument"
                        )))
                    }
                }
            }
        }
        let t = &self.timing;
        for (key, v, lo, hi) in [
            ("rounds", t.rounds, 2, MAX_ROUNDS),
            ("samples", t.samples, 1, MAX_SAMPLES),
            ("warmup", t.warmup, 0, MAX_WARMUP),
            ("batch", t.batch, 0, MAX_BATCH),
            ("repeat", self.gates.repeat, 1, MAX_REPEAT),
        ] {
            if v < lo || v > hi {
                let table = if key == "repeat" { "gates" } else { "timing" };
                return Err(self.at_key(key, format!("{table}.{key} = {v}: expected {lo} to {hi}")));
            }
        }
        if !(t.threshold.is_finite() && (0.0..1.0).contains(&t.threshold)) {
            return Err(self.at_key(
                "threshold",
                format!(
                    "timing.threshold = {}: expected a fraction in [0, 1)",
                    t.threshold
                ),
            ));
        }
        // Geometry given as constants (or size expressions) is checked against the device
        // limits at load, so that `--dry-run` refuses what no GPU can launch.
        for l in [&self.launch, &self.baseline.launch, &self.candidate.launch] {
            let dims = |v: &Option<Vec<Size>>| -> Option<[u64; 3]> {
                let v = v.as_ref()?;
                let mut out = [1u64; 3];
                for (o, s) in out.iter_mut().zip(v) {
                    *o = u64::try_from(eval(s, &self.sizes).ok()?).ok()?;
                }
                Some(out)
            };
            let (g, b) = (dims(&l.grid), dims(&l.block));
            if let Some((key, m)) = geometry_problem(g.unwrap_or([1; 3]), b.unwrap_or([1; 3])) {
                return Err(self.at_key(key, m));
            }
        }
        Ok(())
    }

    /// Resolves the baseline build's own files (its code object and Triton metadata) against
    /// `dir` instead of the spec's folder: a gate's base work tree, where the base built them.
    pub fn baseline_in(&mut self, dir: &Path) {
        let b = &mut self.baseline;
        if b.code.is_relative() {
            b.code = dir.join(&b.code);
        }
        match (&b.launch.triton, &self.launch.triton) {
            (Some(own), _) if own.is_relative() => b.launch.triton = Some(dir.join(own)),
            (None, Some(shared)) if shared.is_relative() => {
                b.launch.triton = Some(dir.join(shared))
            }
            _ => {}
        }
    }

    /// `p` resolved against the spec's folder (an absolute path as it is).
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.dir.join(p)
        }
    }
}

/// Grid coordinates applied to a spec (`kernelab sweep`): sizes, scalar values and code objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Sizes replacing the spec's `[sizes]` entries (each must exist there).
    pub sizes: BTreeMap<String, i64>,
    /// Scalar argument values (for both builds).
    pub values: BTreeMap<String, Size>,
    /// Baseline code object (absolute, or relative to the spec).
    pub baseline: Option<PathBuf>,
    /// Candidate code object.
    pub candidate: Option<PathBuf>,
}

impl Spec {
    /// This spec with `o` applied, checked again (an unknown size or a value for a non-scalar
    /// argument is an error located in the spec).
    pub fn with_overrides(&self, o: &Overrides) -> Result<Spec> {
        let mut s = self.clone();
        for (k, v) in &o.sizes {
            match s.sizes.get_mut(k) {
                Some(slot) => *slot = *v,
                None => {
                    return Err(self.locate(Error::spec(format!(
                        "sweep size `{k}` is not in the spec's [sizes]"
                    ))))
                }
            }
        }
        for (k, v) in &o.values {
            let Some(a) = s.args.iter_mut().find(|a| &a.name == k) else {
                return Err(self.locate(Error::spec(format!(
                    "sweep value `{k}` is not an argument of the spec"
                ))));
            };
            if !matches!(ArgKind::of(a)?, ArgKind::Scalar(_)) {
                return Err(self.locate(Error::spec(format!(
                    "sweep value `{k}` is not a scalar argument"
                ))));
            }
            a.value = Some(v.clone());
            for b in [&mut s.baseline, &mut s.candidate] {
                b.launch.values.insert(k.clone(), v.clone());
            }
        }
        if let Some(c) = &o.baseline {
            s.baseline.code = c.clone();
        }
        if let Some(c) = &o.candidate {
            s.candidate.code = c.clone();
        }
        s.check().map_err(|e| self.locate(e))?;
        Ok(s)
    }
}

/// What an argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A device buffer of this element type.
    Buffer(DType),
    /// A scalar of this type.
    Scalar(DType),
    /// A null pointer (`type = "null"`), for optional pointer arguments.
    Null,
}

impl ArgKind {
    /// Classifies an argument: a shape makes it a buffer, a value a scalar.
    pub fn of(a: &Arg) -> Result<ArgKind> {
        if a.ty == "null" || a.ty == "ptr" && a.shape.is_none() {
            return Ok(ArgKind::Null);
        }
        let dt = DType::parse(&a.ty).ok_or_else(|| {
            Error::spec(format!("argument `{}`: unknown type `{}`", a.name, a.ty))
        })?;
        match (&a.shape, &a.value) {
            (Some(_), None) => Ok(ArgKind::Buffer(dt)),
            (None, Some(_)) | (None, None) if !matches!(dt, DType::Bool) => Ok(ArgKind::Scalar(dt)),
            _ => Err(Error::spec(format!(
                "argument `{}`: give `shape` for a buffer or `value` for a scalar, not both",
                a.name
            ))),
        }
    }
}

/// `text` cut to at most `max` characters (an error message must not echo a megabyte of input).
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!(
            "{}… ({} characters in all)",
            &text[..i],
            text.chars().count()
        ),
        None => text.to_string(),
    }
}

/// Evaluates a size expression (see [`kernelab_model::expr`]): integers, names,
/// `+ - * / %` (integer), parentheses and `cdiv(a, b)`, `min(a, b)`, `max(a, b)`.
pub fn eval(s: &Size, sizes: &BTreeMap<String, i64>) -> Result<i64> {
    use kernelab_model::expr::{self, ExprError};
    match s {
        Size::Int(v) => Ok(*v),
        Size::Float(v) => Err(Error::spec(format!("{v}: expected an integer size"))),
        Size::Expr(e) => expr::eval(e, &|n| sizes.get(n).copied()).map_err(|e| match e {
            ExprError::Unknown(t) => {
                Error::spec(format!("unknown size `{t}` (define it under [sizes])"))
            }
            other => Error::spec(other.to_string()),
        }),
    }
}

/// Deepest nesting a size expression may have (the parser recurses once per level).
pub const MAX_EXPRESSION_DEPTH: usize = kernelab_model::expr::MAX_EXPRESSION_DEPTH;
