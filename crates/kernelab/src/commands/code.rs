//! `kernelab code show|diff|matrix`.

use crate::cli::CodeCommand;
use crate::emit::emit;
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;
use kernelab_commands::code::{self, BuildPaths, ReadSettings};

/// Runs a `code` subcommand.
pub(crate) fn run(cmd: CodeCommand, session: &mut Session) -> Result<ExitStatus> {
    let (outcome, out) = match cmd {
        CodeCommand::Show(a) => {
            output::check_target(&a.output)?;
            let read = ReadSettings {
                disassemble: !a.no_disassemble,
                max_decompressed: a.max_decompressed,
            };
            (code::show(&a.files, read)?, a.output)
        }
        CodeCommand::Diff(a) => {
            output::check_target(&a.output)?;
            let read = ReadSettings {
                disassemble: !a.no_disassemble,
                max_decompressed: a.max_decompressed,
            };
            (code::diff_files(&a.base, &a.cand, read)?, a.output)
        }
        CodeCommand::Matrix(a) => {
            output::check_target(&a.output)?;
            let read = ReadSettings {
                disassemble: a.disassemble,
                max_decompressed: a.max_decompressed,
            };
            let base = BuildPaths {
                dir: a.base_dir,
                files: a.base,
            };
            let cand = BuildPaths {
                dir: a.cand_dir,
                files: a.cand,
            };
            (
                code::matrix(&base, &cand, a.key.as_deref(), read)?,
                a.output,
            )
        }
    };
    emit(outcome, &out, session)
}
