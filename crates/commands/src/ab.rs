//! `ab analyze` and the end of `ab`: paired samples analysed into the `ab` document.

use kernelab_model::ab::{AbResult, MetricAnalysis};
use kernelab_model::Document;
use kernelab_report::documents::AbBody;
use kernelab_stats::Pair;
use std::path::Path;

/// The `ab` document of paired samples analysed under `design` (`ab analyze`): `main` the A/B
/// pairs of `metric`, `aa` the A/A pairs, `failures` and `runs` as the samples recorded.
pub fn ab_analysis(
    samples: Option<&Path>,
    metric: String,
    main: &[Pair],
    aa: &[Pair],
    counts: (usize, usize),
    design: &kernelab_stats::Design,
) -> Document<AbBody> {
    let result = AbResult {
        aa: (!aa.is_empty()).then(|| kernelab_stats::aa_check(aa, design)),
        analyses: vec![MetricAnalysis {
            metric,
            analysis: kernelab_stats::analyze(main, design),
        }],
        failures: counts.0,
        runs: counts.1,
    };
    ab_doc(samples, result, main, aa)
}

/// The `ab` document of `result`, with the log ratios of the primary metric's pairs it used
/// and of the A/A pairs, for plots.
pub fn ab_doc(
    samples: Option<&Path>,
    result: AbResult,
    main: &[Pair],
    aa: &[Pair],
) -> Document<AbBody> {
    let used = result
        .analyses
        .first()
        .map_or(main.len(), |m| m.analysis.pairs.min(main.len()));
    Document::new(
        "ab",
        AbBody {
            samples: samples.map(|p| p.display().to_string()),
            log_ratios: kernelab_stats::log_ratios(&main[..used]),
            aa_log_ratios: kernelab_stats::log_ratios(aa),
            result,
        },
    )
}

/// The outcome of an `ab` document: recorded with its samples file as input, shown under the
/// lines of `header` (what ran, how), with no CSV (the samples file is the raw data).
pub fn outcome(doc: Document<AbBody>, header: Vec<String>) -> anyhow::Result<crate::Outcome> {
    let inputs: Vec<std::path::PathBuf> = doc
        .body
        .samples
        .iter()
        .map(std::path::PathBuf::from)
        .collect();
    let record = crate::Recordable::of(&doc, &inputs, None)?;
    let view = crate::View::shared(doc, move |doc, _| {
        kernelab_report::ab_sections(&doc.body.result, &header)
    })
    .without_csv("--format csv is not offered for ab; the samples file is the raw data");
    Ok(crate::Outcome::new(view, crate::Status::Pass).recording(record))
}
