//! `kernelab record FILE...`: documents written earlier, added to the bundle with their
//! provenance (the file hashed as the input; the label from --label or the file name).

use crate::cli::RecordArgs;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_report::bundle::read_one;

/// Runs the command.
pub(crate) fn run(args: RecordArgs, session: &mut Session) -> Result<ExitStatus> {
    if !session.enabled() {
        bail!("kernelab record adds documents to a bundle: name it with --record DIR (or KERNELAB_BUNDLE)");
    }
    for f in &args.files {
        // Read into the type its kind names (upgrading an earlier layout), then written in this
        // kernelab's layout: a bad document is refused here, not when the report renders.
        let (_, evidence) = read_one(f)?;
        let gpu = match &evidence {
            kernelab_report::documents::Evidence::KernelRun(k) => Some(k.run.device.clone()),
            _ => None,
        };
        let doc = evidence.document()?;
        session.record(&doc, std::slice::from_ref(f), gpu)?;
        crate::output::to_stderr(&format!(
            "kernelab: {}: recorded as `{}`",
            f.display(),
            doc.kind
        ));
    }
    Ok(ExitStatus::Success)
}
