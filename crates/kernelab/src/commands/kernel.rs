//! `kernelab kernel run`.

use crate::cli::{FormatArg, KernelCommand, KernelRunArgs};
use crate::output;
use crate::ExitStatus;
use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kernelab_bench::kernel::{self, args, Spec};
use kernelab_report::{kernel_sections, Align, Section, Table};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Runs a `kernel` subcommand.
pub fn run(cmd: KernelCommand) -> Result<ExitStatus> {
    match cmd {
        KernelCommand::Run(a) => run_spec(a),
    }
}

#[derive(Serialize)]
struct Doc<'a, T: Serialize> {
    schema_version: u32,
    kind: &'static str,
    pass: bool,
    samples: Option<String>,
    #[serde(flatten)]
    body: &'a T,
}

fn dry_run(a: &KernelRunArgs, spec: &Spec) -> Result<ExitStatus> {
    let bufs = args::buffers(spec).map_err(|e| anyhow!("{}: {e}", a.spec.display()))?;
    let mut t = Table::new(
        format!("{}: both builds resolved (no GPU opened)", a.spec.display()),
        &[
            ("build", Align::Left),
            ("symbol", Align::Left),
            ("grid", Align::Left),
            ("block", Align::Left),
            ("dyn shared B", Align::Right),
            ("params", Align::Left),
        ],
    );
    let mut builds = Vec::new();
    for (b, label) in [(&spec.baseline, "baseline"), (&spec.candidate, "candidate")] {
        let r = args::resolve(spec, b, label).map_err(|e| anyhow!("{}: {e}", a.spec.display()))?;
        let params: Vec<String> = r
            .params
            .iter()
            .map(|p| match p {
                args::Param::Buffer(i) => bufs[*i].name.clone(),
                args::Param::Scalar(v) => format!("{}-byte scalar", v.len()),
                args::Param::Null => "null".into(),
                args::Param::Scratch(n) => format!("scratch {n} B"),
            })
            .collect();
        t.push(vec![
            label.into(),
            r.symbol.clone(),
            format!("{:?}", r.grid),
            format!("{:?}", r.block),
            r.shared.to_string(),
            params.join(", "),
        ]);
        builds.push(serde_json::json!({
            "label": label, "symbol": r.symbol, "grid": r.grid, "block": r.block,
            "shared": r.shared, "params": params,
            "triton": r.triton.map(|p| p.display().to_string()),
        }));
    }
    let doc = serde_json::json!({"schema_version": 1, "kind": "kernel_dry_run", "builds": builds,
        "buffers": bufs.iter().map(|b| serde_json::json!({"name": b.name, "dtype": format!("{:?}", b.dtype), "shape": b.shape, "bytes": b.bytes()})).collect::<Vec<_>>()});
    let text = match output::sections_text(&a.output, |_| vec![Section::Table(t.clone())]) {
        Some(t) => t,
        None if a.output.format == FormatArg::Json => serde_json::to_string_pretty(&doc)? + "\n",
        None => bail!("--format csv is not offered for kernel run; use json"),
    };
    output::write(&a.output, &text)?;
    Ok(ExitStatus::Success)
}

fn run_spec(a: KernelRunArgs) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if a.output.format == FormatArg::Csv {
        bail!("--format csv is not offered for kernel run; use json (every sample is in the --samples JSONL)");
    }
    let mut spec = Spec::read(&a.spec)?;
    if let Some(r) = a.rounds {
        spec.timing.rounds = r.max(2);
    }
    if a.dry_run {
        return dry_run(&a, &spec);
    }
    let samples_path = a.samples.clone().unwrap_or_else(|| {
        a.output
            .out
            .as_ref()
            .and_then(|o| o.parent())
            .map(|d| d.join("kernel-samples.jsonl"))
            .unwrap_or_else(|| PathBuf::from("kernel-samples.jsonl"))
    });
    let mut gpu = kernel::open(&spec).map_err(|e| anyhow!("{e}"))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&samples_path)
        .with_context(|| format!("{}: cannot open the samples file", samples_path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    let bar = ProgressBar::with_draw_target(
        Some(spec.timing.rounds as u64),
        ProgressDrawTarget::hidden(),
    );
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    if let Ok(style) = ProgressStyle::with_template("timing {bar:30} round {pos}/{len} eta {eta}") {
        bar.set_style(style);
    }
    let spec_name = a.spec.display().to_string();
    let result = kernel::run(
        gpu.as_mut(),
        &spec,
        &mut |s| {
            let line = serde_json::json!({"spec": spec_name, "sample": s});
            writeln!(w, "{line}").map_err(|e| format!("{}: {e}", samples_path.display()))
        },
        &mut |done, _| bar.set_position(done as u64),
    );
    bar.finish_and_clear();
    w.flush()
        .with_context(|| samples_path.display().to_string())?;
    let r = result.map_err(|e| anyhow!("{e}"))?;
    let pass = r.gates_passed();
    let doc = Doc {
        schema_version: 1,
        kind: "kernel_run",
        pass,
        samples: Some(samples_path.display().to_string()),
        body: &r,
    };
    // The record hashes everything the result depends on: the spec and the files it names.
    let mut inputs = vec![
        a.spec.clone(),
        spec.resolve(&spec.baseline.code),
        spec.resolve(&spec.candidate.code),
    ];
    inputs.extend(spec.gates.oracle.as_ref().map(|o| spec.resolve(o)));
    crate::record::record("kernel_run", &doc, &inputs, None)?;
    let text = match output::sections_text(&a.output, |_| kernel_sections(&r)) {
        Some(t) => t,
        None => serde_json::to_string_pretty(&doc).context("serializing JSON")? + "\n",
    };
    output::write(&a.output, &text)?;
    Ok(if pass {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
