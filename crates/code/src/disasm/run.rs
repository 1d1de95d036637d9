//! Running the vendor disassemblers when they are installed: `llvm-objdump` from LLVM 22 or 19
//! for AMD code objects (LLVM 19 cannot disassemble gfx950), `cuobjdump -sass` or `nvdisasm`
//! for cubins.

use crate::error::{Error, Result};
use kernelab_model::Location;
use std::path::Path;
use std::process::Command;

/// Text from a disassembler, and which tool and version made it.
#[derive(Clone, Debug)]
pub struct Disassembly {
    /// The text.
    pub text: String,
    /// The tool and its version line.
    pub tool: String,
}

/// The version line of an installed `tool`, read by [`crate::tool_version::parse`] (CUDA's
/// tools print `Cuda compilation tools, release 13.5, V13.5.37`, without the word "version");
/// `None` when the tool is not installed or prints no version.
fn version(tool: &str) -> Option<String> {
    let out = Command::new(tool).arg("--version").output().ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    crate::tool_version::parse(&text).map(|v| v.line)
}

/// LLVM objdumps that know the target, newest first (LLVM 19 lacks gfx950).
fn llvm_objdumps(arch: &str) -> Vec<&'static str> {
    let mut v = vec!["llvm-objdump-22", "llvm-objdump-21", "llvm-objdump-20"];
    if arch != "gfx950" {
        v.push("llvm-objdump-19");
    }
    v
}

/// Disassembles `path` (an HSACO for `arch` = `gfx…`, or a cubin for `arch` = `sm_…`), or
/// returns `Ok(None)` when no suitable tool is installed. A tool that fails (an LLVM that does
/// not know the target) gives way to the next; when every installed one fails, the error says
/// why each did.
pub fn disassemble(path: &Path, arch: &str) -> Result<Option<Disassembly>> {
    let candidates: Vec<(&str, Vec<String>)> = if arch.starts_with("gfx") {
        llvm_objdumps(arch)
            .into_iter()
            .map(|t| (t, vec!["-d".to_string(), format!("--mcpu={arch}")]))
            .collect()
    } else {
        vec![
            ("cuobjdump", vec!["-sass".to_string()]),
            ("nvdisasm", vec![]),
        ]
    };
    let mut failures = Vec::new();
    for (tool, args) in candidates {
        let Some(v) = version(tool) else { continue };
        let out = Command::new(tool)
            .args(&args)
            .arg(path)
            .output()
            .map_err(|e| tool_error(format!("{tool}: {e}")))?;
        if !out.status.success() {
            // The input is a temporary copy: its path means nothing to the reader.
            failures.push(format!(
                "{tool} {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .replace(&path.display().to_string(), "the object")
            ));
            continue;
        }
        return Ok(Some(Disassembly {
            text: String::from_utf8_lossy(&out.stdout).into_owned(),
            tool: format!("{tool} ({v})"),
        }));
    }
    if failures.is_empty() {
        Ok(None)
    } else {
        Err(tool_error(failures.join("; ")))
    }
}

fn tool_error(message: String) -> Error {
    Error::Tool {
        location: Location::default(),
        message,
    }
}
