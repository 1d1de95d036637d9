//! The host calls of CUDA and HIP graphs, by name, as every trace format writes them (Kineto
//! `cuda_runtime`/`cuda_driver` events, Nsight Systems `CUPTI_ACTIVITY_KIND_RUNTIME` rows): a
//! version suffix (`cudaGraphLaunch_v10000`, `cudaLaunchKernel_v7000`) is not part of the name.

/// The name without its API version suffix (`_v10000`).
fn base(name: &str) -> &str {
    match name.rsplit_once("_v") {
        Some((b, v)) if !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) => b,
        _ => name,
    }
}

/// A runtime or driver call that replays a graph.
pub(crate) fn is_graph_launch(name: &str) -> bool {
    matches!(
        base(name),
        "cudaGraphLaunch" | "cuGraphLaunch" | "hipGraphLaunch"
    )
}

/// A runtime or driver call that launches one kernel (inside a stream capture: adds a kernel
/// node to the graph).
pub(crate) fn is_kernel_launch(name: &str) -> bool {
    matches!(
        base(name),
        "cudaLaunchKernel"
            | "cudaLaunchKernelExC"
            | "cudaLaunchCooperativeKernel"
            | "cuLaunchKernel"
            | "cuLaunchKernelEx"
            | "cuLaunchCooperativeKernel"
            | "hipLaunchKernel"
            | "hipExtLaunchKernel"
            | "hipModuleLaunchKernel"
            | "hipExtModuleLaunchKernel"
            | "hipLaunchCooperativeKernel"
            | "hipLaunchKernelExC"
    )
}

/// The start (`Some(true)`) or end (`Some(false)`) of a stream capture.
pub(crate) fn capture_edge(name: &str) -> Option<bool> {
    match base(name) {
        "cudaStreamBeginCapture"
        | "cuStreamBeginCapture"
        | "cudaStreamBeginCaptureToGraph"
        | "hipStreamBeginCapture" => Some(true),
        "cudaStreamEndCapture" | "cuStreamEndCapture" | "hipStreamEndCapture" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_without_their_version_suffix() {
        assert!(is_graph_launch("cudaGraphLaunch_v10000") && is_graph_launch("hipGraphLaunch"));
        assert!(is_kernel_launch("cudaLaunchKernel_v7000") && is_kernel_launch("cuLaunchKernel"));
        assert!(is_kernel_launch("cudaLaunchKernelExC_v11060"));
        assert!(!is_kernel_launch("cudaLaunchHostFunc_v10000"));
        assert_eq!(capture_edge("cudaStreamBeginCapture_v10000"), Some(true));
        assert_eq!(capture_edge("cuStreamEndCapture"), Some(false));
        assert_eq!(capture_edge("cudaStreamIsCapturing_v10000"), None);
        // A suffix that is not a version stays part of the name.
        assert!(!is_graph_launch("cudaGraphLaunch_vx"));
    }
}
