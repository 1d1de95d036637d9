//! `kernelab export --parquet OUT_DIR INPUT...`: dispatch tables, samples and sweep matrices as
//! Parquet files (schemas in docs/parquet.md).

use crate::cli::tools::ExportArgs;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;
use std::io::Write;

/// Runs the command.
pub(crate) fn run(args: ExportArgs, _session: &mut Session) -> Result<ExitStatus> {
    let written = match kernelab_export::export(&args.parquet, &args.inputs, args.force) {
        Ok(w) => w,
        Err(e) => {
            if let Some(exists) = e.downcast_ref::<kernelab_export::ExistsError>() {
                crate::output::to_stderr(&format!("kernelab: error: {exists}"));
                return Ok(ExitStatus::Error);
            }
            return Err(e);
        }
    };
    let mut out = std::io::stdout().lock();
    for w in &written {
        // Plain digits: the tab-separated lines are read by scripts.
        let rows = format!(
            "{} {}",
            w.rows,
            kernelab_model::plural(w.rows, "row", "rows")
        );
        writeln!(out, "{}\t{rows}", w.path.display())?;
    }
    Ok(ExitStatus::Success)
}
