//! `code show`, `code diff` and `code matrix`: code objects read, compared and shown.

use crate::{setting, Medium, Outcome, Recordable, Status, View};
use anyhow::{bail, Result};
use kernelab_code::{diff, load_file, ChangeRow, CodeObject, LoadOptions, Matrix, ObjectDiff};
use kernelab_model::Document;
use kernelab_report::documents::CodeShowBody;
use kernelab_report::{code_diff_tables, code_matrix_tables, code_show_tables, csv_rows};
use regex::Regex;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How code objects are read, as a user asks (`--no-disassemble`, `--max-decompressed`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadSettings {
    /// Disassemble to count instruction classes.
    pub disassemble: bool,
    /// Most bytes compressed members may inflate to.
    pub max_decompressed: Option<u64>,
}

impl ReadSettings {
    /// The loaders' options.
    pub fn options(self) -> LoadOptions {
        LoadOptions {
            disassemble: self.disassemble,
            max_decompressed: self.max_decompressed,
        }
    }
}

/// The code objects of the files `paths`.
pub fn load(paths: &[PathBuf], read: ReadSettings) -> Result<Vec<CodeObject>> {
    let mut objects = Vec::new();
    for p in paths {
        objects.extend(load_file(p, &read.options())?);
    }
    Ok(objects)
}

/// The outcome of a code document: recorded with `inputs`, drawn by `tables`, CSV by `csv`.
fn shown<T: Serialize + 'static, R: Serialize>(
    doc: Document<T>,
    inputs: &[PathBuf],
    tables: impl Fn(&T, usize) -> Vec<kernelab_report::Block> + 'static,
    csv: impl Fn(&T) -> Vec<R> + 'static,
) -> Result<Outcome> {
    let record = Recordable::of(&doc, inputs, None)?;
    let view = View::shared_with_csv(
        doc,
        move |d, m: Medium| tables(&d.body, m.name_width()),
        move |d| Ok(csv_rows(&csv(&d.body))?),
    );
    Ok(Outcome::new(view, Status::Pass).recording(record))
}

/// The `code_show` document of `objects`.
pub fn show_doc(objects: Vec<CodeObject>) -> Document<CodeShowBody> {
    Document::of(CodeShowBody { objects })
}

/// The `code_diff` document of a baseline's and a candidate's code objects.
pub fn diff_doc(base: &[CodeObject], cand: &[CodeObject]) -> Document<ObjectDiff> {
    Document::of(diff(base, cand))
}

/// The `code_matrix` document of two builds, and the labels of every object read.
pub fn matrix_doc(
    base: &BuildPaths,
    cand: &BuildPaths,
    key: Option<&str>,
    read: ReadSettings,
) -> Result<(Document<Matrix>, Vec<PathBuf>)> {
    let (m, inputs) = code_matrix(
        (base.dir.as_deref(), &base.files),
        (cand.dir.as_deref(), &cand.files),
        key,
        &read.options(),
    )?;
    Ok((Document::of(m), inputs))
}

/// One CSV row of `code show`: a kernel's resources.
#[derive(Serialize)]
struct KernelCsv {
    object: String,
    arch: Option<String>,
    kernel: String,
    registers: Option<u32>,
    agprs: Option<u32>,
    sgprs: Option<u32>,
    vgpr_spills: Option<u32>,
    sgpr_spills: Option<u32>,
    barriers: Option<u32>,
    shared_bytes: Option<u64>,
    local_bytes: Option<u64>,
    frame_bytes: Option<u64>,
    stack_bytes: Option<u64>,
    code_bytes: Option<u64>,
    instructions: Option<u64>,
    code_sha256: Option<String>,
}

fn show_csv(objects: &CodeShowBody) -> Vec<KernelCsv> {
    objects
        .objects
        .iter()
        .flat_map(|o| {
            o.kernels.iter().map(move |k| KernelCsv {
                object: o.label.clone(),
                arch: o.arch.clone(),
                kernel: k.symbol.clone(),
                registers: k.resources.registers,
                agprs: k.resources.agprs,
                sgprs: k.resources.sgprs,
                vgpr_spills: k.resources.vgpr_spills,
                sgpr_spills: k.resources.sgpr_spills,
                barriers: k.resources.barriers,
                shared_bytes: k.resources.shared_bytes,
                local_bytes: k.resources.local_bytes,
                frame_bytes: k.resources.frame_bytes,
                stack_bytes: k.resources.stack_bytes,
                code_bytes: k.code_size,
                instructions: k.instructions,
                code_sha256: k.code_sha256.clone(),
            })
        })
        .collect()
}

/// `code show`: the kernels, resources and instruction classes of `files`.
pub fn show(files: &[PathBuf], read: ReadSettings) -> Result<Outcome> {
    let doc = show_doc(load(files, read)?);
    shown(doc, files, |o, w| code_show_tables(&o.objects, w), show_csv)
}

/// One CSV row of `code diff`: one item of one kernel's class, mnemonic or resource table.
#[derive(Serialize)]
struct DiffCsv {
    kernel: String,
    table: &'static str,
    item: String,
    base: Option<u64>,
    cand: Option<u64>,
}

fn diff_csv(d: &kernelab_code::ObjectDiff) -> Vec<DiffCsv> {
    d.kernels
        .iter()
        .flat_map(|k| {
            let tag = |t: &'static str, rows: &[ChangeRow]| -> Vec<DiffCsv> {
                rows.iter()
                    .map(|r| DiffCsv {
                        kernel: k.symbol.clone(),
                        table: t,
                        item: r.item.clone(),
                        base: r.base,
                        cand: r.cand,
                    })
                    .collect()
            };
            let mut all = tag("class", &k.classes);
            all.extend(tag("mnemonic", &k.mnemonics));
            all.extend(tag("resource", &k.resources));
            all
        })
        .collect()
}

/// `code diff`: what changed in the machine code from `base` to `cand`.
pub fn diff_files(base: &Path, cand: &Path, read: ReadSettings) -> Result<Outcome> {
    let b = load(&[base.to_path_buf()], read)?;
    let c = load(&[cand.to_path_buf()], read)?;
    let doc = diff_doc(&b, &c);
    let inputs = [base.to_path_buf(), cand.to_path_buf()];
    let mut out = shown(doc, &inputs, code_diff_tables, diff_csv)?;
    // Binaries on both sides: whether their machine code is the same (stated after the tables;
    // disassembly texts carry no bytes to compare).
    let binary = |objs: &[CodeObject]| objs.iter().all(|o| o.bytes.is_some());
    if binary(&b) && binary(&c) {
        out.late_notes
            .push(kernelab_code::sameness_line(&kernelab_code::same_code(
                &b, &c,
            )));
    }
    Ok(out)
}

/// One CSV row of `code matrix`: one pair of builds' files.
#[derive(Serialize)]
struct MatrixCsv {
    key: String,
    base: String,
    cand: String,
    changed: bool,
    changed_kernels: String,
}

fn matrix_csv(m: &Matrix) -> Vec<MatrixCsv> {
    m.pairs
        .iter()
        .map(|p| MatrixCsv {
            key: p.key.clone(),
            base: p.base.clone(),
            cand: p.cand.clone(),
            changed: p.changed,
            changed_kernels: p.changed_kernels.join(";"),
        })
        .collect()
}

/// A build as a user names it: a folder, files, or both.
#[derive(Clone, Debug, Default)]
pub struct BuildPaths {
    /// Every code object below this folder.
    pub dir: Option<PathBuf>,
    /// These files.
    pub files: Vec<PathBuf>,
}

/// `code matrix`: which of a build's files changed, paired by `key`.
pub fn matrix(
    base: &BuildPaths,
    cand: &BuildPaths,
    key: Option<&str>,
    read: ReadSettings,
) -> Result<Outcome> {
    let (doc, inputs) = matrix_doc(base, cand, key, read)?;
    shown(doc, &inputs, code_matrix_tables, matrix_csv)
}

/// The `code_matrix` of a baseline and a candidate build (`code matrix`): each build's files
/// (or the files below its folder) paired by `key`; a build without code objects is an error.
/// Also the labels of every object read, for the record's inputs.
pub fn code_matrix(
    base: (Option<&Path>, &[PathBuf]),
    cand: (Option<&Path>, &[PathBuf]),
    key: Option<&str>,
    options: &kernelab_code::LoadOptions,
) -> Result<(kernelab_code::Matrix, Vec<PathBuf>)> {
    let key = key
        .map(Regex::new)
        .transpose()
        .map_err(|e| setting(format!("--key: {e}")))?;
    let base = kernelab_code::load_build(base.0, base.1, key.as_ref(), options)?;
    let cand = kernelab_code::load_build(cand.0, cand.1, key.as_ref(), options)?;
    if base.is_empty() || cand.is_empty() {
        bail!(
            "no code objects found in the {} build",
            if base.is_empty() {
                "baseline"
            } else {
                "candidate"
            }
        );
    }
    let inputs = base
        .values()
        .chain(cand.values())
        .map(|(label, _)| PathBuf::from(label))
        .collect();
    Ok((kernelab_code::matrix(&base, &cand), inputs))
}
