//! The tools: one per evidence command, each input schema derived from the CLI's own clap
//! definition (walking `clap::Command`'s arguments: names, help, types, choices, defaults), and
//! the command line each call becomes. There is no second list of options: a new option of a
//! command is a new property of its tool.

use clap::{Arg, ArgAction, Command};
use serde_json::{json, Map, Value};
use std::any::TypeId;
use std::path::PathBuf;

/// What a tool needs before it may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Reads and writes files only.
    Files,
    /// Starts programs or servers, or uses the GPU: offered only with `--allow-run`; the text
    /// says what it starts.
    Run(&'static str),
    /// As [`Gate::Run`] unless the argument named first is given (then it reads tables only).
    RunUnless(&'static str, &'static str),
}

/// One tool of the catalog: which command it runs and how.
#[derive(Debug)]
pub struct Entry {
    /// The tool's name.
    pub name: &'static str,
    /// The subcommand path (`["code", "diff"]`).
    pub path: &'static [&'static str],
    /// Options always given (`--dry-run` of `kernel_dry_run`).
    pub fixed: &'static [&'static str],
    /// Arguments of the command that the tool does not offer (besides `help`, `version` and
    /// `format`, which the server sets).
    pub hidden: &'static [&'static str],
    /// What it needs to run.
    pub gate: Gate,
    /// Whether it runs for minutes (progress notifications, cancellation).
    pub long: bool,
    /// The `kind` of the document it returns.
    pub kind: &'static str,
    /// The first line of its description.
    pub summary: &'static str,
}

const RUN_AB: &str = "starts the baseline and candidate programs";
const RUN_GPU: &str = "launches kernels on the GPU";

macro_rules! entry {
    ($name:literal, [$($p:literal),+], $kind:literal, $gate:expr, $long:literal, $summary:literal
     $(, fixed = [$($f:literal),*])? $(, hidden = [$($h:literal),*])?) => {
        Entry {
            name: $name,
            path: &[$($p),+],
            fixed: &[$($($f),*)?],
            hidden: &[$($($h),*)?],
            gate: $gate,
            long: $long,
            kind: $kind,
            summary: $summary,
        }
    };
}

/// Every tool, in the evidence order of a kernel change (docs/mcp.md).
pub const CATALOG: &[Entry] = &[
    entry!("profile", ["profile"], "profile", Gate::Files, false,
        "Rank a request's GPU time per kernel family from profiler files (`kernelab profile`)."),
    entry!("compare", ["compare"], "compare", Gate::Files, false,
        "Compare baseline and candidate profiles per family, against the run-to-run noise (`kernelab compare`)."),
    entry!("metrics", ["metrics"], "metrics", Gate::Files, false,
        "Per-launch hardware metrics from Nsight Compute CSV (`kernelab metrics`)."),
    entry!("check_bitwise", ["check", "bitwise"], "check_bitwise", Gate::Files, false,
        "Gate: byte-exact equality of every tensor (`kernelab check bitwise`)."),
    entry!("check_close", ["check", "close"], "check_close", Gate::Files, false,
        "Gate: closeness under rtol/atol or a ULP limit (`kernelab check close`)."),
    entry!("check_oracle", ["check", "oracle"], "check_oracle", Gate::Files, false,
        "Gate: error of a low-precision output against a higher-precision reference (`kernelab check oracle`)."),
    entry!("check_finite", ["check", "finite"], "check_finite", Gate::Files, false,
        "Gate: NaN and Inf counts per tensor (`kernelab check finite`)."),
    entry!("check_repeat", ["check", "repeat"], "check_repeat", Gate::Files, false,
        "Gate: repeated runs bit-identical (`kernelab check repeat`)."),
    entry!("check_sweep", ["check", "sweep"], "sweep", Gate::Files, false,
        "Gate: every gate over the points of a tensor sweep file ([[config]] entries or a grid), run in one process (`kernelab check sweep`)."),
    entry!("code_show", ["code", "show"], "code_show", Gate::Files, false,
        "Per kernel of code objects: resources and instruction classes (`kernelab code show`)."),
    entry!("code_diff", ["code", "diff"], "code_diff", Gate::Files, false,
        "Compare the kernels of two builds: instruction classes, mnemonics, resources (`kernelab code diff`)."),
    entry!("code_matrix", ["code", "matrix"], "code_matrix", Gate::Files, false,
        "Compare two build trees: which code objects changed, and how (`kernelab code matrix`)."),
    entry!("kernel_dry_run", ["kernel", "run"], "kernel_dry_run", Gate::Files, false,
        "Check a kernel launch spec and resolve both builds without opening a GPU (`kernelab kernel run --dry-run`).",
        fixed = ["--dry-run"], hidden = ["dry_run", "samples", "rounds", "timeout", "ceilings"]),
    entry!("kernel_run", ["kernel", "run"], "kernel_run", Gate::Run(RUN_GPU), true,
        "Launch two builds of a GPU kernel: gates, then ABBA timing and a verdict (`kernelab kernel run`).",
        hidden = ["dry_run"]),
    entry!("counters", ["counters"], "counters", Gate::Run("starts a GPU profiler (ncu or rocprofv3) on the programs"), true,
        "Hardware counters per kernel, baseline versus candidate, repeated (`kernelab counters`)."),
    entry!("ab_run", ["ab"], "ab", Gate::Run(RUN_AB), true,
        "Paired A/B timing of two commands in fresh processes, with an A/A pre-flight and a verdict (`kernelab ab`)."),
    entry!("ab_analyze", ["ab", "analyze"], "ab", Gate::Files, false,
        "Analyse recorded A/B samples (`kernelab ab analyze`)."),
    entry!("ceilings", ["ceilings"], "ceilings", Gate::RunUnless("datasheet", "measures the local GPU"), false,
        "The GPU's measured ceilings beside its datasheet; with `datasheet` the table's figures only (`kernelab ceilings`)."),
    entry!("roofline", ["roofline"], "roofline", Gate::Files, false,
        "Place each kernel family of a profile under the device's roofs (`kernelab roofline`)."),
    entry!("impact", ["impact"], "impact", Gate::Files, false,
        "Predict what a kernel's measured change does to a request (`kernelab impact`)."),
    entry!("serve", ["serve"], "serve", Gate::Run("starts the baseline and candidate inference servers"), true,
        "Request-level A/B of two inference servers with an output-identity gate (`kernelab serve`).",
        hidden = ["analyze"]),
    entry!("serve_analyze", ["serve"], "serve", Gate::Files, false,
        "Analyse a serve run's samples; starts no server (`kernelab serve --analyze --resume RUN`).",
        fixed = ["--analyze"], hidden = ["analyze", "spec", "samples", "budget"]),
    entry!("sweep", ["sweep"], "sweep", Gate::Run("runs each point's gates and timing as processes, on GPUs or a Slurm job array"), true,
        "Check a kernel change over a grid of configurations (`kernelab sweep`)."),
    entry!("sweep_collect", ["sweep", "collect"], "sweep", Gate::Files, false,
        "Merge a sweep folder's point results into the matrix (`kernelab sweep collect`)."),
    entry!("export", ["export"], "export", Gate::Files, false,
        "Write dispatch tables, samples and sweep matrices as Parquet files (`kernelab export`)."),
    entry!("runs", ["runs"], "runs", Gate::Files, false,
        "List the experiment runs (ab, serve, kernel run, counters) and their state (`kernelab runs`)."),
    entry!("report", ["report"], "report", Gate::Files, false,
        "Render an evidence bundle: a JSON summary, and Markdown (a PR body) or HTML with `format` (`kernelab report`)."),
    entry!("report_check", ["report", "check"], "report_check", Gate::Files, false,
        "Audit a note against a bundle: every quoted number must match (`kernelab report check`)."),
];

/// The JSON type of an argument's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A path under the root.
    Path,
    /// A whole number.
    Integer,
    /// A number.
    Number,
    /// A switch.
    Bool,
    /// Text.
    String,
}

/// One argument of a tool, as the CLI defines it.
#[derive(Clone, Debug)]
pub struct ArgSpec {
    /// The property name (the clap id: `max_decompressed`).
    pub id: String,
    /// The long option (`max-decompressed`), or none for a positional.
    pub long: Option<String>,
    /// Whether it is given after `--` (positional, or `last`).
    pub positional: bool,
    /// Whether it takes several values (an array).
    pub many: bool,
    /// The values' type.
    pub ty: Ty,
    /// The separator of a list given as one value (`--shape 1,2,3`).
    pub delimiter: Option<char>,
    /// The values allowed, when the CLI lists them.
    pub choices: Vec<String>,
    /// Whether the CLI requires it.
    pub required: bool,
    /// The CLI's help text.
    pub help: String,
    /// The default, as the CLI writes it.
    pub default: Vec<String>,
}

impl ArgSpec {
    fn of(a: &Arg) -> ArgSpec {
        let parser = a.get_value_parser();
        let t = parser.type_id();
        let ty = if matches!(a.get_action(), ArgAction::SetTrue | ArgAction::SetFalse) {
            Ty::Bool
        } else if t == TypeId::of::<PathBuf>() {
            Ty::Path
        } else if [
            TypeId::of::<u64>(),
            TypeId::of::<usize>(),
            TypeId::of::<u32>(),
            TypeId::of::<u16>(),
            TypeId::of::<u8>(),
            TypeId::of::<i64>(),
            TypeId::of::<i32>(),
        ]
        .iter()
        .any(|id| t == *id)
        {
            Ty::Integer
        } else if t == TypeId::of::<f64>() || t == TypeId::of::<f32>() {
            Ty::Number
        } else {
            Ty::String
        };
        let many = matches!(a.get_action(), ArgAction::Append)
            || a.get_num_args().is_some_and(|r| r.max_values() > 1);
        ArgSpec {
            id: a.get_id().to_string(),
            long: a.get_long().map(str::to_string),
            positional: a.is_positional() || a.is_last_set(),
            many,
            ty,
            delimiter: a.get_value_delimiter(),
            choices: a
                .get_possible_values()
                .iter()
                .filter(|p| !p.is_hide_set())
                .map(|p| p.get_name().to_string())
                .collect(),
            required: a.is_required_set(),
            help: a
                .get_long_help()
                .or(a.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default(),
            default: a
                .get_default_values()
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect(),
        }
    }

    /// The JSON Schema of one value.
    fn value_schema(&self) -> Value {
        let mut s = match self.ty {
            Ty::Path => json!({"type": "string", "description": "a path under the server's root"}),
            Ty::Integer => json!({"type": "integer"}),
            Ty::Number => json!({"type": "number"}),
            Ty::Bool => json!({"type": "boolean"}),
            Ty::String => json!({"type": "string"}),
        };
        if !self.choices.is_empty() {
            s["enum"] = json!(self.choices);
        }
        if self.ty == Ty::Path {
            if let Some(o) = s.as_object_mut() {
                o.remove("description");
            }
        }
        s
    }

    /// The property's JSON Schema.
    fn schema(&self) -> Value {
        let mut s = if self.many {
            json!({"type": "array", "items": self.value_schema()})
        } else {
            self.value_schema()
        };
        let mut help = self.help.clone();
        if self.ty == Ty::Path {
            help.push_str(" (A path under the server's root; relative paths are from the root.)");
        }
        if !self.default.is_empty() && self.ty != Ty::Bool {
            help.push_str(&format!(" Default: {}.", self.default.join(",")));
        }
        s["description"] = json!(help.trim());
        s
    }
}

/// A tool as the server offers it: its entry, arguments and schemas.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    /// The catalog entry.
    pub entry: &'static Entry,
    /// The offered arguments, in the CLI's order.
    pub args: Vec<ArgSpec>,
    /// The clap command of the subcommand path (for validation of the argv).
    pub command: Command,
    /// The command's description (its `--help` text).
    pub about: String,
    /// Whether the command takes `--format` (the server passes `--format json`).
    pub has_format: bool,
}

/// Ids the server never offers: clap's own, the output format it chooses and the terminal's
/// `--wide` (the server reads JSON).
const ALWAYS_HIDDEN: &[&str] = &["help", "version", "format", "wide"];

fn subcommand<'a>(root: &'a Command, path: &[&str]) -> Option<&'a Command> {
    let mut c = root;
    for p in path {
        c = c.find_subcommand(p)?;
    }
    Some(c)
}

/// The tool specs of every catalog entry, from the CLI's definition `cli` (its global
/// arguments, `record` and `label`, are offered by every tool).
pub fn specs(cli: &Command) -> Vec<ToolSpec> {
    let mut cli = cli.clone();
    cli.build();
    let globals: Vec<ArgSpec> = cli
        .get_arguments()
        .filter(|a| a.is_global_set())
        .map(ArgSpec::of)
        .collect();
    CATALOG
        .iter()
        .filter_map(|e| {
            let cmd = subcommand(&cli, e.path)?;
            let has_format = cmd.get_arguments().any(|a| a.get_id() == "format");
            let keep_format = e.name == "report";
            let mut args: Vec<ArgSpec> = cmd
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter(|a| {
                    let id = a.get_id().as_str();
                    !(e.hidden.contains(&id)
                        || (ALWAYS_HIDDEN.contains(&id) && !(keep_format && id == "format")))
                })
                .filter(|a| !a.is_global_set())
                .map(ArgSpec::of)
                .collect();
            args.extend(globals.iter().cloned());
            let about = cmd
                .get_long_about()
                .or(cmd.get_about())
                .map(|s| s.to_string())
                .unwrap_or_default();
            Some(ToolSpec {
                entry: e,
                args,
                command: cmd.clone(),
                about,
                has_format,
            })
        })
        .collect()
}

impl ToolSpec {
    /// The tool's input schema (an object of its arguments).
    pub fn input_schema(&self) -> Map<String, Value> {
        let mut props = Map::new();
        for a in &self.args {
            props.insert(a.id.clone(), a.schema());
        }
        let required: Vec<&str> = self
            .args
            .iter()
            .filter(|a| a.required)
            .map(|a| a.id.as_str())
            .collect();
        let mut s = Map::new();
        s.insert("type".into(), json!("object"));
        s.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            s.insert("required".into(), json!(required));
        }
        s.insert("additionalProperties".into(), json!(false));
        s
    }

    /// Whether a call with `args` starts programs or uses the GPU; `Some(why)` when it does.
    pub fn runs(&self, args: &Map<String, Value>) -> Option<&'static str> {
        match self.entry.gate {
            Gate::Files => None,
            Gate::Run(why) => Some(why),
            Gate::RunUnless(arg, why) => (!args
                .get(arg)
                .is_some_and(|v| !v.is_null() && v != &json!(false)))
            .then_some(why),
        }
    }
}

/// An argument the server refuses, naming it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgError {
    /// The argument's name (`None`: the arguments as a whole).
    pub argument: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl ArgError {
    fn new(argument: &str, message: impl Into<String>) -> ArgError {
        ArgError {
            argument: Some(argument.to_string()),
            message: message.into(),
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One value as its command-line text, checked against the argument's type.
fn value_text(a: &ArgSpec, v: &Value) -> Result<String, ArgError> {
    let want = match a.ty {
        Ty::Integer => "an integer",
        Ty::Number => "a number",
        Ty::Bool => "a boolean",
        Ty::Path => "a path (string)",
        Ty::String => "a string",
    };
    let bad = || {
        ArgError::new(
            &a.id,
            format!(
                "argument `{}`: expected {want}, found {} ({v})",
                a.id,
                type_name(v)
            ),
        )
    };
    let text = match (a.ty, v) {
        (Ty::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
        (Ty::Number, Value::Number(n)) => n.to_string(),
        (Ty::Path | Ty::String, Value::String(s)) => s.clone(),
        // A number where text is expected (`threshold: 0.005`) reads as its text.
        (Ty::String, Value::Number(n)) => n.to_string(),
        _ => return Err(bad()),
    };
    if a.ty == Ty::Path && text.is_empty() {
        return Err(ArgError::new(
            &a.id,
            format!("argument `{}`: empty path", a.id),
        ));
    }
    if text.contains('\0') {
        return Err(ArgError::new(
            &a.id,
            format!("argument `{}`: holds a NUL byte", a.id),
        ));
    }
    if !a.choices.is_empty() && !a.choices.contains(&text) {
        return Err(ArgError::new(
            &a.id,
            format!(
                "argument `{}`: {text:?} is not one of {}",
                a.id,
                a.choices.join(", ")
            ),
        ));
    }
    Ok(text)
}

/// A call's arguments checked against the tool's: every key known, every value of its type.
/// Returns the values as text per argument (in the tool's order), for [`ToolSpec::argv`].
pub fn check_args(
    spec: &ToolSpec,
    args: &Map<String, Value>,
) -> Result<Vec<(ArgSpec, Vec<String>)>, ArgError> {
    for k in args.keys() {
        if !spec.args.iter().any(|a| &a.id == k) {
            let known: Vec<&str> = spec.args.iter().map(|a| a.id.as_str()).collect();
            return Err(ArgError::new(
                k,
                format!(
                    "unknown argument `{k}` of tool `{}`; its arguments are: {}",
                    spec.entry.name,
                    known.join(", ")
                ),
            ));
        }
    }
    let mut out = Vec::new();
    for a in &spec.args {
        let Some(v) = args.get(&a.id) else {
            if a.required {
                return Err(ArgError::new(
                    &a.id,
                    format!("argument `{}` is required", a.id),
                ));
            }
            continue;
        };
        if v.is_null() {
            continue;
        }
        let values = if a.ty == Ty::Bool {
            match v {
                Value::Bool(true) => vec![String::new()],
                Value::Bool(false) => continue,
                _ => {
                    return Err(ArgError::new(
                        &a.id,
                        format!(
                            "argument `{}`: expected a boolean, found {} ({v})",
                            a.id,
                            type_name(v)
                        ),
                    ))
                }
            }
        } else if a.many {
            match v {
                Value::Array(items) => items
                    .iter()
                    .map(|i| value_text(a, i))
                    .collect::<Result<Vec<_>, _>>()?,
                // One value where a list is expected is a list of one.
                other => vec![value_text(a, other)?],
            }
        } else {
            vec![value_text(a, v)?]
        };
        out.push((a.clone(), values));
    }
    Ok(out)
}

impl ToolSpec {
    /// The command line (after the program name) of a call with the checked `values`:
    /// the subcommand path, the fixed options, `--format json` where the command takes it
    /// (unless `format` is given), options as `--name=value`, then `--` and the positionals.
    pub fn argv(&self, values: &[(ArgSpec, Vec<String>)], json_format: bool) -> Vec<String> {
        let mut argv: Vec<String> = self.entry.path.iter().map(|s| s.to_string()).collect();
        argv.extend(self.entry.fixed.iter().map(|s| s.to_string()));
        let gives_format = values.iter().any(|(a, _)| a.id == "format");
        if self.has_format && json_format && !gives_format {
            argv.push("--format=json".into());
        }
        let mut positional = Vec::new();
        for (a, vs) in values {
            match (&a.long, a.positional) {
                (Some(long), false) => {
                    if a.ty == Ty::Bool {
                        argv.push(format!("--{long}"));
                    } else if let (Some(d), true) = (a.delimiter, a.many) {
                        argv.push(format!("--{long}={}", vs.join(&d.to_string())));
                    } else {
                        for v in vs {
                            argv.push(format!("--{long}={v}"));
                        }
                    }
                }
                _ => positional.extend(vs.iter().cloned()),
            }
        }
        if !positional.is_empty() {
            argv.push("--".into());
            argv.extend(positional);
        }
        argv
    }
}
