//! Command-line types (clap derive only; no logic).

pub(crate) mod counters;
pub(crate) mod gate;
mod output;
pub(crate) mod roofline;
pub(crate) mod sweep;
pub(crate) mod tools;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub(crate) use output::{text_formats, FormatArg, OutputArgs};

/// A `--label`: at most [`kernelab_report::bundle::MAX_LABEL_BYTES`] bytes (a longer one would
/// make the record unreadable).
fn label(s: &str) -> Result<String, String> {
    let max = kernelab_report::bundle::MAX_LABEL_BYTES;
    if s.len() > max {
        return Err(format!("{} bytes; a label may have at most {max}", s.len()));
    }
    Ok(s.to_string())
}

/// Evidence for GPU kernel changes: where the time goes, whether the change is correct, what
/// changed in the machine code, and whether it is faster.
#[derive(Parser, Debug)]
#[command(name = "kernelab", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// Append this command's result, with its provenance, to the evidence bundle DIR
    /// (default: $KERNELAB_BUNDLE when set).
    #[arg(long, global = true, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Name the recorded result's change or experiment; the report groups records by label
    /// (default: the spec's or the first input's file name up to its first dot).
    #[arg(long, global = true, value_name = "NAME", value_parser = label)]
    pub label: Option<String>,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// `profile --help`'s description: the formats it reads, from the readers' registry.
fn profile_about() -> String {
    format!(
        "Rank a request's GPU time per kernel or kernel family from profiler files.\n\nReads {}. \
         The format is detected from the content. Several files are read into one profile.",
        kernelab_trace::formats_read()
    )
}

/// The commands.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Rank a request's GPU time per kernel or kernel family from profiler files.
    #[command(long_about = profile_about())]
    Profile(ProfileArgs),
    /// Show per-launch hardware metrics from Nsight Compute CSV (details or raw page), in base
    /// units (ns, byte, hz, byte/second).
    Metrics(MetricsArgs),
    /// Compare a baseline with a candidate: per-family time deltas, whole-trace figures side by
    /// side, and whether each change is beyond the run-to-run noise.
    Compare(CompareArgs),
    /// Static evidence from code objects: resources, instruction classes, diffs between builds.
    #[command(subcommand)]
    Code(CodeCommand),
    /// Correctness gates on output tensors (.npy, .npz, safetensors, raw). Exit status 0 when
    /// every gate passes, 1 when one fails, 2 on bad input.
    #[command(subcommand)]
    Check(CheckCommand),
    /// Paired A/B timing: fresh processes in ABBA pairs, an A/A pre-flight, Hodges-Lehmann
    /// with an exact Wilcoxon interval, and a verdict (FASTER / SLOWER / SAME / INCONCLUSIVE)
    /// with its resolution. Every sample is appended to a JSONL file as it is measured.
    Ab(Box<AbArgs>),
    /// The pull-request gate: base and head revisions each checked out in a temporary work
    /// tree, built, and measured against each other in this one job (`ab`'s ABBA pairs, A/A
    /// pre-flight and planned looks), as .kernelab/gate.toml says. Writes the step summary, a
    /// PR comment body and GitHub annotations. Exit status 0 no regression beyond the
    /// threshold, 1 a regression, 2 bad input or infrastructure (config, git, build), 3
    /// inconclusive at the budget.
    Gate(Box<gate::GateArgs>),
    /// Request-level A/B of two inference servers (serve spec, TOML: docs/serve-spec.md):
    /// each server started fresh per round in ABBA order, TTFT, TPOT, ITL, E2E and throughput
    /// per case and concurrency paired by round, and an output-identity gate. Exit status 0
    /// when every output is identical and no request failed, 1 when the gate fails, 2 on error.
    Serve(ServeArgs),
    /// Launch two builds of one GPU kernel from their code objects (CUDA cubin/fatbin, HIP
    /// code object): poisoned outputs, bitwise/repeat/graph/oracle/finite gates, then ABBA
    /// timing with CUDA events and a verdict. Exit status 0 when every gate passes.
    #[command(subcommand)]
    Kernel(KernelCommand),
    /// Render an evidence bundle (made with --record DIR) as a PR-ready Markdown body, a
    /// self-contained HTML page with plots, or a JSON summary.
    Report(ReportArgs),
    /// Predict what a kernel's measured change does to a request: from a profile of the
    /// request (the family's share) and a `kernel run` record of the kernel, the change of
    /// request kernel time with its interval and the bounds on busy and wall time; measured
    /// request changes (`compare`, `ab`) are checked against the prediction.
    Impact(ImpactArgs),
    /// List the experiment runs kept in $XDG_STATE_HOME/kernelab/runs/ (ab, serve, kernel
    /// run, counters): id, kind, label, start, pairs or rounds, and state; `--resume ID`
    /// continues an incomplete one.
    Runs(tools::RunsArgs),
    /// Print a shell completion script, generated from this CLI's definition.
    Completions(tools::CompletionsArgs),
    /// Print the man page (roff) of kernelab or one of its commands, generated from this CLI's
    /// definition (`kernelab man | man -l -`).
    Man(tools::ManArgs),
    /// Add documents written earlier (a `--format json` document of any evidence command, e.g.
    /// a `kernel run` from a GPU machine, or a record of another bundle) to the bundle named by
    /// --record DIR (or KERNELAB_BUNDLE), with their provenance; --label names the change.
    Record(RecordArgs),
    /// Measure the local GPU's ceilings (DRAM copy and read bandwidth, L2 bandwidth, FP32 FMA,
    /// BF16/FP16/FP8 matrix peaks through cuBLASLt, launch overhead) beside its datasheet
    /// figures; `--datasheet NAME` gives the table's figures without a GPU.
    Ceilings(roofline::CeilingsArgs),
    /// Place each kernel family of a profile under the device's roofs: time per family from
    /// the profiler files, FLOPs and DRAM bytes of one launch from a work model (TOML rules),
    /// achieved TFLOP/s and GB/s, arithmetic intensity, fraction of the roof and the bounding
    /// roof against measured (else datasheet) ceilings; `--ncu FILE` shows measured DRAM bytes.
    Roofline(Box<roofline::RooflineArgs>),
    /// Hardware counters per kernel from Nsight Compute (ncu) or rocprofv3: one metric group
    /// per fresh profiler process, each repeated; median and range per kernel and metric,
    /// baseline versus candidate with change = (candidate − baseline) / baseline, flagged only
    /// beyond the repeat spread; derived DRAM bandwidth, L2 hit rate and occupancy. Profiler
    /// failures are recorded per process and the run goes on. Exit status 1 when no process
    /// gave counters.
    Counters(Box<counters::CountersArgs>),
    /// Check a kernel change over a grid of configurations (sizes, scalar values, builds):
    /// each point runs the gates (and timing) of `kernel run`, or tensor gates over files, on
    /// local GPUs (one worker each) or a Slurm job array; the result is the matrix ("72 of 72
    /// configs bitwise equal"). Points already done are skipped on a rerun.
    Sweep(Box<sweep::SweepArgs>),
    /// Write profiles' dispatch tables, samples of ab / kernel run / serve runs and sweep
    /// matrices as Parquet files (schemas in docs/parquet.md), for DuckDB or Spark.
    Export(tools::ExportArgs),
    /// Serve the evidence commands to a coding agent over the Model Context Protocol (stdio):
    /// one tool per command, each result the command's JSON document; paths confined to
    /// --root, programs and the GPU only with --allow-run (docs/mcp.md).
    Mcp(tools::McpArgs),
}

/// Arguments of `kernelab record`.
#[derive(Args, Debug)]
pub(crate) struct RecordArgs {
    /// The documents or records to add (read and checked as their kind names them).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Arguments of `kernelab impact`.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct ImpactArgs {
    /// The request's profile: a bundle record or `kernelab profile --format json` output.
    #[arg(long, value_name = "FILE")]
    pub profile: PathBuf,
    /// The kernel's timing: a bundle record or `kernelab kernel run --format json` output.
    #[arg(long = "kernel-run", value_name = "FILE")]
    pub kernel_run: PathBuf,
    /// The profile row to use (default: the kernel run's symbol, matched by family or name).
    #[arg(long, value_name = "NAME")]
    pub family: Option<String>,
    /// Measurements of the request to check against the prediction: `compare` or `ab` records
    /// or documents.
    #[arg(long, value_name = "FILE")]
    pub measured: Vec<PathBuf>,
    /// Where and how to write the result (table, md or json).
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormat {
    /// Markdown, to paste into a pull request.
    Md,
    /// A self-contained HTML page with SVG plots.
    Html,
    /// A JSON summary: one headline per record.
    Json,
}

/// Arguments of `kernelab report`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct ReportArgs {
    /// `check`: audit a note against the bundle instead of rendering it.
    #[command(subcommand)]
    pub command: Option<ReportCommand>,
    /// The bundle directory (`./check` for a bundle named `check`).
    #[arg(required = true)]
    pub dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Md)]
    pub format: ReportFormat,
    /// Title of the report.
    #[arg(long, default_value = "kernelab evidence")]
    pub title: String,
    /// Write to FILE instead of standard output (refuses to replace an existing file).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Replace FILE given to --out (and the appendix) if it exists.
    #[arg(long)]
    pub force: bool,
    /// Where the Markdown goes that does not fit GitHub's 65,536-character pull-request body
    /// (default: beside --out as NAME.appendix.md; with the body on standard output a report
    /// that needs an appendix is refused unless this names one).
    #[arg(long, value_name = "FILE")]
    pub appendix: Option<PathBuf>,
    /// The author's motivation and modifications (Markdown), placed above the evidence.
    #[arg(long, value_name = "FILE")]
    pub intro: Option<PathBuf>,
    /// Exit 2 when a record of the bundle cannot be read (by default it is listed with its file
    /// and reason and the rest renders).
    #[arg(long)]
    pub strict: bool,
}

/// Subcommands of `kernelab report`.
#[derive(Subcommand, Debug)]
pub(crate) enum ReportCommand {
    /// Audit a note after a person edited it: every number on a line that names a bundle label
    /// (or under a heading that does) must match the bundle within its printed rounding, and
    /// derived figures (changes, ratios, share sums) must agree with their inputs. Exit status
    /// 0 when the note is clean, 1 on any mismatch, 2 on bad input.
    Check(ReportCheckArgs),
    /// Re-measure a bundle: each record's command runs again here, its new result held
    /// against the recorded one (reproduced, moved, or not re-runnable here, with why), and
    /// what differs in the environment named. Exit status 0 when nothing moved, 1 when a
    /// record moved, 2 on bad input.
    Verify(ReportVerifyArgs),
}

/// Arguments of `kernelab report verify`.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct ReportVerifyArgs {
    /// The bundle directory to re-measure.
    pub bundle: PathBuf,
    /// Where and how to write the verification (table, md or json).
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `kernelab report check`.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct ReportCheckArgs {
    /// The note (Markdown or plain text, UTF-8).
    pub note: PathBuf,
    /// The bundle directory the note quotes.
    #[arg(long, value_name = "DIR")]
    pub bundle: PathBuf,
    /// Fail (exit 1) on a figure the bundle does not back, too, not only on one it
    /// contradicts.
    #[arg(long)]
    pub strict: bool,
    /// Where and how to write the mismatches (table, md or json).
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The statistical design (shared by `ab` and `ab analyze`).
#[derive(Args, Debug, Clone)]
pub(crate) struct DesignArgs {
    /// Practical threshold δ: smaller changes are negligible (e.g. 0.5% or 0.005).
    #[arg(long, default_value = "0.5%", value_name = "PCT")]
    pub threshold: String,
    /// Target resolution (95% half-width) of the default sequential rule (`ab` runs; `ab
    /// analyze` uses every pair with a fixed design unless the samples file records a
    /// sequential plan).
    #[arg(long, default_value = "0.5%", value_name = "PCT")]
    pub resolution: String,
    /// Stop on width only, when the half-width is at most ±R (no early stop on significance).
    #[arg(long, value_name = "PCT", conflicts_with_all = ["watch", "fixed"])]
    pub until: Option<String>,
    /// Anytime-valid confidence sequence, checked after every pair.
    #[arg(long, conflicts_with = "fixed")]
    pub watch: bool,
    /// Use every pair, one interval (no sequential stopping).
    #[arg(long)]
    pub fixed: bool,
    /// Error rate α.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// First planned look.
    #[arg(long, default_value_t = 8)]
    pub min_pairs: usize,
    /// Last planned look (maximum pairs).
    #[arg(long, default_value_t = 256)]
    pub max_pairs: usize,
    /// Metrics where higher is better (throughputs); by name.
    #[arg(long = "higher-is-better", value_name = "NAME")]
    pub higher_is_better: Vec<String>,
}

/// Arguments of `kernelab ab`.
#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    mut_arg("format", text_formats)
)]
pub(crate) struct AbArgs {
    /// `analyze FILE`: the same analysis on recorded samples.
    #[command(subcommand)]
    pub analyze: Option<AbCommand>,
    /// Baseline command (split like a shell would; run without a shell unless --shell).
    #[arg(long, value_name = "CMD")]
    pub baseline: Option<String>,
    /// Candidate command.
    #[arg(long, value_name = "CMD")]
    pub candidate: Option<String>,
    /// Run the commands through `sh -c`.
    #[arg(long)]
    pub shell: bool,
    /// Warm-up runs of each command (not recorded).
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Per-run timeout in seconds; a run past it is killed with its whole process group and
    /// recorded as failed. Default: 20 × the slowest warm-up run, at least 60 s (none without
    /// warm-ups).
    #[arg(long, value_name = "SECONDS", value_parser = positive_seconds)]
    pub timeout: Option<f64>,
    /// A metric printed by the command: NAME=REGEX (first capture group, last match).
    #[arg(long = "metric-regex", value_name = "NAME=REGEX")]
    pub metric_regex: Vec<String>,
    /// A metric from the last JSON object line the command prints (dots descend).
    #[arg(long = "metric-json", value_name = "KEY")]
    pub metric_json: Vec<String>,
    /// A/A pre-flight pairs (the baseline in both slots).
    #[arg(long, default_value_t = 16)]
    pub aa_pairs: usize,
    /// Skip the A/A pre-flight.
    #[arg(long)]
    pub no_aa: bool,
    /// Accept the verdict even when the A/A pre-flight shows a harness bias.
    #[arg(long)]
    pub accept_bias: bool,
    /// Stop after this many failed runs.
    #[arg(long, default_value_t = 5)]
    pub max_failures: usize,
    /// Samples file (JSONL), created (never overwritten); default `samples.jsonl` in the run's
    /// folder under $XDG_STATE_HOME/kernelab/runs/ (`kernelab runs` lists them).
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// Continue an interrupted run: its id (`kernelab runs`), folder or samples file.
    #[arg(long, value_name = "ID|FILE", conflicts_with = "samples")]
    pub resume: Option<PathBuf>,
    /// The design.
    #[command(flatten)]
    pub design: DesignArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `kernelab serve`.
#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// The serve spec (TOML).
    #[arg(value_name = "SPEC", required_unless_present = "resume")]
    pub spec: Option<PathBuf>,
    /// Samples file (JSONL), created (never overwritten); default `samples.jsonl` in the run's
    /// folder under $XDG_STATE_HOME/kernelab/runs/, which also holds the servers' logs.
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// Continue an interrupted run: its id (`kernelab runs`), folder or samples file (the
    /// spec is read from it).
    #[arg(long, value_name = "ID|FILE", conflicts_with = "samples")]
    pub resume: Option<PathBuf>,
    /// Analyse the samples file only; start no server.
    #[arg(long, requires = "resume")]
    pub analyze: bool,
    /// Start no new round after this much wall time (`90s`, `45m`, `2h`, `1h30m`); the planned
    /// looks record the stop.
    #[arg(long, value_name = "DURATION", value_parser = kernelab_runner::serve::rounds::parse_budget)]
    pub budget: Option<std::time::Duration>,
    /// The samples file of an A/A control run with the same workload: its output identity is
    /// shown beside this run's (a server that is not deterministic across starts differs from
    /// itself)
    #[arg(long, value_name = "FILE")]
    pub aa_samples: Option<PathBuf>,
    /// Run the A/A control first (the baseline against itself, same workload, rounds and
    /// placement) as its own run, then the A/B; the A/A's identity and calls are shown beside
    /// the A/B's
    #[arg(long, conflicts_with_all = ["aa_samples", "resume"])]
    pub with_aa: bool,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `kernelab ab` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum AbCommand {
    /// Analyse recorded samples: a kernelab JSONL samples file, or paired samples from another
    /// harness (CSV with columns a,b[,order][,aa], or JSON {"pairs": [{"a","b","order"}], "aa": [...]}).
    Analyze(AbAnalyzeArgs),
}

/// Arguments of `kernelab ab analyze`.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct AbAnalyzeArgs {
    /// The samples file.
    pub file: PathBuf,
    /// Metric to analyse (default: the first).
    #[arg(long)]
    pub metric: Option<String>,
    /// The design.
    #[command(flatten)]
    pub design: DesignArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// How to read tensor files.
#[derive(Args, Debug, Clone)]
pub(crate) struct TensorArgs {
    /// Element type of raw files, or the type that uint16 / 2-byte void npy data holds (bf16).
    #[arg(long, value_name = "DTYPE")]
    pub dtype: Option<String>,
    /// Shape of raw files, e.g. 1,128,32,128.
    #[arg(long, value_name = "DIMS", value_delimiter = ',')]
    pub shape: Option<Vec<usize>>,
    /// Most bytes the compressed members of one file may inflate to (default 4 GiB).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_decompressed: Option<u64>,
}

/// `kernelab check` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum CheckCommand {
    /// Byte-exact equality of every tensor.
    Bitwise(CheckPairArgs),
    /// Closeness under rtol/atol (defaults per dtype, as torch.testing) or a ULP limit.
    Close(CheckCloseArgs),
    /// Error of a low-precision output against a higher-precision reference (f32/f64).
    Oracle(CheckCloseArgs),
    /// NaN and Inf counts per tensor.
    Finite(CheckFilesArgs),
    /// Repeated runs bit-identical (content hashes).
    Repeat(CheckFilesArgs),
    /// Every gate over the configs of a TOML manifest.
    Sweep(CheckSweepArgs),
}

/// Two files.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct CheckPairArgs {
    /// First file (baseline).
    pub a: PathBuf,
    /// Second file (candidate).
    pub b: PathBuf,
    /// Treat +0 and -0 as equal.
    #[arg(long)]
    pub zero_equal: bool,
    /// Treat NaNs with different payloads as equal.
    #[arg(long)]
    pub nan_equal: bool,
    /// How many differing elements to list.
    #[arg(long, default_value_t = 10)]
    pub first: usize,
    /// Reading options.
    #[command(flatten)]
    pub read: TensorArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Two files compared under a tolerance (B is the reference).
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct CheckCloseArgs {
    /// The output.
    pub a: PathBuf,
    /// The reference.
    pub b: PathBuf,
    /// Relative tolerance (default per dtype of A).
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Absolute tolerance (default per dtype of A).
    #[arg(long)]
    pub atol: Option<f64>,
    /// Allow at most N units in the last place instead (same dtype only).
    #[arg(long, value_name = "N", conflicts_with_all = ["rtol", "atol"])]
    pub ulp: Option<u64>,
    /// NaN equals NaN.
    #[arg(long)]
    pub nan_equal: bool,
    /// Reading options.
    #[command(flatten)]
    pub read: TensorArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// One or more files.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct CheckFilesArgs {
    /// Files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Reading options.
    #[command(flatten)]
    pub read: TensorArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// A sweep manifest.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct CheckSweepArgs {
    /// TOML manifest: [[config]] name, baseline, candidate, repeats = [...], oracle; optional
    /// [tolerance] rtol/atol and dtype. Paths are relative to the manifest.
    pub manifest: PathBuf,
    /// Most bytes the compressed members of one file may inflate to (default 4 GiB).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_decompressed: Option<u64>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `kernelab kernel` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum KernelCommand {
    /// Run a launch spec (TOML; see docs/kernel-spec.md).
    Run(KernelRunArgs),
    /// Launch one build of a spec once and wait (what `kernelab counters` runs under a
    /// profiler).
    #[command(hide = true)]
    LaunchOnce(counters::LaunchOnceArgs),
}

/// Arguments of `kernelab kernel run`.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct KernelRunArgs {
    /// The launch spec.
    pub spec: PathBuf,
    /// Samples file (JSONL) for every timed sample, created (never overwritten); default
    /// `samples.jsonl` in the run's folder under $XDG_STATE_HOME/kernelab/runs/.
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// Override timing.rounds.
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Check the spec and resolve both builds without opening a GPU.
    #[arg(long)]
    pub dry_run: bool,
    /// Longest wait for the GPU, in seconds (one synchronisation: a kernel, a batch of timed
    /// launches); past it the run stops with exit 2 naming the build and the phase. The default
    /// is far above any kernel's time, but bounds a kernel that never returns.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = positive_seconds)]
    pub timeout: f64,
    /// Ceilings to check the achieved rates against (a `kernelab ceilings --format json`
    /// document or record); without it, the datasheet entry of the device, when there is one.
    #[arg(long, value_name = "FILE")]
    pub ceilings: Option<PathBuf>,
    /// A ledger of identical-code runs (JSON lines, made when missing): a run whose builds
    /// carry identical machine code is added as an A/A control of its kernel, sizes and GPU;
    /// with 5 or more of them, their largest change is stated beside the verdict as the
    /// kernel's noise floor there.
    #[arg(long, value_name = "FILE")]
    pub controls: Option<PathBuf>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// A positive, finite number of seconds of at most a day.
fn positive_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected seconds"))?;
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(v)
    } else {
        Err(format!("{s:?}: expected seconds in (0, 86400]"))
    }
}

/// `kernelab code` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum CodeCommand {
    /// Per kernel: resources and instruction-class counts. Reads cubins, fatbins and host
    /// binaries with .nv_fatbin, HSACOs, offload bundles (.hip_fatbin, CCOB), and SASS,
    /// llvm-objdump or compiler .s text.
    Show(CodeShowArgs),
    /// Compare the kernels of two builds: instruction classes, changed mnemonics, resources.
    Diff(CodeDiffArgs),
    /// Compare two build trees: which code objects changed, and how.
    Matrix(CodeMatrixArgs),
}

/// Arguments of `kernelab code show`.
#[derive(Args, Debug)]
pub(crate) struct CodeShowArgs {
    /// Code objects or disassembly text files.
    #[arg(required = true, value_name = "OBJ")]
    pub files: Vec<PathBuf>,
    /// Do not run a disassembler (resources only).
    #[arg(long)]
    pub no_disassemble: bool,
    /// Most bytes the compressed entries of one file may inflate to (default 4 GiB).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_decompressed: Option<u64>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `kernelab code diff`.
#[derive(Args, Debug)]
pub(crate) struct CodeDiffArgs {
    /// Baseline build (code object or disassembly text).
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// Candidate build.
    #[arg(value_name = "CAND")]
    pub cand: PathBuf,
    /// Do not run a disassembler (resources only).
    #[arg(long)]
    pub no_disassemble: bool,
    /// Most bytes the compressed entries of one file may inflate to (default 4 GiB).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_decompressed: Option<u64>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `kernelab code matrix`.
#[derive(Args, Debug)]
pub(crate) struct CodeMatrixArgs {
    /// Baseline build directory (searched recursively).
    #[arg(value_name = "BASE_DIR", required_unless_present = "base")]
    pub base_dir: Option<PathBuf>,
    /// Candidate build directory.
    #[arg(value_name = "CAND_DIR", required_unless_present = "cand")]
    pub cand_dir: Option<PathBuf>,
    /// Baseline files, instead of a directory.
    #[arg(long = "base", value_name = "FILE", num_args = 1.., conflicts_with = "base_dir")]
    pub base: Vec<PathBuf>,
    /// Candidate files, instead of a directory.
    #[arg(long = "cand", value_name = "FILE", num_args = 1.., conflicts_with = "cand_dir")]
    pub cand: Vec<PathBuf>,
    /// Pair files by the first capture group of this regex on the file name (default: the
    /// file name itself, relative to its directory).
    #[arg(long, value_name = "REGEX")]
    pub key: Option<String>,
    /// Run the disassembler on changed objects too (slower).
    #[arg(long)]
    pub disassemble: bool,
    /// Most bytes the compressed entries of one file may inflate to (default 4 GiB).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_decompressed: Option<u64>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `kernelab metrics`.
#[derive(Args, Debug)]
pub(crate) struct MetricsArgs {
    /// Nsight Compute CSV files (`ncu --csv`, details or `--page raw`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Metrics to show, by name (default: duration, DRAM bytes, throughputs, registers).
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// How kernels become rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum GroupArg {
    /// One row per exact kernel name.
    None,
    /// One row per family: template arguments, parameters and clone suffixes removed.
    Family,
}

/// How kernels are grouped, filtered and cut (shared by `profile` and `compare`).
#[derive(Args, Debug)]
pub(crate) struct RankArgs {
    /// Group rows by family (default) or show every kernel name.
    #[arg(long, value_enum, default_value_t = GroupArg::Family)]
    pub group: GroupArg,
    /// TOML file of family rules: [[family]] name = "...", match = "REGEX" (first match wins).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Rows before the "other" row in the terminal and Markdown views (default 20; 0: every
    /// row). JSON and CSV hold every row unless --top is given; --record bundles always hold
    /// every row.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Only kernels on this device (GPU index / agent id).
    #[arg(long)]
    pub device: Option<u32>,
    /// Only kernels on this stream (or queue).
    #[arg(long)]
    pub stream: Option<u64>,
    /// Only kernels whose full name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub name: Option<String>,
    /// Only kernels starting in START:END after the first kernel (units ns, us, ms, s; default ms).
    #[arg(long, value_name = "START:END")]
    pub time_range: Option<String>,
}

/// Arguments of `kernelab profile`.
#[derive(Args, Debug)]
pub(crate) struct ProfileArgs {
    /// Profiler files (format detected from content).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Grouping, filters and row count.
    #[command(flatten)]
    pub rank: RankArgs,
    /// Attribute kernel time to the innermost annotated range (Kineto user annotations, NVTX,
    /// rocprofv3 markers).
    #[arg(long)]
    pub by_phase: bool,
    /// Attribute kernel time to the graphs that replayed it (`cudaGraphLaunch`,
    /// `hipGraphLaunch` in Kineto traces): replays, kernels and time per replay, launch latency.
    #[arg(long)]
    pub by_graph: bool,
    /// Each input a rank (several rocpd databases, one Kineto trace per rank, …): besides the
    /// ranking of all together, each input's kernels, kernel time, share and longest families.
    #[arg(long)]
    pub by_rank: bool,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `kernelab compare`.
#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// Baseline and candidate profiles (one run each); or use --base and --cand.
    #[arg(value_name = "FILE", num_args = 0..=2)]
    pub pair: Vec<PathBuf>,
    /// Baseline runs (repeated profiles of the same build).
    #[arg(long = "base", value_name = "FILE", num_args = 1.., conflicts_with = "pair")]
    pub base: Vec<PathBuf>,
    /// Candidate runs.
    #[arg(long = "cand", value_name = "FILE", num_args = 1.., conflicts_with = "pair")]
    pub cand: Vec<PathBuf>,
    /// Families whose code did not change; their deltas measure the noise of this comparison.
    #[arg(long = "control", value_name = "FAMILY", num_args = 1..)]
    pub controls: Vec<String>,
    /// Also compare graph replays per graph (matched by launch site, else by order of first
    /// replay): replays, kernels and GPU kernel time per replay, ratio
    #[arg(long)]
    pub by_graph: bool,
    /// Grouping, filters and row count.
    #[command(flatten)]
    pub rank: RankArgs,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
