//! The end of `counters`: the profiler processes' results as the `counters` document.

use crate::{json, Medium, Outcome, Recordable, Status, View};
use anyhow::Result;
use kernelab_model::counters::CountersRun;
use kernelab_model::Document;
use kernelab_report::documents::CountersBody;
use kernelab_report::{counters_csv, counters_tables};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The outcome of a counters run `run` whose processes kept their output in `work_dir`:
/// recorded with `inputs`; failing when no profiler process succeeded.
pub fn outcome(run: CountersRun, work_dir: &Path, inputs: &[PathBuf]) -> Result<Outcome> {
    let any = run.processes.iter().any(|p| p.failure.is_none());
    let doc = Document::new(
        "counters",
        CountersBody {
            work_dir: work_dir.display().to_string(),
            run,
        },
    );
    let record = Recordable::of(&doc, inputs, None)?;
    let doc = Rc::new(doc);
    let (for_blocks, for_json) = (Rc::clone(&doc), Rc::clone(&doc));
    let view = View::new(
        move |m: Medium| Ok(counters_tables(&for_blocks.body.run, m.name_width())),
        move || json(&*for_json),
    )
    .with_csv(move || Ok(counters_csv(&doc.body.run)?));
    Ok(Outcome::new(view, Status::of(any)).recording(record))
}
