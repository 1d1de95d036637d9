//! The typed lines of the runs whose plan is their own (kernel run, counters, a sweep's kernel
//! point): the header's plan and the sample lines. Fields are declared in the order the
//! untyped JSON of earlier versions wrote them (sorted), so files read and write the same.

use serde::Serialize;
use std::collections::BTreeMap;

/// What a run plans, in its header line (`{"kind": "header", …, "plan": …}`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Plan<'a> {
    /// `kernel run`: the spec and its timing rounds.
    KernelRun {
        /// Timing rounds.
        rounds: usize,
        /// The launch spec.
        spec: &'a str,
    },
    /// `counters`: the profiler, its metrics and how they are grouped into processes.
    Counters {
        /// Metrics per profiler process.
        group_size: usize,
        /// Every metric measured.
        metrics: &'a [String],
        /// `ncu` or `rocprofv3`.
        profiler: &'a str,
        /// Processes per group and side.
        repeats: usize,
        /// Where every process's output is kept.
        work_dir: String,
    },
    /// One timed kernel point of a sweep.
    SweepPoint {
        /// The build this point uses, when the sweep has several.
        build: Option<String>,
        /// The point's parameters.
        params: BTreeMap<String, String>,
        /// The point's id.
        point: &'a str,
        /// Timing rounds.
        rounds: usize,
        /// The launch spec.
        spec: &'a str,
    },
}

/// The header's plan of a run whose plan is its own: the spec's hash and [`Plan`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OwnPlan<'a> {
    /// SHA-256 of the spec file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_sha256: Option<&'a str>,
    /// The plan.
    pub plan: Plan<'a>,
}

/// One line after the header of a run whose plan is its own.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SampleLine<'a, T: Serialize> {
    /// One timing sample of a kernel run or a sweep's kernel point.
    Sample {
        /// The sweep point it belongs to.
        #[serde(skip_serializing_if = "Option::is_none")]
        point: Option<&'a str>,
        /// The sample.
        sample: &'a T,
        /// The launch spec.
        spec: &'a str,
    },
    /// The conditions of a kernel run's rounds, taken before the first round (`after_round`
    /// absent) and after each round (files of schema version 8 on).
    Fingerprint {
        /// The round it was taken after.
        #[serde(skip_serializing_if = "Option::is_none")]
        after_round: Option<usize>,
        /// The environment fingerprint.
        fingerprint: &'a kernelab_model::fingerprint::Fingerprint,
    },
    /// One profiler process of a counters run.
    Process {
        /// The process: its group, side, repeat, status and output.
        process: &'a T,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_write_what_the_untyped_json_wrote() {
        let sample = serde_json::json!({"batch": 1, "us_per_launch": 2.5});
        let typed = serde_json::to_string(&SampleLine::Sample {
            point: None,
            sample: &sample,
            spec: "a.toml",
        })
        .expect("serializes");
        let untyped =
            serde_json::json!({"kind": "sample", "spec": "a.toml", "sample": sample}).to_string();
        assert_eq!(typed, untyped);
        let typed = serde_json::to_string(&SampleLine::Sample {
            point: Some("p1"),
            sample: &sample,
            spec: "a.toml",
        })
        .expect("serializes");
        let untyped = serde_json::json!({"kind": "sample", "spec": "a.toml", "point": "p1", "sample": sample})
            .to_string();
        assert_eq!(typed, untyped);
        let p = serde_json::json!({"group": 0});
        assert_eq!(
            serde_json::to_string(&SampleLine::Process { process: &p }).expect("serializes"),
            serde_json::json!({"kind": "process", "process": p}).to_string()
        );
        let metrics = vec!["dram__bytes.sum".to_string()];
        let plan = Plan::Counters {
            group_size: 1,
            metrics: &metrics,
            profiler: "ncu",
            repeats: 3,
            work_dir: "/w".into(),
        };
        assert_eq!(
            serde_json::to_value(&plan).expect("serializes").to_string(),
            serde_json::to_string(&plan).expect("serializes")
        );
        assert_eq!(
            serde_json::to_string(&plan).expect("serializes"),
            serde_json::json!({"profiler": "ncu", "metrics": metrics, "group_size": 1,
                "repeats": 3, "work_dir": "/w"})
            .to_string()
        );
        let plan = Plan::KernelRun {
            rounds: 30,
            spec: "a.toml",
        };
        assert_eq!(
            serde_json::to_string(&plan).expect("serializes"),
            serde_json::json!({"spec": "a.toml", "rounds": 30}).to_string()
        );
    }
}
