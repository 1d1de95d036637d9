//! `check bitwise|close|oracle|finite|repeat`: the tensor gates, as documents and outcomes.
//! The CLI reads the tensors from files, the Python module from files, bytes or arrays; both
//! make the documents here.

use crate::{setting, Medium, Outcome, Recordable, Status, View};
use anyhow::Result;
use kernelab_model::{Body, Document};
use kernelab_report::documents::FiniteFiles;
use kernelab_report::{bitwise_tables, close_tables, finite_tables, repeat_tables};
use kernelab_tensor::{
    BitwiseOptions, BitwiseReport, CloseReport, DType, FileComparison, ReadSpec, RepeatReport,
    TensorFile, Tolerance,
};
use std::path::{Path, PathBuf};

/// How raw tensor files are read, as a user gives it (`--dtype`, `--shape`,
/// `--max-decompressed`).
#[derive(Clone, Debug, Default)]
pub struct ReadSettings {
    /// Element type of raw files, or the type 2-byte data holds.
    pub dtype: Option<String>,
    /// Shape of raw files.
    pub shape: Option<Vec<usize>>,
    /// Most bytes compressed members may inflate to.
    pub max_decompressed: Option<u64>,
}

impl ReadSettings {
    /// The readers' spec; `option` names the dtype setting in the message of an unknown type
    /// (`--dtype` on the command line, `dtype=` in Python).
    pub fn spec(&self, option: &str) -> Result<ReadSpec> {
        let dtype = match &self.dtype {
            Some(d) => Some(DType::parse(d).ok_or_else(|| {
                setting(format!(
                    "{option}{d:?}: expected bf16, f16, f32, f64, f8e4m3fn, f8e5m2, i8..i64, \
                     u8..u64 or bool"
                ))
            })?),
            None => None,
        };
        Ok(ReadSpec {
            dtype,
            shape: self.shape.clone(),
            max_decompressed: self.max_decompressed,
        })
    }
}

/// A tensor file read for a gate: a file with no tensors, or no elements, is an error (a gate
/// with nothing to compare is not a pass).
pub fn comparable(file: TensorFile) -> Result<TensorFile> {
    file.check_comparable()?;
    Ok(file)
}

/// Reads the tensor file `path` for a gate, with the hint the reader has about its type when
/// no type was given (uint16 data that may hold bf16).
pub fn load(path: &Path, settings: &ReadSettings) -> Result<(TensorFile, Option<String>)> {
    let file = comparable(kernelab_tensor::open(path, &settings.spec("--dtype ")?)?)?;
    let hint = if settings.dtype.is_none() {
        file.uint16_hint().map(|h| format!("hint: {h}"))
    } else {
        None
    };
    Ok((file, hint))
}

/// The `check_bitwise` document of `x` against `y`.
pub fn bitwise_doc(
    x: &TensorFile,
    y: &TensorFile,
    options: BitwiseOptions,
) -> Document<FileComparison<BitwiseReport>> {
    Document::of(kernelab_tensor::bitwise_files(x, y, options))
}

/// Tolerances as a user gives them (`--rtol`, `--atol`, `--ulp`, `--nan-equal`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CloseSettings {
    /// Relative tolerance (default per dtype).
    pub rtol: Option<f64>,
    /// Absolute tolerance (default per dtype).
    pub atol: Option<f64>,
    /// A limit in units in the last place instead.
    pub ulp: Option<u64>,
    /// NaN equals NaN.
    pub nan_equal: bool,
    /// An oracle comparison (`check oracle`): a low-precision output against a reference.
    pub oracle: bool,
}

/// The `check_close` (or `check_oracle`) document of `x` against `y`.
pub fn close_doc(
    x: &TensorFile,
    y: &TensorFile,
    s: CloseSettings,
) -> Document<FileComparison<CloseReport>> {
    let tol = Tolerance::requested(
        x.tensors.first().map(|t| t.dtype),
        s.rtol,
        s.atol,
        s.ulp,
        s.nan_equal,
    );
    let kind = if s.oracle {
        kernelab_tensor::Oracle::KIND
    } else {
        FileComparison::<CloseReport>::KIND
    };
    Document::new(kind, kernelab_tensor::close_files(x, y, tol, s.nan_equal))
}

/// The `check_finite` document of `files`.
pub fn finite_doc(files: &[TensorFile]) -> Document<FiniteFiles> {
    let files: Vec<_> = files.iter().map(kernelab_tensor::finite_file).collect();
    let pass = files.iter().all(|f| f.all_finite());
    Document::of(FiniteFiles { pass, files })
}

/// The `check_repeat` document of `files`: at least two.
pub fn repeat_doc(files: &[TensorFile]) -> Result<Document<RepeatReport>> {
    if files.len() < 2 {
        return Err(setting("check repeat needs at least two files"));
    }
    Ok(Document::of(kernelab_tensor::repeat(files)))
}

/// The outcome of a gate's document: recorded with `inputs`, shown as `tables`, failing when
/// the gate did not pass.
fn gate<T: serde::Serialize + 'static>(
    doc: Document<T>,
    pass: bool,
    inputs: &[PathBuf],
    tables: impl Fn(&T) -> Vec<kernelab_report::Block> + 'static,
) -> Result<Outcome> {
    let record = Recordable::of(&doc, inputs, None)?;
    let view = View::shared(doc, move |doc, _: Medium| tables(&doc.body))
        .without_csv("--format csv is not offered for check; use json");
    Ok(Outcome::new(view, Status::of(pass)).recording(record))
}

/// `check bitwise`: byte-exact equality of `x` and `y`, read from `inputs`.
pub fn bitwise(
    x: &TensorFile,
    y: &TensorFile,
    options: BitwiseOptions,
    inputs: &[PathBuf],
) -> Result<Outcome> {
    let doc = bitwise_doc(x, y, options);
    let pass = doc.body.pass;
    gate(doc, pass, inputs, bitwise_tables)
}

/// `check close` and `check oracle`: closeness of `x` and `y` within tolerances.
pub fn close(
    x: &TensorFile,
    y: &TensorFile,
    s: CloseSettings,
    inputs: &[PathBuf],
) -> Result<Outcome> {
    let doc = close_doc(x, y, s);
    let pass = doc.body.pass;
    let title = if s.oracle { "Oracle error" } else { "Close" };
    gate(doc, pass, inputs, move |c| close_tables(c, title))
}

/// `check finite`: NaN and infinity counts of every tensor of `files`.
pub fn finite(files: &[TensorFile], inputs: &[PathBuf]) -> Result<Outcome> {
    let doc = finite_doc(files);
    let pass = doc.body.pass;
    gate(doc, pass, inputs, |f| finite_tables(&f.files))
}

/// `check repeat`: whether repeated runs wrote identical tensors.
pub fn repeat(files: &[TensorFile], inputs: &[PathBuf]) -> Result<Outcome> {
    let doc = repeat_doc(files)?;
    let pass = doc.body.pass;
    gate(doc, pass, inputs, repeat_tables)
}
