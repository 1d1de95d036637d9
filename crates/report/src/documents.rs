//! The bodies of every command's JSON document (wrapped in [`kernelab_model::Document`]) and
//! their typed reading back from bundle records, so that renderers read fields, never
//! `r["key"]` with defaults: a record missing a field is an error naming the record file.

use crate::profile::InputDoc;
use kernelab_code::{CodeObject, Matrix, ObjectDiff};
use kernelab_model::ab::AbResult;
use kernelab_model::counters::CountersRun;
use kernelab_model::kernel_run::{KernelRun, Plan};
use kernelab_model::roofline::{Ceilings, Roofline};
use kernelab_model::serve::ServeResult;
use kernelab_model::sweep::SweepMatrix;
use kernelab_model::LaunchMetrics;
use kernelab_tensor::{
    BitwiseReport, CloseReport, FileComparison, FileFinite, RepeatReport, SweepReport,
};
use kernelab_trace::{ActivityRow, Comparison, KernelRow, Outlier, PhaseRow, Summary};
use serde::{Deserialize, Serialize};

/// `kernelab profile` (`kind: "profile"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProfileBody {
    /// `family` or `none`.
    pub grouping: String,
    /// The inputs.
    pub inputs: Vec<InputDoc>,
    /// Whole-trace figures.
    pub summary: Summary,
    /// Ranked rows.
    pub kernels: Vec<KernelRow>,
    /// The rest, as one row.
    pub other: Option<KernelRow>,
    /// Extreme slow calls.
    pub outliers: Vec<Outlier>,
    /// Per-phase attribution.
    pub phases: Option<Vec<PhaseRow>>,
    /// Notes about the figures.
    pub notes: Vec<String>,
    /// Host API calls, copies, queue packets and domains (not kernel GPU time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub activities: Vec<ActivityRow>,
}

/// `kernelab compare` (`kind: "compare"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompareBody {
    /// Baseline inputs.
    pub base_inputs: Vec<InputDoc>,
    /// Candidate inputs.
    pub cand_inputs: Vec<InputDoc>,
    /// The comparison.
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// `kernelab metrics` (`kind: "metrics"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetricsBody {
    /// The launches with every metric, in base units.
    pub launches: Vec<LaunchMetrics>,
}

/// `kernelab code show` (`kind: "code_show"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CodeShowBody {
    /// Every code object read.
    pub objects: Vec<CodeObject>,
}

/// The result of `kernelab check finite`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FiniteFiles {
    /// Whether every tensor of every file is all finite.
    pub pass: bool,
    /// One entry per file.
    pub files: Vec<FileFinite>,
}

/// `kernelab ab` and `ab analyze` (`kind: "ab"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AbBody {
    /// The samples file, when there is one.
    pub samples: Option<String>,
    /// Per-pair log ratios of the primary metric (the pairs used), for plots.
    pub log_ratios: Vec<f64>,
    /// Per-pair log ratios of the A/A pre-flight.
    pub aa_log_ratios: Vec<f64>,
    /// The analyses.
    #[serde(flatten)]
    pub result: AbResult,
}

/// `kernelab kernel run` (`kind: "kernel_run"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelRunBody {
    /// Whether every gate passed.
    pub pass: bool,
    /// The JSONL file with every timed sample.
    pub samples: String,
    /// What the run found.
    #[serde(flatten)]
    pub run: KernelRun,
}

/// `kernelab serve` (`kind: "serve"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServeBody {
    /// The samples file.
    pub samples: String,
    /// SHA-256 of the spec file.
    pub spec_sha256: String,
    /// Whether the output-identity gate passed and no request failed.
    pub pass: bool,
    /// What the run found.
    #[serde(flatten)]
    pub result: ServeResult,
}

/// `kernelab counters` (`kind: "counters"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CountersBody {
    /// The folder that keeps every profiler process's output and stderr.
    pub work_dir: String,
    /// What the run found.
    #[serde(flatten)]
    pub run: CountersRun,
}

/// `kernelab kernel run --dry-run` (`kind: "kernel_dry_run"`).
pub type PlanBody = Plan;

/// `kernelab ceilings` (`kind: "ceilings"`).
pub type CeilingsBody = Ceilings;
/// `kernelab roofline` (`kind: "roofline"`).
pub type RooflineBody = Roofline;
/// `kernelab sweep` and `sweep collect` (`kind: "sweep"`).
pub type SweepBody = SweepMatrix;

/// A bundle record's result, read into the type its kind names.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Evidence {
    /// `profile`.
    Profile(ProfileBody),
    /// `compare`.
    Compare(CompareBody),
    /// `metrics`.
    Metrics(MetricsBody),
    /// `code_show`.
    CodeShow(CodeShowBody),
    /// `code_diff`.
    CodeDiff(ObjectDiff),
    /// `code_matrix`.
    CodeMatrix(Matrix),
    /// `check_bitwise`.
    CheckBitwise(FileComparison<BitwiseReport>),
    /// `check_close` or `check_oracle` (the flag is true for the oracle gate).
    CheckClose(FileComparison<CloseReport>, bool),
    /// `check_finite`.
    CheckFinite(FiniteFiles),
    /// `check_repeat`.
    CheckRepeat(RepeatReport),
    /// `check_sweep`.
    CheckSweep(SweepReport),
    /// `ab`.
    Ab(AbBody),
    /// `kernel_run`.
    KernelRun(KernelRunBody),
    /// `serve`.
    Serve(ServeBody),
    /// `ceilings`.
    Ceilings(CeilingsBody),
    /// `roofline`.
    Roofline(RooflineBody),
    /// `counters`.
    Counters(CountersBody),
    /// `sweep`.
    Sweep(SweepBody),
}

impl Evidence {
    /// Reads `result` as the body of a `kind` document; `None` for a kind this kernelab does not
    /// know.
    pub fn read(kind: &str, result: &serde_json::Value) -> Option<serde_json::Result<Evidence>> {
        fn typed<T: serde::de::DeserializeOwned>(v: &serde_json::Value) -> serde_json::Result<T> {
            T::deserialize(v)
        }
        Some(match kind {
            "profile" => typed(result).map(Evidence::Profile),
            "compare" => typed(result).map(Evidence::Compare),
            "metrics" => typed(result).map(Evidence::Metrics),
            "code_show" => typed(result).map(Evidence::CodeShow),
            "code_diff" => typed(result).map(Evidence::CodeDiff),
            "code_matrix" => typed(result).map(Evidence::CodeMatrix),
            "check_bitwise" => typed(result).map(Evidence::CheckBitwise),
            "check_close" => typed(result).map(|b| Evidence::CheckClose(b, false)),
            "check_oracle" => typed(result).map(|b| Evidence::CheckClose(b, true)),
            "check_finite" => typed(result).map(Evidence::CheckFinite),
            "check_repeat" => typed(result).map(Evidence::CheckRepeat),
            "check_sweep" => typed(result).map(Evidence::CheckSweep),
            "ab" => typed(result).map(Evidence::Ab),
            "kernel_run" => typed(result).map(Evidence::KernelRun),
            "serve" => typed(result).map(Evidence::Serve),
            "ceilings" => typed(result).map(Evidence::Ceilings),
            "roofline" => typed(result).map(Evidence::Roofline),
            "counters" => typed(result).map(Evidence::Counters),
            "sweep" => typed(result).map(Evidence::Sweep),
            _ => return None,
        })
    }

    /// Whether the record is a gate, and if so whether it passed.
    pub fn pass(&self) -> Option<bool> {
        match self {
            Evidence::CheckBitwise(b) => Some(b.pass),
            Evidence::CheckClose(b, _) => Some(b.pass),
            Evidence::CheckFinite(b) => Some(b.pass),
            Evidence::CheckRepeat(b) => Some(b.pass),
            Evidence::CheckSweep(b) => Some(b.pass),
            Evidence::KernelRun(k) => Some(k.pass),
            Evidence::Serve(s) => Some(s.pass),
            Evidence::Sweep(s) => Some(s.pass),
            _ => None,
        }
    }
}
