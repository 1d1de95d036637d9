//! Gates over whole files: tensors paired by name (safetensors keys, npz members), structural
//! differences reported as failures, and repeat hashes.

use crate::compare::{
    bitwise, close, content_hash, finite, BitwiseOptions, BitwiseReport, CloseReport, FiniteReport,
    Tolerance,
};
use crate::tensor::{Tensor, TensorFile};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One tensor's result, or why it could not be compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TensorResult<T> {
    /// Tensor name (A's, when the single tensors of two files are paired).
    pub name: String,
    /// Element type in A.
    pub dtype: String,
    /// Shape in A.
    pub shape: Vec<usize>,
    /// The comparison, when the pair is comparable.
    pub result: Option<T>,
    /// Why the pair failed structurally (shape, dtype, presence).
    pub problem: Option<String>,
}

/// A file-level comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileComparison<T> {
    /// First file.
    pub a: PathBuf,
    /// Second file (reference for close comparisons).
    pub b: PathBuf,
    /// Per tensor.
    pub tensors: Vec<TensorResult<T>>,
    /// True when every tensor passes and nothing is missing.
    pub pass: bool,
    /// Members of either file that no gate looked at (a dtype kernelab does not compare).
    #[serde(default)]
    pub not_checked: Vec<crate::Skipped>,
}

impl kernelab_model::Body for FileComparison<crate::BitwiseReport> {
    const KIND: &'static str = "check_bitwise";
}

impl kernelab_model::Body for FileComparison<crate::CloseReport> {
    const KIND: &'static str = "check_close";
}

/// A close comparison against a higher-precision reference (`check oracle`): the body of a
/// `check_close`, written and read as a `check_oracle` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Oracle(pub FileComparison<crate::CloseReport>);

impl kernelab_model::Body for Oracle {
    const KIND: &'static str = "check_oracle";
}

/// The schema of the comparison it wraps, named as that one (the published schemas name it).
impl schemars::JsonSchema for Oracle {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        FileComparison::<crate::CloseReport>::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        FileComparison::<crate::CloseReport>::schema_id()
    }
    fn inline_schema() -> bool {
        FileComparison::<crate::CloseReport>::inline_schema()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        FileComparison::<crate::CloseReport>::json_schema(generator)
    }
}

fn pairs<'a>(
    a: &'a TensorFile,
    b: &'a TensorFile,
) -> Vec<(String, Option<&'a Tensor>, Option<&'a Tensor>)> {
    if a.tensors.len() == 1 && b.tensors.len() == 1 {
        return vec![(
            a.tensors[0].name.clone(),
            Some(&a.tensors[0]),
            Some(&b.tensors[0]),
        )];
    }
    let mut out: Vec<(String, Option<&Tensor>, Option<&Tensor>)> = a
        .tensors
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                Some(t),
                b.tensors.iter().find(|u| u.name == t.name),
            )
        })
        .collect();
    out.extend(
        b.tensors
            .iter()
            .filter(|u| !a.tensors.iter().any(|t| t.name == u.name))
            .map(|u| (u.name.clone(), None, Some(u))),
    );
    out
}

/// Compares every tensor pair of two files with `f`; `same_dtype` makes a dtype difference a
/// structural failure; `ok` says whether a result passes.
pub fn compare_files<T>(
    a: &TensorFile,
    b: &TensorFile,
    same_dtype: bool,
    f: impl Fn(&Tensor, &Tensor) -> T,
    ok: impl Fn(&T) -> bool,
) -> FileComparison<T> {
    let mut tensors = Vec::new();
    for (name, ta, tb) in pairs(a, b) {
        let describe = |t: Option<&Tensor>| {
            t.map(|t| (format!("{:?}", t.dtype).to_lowercase(), t.shape.clone()))
                .unwrap_or_default()
        };
        let (dtype, shape) = describe(ta.or(tb));
        let problem = match (ta, tb) {
            (Some(_), None) => Some(format!("present in {} only", a.path.display())),
            (None, Some(_)) => Some(format!("present in {} only", b.path.display())),
            (Some(x), Some(y)) if x.shape != y.shape => {
                Some(format!("shape {:?} vs {:?}", x.shape, y.shape))
            }
            (Some(x), Some(y)) if same_dtype && x.dtype != y.dtype => {
                Some(format!("dtype {:?} vs {:?}", x.dtype, y.dtype))
            }
            (Some(x), Some(y)) if x.elements() != y.elements() => {
                Some("element counts differ".into())
            }
            _ => None,
        };
        let result = match (problem.is_none(), ta, tb) {
            (true, Some(x), Some(y)) => Some(f(x, y)),
            _ => None,
        };
        tensors.push(TensorResult {
            name,
            dtype,
            shape,
            result,
            problem,
        });
    }
    let pass = tensors
        .iter()
        .all(|t| t.problem.is_none() && t.result.as_ref().is_some_and(&ok));
    let not_checked = a
        .skipped
        .iter()
        .map(|s| crate::Skipped {
            name: format!("{}: {}", a.path.display(), s.name),
            why: s.why.clone(),
        })
        .chain(b.skipped.iter().map(|s| crate::Skipped {
            name: format!("{}: {}", b.path.display(), s.name),
            why: s.why.clone(),
        }))
        .collect();
    FileComparison {
        a: a.path.clone(),
        b: b.path.clone(),
        tensors,
        pass,
        not_checked,
    }
}

/// Bitwise comparison of two files.
pub fn bitwise_files(
    a: &TensorFile,
    b: &TensorFile,
    opt: BitwiseOptions,
) -> FileComparison<BitwiseReport> {
    compare_files(a, b, true, |x, y| bitwise(x, y, opt), |r| r.differing == 0)
}

/// Close comparison of two files; `tol` of `None` takes the per-dtype defaults of the
/// reference's... of A's dtype (the lower precision, as for an output against an oracle).
pub fn close_files(
    a: &TensorFile,
    b: &TensorFile,
    tol: Option<Tolerance>,
    nan_equal: bool,
) -> FileComparison<CloseReport> {
    compare_files(
        a,
        b,
        false,
        |x, y| {
            let t = tol.unwrap_or_else(|| {
                let (rtol, atol) = x.dtype.default_tolerance();
                Tolerance {
                    rtol,
                    atol,
                    ulp: None,
                    nan_equal,
                }
            });
            close(x, y, t)
        },
        |r| r.mismatches == 0,
    )
}

/// Finiteness of every tensor of a file.
pub fn finite_file(a: &TensorFile) -> FileFinite {
    FileFinite {
        path: a.path.display().to_string(),
        tensors: a
            .tensors
            .iter()
            .map(|t| TensorFinite {
                name: t.name.clone(),
                report: finite(t),
            })
            .collect(),
    }
}

/// One tensor's finiteness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TensorFinite {
    /// Tensor name.
    pub name: String,
    /// Its counts.
    #[serde(flatten)]
    pub report: FiniteReport,
}

/// NaN and infinity counts summed over tensors.
pub fn non_finite_totals(tensors: &[TensorFinite]) -> (u64, u64) {
    tensors.iter().fold((0, 0), |(n, i), t| {
        (n + t.report.nan, i + t.report.pos_inf + t.report.neg_inf)
    })
}

/// The finiteness of every tensor of one file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileFinite {
    /// The file.
    pub path: String,
    /// Its tensors.
    pub tensors: Vec<TensorFinite>,
}

impl FileFinite {
    /// True when every tensor is all finite.
    pub fn all_finite(&self) -> bool {
        self.tensors.iter().all(|t| t.report.all_finite())
    }
}

/// One tensor's content hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TensorHash {
    /// Tensor name.
    pub name: String,
    /// SHA-256 of its dtype, shape and bytes, hex.
    pub sha256: String,
}

/// The content hashes of one file's tensors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileHashes {
    /// The file.
    pub path: PathBuf,
    /// Its tensors.
    pub tensors: Vec<TensorHash>,
}

/// Content hashes of repeated runs, and which differ from the first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepeatReport {
    /// Per file, the content hash of each tensor.
    pub files: Vec<FileHashes>,
    /// `file: tensor` entries that differ from the first file.
    pub differing: Vec<String>,
    /// True when every file is identical to the first.
    pub pass: bool,
}

impl kernelab_model::Body for RepeatReport {
    const KIND: &'static str = "check_repeat";
}

/// Hashes every tensor of every file and compares with the first.
pub fn repeat(files: &[TensorFile]) -> RepeatReport {
    let hashed: Vec<FileHashes> = files
        .iter()
        .map(|f| FileHashes {
            path: f.path.clone(),
            tensors: f
                .tensors
                .iter()
                .map(|t| TensorHash {
                    name: t.name.clone(),
                    sha256: content_hash(t),
                })
                .collect(),
        })
        .collect();
    let mut differing = Vec::new();
    // Single-tensor files (npy, raw) pair whatever their names, like the other gates.
    let single = hashed.iter().all(|f| f.tensors.len() == 1);
    if let Some(first) = hashed.first() {
        for f in &hashed[1..] {
            for t in &f.tensors {
                let reference = if single {
                    first.tensors.first()
                } else {
                    first.tensors.iter().find(|r| r.name == t.name)
                };
                if reference.map(|r| &r.sha256) != Some(&t.sha256) {
                    differing.push(format!("{}: {}", f.path.display(), t.name));
                }
            }
            for r in &first.tensors {
                if !single && !f.tensors.iter().any(|t| t.name == r.name) {
                    differing.push(format!("{}: {} missing", f.path.display(), r.name));
                }
            }
        }
    }
    RepeatReport {
        pass: differing.is_empty(),
        files: hashed,
        differing,
    }
}
