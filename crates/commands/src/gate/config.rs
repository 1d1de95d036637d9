//! The gate's configuration: a small TOML file in the repository (`.kernelab/gate.toml`).

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::path::{Component, Path, PathBuf};

/// The most bytes of a configuration file.
const MAX_CONFIG: u64 = 1 << 20;

/// The whole file, checked: exactly one benchmark.
#[derive(Clone, Debug)]
pub struct Config {
    /// How each side is built (none: the benchmark runs the work tree as checked out).
    pub build: Option<Build>,
    /// What is measured.
    pub benchmark: Benchmark,
    /// Which metrics decide.
    pub metrics: Metrics,
    /// Which kernel sources' changed lines are annotated.
    pub annotate: Option<Annotate>,
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    build: Option<Build>,
    #[serde(default)]
    bench: Option<Bench>,
    #[serde(default)]
    kernel: Option<KernelBench>,
    #[serde(default)]
    python: Option<PythonBench>,
    #[serde(default)]
    sweep: Option<SweepBench>,
    #[serde(default)]
    metrics: Metrics,
    #[serde(default)]
    annotate: Option<Annotate>,
}

/// `[annotate]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Annotate {
    /// Git pathspecs of the kernel sources (`*.cu`, `kernels/*.py`): the lines the head
    /// changed in them are annotated with the decision.
    pub paths: Vec<String>,
}

/// `[build]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// A shell command run in each side's work tree before timing.
    pub command: String,
}

/// `[bench]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bench {
    /// A shell command run in each side's work tree (base as baseline, head as candidate).
    pub command: String,
    /// Metrics printed by the command: `NAME=REGEX` (as `kernelab ab --metric-regex`).
    #[serde(default)]
    pub metric_regex: Vec<String>,
    /// Metrics as keys of the last JSON line printed (as `kernelab ab --metric-json`).
    #[serde(default)]
    pub metric_json: Vec<String>,
    /// Metrics for which higher is better.
    #[serde(default)]
    pub higher_is_better: Vec<String>,
    /// Practical threshold: smaller changes are no regression (`2%` or `0.02`).
    pub threshold: String,
    /// The time the measurement may take (`90s`, `20m`, `1h30m`); none: the design's plan.
    #[serde(default)]
    pub budget: Option<String>,
    /// Target resolution of the planned looks (default: `kernelab ab`'s).
    #[serde(default)]
    pub resolution: Option<String>,
    /// First planned look.
    #[serde(default)]
    pub min_pairs: Option<usize>,
    /// Last planned look (most pairs).
    #[serde(default)]
    pub max_pairs: Option<usize>,
    /// A/A pre-flight pairs (0: none).
    #[serde(default)]
    pub aa_pairs: Option<usize>,
    /// Warm-up runs of each side.
    #[serde(default)]
    pub warmup: Option<usize>,
    /// Seconds one run may take.
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Failed runs tolerated.
    #[serde(default)]
    pub max_failures: Option<usize>,
}

/// `[kernel]`: a launch spec of the repository (docs/kernel-spec.md). Its code paths name
/// what the build makes; the baseline build's are found in the base's work tree, the
/// candidate's in the head's, and `kernel run` gates and times them (ABBA rounds in one
/// process, the machine code compared first).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelBench {
    /// The spec, relative to the top of the repository (read from the head's work tree).
    pub spec: PathBuf,
    /// Practical threshold: smaller changes are no regression (`2%` or `0.02`).
    pub threshold: String,
    /// Rounds (default: the spec's `[timing] rounds`).
    #[serde(default)]
    pub rounds: Option<usize>,
    /// Seconds one GPU wait may take before the gate gives up, exit 2 (default 60, as
    /// `kernel run --timeout`).
    #[serde(default)]
    pub timeout: Option<f64>,
}

/// `[python]`: `kernelab.kernel.compare` of one function of a Python file of the repository,
/// the base's version against the head's (`kernel run --python`, docs/python.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PythonBench {
    /// The Python file, relative to the top of the repository; each side loads its own.
    pub module: PathBuf,
    /// The function of the file that is timed.
    pub function: String,
    /// The function of the head's file that makes the inputs.
    pub inputs: String,
    /// Practical threshold: smaller changes are no regression (`2%` or `0.02`).
    pub threshold: String,
    /// Further options of `kernel run --python` (`["--outputs", "2", "--rounds", "40"]`).
    #[serde(default)]
    pub options: Vec<String>,
    /// The interpreter that has the kernelab module (default: `KERNELAB_PYTHON`, else
    /// `python3`).
    #[serde(default)]
    pub interpreter: Option<String>,
}

/// `[sweep]`: a sweep file of the repository (docs/sweep.md) run over the base's build against
/// the head's: each build's `baseline` files (and the spec's own baseline build, and a
/// `[tensor]` baseline template) are found in the base's work tree, everything else in the
/// head's; every point's gates must hold and no timed point may be slower beyond the threshold.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepBench {
    /// The sweep file, relative to the top of the repository (read from the head's work tree).
    pub file: PathBuf,
    /// Practical threshold of each timed point: smaller changes are no regression.
    pub threshold: String,
    /// GPUs to spread the points over, one worker each (default: one worker).
    #[serde(default)]
    pub gpus: Vec<u32>,
    /// Workers of a CPU (tensor) sweep (default 1).
    #[serde(default)]
    pub jobs: Option<usize>,
    /// Seconds a point may wait on the GPU before its worker gives up on it (default 600).
    #[serde(default)]
    pub timeout: Option<f64>,
}

/// The options of `kernel run --python` the gate sets itself.
const PYTHON_OWN: [&str; 10] = [
    "--python",
    "--inputs",
    "--threshold",
    "--format",
    "--record",
    "--label",
    "--aa",
    "--samples",
    "--capture",
    "--help",
];

/// The benchmark a configuration names.
#[derive(Clone, Debug)]
pub enum Benchmark {
    /// An `ab` pair of commands (`[bench]`).
    Ab(Bench),
    /// A launch spec (`[kernel]`).
    Kernel(KernelBench),
    /// A Python kernel comparison (`[python]`).
    Python(PythonBench),
    /// A sweep of configurations (`[sweep]`).
    Sweep(SweepBench),
}

/// A path relative to the top of the repository that stays inside it (`key` names it).
fn inside(key: &str, p: &Path) -> Result<()> {
    let ok = !p.as_os_str().is_empty()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !ok {
        bail!(
            "{key} {}: expected a path relative to the top of the repository, inside it",
            p.display()
        );
    }
    Ok(())
}

/// `[metrics]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Metrics whose regression fails the gate (default: the primary metric).
    #[serde(default)]
    pub must_not_regress: Vec<String>,
}

impl Config {
    /// The threshold as written, with the table it is in.
    pub fn threshold(&self) -> (&'static str, &str) {
        match &self.benchmark {
            Benchmark::Ab(b) => ("[bench]", &b.threshold),
            Benchmark::Kernel(k) => ("[kernel]", &k.threshold),
            Benchmark::Python(p) => ("[python]", &p.threshold),
            Benchmark::Sweep(w) => ("[sweep]", &w.threshold),
        }
    }

    /// The time budget as written (only an `ab` benchmark has one).
    pub fn budget(&self) -> Option<&str> {
        match &self.benchmark {
            Benchmark::Ab(b) => b.budget.as_deref(),
            _ => None,
        }
    }

    /// Reads and checks the file at `path`.
    pub fn read(path: &Path) -> Result<Config> {
        let text = kernelab_model::read_regular_text(path, MAX_CONFIG)
            .with_context(|| format!("{}: cannot read the gate configuration", path.display()))?;
        Config::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// Parses and checks `text`.
    pub fn parse(text: &str) -> Result<Config> {
        let f: File = toml::from_str(text).map_err(|e| anyhow!("{}", e.to_string().trim_end()))?;
        let benchmark = match (f.bench, f.kernel, f.python, f.sweep) {
            (Some(b), None, None, None) => Benchmark::Ab(b),
            (None, Some(k), None, None) => Benchmark::Kernel(k),
            (None, None, Some(p), None) => Benchmark::Python(p),
            (None, None, None, Some(w)) => Benchmark::Sweep(w),
            _ => bail!(
                "expected exactly one benchmark: [bench] (a command), [kernel] (a launch spec), \
                 [python] (a Python kernel comparison) or [sweep] (a sweep file)"
            ),
        };
        match &benchmark {
            Benchmark::Ab(b) => {
                if b.command.trim().is_empty() {
                    bail!("[bench] command is empty");
                }
                for m in &b.metric_regex {
                    let (name, re) = m.split_once('=').ok_or_else(|| {
                        anyhow!("[bench] metric_regex {m:?}: expected NAME=REGEX")
                    })?;
                    regex::Regex::new(re)
                        .map_err(|e| anyhow!("[bench] metric_regex {name}: {e}"))?;
                }
            }
            Benchmark::Kernel(k) => inside("[kernel] spec", &k.spec)?,
            Benchmark::Sweep(w) => {
                inside("[sweep] file", &w.file)?;
                if w.jobs == Some(0) {
                    bail!("[sweep] jobs = 0: expected at least one worker");
                }
                if let Some(t) = w.timeout.filter(|t| !(t.is_finite() && *t > 0.0)) {
                    bail!("[sweep] timeout = {t}: expected a positive number of seconds");
                }
            }
            Benchmark::Python(p) => {
                inside("[python] module", &p.module)?;
                for (key, name) in [("function", &p.function), ("inputs", &p.inputs)] {
                    let word = |w: &str| {
                        !w.is_empty() && w.chars().all(|c| c == '_' || c.is_alphanumeric())
                    };
                    if !name.split('.').all(word) {
                        bail!(
                            "[python] {key} {name:?}: expected a name defined in the file \
                             (`run`, `Bench.run`)"
                        );
                    }
                }
                let own = |o: &&String| PYTHON_OWN.contains(&o.split('=').next().unwrap_or(o));
                if let Some(o) = p.options.iter().find(own) {
                    bail!("[python] options: {o} is set by the gate itself");
                }
            }
        }
        if !matches!(benchmark, Benchmark::Ab(_)) && !f.metrics.must_not_regress.is_empty() {
            bail!(
                "[metrics] must_not_regress is for [bench]: a [kernel], [python] or [sweep] \
                 benchmark gates its one time"
            );
        }
        let c = Config {
            build: f.build,
            benchmark,
            metrics: f.metrics,
            annotate: f.annotate,
        };
        if c.build
            .as_ref()
            .is_some_and(|b| b.command.trim().is_empty())
        {
            bail!("[build] command is empty");
        }
        if let Some(a) = &c.annotate {
            if a.paths.is_empty() || a.paths.iter().any(|p| p.trim().is_empty()) {
                bail!("[annotate] paths: expected pathspecs of kernel sources (\"*.cu\")");
            }
            if let Some(p) = a.paths.iter().find(|p| p.starts_with(':')) {
                bail!("[annotate] paths {p:?}: pathspec magic is not taken; name files or globs");
            }
        }
        let names = c.metric_names();
        for m in &c.metrics.must_not_regress {
            if !names.contains(m) {
                bail!(
                    "[metrics] must_not_regress names {m:?}, which is not a metric of [bench] \
                     (metrics: {})",
                    names.join(", ")
                );
            }
        }
        Ok(c)
    }

    /// The metrics the benchmark measures, the primary first (`wall_s` when none is named).
    pub fn metric_names(&self) -> Vec<String> {
        let b = match &self.benchmark {
            Benchmark::Ab(b) => b,
            Benchmark::Kernel(_) => return vec!["kernel_time".into()],
            Benchmark::Python(_) => return vec!["call_time".into()],
            Benchmark::Sweep(_) => return vec!["kernel_time".into()],
        };
        let mut names: Vec<String> = b
            .metric_regex
            .iter()
            .map(|m| m.split_once('=').map_or(m.as_str(), |(n, _)| n).to_string())
            .chain(b.metric_json.iter().cloned())
            .collect();
        if names.is_empty() {
            names.push("wall_s".into());
        }
        names
    }

    /// The metrics that decide: `must_not_regress`, else the primary metric.
    pub fn gated(&self) -> Vec<String> {
        if self.metrics.must_not_regress.is_empty() {
            self.metric_names().into_iter().take(1).collect()
        } else {
            self.metrics.must_not_regress.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_file_gates_the_wall_time() {
        let c =
            Config::parse("[bench]\ncommand = \"./bench\"\nthreshold = \"2%\"\n").expect("parses");
        assert!(c.build.is_none());
        assert_eq!(c.gated(), vec!["wall_s".to_string()]);
        assert_eq!(c.threshold(), ("[bench]", "2%"));
    }

    #[test]
    fn unknown_keys_and_unknown_gated_metrics_are_refused() {
        let e = Config::parse("[bench]\ncommand = \"x\"\nthreshold = \"2%\"\nthreshhold = 1\n")
            .expect_err("unknown key");
        assert!(format!("{e:#}").contains("threshhold"), "{e:#}");
        let e = Config::parse(
            "[bench]\ncommand = \"x\"\nthreshold = \"2%\"\nmetric_regex = [\"t=t=(\\\\d+)\"]\n\
             [metrics]\nmust_not_regress = [\"wall_s\"]\n",
        )
        .expect_err("wall_s is not measured");
        assert!(format!("{e:#}").contains("metrics: t"), "{e:#}");
        let e = Config::parse(
            "[build]\ncommand = \" \"\n[bench]\ncommand = \"x\"\nthreshold = \"1%\"\n",
        )
        .expect_err("empty build");
        assert!(format!("{e:#}").contains("[build]"), "{e:#}");
        let e =
            Config::parse("[bench]\ncommand = \"x\"\nthreshold = \"2%\"\nmetric_regex = [\"t\"]\n")
                .expect_err("no NAME=");
        assert!(format!("{e:#}").contains("expected NAME=REGEX"), "{e:#}");
        let e =
            Config::parse("[bench]\ncommand = \"x\"\nthreshold = \"2%\"\n[annotate]\npaths = []\n")
                .expect_err("no paths");
        assert!(format!("{e:#}").contains("[annotate] paths"), "{e:#}");
        let c = Config::parse(
            "[bench]\ncommand = \"x\"\nthreshold = \"2%\"\n[annotate]\npaths = [\"*.cu\"]\n",
        )
        .expect("parses");
        assert_eq!(
            c.annotate.expect("annotate").paths,
            vec!["*.cu".to_string()]
        );
    }

    #[test]
    fn one_benchmark_of_three_kinds_with_paths_inside_the_repository() {
        let c = Config::parse("[kernel]\nspec = \"bench/k.toml\"\nthreshold = \"1%\"\n")
            .expect("a kernel spec");
        assert!(matches!(c.benchmark, Benchmark::Kernel(_)));
        assert_eq!(c.gated(), vec!["kernel_time".to_string()]);
        assert_eq!(c.threshold(), ("[kernel]", "1%"));
        assert_eq!(c.budget(), None);
        let c = Config::parse(
            "[python]\nmodule = \"bench/k.py\"\nfunction = \"Bench.run\"\ninputs = \"make\"\n\
             threshold = \"2%\"\noptions = [\"--rounds\", \"40\"]\n",
        )
        .expect("a Python comparison");
        assert_eq!(c.gated(), vec!["call_time".to_string()]);
        let c = Config::parse(
            "[sweep]\nfile = \"bench/sweep.toml\"\nthreshold = \"2%\"\ngpus = [0, 1]\n",
        )
        .expect("a sweep");
        assert_eq!(c.threshold(), ("[sweep]", "2%"));
        assert!(matches!(&c.benchmark, Benchmark::Sweep(w) if w.gpus == [0, 1]));
        for (text, says) in [
            ("", "exactly one benchmark"),
            (
                "[bench]\ncommand = \"x\"\nthreshold = \"1%\"\n[kernel]\nspec = \"k.toml\"\nthreshold = \"1%\"\n",
                "exactly one benchmark",
            ),
            ("[kernel]\nspec = \"../k.toml\"\nthreshold = \"1%\"\n", "inside it"),
            ("[kernel]\nspec = \"/etc/k.toml\"\nthreshold = \"1%\"\n", "inside it"),
            (
                "[python]\nmodule = \"k.py\"\nfunction = \"run()\"\ninputs = \"make\"\nthreshold = \"1%\"\n",
                "a name defined in the file",
            ),
            (
                "[python]\nmodule = \"k.py\"\nfunction = \"run\"\ninputs = \"make\"\nthreshold = \"1%\"\noptions = [\"--format=md\"]\n",
                "--format=md is set by the gate itself",
            ),
            (
                "[kernel]\nspec = \"k.toml\"\nthreshold = \"1%\"\n[metrics]\nmust_not_regress = [\"x\"]\n",
                "is for [bench]",
            ),
            ("[sweep]\nfile = \"../s.toml\"\nthreshold = \"1%\"\n", "inside it"),
            ("[sweep]\nfile = \"s.toml\"\nthreshold = \"1%\"\njobs = 0\n", "jobs = 0"),
            (
                "[sweep]\nfile = \"s.toml\"\nthreshold = \"1%\"\ntimeout = -1.0\n",
                "positive number of seconds",
            ),
        ] {
            let e = Config::parse(text).expect_err(text);
            assert!(format!("{e:#}").contains(says), "{text}: {e:#}");
        }
    }
}
