//! What an A/B run of two commands finds: plain result types shared by the runner, the CLI and
//! the renderers.

use kernelab_stats::{AaCheck, Analysis};
use serde::{Deserialize, Serialize};

/// The analysis of one metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricAnalysis {
    /// Metric name.
    pub metric: String,
    /// Its analysis.
    pub analysis: Analysis,
}

/// The outcome of an A/B run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbResult {
    /// The A/A pre-flight, when run.
    pub aa: Option<AaCheck>,
    /// One analysis per metric (the primary first).
    pub analyses: Vec<MetricAnalysis>,
    /// Failed runs (recorded in the samples file).
    pub failures: usize,
    /// Successful runs.
    pub runs: usize,
}
