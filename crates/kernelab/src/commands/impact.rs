//! `kernelab impact --profile P --kernel-run K`: the request impact of a kernel change (the
//! logic is in `kernelab_report::impact`).

use crate::cli::{FormatArg, ImpactArgs};
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_model::Document;
use kernelab_report::bundle::read_one;
use kernelab_report::documents::Evidence;
use kernelab_report::impact::{from_ab, from_compare, impact_sections, predict};
use std::path::Path;

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

/// Runs the command.
pub fn run(args: ImpactArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    if args.output.format == FormatArg::Csv {
        bail!("kernelab impact writes table, md or json, not csv");
    }
    let Evidence::Profile(profile) = read_one(&args.profile)?.1 else {
        bail!("{}: expected a `profile` record", args.profile.display());
    };
    let Evidence::KernelRun(run) = read_one(&args.kernel_run)?.1 else {
        bail!(
            "{}: expected a `kernel_run` record",
            args.kernel_run.display()
        );
    };
    let mut impact = predict(&profile, &run, args.family.as_deref())?;
    for m in &args.measured {
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
    let doc = Document::of(&impact);
    let mut inputs = vec![args.profile.clone(), args.kernel_run.clone()];
    inputs.extend(args.measured.iter().cloned());
    session.record(&doc, &inputs, None)?;
    let text = match output::sections_text(&args.output, |_| impact_sections(&impact)) {
        Some(t) => t,
        None => output::json(&doc)?,
    };
    output::write(&args.output, &text)?;
    Ok(ExitStatus::Success)
}
