//! `kernelab check bitwise|close|oracle|finite|repeat|sweep`.

use crate::cli::{CheckCloseArgs, CheckCommand, CheckFilesArgs, CheckPairArgs, TensorArgs};
use crate::emit::emit;
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;
use kernelab_commands::check::{self, CloseSettings, ReadSettings};
use kernelab_commands::Outcome;
use kernelab_tensor::{BitwiseOptions, TensorFile};
use std::path::{Path, PathBuf};

/// Runs a `check` subcommand.
pub(crate) fn run(cmd: CheckCommand, session: &mut Session) -> Result<ExitStatus> {
    let output = match &cmd {
        CheckCommand::Bitwise(a) => &a.output,
        CheckCommand::Close(a) | CheckCommand::Oracle(a) => &a.output,
        CheckCommand::Finite(a) | CheckCommand::Repeat(a) => &a.output,
        CheckCommand::Sweep(a) => {
            return super::sweep::check(&a.manifest, a.max_decompressed, &a.output, session)
        }
    };
    output::check_target(output)?;
    let outcome = match &cmd {
        CheckCommand::Bitwise(a) => bitwise(a)?,
        CheckCommand::Close(a) => close(a, false)?,
        CheckCommand::Oracle(a) => close(a, true)?,
        CheckCommand::Finite(a) => {
            let (files, notes) = load_all(&a.files, &a.read)?;
            with_notes(check::finite(&files, &a.files)?, notes)
        }
        CheckCommand::Repeat(a) => repeat(a)?,
        CheckCommand::Sweep(_) => unreachable!("handled above"),
    };
    emit(outcome, output, session)
}

fn settings(r: &TensorArgs) -> ReadSettings {
    ReadSettings {
        dtype: r.dtype.clone(),
        shape: r.shape.clone(),
        max_decompressed: r.max_decompressed,
    }
}

/// Reads `paths` for a gate, with the readers' hints.
fn load_all(paths: &[PathBuf], r: &TensorArgs) -> Result<(Vec<TensorFile>, Vec<String>)> {
    let settings = settings(r);
    let mut files = Vec::new();
    let mut notes = Vec::new();
    for p in paths {
        let (file, hint) = check::load(p, &settings)?;
        files.push(file);
        notes.extend(hint);
    }
    Ok((files, notes))
}

fn with_notes(outcome: Outcome, notes: Vec<String>) -> Outcome {
    notes.into_iter().fold(outcome, Outcome::noting)
}

fn pair(a: &Path, b: &Path, r: &TensorArgs) -> Result<(Vec<TensorFile>, Vec<String>)> {
    load_all(&[a.to_path_buf(), b.to_path_buf()], r)
}

fn bitwise(a: &CheckPairArgs) -> Result<Outcome> {
    let (files, notes) = pair(&a.a, &a.b, &a.read)?;
    let options = BitwiseOptions {
        zero_equal: a.zero_equal,
        nan_equal: a.nan_equal,
        first: a.first,
    };
    let inputs = [a.a.clone(), a.b.clone()];
    Ok(with_notes(
        check::bitwise(&files[0], &files[1], options, &inputs)?,
        notes,
    ))
}

fn close(a: &CheckCloseArgs, oracle: bool) -> Result<Outcome> {
    let (files, notes) = pair(&a.a, &a.b, &a.read)?;
    let s = CloseSettings {
        rtol: a.rtol,
        atol: a.atol,
        ulp: a.ulp,
        nan_equal: a.nan_equal,
        oracle,
    };
    let inputs = [a.a.clone(), a.b.clone()];
    Ok(with_notes(
        check::close(&files[0], &files[1], s, &inputs)?,
        notes,
    ))
}

fn repeat(a: &CheckFilesArgs) -> Result<Outcome> {
    if a.files.len() < 2 {
        anyhow::bail!("check repeat needs at least two files");
    }
    let (files, notes) = load_all(&a.files, &a.read)?;
    Ok(with_notes(check::repeat(&files, &a.files)?, notes))
}
