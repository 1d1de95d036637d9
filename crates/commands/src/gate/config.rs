//! The gate's configuration: a small TOML file in the repository (`.kernelab/gate.toml`).

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::path::Path;

/// The most bytes of a configuration file.
const MAX_CONFIG: u64 = 1 << 20;

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// How each side is built (none: the benchmark runs the work tree as checked out).
    #[serde(default)]
    pub build: Option<Build>,
    /// The benchmark: an `ab` pair of the same command in each side's work tree.
    pub bench: Bench,
    /// Which metrics decide.
    #[serde(default)]
    pub metrics: Metrics,
    /// Which kernel sources' changed lines are annotated.
    #[serde(default)]
    pub annotate: Option<Annotate>,
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

/// `[metrics]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Metrics whose regression fails the gate (default: the primary metric).
    #[serde(default)]
    pub must_not_regress: Vec<String>,
}

impl Config {
    /// Reads and checks the file at `path`.
    pub fn read(path: &Path) -> Result<Config> {
        let text = kernelab_model::read_regular_text(path, MAX_CONFIG)
            .with_context(|| format!("{}: cannot read the gate configuration", path.display()))?;
        Config::parse(&text).with_context(|| format!("{}", path.display()))
    }

    /// Parses and checks `text`.
    pub fn parse(text: &str) -> Result<Config> {
        let c: Config =
            toml::from_str(text).map_err(|e| anyhow!("{}", e.to_string().trim_end()))?;
        if c.bench.command.trim().is_empty() {
            bail!("[bench] command is empty");
        }
        if c.build
            .as_ref()
            .is_some_and(|b| b.command.trim().is_empty())
        {
            bail!("[build] command is empty");
        }
        for m in &c.bench.metric_regex {
            let (name, re) = m
                .split_once('=')
                .ok_or_else(|| anyhow!("[bench] metric_regex {m:?}: expected NAME=REGEX"))?;
            regex::Regex::new(re).map_err(|e| anyhow!("[bench] metric_regex {name}: {e}"))?;
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
        let b = &self.bench;
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
}
