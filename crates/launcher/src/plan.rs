//! What a spec resolves to without a GPU: both builds' symbol, geometry and parameter list,
//! and the buffers (`kernelab kernel run --dry-run`).

use crate::args::{self, Param};
use crate::error::{Error, Result};
use crate::spec::Spec;
use kernelab_model::kernel_run::{Plan, PlannedBuffer, PlannedBuild};
use std::path::Path;

/// Refuses a build whose parameters (`params`) do not match the sizes `sizes` (bytes, in order)
/// the kernel `symbol` of the code object `code` takes, naming both lists.
pub(crate) fn check_param_sizes(
    code: &Path,
    symbol: &str,
    params: &[Param],
    sizes: &[usize],
) -> Result<()> {
    let ours: Vec<usize> = params
        .iter()
        .map(|p| if let Param::Scalar(b) = p { b.len() } else { 8 })
        .collect();
    if sizes.is_empty() || sizes == ours.as_slice() {
        return Ok(());
    }
    Err(Error::spec_in(
        code,
        format!(
            "kernel `{symbol}` takes {} parameters of sizes {sizes:?} bytes; the spec gives {} of \
             sizes {ours:?}",
            sizes.len(),
            ours.len(),
        ),
    ))
}

/// Reads a build's code object and checks that it holds a kernel named `symbol`, so that a
/// dry run does not call "resolved" a build that cannot load; returns the kernel's parameter
/// sizes when the object records them (a cubin does).
fn check_code(path: &Path, symbol: &str, label: &'static str) -> Result<Option<Vec<usize>>> {
    let options = kernelab_code::LoadOptions {
        disassemble: false,
        max_decompressed: None,
    };
    let kernels: Vec<String> = match kernelab_code::load_file(path, &options) {
        Ok(objects) => {
            let found = objects.iter().flat_map(|o| &o.kernels);
            if let Some(k) = found.clone().find(|k| k.symbol == symbol) {
                let sizes = k.param_sizes.as_ref();
                return Ok(sizes.map(|s| s.iter().map(|&b| b as usize).collect()));
            }
            found.map(|k| k.symbol.clone()).collect()
        }
        // PTX text is not a code object the readers take, but the driver JITs it at load:
        // its `.entry` names are its kernels.
        Err(e) => match kernelab_model::read_regular(path, kernelab_code::MAX_FILE_BYTES)
            .ok()
            .and_then(|b| ptx_entries(&b))
        {
            Some(entries) => entries,
            None => {
                return Err(Error::Code {
                    label,
                    source: Box::new(e),
                })
            }
        },
    };
    let kernels: Vec<&str> = kernels.iter().map(String::as_str).collect();
    if kernels.contains(&symbol) {
        return Ok(None);
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

/// The kernels (`.entry` names) of PTX text, or `None` when `bytes` is not PTX (no
/// `.version` directive).
pub fn ptx_entries(bytes: &[u8]) -> Option<Vec<String>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let lines = || text.lines().map(str::trim_start);
    if !lines().any(|l| l.starts_with(".version")) {
        return None;
    }
    let entries = lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace().skip_while(|w| {
                matches!(*w, ".visible" | ".weak" | ".extern" | ".global" | ".local")
            });
            let rest = words.next()?.strip_prefix(".entry")?;
            // `.entry name(`, `.entry name (`, or the name glued to the directive.
            let name = if rest.is_empty() { words.next()? } else { rest };
            let name: String = name
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect();
    Some(entries)
}

/// Resolves both builds and the buffers of a spec.
pub fn plan(spec: &Spec) -> Result<Plan> {
    let bufs = args::buffer_layout(spec)?;
    let mut builds = Vec::new();
    for (b, label) in [(&spec.baseline, "baseline"), (&spec.candidate, "candidate")] {
        let code = spec.resolve(&b.code);
        // A missing code object is named before its metadata is looked for beside it.
        if let Err(e) = std::fs::metadata(&code) {
            if e.kind() == std::io::ErrorKind::NotFound {
                return Err(Error::Code {
                    label,
                    source: Box::new(kernelab_code::Error::Io {
                        path: code,
                        source: e,
                    }),
                });
            }
        }
        let r = args::resolve(spec, b, label)?;
        if let Some(sizes) = check_code(&code, &r.symbol, label)? {
            check_param_sizes(&code, &r.symbol, &r.params, &sizes)?;
        }
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
