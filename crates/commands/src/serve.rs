//! The end of `serve` and `serve analyze`: a samples file's analysis as the `serve` document.

use kernelab_model::Document;
use std::path::Path;

/// The `serve` document of the samples file `samples` analysed as `result`: it passes only
/// when every compared output is identical, something was compared, no request failed and
/// every point gave successful requests.
pub fn serve_doc(
    samples: &Path,
    spec_sha256: String,
    result: kernelab_model::serve::ServeResult,
) -> Document<kernelab_report::documents::ServeBody> {
    // Nothing compared is no evidence of identity.
    let pass = result.identity.identical == result.identity.compared
        && result.identity.compared > 0
        && result.request_failures == 0
        && result.failed_points == 0;
    Document::of(kernelab_report::documents::ServeBody {
        samples: samples.display().to_string(),
        spec_sha256,
        pass,
        result,
    })
}

/// The outcome of a `serve` document: recorded with its samples file as input, shown as the
/// serve tables and CSV rows; failing unless the document passes.
pub fn outcome(
    doc: Document<kernelab_report::documents::ServeBody>,
) -> anyhow::Result<crate::Outcome> {
    let samples = std::path::PathBuf::from(&doc.body.samples);
    let record = crate::Recordable::of(&doc, std::slice::from_ref(&samples), None)?;
    let pass = doc.body.pass;
    let doc = std::rc::Rc::new(doc);
    let (for_blocks, for_json) = (std::rc::Rc::clone(&doc), std::rc::Rc::clone(&doc));
    let view = crate::View::new(
        move |_| Ok(kernelab_report::serve_sections(&for_blocks.body.result)),
        move || crate::json(&*for_json),
    )
    .with_csv(move || {
        Ok(kernelab_report::csv_rows(
            &kernelab_report::serve_csv_rows(&doc.body.result),
        )?)
    });
    Ok(crate::Outcome::new(view, crate::Status::of(pass)).recording(record))
}
