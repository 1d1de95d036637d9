//! `kernelab check bitwise|close|oracle|finite|repeat|sweep`.

use crate::cli::{
    CheckCloseArgs, CheckCommand, CheckFilesArgs, CheckPairArgs, FormatArg, OutputArgs, TensorArgs,
};
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{anyhow, bail, Result};
use kernelab_model::{Body, Document};
use kernelab_report::documents::FiniteFiles;
use kernelab_report::{bitwise_tables, close_tables, finite_tables, repeat_tables, Block};
use kernelab_tensor::{
    bitwise_files, close_files, finite_file, open, repeat, BitwiseOptions, DType, Oracle, ReadSpec,
    TensorFile, Tolerance,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Runs a `check` subcommand.
pub fn run(cmd: CheckCommand, session: &mut Session) -> Result<ExitStatus> {
    match cmd {
        CheckCommand::Bitwise(a) => bitwise_cmd(a, session),
        CheckCommand::Close(a) => close_cmd(a, "close", session),
        CheckCommand::Oracle(a) => close_cmd(a, "oracle", session),
        CheckCommand::Finite(a) => finite_cmd(a, session),
        CheckCommand::Repeat(a) => repeat_cmd(a, session),
        CheckCommand::Sweep(a) => {
            super::sweep::check(&a.manifest, a.max_decompressed, &a.output, session)
        }
    }
}

fn spec(r: &TensorArgs) -> Result<ReadSpec> {
    let dtype = match &r.dtype {
        Some(d) => Some(DType::parse(d).ok_or_else(|| anyhow!("--dtype {d:?}: expected bf16, f16, f32, f64, f8e4m3fn, f8e5m2, i8..i64, u8..u64 or bool"))?),
        None => None,
    };
    Ok(ReadSpec {
        dtype,
        shape: r.shape.clone(),
        max_decompressed: r.max_decompressed,
    })
}

/// Reads a tensor file for a gate: a file with no tensors, or no elements, is an error (a gate
/// with nothing to compare is not a pass).
fn load(p: &Path, r: &TensorArgs) -> Result<TensorFile> {
    let f = open(p, &spec(r)?)?;
    f.check_comparable()?;
    if r.dtype.is_none() {
        if let Some(hint) = f.uint16_hint() {
            output::to_stderr(&format!("kernelab: hint: {hint}"));
        }
    }
    Ok(f)
}

fn emit<T: Serialize + Body>(
    session: &mut Session,
    out: &OutputArgs,
    inputs: &[PathBuf],
    pass: bool,
    body: &T,
    sections: Vec<Block>,
) -> Result<ExitStatus> {
    let doc = Document::of(body);
    session.record(&doc, inputs, None)?;
    let text = match output::sections_text(out, |_| sections.clone()) {
        Some(t) => t,
        None if out.format == FormatArg::Json => output::json(&doc)?,
        None => bail!("--format csv is not offered for check; use json"),
    };
    output::write(out, &text)?;
    Ok(if pass {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

fn bitwise_cmd(a: CheckPairArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    let (x, y) = (load(&a.a, &a.read)?, load(&a.b, &a.read)?);
    let c = bitwise_files(
        &x,
        &y,
        BitwiseOptions {
            zero_equal: a.zero_equal,
            nan_equal: a.nan_equal,
            first: a.first,
        },
    );
    emit(
        session,
        &a.output,
        &[a.a.clone(), a.b.clone()],
        c.pass,
        &c,
        bitwise_tables(&c),
    )
}

fn close_cmd(a: CheckCloseArgs, kind: &'static str, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    let (x, y) = (load(&a.a, &a.read)?, load(&a.b, &a.read)?);
    let tol = Tolerance::requested(
        x.tensors.first().map(|t| t.dtype),
        a.rtol,
        a.atol,
        a.ulp,
        a.nan_equal,
    );
    let c = close_files(&x, &y, tol, a.nan_equal);
    let title = if kind == "oracle" {
        "Oracle error"
    } else {
        "Close"
    };
    let (inputs, sections) = ([a.a.clone(), a.b.clone()], close_tables(&c, title));
    if kind == "oracle" {
        emit(session, &a.output, &inputs, c.pass, &Oracle(c), sections)
    } else {
        emit(session, &a.output, &inputs, c.pass, &c, sections)
    }
}

fn finite_cmd(a: CheckFilesArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    let mut files = Vec::new();
    for f in &a.files {
        files.push(finite_file(&load(f, &a.read)?));
    }
    let pass = files.iter().all(|f| f.all_finite());
    let sections = finite_tables(&files);
    emit(
        session,
        &a.output,
        &a.files,
        pass,
        &FiniteFiles { pass, files },
        sections,
    )
}

fn repeat_cmd(a: CheckFilesArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if a.files.len() < 2 {
        bail!("check repeat needs at least two files");
    }
    let files = a
        .files
        .iter()
        .map(|f| load(f, &a.read))
        .collect::<Result<Vec<_>>>()?;
    let r = repeat(&files);
    emit(session, &a.output, &a.files, r.pass, &r, repeat_tables(&r))
}
