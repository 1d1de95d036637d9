//! `impact`: the request impact of a kernel change, from a profile record, a kernel-run record
//! and, where given, measured request changes (compare or ab records).

use crate::{Outcome, Recordable, Status, View};
use anyhow::{bail, Result};
use kernelab_model::Document;
use kernelab_report::bundle::read_one;
use kernelab_report::documents::Evidence;
use kernelab_report::impact::{from_ab, from_compare, impact_sections, predict};
use std::path::{Path, PathBuf};

/// `impact` as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct ImpactSettings {
    /// A `profile` record of the request.
    pub profile: PathBuf,
    /// A `kernel_run` record of the change.
    pub kernel_run: PathBuf,
    /// The family the kernel belongs to, when the kernel run does not say.
    pub family: Option<String>,
    /// Records measuring the request change (`compare` or `ab`).
    pub measured: Vec<PathBuf>,
}

/// The file's stem, naming a measurement's source.
fn stem(p: &Path) -> String {
    kernelab_report::bundle::default_label(
        &[kernelab_model::InputFile {
            path: p.display().to_string(),
            ..Default::default()
        }],
        "",
    )
}

/// `impact`: the predicted request change and the measured ones beside it.
pub fn impact(s: &ImpactSettings) -> Result<Outcome> {
    let Evidence::Profile(profile) = read_one(&s.profile)?.1 else {
        bail!("{}: expected a `profile` record", s.profile.display());
    };
    let Evidence::KernelRun(run) = read_one(&s.kernel_run)?.1 else {
        bail!("{}: expected a `kernel_run` record", s.kernel_run.display());
    };
    let mut impact = predict(&profile, &run, s.family.as_deref())?;
    for m in &s.measured {
        let (kind, evidence) = read_one(m)?;
        let source = format!("{kind} {}", stem(m));
        match evidence {
            Evidence::Compare(c) => {
                let found = from_compare(&impact, &source, &c, true);
                if found.is_empty() {
                    bail!(
                        "{}: the comparison has no row `{}`",
                        m.display(),
                        impact.family
                    );
                }
                impact.measured.extend(found);
            }
            Evidence::Ab(a) => impact.measured.extend(from_ab(&impact, &source, &a)),
            _ => bail!(
                "{}: a `{kind}` record measures no request change (expected compare or ab)",
                m.display()
            ),
        }
    }
    let doc = Document::of(impact);
    let mut inputs = vec![s.profile.clone(), s.kernel_run.clone()];
    inputs.extend(s.measured.iter().cloned());
    let record = Recordable::of(&doc, &inputs, None)?;
    let view = View::shared(doc, |doc, _| impact_sections(&doc.body))
        .without_csv("kernelab impact writes table, md or json, not csv");
    Ok(Outcome::new(view, Status::Pass).recording(record))
}
