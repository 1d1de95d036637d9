//! What a spec resolves to without a GPU: both builds' symbol, geometry and parameter list,
//! and the buffers (`kernelab kernel run --dry-run`).

use super::args::{self, Param};
use super::spec::Spec;
use serde::Serialize;

/// One build as it would launch.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedBuild {
    /// `baseline` or `candidate`.
    pub label: &'static str,
    /// Kernel symbol.
    pub symbol: String,
    /// Grid.
    pub grid: [u32; 3],
    /// Block.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u32,
    /// Parameters in order: buffer names, `N-byte scalar`, `null`, `scratch N B`.
    pub params: Vec<String>,
    /// Triton metadata used.
    pub triton: Option<String>,
}

/// One buffer.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedBuffer {
    /// Argument name.
    pub name: String,
    /// Element type.
    pub dtype: String,
    /// Shape.
    pub shape: Vec<usize>,
    /// Size in bytes.
    pub bytes: usize,
}

/// A resolved spec.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Baseline and candidate.
    pub builds: Vec<PlannedBuild>,
    /// Buffers in argument order.
    pub buffers: Vec<PlannedBuffer>,
}

/// Resolves both builds and the buffers of a spec.
pub fn plan(spec: &Spec) -> Result<Plan, String> {
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
            label,
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
