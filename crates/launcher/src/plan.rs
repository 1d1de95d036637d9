//! What a spec resolves to without a GPU: both builds' symbol, geometry and parameter list,
//! and the buffers (`kernelab kernel run --dry-run`).

use crate::args::{self, Param};
use crate::error::{Error, Result};
use crate::spec::Spec;
use kernelab_model::kernel_run::{Plan, PlannedBuffer, PlannedBuild};
use std::path::Path;

/// Reads a build's code object and checks that it holds a kernel named `symbol`, so that a
/// dry run does not call "resolved" a build that cannot load.
fn check_code(path: &Path, symbol: &str, label: &'static str) -> Result<()> {
    let options = kernelab_code::LoadOptions {
        disassemble: false,
        max_decompressed: None,
    };
    let objects = kernelab_code::load_file(path, &options).map_err(|e| Error::Code {
        label,
        source: Box::new(e),
    })?;
    let kernels: Vec<&str> = objects
        .iter()
        .flat_map(|o| o.kernels.iter().map(|k| k.symbol.as_str()))
        .collect();
    if kernels.contains(&symbol) {
        return Ok(());
    }
    let mut listed: Vec<&str> = kernels.iter().copied().take(5).collect();
    if kernels.len() > 5 {
        listed.push("…");
    }
    Err(Error::spec_in(
        path,
        format!(
            "{label}: no kernel `{symbol}` in this code object (it has {} kernels: {})",
            kernels.len(),
            listed.join(", ")
        ),
    ))
}

/// Resolves both builds and the buffers of a spec.
pub fn plan(spec: &Spec) -> Result<Plan> {
    let bufs = args::buffer_layout(spec)?;
    let mut builds = Vec::new();
    for (b, label) in [(&spec.baseline, "baseline"), (&spec.candidate, "candidate")] {
        let r = args::resolve(spec, b, label)?;
        check_code(&spec.resolve(&b.code), &r.symbol, label)?;
        let params = r
            .params
            .iter()
            .map(|p| match p {
                Param::Buffer(i) => bufs[*i].name.clone(),
                Param::Scalar(v) => format!("{}-byte scalar", v.len()),
                Param::Null => "null".into(),
                Param::Scratch(n) => format!("scratch {n} B"),
            })
            .collect();
        builds.push(PlannedBuild {
            label: label.to_string(),
            symbol: r.symbol,
            grid: r.grid,
            block: r.block,
            shared: r.shared,
            params,
            triton: r.triton.map(|p| p.display().to_string()),
        });
    }
    let buffers = bufs
        .iter()
        .map(|b| PlannedBuffer {
            name: b.name.clone(),
            dtype: format!("{:?}", b.dtype),
            shape: b.shape.clone(),
            bytes: b.bytes(),
        })
        .collect();
    Ok(Plan { builds, buffers })
}
