//! The bodies of every command's JSON document (wrapped in [`kernelab_model::Document`]), by
//! name. Each record kind's body lives in its own file under `kinds/`, with its one
//! implementation of [`crate::kinds::RecordKind`]; this module names them for callers.

pub use crate::kinds::ab::AbBody;
pub use crate::kinds::check::finite::FiniteFiles;
pub use crate::kinds::code::show::CodeShowBody;
pub use crate::kinds::compare::CompareBody;
pub use crate::kinds::counters::CountersBody;
pub use crate::kinds::kernel_run::KernelRunBody;
pub use crate::kinds::metrics::MetricsBody;
pub use crate::kinds::profile::ProfileBody;
pub use crate::kinds::serve::ServeBody;
use kernelab_model::kernel_run::Plan;
use kernelab_model::roofline::{Ceilings, Roofline};
use kernelab_model::sweep::SweepMatrix;

/// `kernelab kernel run --dry-run` (`kind: "kernel_dry_run"`).
pub type PlanBody = Plan;

/// `kernelab ceilings` (`kind: "ceilings"`).
pub type CeilingsBody = Ceilings;
/// `kernelab roofline` (`kind: "roofline"`).
pub type RooflineBody = Roofline;
/// `kernelab sweep` and `sweep collect` (`kind: "sweep"`).
pub type SweepBody = SweepMatrix;

pub use crate::kinds::Evidence;
