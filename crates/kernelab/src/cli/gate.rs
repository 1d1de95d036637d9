//! The arguments of `kernelab gate`.

use super::{text_formats, OutputArgs};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `kernelab gate`.
#[derive(Args, Debug)]
#[command(mut_arg("format", text_formats))]
pub(crate) struct GateArgs {
    /// The gate's configuration (TOML: [build], [bench], [metrics]; docs/gate.md). Default:
    /// .kernelab/gate.toml at the top of the checkout.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A folder of the repository's checkout.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// The base revision (the baseline). Default: the merge base of the head and the default
    /// branch ($GITHUB_BASE_REF or $CI_MERGE_REQUEST_TARGET_BRANCH_NAME when set, else
    /// origin/HEAD, main or master).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The head revision (the candidate).
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub head: String,
    /// Append the Markdown summary to FILE (default: $GITHUB_STEP_SUMMARY when set).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Write one pull-request comment body to FILE; its first line is the hidden marker
    /// `<!-- kernelab-gate -->`, by which a job finds and updates its earlier comment.
    #[arg(long, value_name = "FILE")]
    pub comment: Option<PathBuf>,
    /// Write the workflow commands (the verdicts', and those on the kernel source lines the
    /// head changed, `[annotate] paths`) to FILE, one a line, whether or not this runs on
    /// GitHub Actions.
    #[arg(long, value_name = "FILE")]
    pub annotations: Option<PathBuf>,
    /// A ledger of identical-code runs (`kernel run --controls`) for a `[kernel]`, `[python]`
    /// or `[sweep]` benchmark: its noise floor is read from it, and an identical-code run (or
    /// timed config) is added to it.
    #[arg(long, value_name = "FILE")]
    pub controls: Option<PathBuf>,
    /// Where and how to write the result (table, md or json).
    #[command(flatten)]
    pub output: OutputArgs,
}
