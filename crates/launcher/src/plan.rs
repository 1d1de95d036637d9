//! What a spec resolves to without a GPU: both builds' symbol, geometry and parameter list,
//! and the buffers (`kernelab kernel run --dry-run`).

use crate::args::{self, Param};
use crate::error::Result;
use crate::spec::Spec;
use kernelab_model::kernel_run::{Plan, PlannedBuffer, PlannedBuild};

/// Resolves both builds and the buffers of a spec.
pub fn plan(spec: &Spec) -> Result<Plan> {
    let bufs = args::buffers(spec)?;
    let mut builds = Vec::new();
    for (b, label) in [(&spec.baseline, "baseline"), (&spec.candidate, "candidate")] {
        let r = args::resolve(spec, b, label)?;
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
