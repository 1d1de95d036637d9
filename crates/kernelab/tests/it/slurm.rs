//! `kernelab sweep submit` / `collect` on a real single-host Slurm cluster (Debian's slurm-wlm
//! and munge), started here from a generated slurm.conf and stopped after: a sweep of CPU-only
//! points as a job array, the job cancelled midway and resubmitted, the merged matrix checked.
//! Skips, saying why, without the binaries or without root.

use crate::kernelab;
use crate::sweep::tensor_sweep;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// munged, slurmctld and slurmd running from a temporary folder; stopped on drop.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

fn found(bin: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .any(|d| Path::new(d).join(bin).is_file())
}

fn sh(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

impl Cluster {
    fn start(dir: &Path) -> Option<Cluster> {
        let missing: Vec<&str> = [
            "munged",
            "slurmctld",
            "slurmd",
            "sbatch",
            "scancel",
            "squeue",
        ]
        .into_iter()
        .filter(|b| !found(b))
        .collect();
        if !missing.is_empty() {
            kernelab_testkit::skip(
                "slurm",
                format!(
                    "{} not installed (apt-get install slurm-wlm munge; .ci/run installs them)",
                    missing.join(", ")
                ),
            );
            return None;
        }
        if sh(Command::new("id").arg("-u")).trim() != "0" {
            kernelab_testkit::skip(
                "root",
                "the Slurm daemons are started as root, and this is not root",
            );
            return None;
        }
        let host = sh(Command::new("hostname").arg("-s")).trim().to_string();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let port = 20_000 + (std::process::id() % 20_000) as u16;
        let d = dir.to_path_buf();
        std::fs::create_dir_all(d.join("state")).expect("mkdir");
        std::fs::create_dir_all(d.join("spool")).expect("mkdir");
        let key = d.join("munge.key");
        std::fs::write(
            &key,
            (0..1024).map(|i| (i * 7 + 13) as u8).collect::<Vec<u8>>(),
        )
        .expect("key");
        let _ = Command::new("chmod").arg("400").arg(&key).status();
        let p = |n: &str| d.join(n).display().to_string();
        let status = Command::new("munged")
            .arg(format!("--key-file={}", p("munge.key")))
            .arg(format!("--socket={}", p("munge.sock")))
            .arg(format!("--pid-file={}", p("munged.pid")))
            .arg(format!("--log-file={}", p("munged.log")))
            .arg(format!("--seed-file={}", p("munge.seed")))
            .arg("-f")
            .status()
            .expect("munged");
        assert!(status.success(), "munged did not start");
        let conf = format!(
            "ClusterName=kltest\nSlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={port}\n\
             SlurmdPort={}\nAuthType=auth/munge\nAuthInfo=socket={}\nCredType=cred/munge\n\
             StateSaveLocation={}\nSlurmdSpoolDir={}\nSlurmctldPidFile={}\nSlurmdPidFile={}\n\
             SlurmctldLogFile={}\nSlurmdLogFile={}\nSlurmUser=root\nSlurmdUser=root\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\nReturnToService=2\nSchedulerType=sched/builtin\n\
             MpiDefault=none\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            port + 1,
            p("munge.sock"),
            p("state"),
            p("spool"),
            p("slurmctld.pid"),
            p("slurmd.pid"),
            p("slurmctld.log"),
            p("slurmd.log"),
        );
        let conf_path = d.join("slurm.conf");
        std::fs::write(&conf_path, conf).expect("slurm.conf");
        let c = Cluster {
            dir: d,
            conf: conf_path,
        };
        for daemon in [&["slurmctld", "-i"][..], &["slurmd"][..]] {
            let ok = Command::new(daemon[0])
                .args(&daemon[1..])
                .env("SLURM_CONF", &c.conf)
                .status()
                .expect("daemon");
            assert!(ok.success(), "{} did not start", daemon[0]);
        }
        c.wait_for("the node to be idle", Duration::from_secs(60), || {
            sh(c.cmd("sinfo").args(["-h", "-o", "%t"])).contains("idle")
        });
        Some(c)
    }

    fn cmd(&self, bin: &str) -> Command {
        let mut c = Command::new(bin);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn wait_for(&self, what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
        let start = Instant::now();
        while !ok() {
            if start.elapsed() > limit {
                let log =
                    std::fs::read_to_string(self.dir.join("slurmctld.log")).unwrap_or_default();
                panic!("timed out waiting for {what}; slurmctld log:\n{log}");
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn queue_empty(&self, job: &str) -> bool {
        sh(self.cmd("squeue").args(["-h", "-j", job]))
            .trim()
            .is_empty()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for pid in ["slurmd.pid", "slurmctld.pid", "munged.pid"] {
            if let Ok(p) = std::fs::read_to_string(self.dir.join(pid)) {
                let _ = Command::new("kill").arg(p.trim()).status();
            }
        }
    }
}

fn results(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("points"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .count()
        })
        .unwrap_or(0)
}

fn job_id(submit_out: &str) -> String {
    submit_out
        .split_whitespace()
        .nth(2)
        .map(|s| s.trim_end_matches(':').to_string())
        .expect("job id in the submit line")
}

#[test]
fn a_slurm_array_cancelled_midway_resumes_to_the_full_matrix() {
    let t = tempfile::tempdir().expect("tempdir");
    let Some(cluster) = Cluster::start(&t.path().join("slurm")) else {
        return;
    };
    let sweep = tensor_sweep(t.path(), 4);
    let bundle = t.path().join("bundle");
    // Held: only the first array task (2 of the 8 points) is released before the job is cancelled.
    let out = kernelab()
        .env("SLURM_CONF", &cluster.conf)
        .args([
            "sweep",
            "submit",
            "--chunk-size",
            "2",
            "--sbatch-arg=--hold",
            "--dir",
        ])
        .arg(&bundle)
        .arg(&sweep)
        .output()
        .expect("submit");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("4 array tasks, 8 of 8 points"), "{text}");
    let job = job_id(&text);
    let ok = cluster
        .cmd("scontrol")
        .args(["release", &format!("{job}_0")])
        .status();
    assert!(ok.is_ok_and(|s| s.success()));
    cluster.wait_for("the first chunk", Duration::from_secs(60), || {
        results(&bundle) == 2
    });
    assert!(cluster
        .cmd("scancel")
        .arg(&job)
        .status()
        .is_ok_and(|s| s.success()));
    cluster.wait_for(
        "the cancelled job to leave the queue",
        Duration::from_secs(60),
        || cluster.queue_empty(&job),
    );
    let partial = kernelab()
        .args(["sweep", "collect", "--format", "json", "--dir"])
        .arg(&bundle)
        .arg(&sweep)
        .output()
        .expect("collect");
    assert_eq!(partial.status.code(), Some(2), "incomplete matrix");
    let m: serde_json::Value = serde_json::from_slice(&partial.stdout).expect("json");
    assert_eq!(m["done"], 2);
    assert_eq!(m["pending"].as_array().map(Vec::len), Some(6));

    // Resubmitted: only the six pending points are submitted, and the matrix is whole.
    let out = kernelab()
        .env("SLURM_CONF", &cluster.conf)
        .args(["sweep", "submit", "--chunk-size", "2", "--dir"])
        .arg(&bundle)
        .arg(&sweep)
        .output()
        .expect("submit");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("3 array tasks, 6 of 8 points (2 already done)"),
        "{text}"
    );
    let job2 = job_id(&text);
    cluster.wait_for("the second job", Duration::from_secs(120), || {
        cluster.queue_empty(&job2) && results(&bundle) == 8
    });
    let full = kernelab()
        .args(["sweep", "collect", "--format", "json", "--dir"])
        .arg(&bundle)
        .arg(&sweep)
        .output()
        .expect("collect");
    assert_eq!(full.status.code(), Some(1), "the flip build fails its gate");
    let m: serde_json::Value = serde_json::from_slice(&full.stdout).expect("json");
    assert_eq!(m["done"], 8);
    assert_eq!(m["lines"][0], "4 of 8 configs bitwise equal");
    assert_eq!(m["lines"][2], "1 of 2 builds change code (4 of 8 configs)");
    let workers: Vec<&str> = m["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|p| p["worker"].as_str())
        .collect();
    assert!(workers.iter().all(|w| w.contains(" slurm ")), "{workers:?}");
    assert!(
        workers
            .iter()
            .any(|w| w.contains(&format!("slurm {job}_0"))),
        "{workers:?}"
    );
}
