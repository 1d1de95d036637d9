//! `kernelab code show|diff|matrix`.

use crate::cli::{CodeCommand, CodeDiffArgs, CodeMatrixArgs, CodeShowArgs, FormatArg, OutputArgs};
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;
use kernelab_code::{diff, load_file, CodeObject, LoadOptions};
use kernelab_model::{Body, Document};
use kernelab_report::make::code_matrix;
use kernelab_report::{code_diff_tables, code_matrix_tables, code_show_tables, csv_rows, Block};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Runs a `code` subcommand.
pub fn run(cmd: CodeCommand, session: &mut Session) -> Result<ExitStatus> {
    match cmd {
        CodeCommand::Show(a) => show(a, session),
        CodeCommand::Diff(a) => diff_cmd(a, session),
        CodeCommand::Matrix(a) => matrix_cmd(a, session),
    }
}

fn load(path: &Path, disassemble: bool, max_decompressed: Option<u64>) -> Result<Vec<CodeObject>> {
    let options = LoadOptions {
        disassemble,
        max_decompressed,
    };
    Ok(load_file(path, &options)?)
}

fn emit<T: Serialize + Body, R: Serialize>(
    session: &mut Session,
    out: &OutputArgs,
    inputs: &[PathBuf],
    body: &T,
    sections: impl Fn(usize) -> Vec<Block>,
    csv: impl Fn() -> Vec<R>,
) -> Result<()> {
    let doc = Document::of(body);
    session.record(&doc, inputs, None)?;
    let text = match output::sections_text(out, sections) {
        Some(t) => t,
        None if out.format == FormatArg::Json => output::json(&doc)?,
        None => csv_rows(&csv())?,
    };
    output::write(out, &text)
}

#[derive(Serialize)]
struct Objects<'a> {
    objects: &'a [CodeObject],
}

impl Body for Objects<'_> {
    const KIND: &'static str = "code_show";
}

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

fn show(a: CodeShowArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    let mut objects = Vec::new();
    for f in &a.files {
        objects.extend(load(f, !a.no_disassemble, a.max_decompressed)?);
    }
    let csv = || {
        objects
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
            .collect::<Vec<_>>()
    };
    emit(
        session,
        &a.output,
        &a.files,
        &Objects { objects: &objects },
        |w| code_show_tables(&objects, w),
        csv,
    )?;
    Ok(ExitStatus::Success)
}

#[derive(Serialize)]
struct DiffCsv<'a> {
    kernel: &'a str,
    table: &'static str,
    item: &'a str,
    base: Option<u64>,
    cand: Option<u64>,
}

fn diff_cmd(a: CodeDiffArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    let base = load(&a.base, !a.no_disassemble, a.max_decompressed)?;
    let cand = load(&a.cand, !a.no_disassemble, a.max_decompressed)?;
    let d = diff(&base, &cand);
    let csv = || {
        d.kernels
            .iter()
            .flat_map(|k| {
                let tag = |t: &'static str,
                           rows: &'_ [kernelab_code::ChangeRow]|
                 -> Vec<(&'static str, kernelab_code::ChangeRow)> {
                    rows.iter().map(|r| (t, r.clone())).collect()
                };
                let mut all = tag("class", &k.classes);
                all.extend(tag("mnemonic", &k.mnemonics));
                all.extend(tag("resource", &k.resources));
                all.into_iter().map(move |(t, r)| (k.symbol.clone(), t, r))
            })
            .collect::<Vec<_>>()
    };
    let rows = csv();
    let csv_view = || {
        rows.iter()
            .map(|(k, t, r)| DiffCsv {
                kernel: k,
                table: t,
                item: &r.item,
                base: r.base,
                cand: r.cand,
            })
            .collect::<Vec<_>>()
    };
    emit(
        session,
        &a.output,
        &[a.base.clone(), a.cand.clone()],
        &d,
        |w| code_diff_tables(&d, w),
        csv_view,
    )?;
    Ok(ExitStatus::Success)
}

#[derive(Serialize)]
struct MatrixCsv<'a> {
    key: &'a str,
    base: &'a str,
    cand: &'a str,
    changed: bool,
    changed_kernels: String,
}

fn matrix_cmd(a: CodeMatrixArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    let opts = LoadOptions {
        disassemble: a.disassemble,
        max_decompressed: a.max_decompressed,
    };
    let (m, inputs) = code_matrix(
        (a.base_dir.as_deref(), &a.base),
        (a.cand_dir.as_deref(), &a.cand),
        a.key.as_deref(),
        &opts,
    )?;
    let csv = || {
        m.pairs
            .iter()
            .map(|p| MatrixCsv {
                key: &p.key,
                base: &p.base,
                cand: &p.cand,
                changed: p.changed,
                changed_kernels: p.changed_kernels.join(";"),
            })
            .collect::<Vec<_>>()
    };
    emit(
        session,
        &a.output,
        &inputs,
        &m,
        |w| code_matrix_tables(&m, w),
        csv,
    )?;
    Ok(ExitStatus::Success)
}
