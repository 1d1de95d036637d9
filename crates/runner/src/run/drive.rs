//! One experiment lifecycle for every kind of run: create a run (or resume one), write or read
//! its typed header, hand the body a writer of sample lines, and record how it ended.
//!
//! Every samples file starts with the same header, `{"kind": "header", "schema_version", …the
//! kind's plan…, "run", "id", "label", "started"}`: [`Header`] with the kind's own plan (ab:
//! the commands and metrics; serve: the spec; kernel run, counters and sweep points: the spec's
//! hash and [`super::Plan`]). Files written before runs had ids, or before the header was one
//! type, read the same: the field names never changed, only their order in the line.

use super::{create, create_in, io, resume, resume_in, Identity, JsonlWriter, Run, RunError};
use super::{RunKind, RunState};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The first line of every run's samples file: its layout version, the kind's plan and the
/// run's identity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Header<P> {
    /// Layout version.
    pub schema_version: u32,
    /// What the run plans (its kind's own fields).
    #[serde(flatten)]
    pub plan: P,
    /// The run: kind, id, label, start (absent in files written before runs had ids).
    #[serde(flatten)]
    pub run: Identity,
}

/// The header as one line: `{"kind": "header", …}`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename = "header")]
struct HeaderLine<P> {
    #[serde(flatten)]
    header: Header<P>,
}

/// Where a new run goes.
#[derive(Clone, Copy, Debug)]
pub struct New<'a> {
    /// A label for people.
    pub label: &'a str,
    /// Where the samples file goes (else in the run's folder).
    pub samples: Option<&'a Path>,
    /// The folder runs are kept in (else the state folder).
    pub root: Option<&'a Path>,
}

impl<'a> New<'a> {
    /// A new run labelled `label` in the state folder, its samples file at `samples` when
    /// given.
    pub fn labelled(label: &'a str, samples: Option<&'a Path>) -> New<'a> {
        New {
            label,
            samples,
            root: None,
        }
    }
}

/// How a run begins.
#[derive(Clone, Copy, Debug)]
pub enum Begin<'a> {
    /// A new run.
    New(New<'a>),
    /// The run a samples file, a run's folder or a run id names, continued.
    Resume {
        /// The samples file, folder or id.
        arg: &'a Path,
        /// The folder runs are kept in (else the state folder).
        root: Option<&'a Path>,
    },
}

/// A run begun: its folder and identity, its header and the writer of its sample lines.
pub struct Session<P> {
    /// The run.
    pub run: Run,
    /// Its header (written now, or read back from a resumed file).
    pub header: Header<P>,
    /// Appends sample lines to the run's samples file.
    pub writer: JsonlWriter,
    /// Whether the run was resumed.
    pub resumed: bool,
}

impl<P: Serialize + DeserializeOwned> Session<P> {
    /// Begins a run of `kind` that can be resumed: a new one as [`Session::create`] (with the
    /// plan `plan` makes), or the one `Begin::Resume` names as [`Session::resume`] (`plan` is
    /// not used: a resumed run keeps the plan it started with).
    pub fn begin(
        kind: RunKind,
        schema_version: u32,
        how: Begin<'_>,
        plan: impl FnOnce() -> P,
    ) -> Result<Session<P>, RunError> {
        match how {
            Begin::New(new) => Session::create(kind, schema_version, new, plan()),
            Begin::Resume { arg, root } => Session::resume(kind, schema_version, arg, root),
        }
    }

    /// Resumes the run `arg` names (a samples file, a run's folder or a run id under `root`,
    /// else the state folder): checked to be of `kind` and of a layout version at most
    /// `schema_version`, its header read back, its samples opened for appending.
    pub fn resume(
        kind: RunKind,
        schema_version: u32,
        arg: &Path,
        root: Option<&Path>,
    ) -> Result<Session<P>, RunError> {
        let run = match root {
            Some(root) => resume_in(root, arg, kind, schema_version)?,
            None => resume(arg, kind, schema_version)?,
        };
        let header = read_header(&run.samples)?;
        let writer = append(&run.samples)?;
        Ok(Session {
            run,
            header,
            writer,
            resumed: true,
        })
    }
}

impl<P: Serialize> Session<P> {
    /// Creates a new run of `kind` (its folder, its samples file) and writes its header with
    /// `plan`.
    pub fn create(
        kind: RunKind,
        schema_version: u32,
        new: New<'_>,
        plan: P,
    ) -> Result<Session<P>, RunError> {
        let run = match new.root {
            Some(root) => create_in(root, kind, new.label, new.samples)?,
            None => create(kind, new.label, new.samples)?,
        };
        Session::start(run, schema_version, plan)
    }

    /// Writes the header of the new run `run` and opens its samples for appending.
    pub fn start(run: Run, schema_version: u32, plan: P) -> Result<Session<P>, RunError> {
        let header = Header {
            schema_version,
            plan,
            run: run.identity.clone(),
        };
        let mut writer = append(&run.samples)?;
        let line = HeaderLine { header };
        writer
            .write(&line)
            .map_err(io(&run.samples, "cannot write the samples file"))?;
        Ok(Session {
            run,
            header: line.header,
            writer,
            resumed: false,
        })
    }

    /// Runs `body` on the begun run and records the state `state_of` gives its result
    /// ([`Run::conclude`]): the one end of every run.
    pub fn drive<T, E: From<RunError>>(
        mut self,
        body: impl FnOnce(&mut Session<P>) -> Result<T, E>,
        state_of: impl FnOnce(&Result<T, E>) -> RunState,
    ) -> Result<(Run, T), E> {
        let result = body(&mut self);
        let value = self.run.conclude(result, state_of)?;
        Ok((self.run, value))
    }
}

fn append(samples: &Path) -> Result<JsonlWriter, RunError> {
    JsonlWriter::append(samples).map_err(io(samples, "cannot write the samples file"))
}

/// The header of the samples file at `samples`, read as `P`'s (its first line).
pub fn read_header<P: DeserializeOwned>(samples: &Path) -> Result<Header<P>, RunError> {
    let line = super::first_line(samples)?;
    serde_json::from_str::<HeaderLine<P>>(line.trim())
        .map(|l| l.header)
        .map_err(|e| RunError::Header {
            path: samples.to_path_buf(),
            message: format!("expected the header of this kind of run ({e})"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{self, AbPlan, Record, Slot};
    use crate::serve::samples::{self as serve_samples, ServePlan, ServeRecord};

    /// A copy of the repository's fixture `name` (a samples file kernelab wrote) in `dir`.
    fn copy_fixture(dir: &Path, name: &str) -> std::path::PathBuf {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(name);
        let to = dir.join(from.file_name().expect("a file"));
        std::fs::copy(&from, &to).expect("copies the fixture");
        to
    }

    #[test]
    fn an_ab_file_written_before_runs_had_ids_resumes_and_appends() {
        let root = tempfile::tempdir().expect("tmp");
        let p = copy_fixture(root.path(), "h200_ab/ab_proc_w4s3_w8s2.jsonl");
        let before = record::read(&p).expect("reads");
        let mut s = Session::<AbPlan>::resume(RunKind::Ab, 1, &p, Some(root.path()))
            .expect("an old ab file resumes");
        assert!(s.resumed);
        assert_eq!(s.header.schema_version, 1);
        assert_eq!(s.header.plan.metrics, ["median_us"]);
        assert_eq!(s.header.plan.start, kernelab_stats::Order::AB);
        assert_eq!(s.header.plan.design, None);
        assert_eq!(s.header.run.id, None);
        // Its run folder is new, linking to the file; the header is the one read by `record`.
        assert!(s.run.dir.join("samples.jsonl").exists());
        assert_eq!(before.first(), Some(&Record::Header(s.header.clone())));
        let more = Record::Failure {
            pair: 99,
            aa: false,
            slot: Slot::B,
            reason: "appended".into(),
        };
        s.writer.write(&more).expect("appends");
        let after = record::read(&p).expect("reads");
        assert_eq!(after.len(), before.len() + 1);
        assert_eq!(after.last(), Some(&more));
        // A resumed file keeps its kind: it is not a serve run.
        assert!(Session::<ServePlan>::resume(RunKind::Serve, 1, &p, Some(root.path())).is_err());
    }

    #[test]
    fn a_serve_file_of_an_earlier_version_resumes_with_its_spec() {
        let root = tempfile::tempdir().expect("tmp");
        let p = copy_fixture(root.path(), "serve/h200/aa_sdpa.samples.jsonl");
        let before = serve_samples::read(&p).expect("reads");
        let s = Session::<ServePlan>::resume(RunKind::Serve, 1, &p, Some(root.path()))
            .expect("an old serve file resumes");
        let Some(ServeRecord::Header(h)) = before.first() else {
            panic!("the fixture starts with a header");
        };
        assert_eq!(&s.header, h);
        assert_eq!(s.header.plan.spec_sha256.len(), 64);
        assert!(!s.header.plan.spec.baseline.argv.is_empty());
    }

    #[test]
    fn a_new_run_writes_the_one_header_and_reads_it_back() {
        let root = tempfile::tempdir().expect("tmp");
        let plan = AbPlan {
            baseline: vec!["a".into()],
            candidate: vec!["b".into()],
            metrics: vec!["wall_s".into()],
            start: kernelab_stats::Order::BA,
            design: None,
        };
        let new = New {
            label: "a vs b",
            samples: None,
            root: Some(root.path()),
        };
        let s = Session::create(RunKind::Ab, 7, new, plan).expect("creates");
        let line = std::fs::read_to_string(&s.run.samples).expect("reads");
        let v: serde_json::Value = serde_json::from_str(line.trim()).expect("one JSON line");
        assert_eq!(v["kind"], "header");
        assert_eq!(v["schema_version"], 7);
        assert_eq!(v["run"], "ab");
        assert_eq!(v["label"], "a vs b");
        assert_eq!(v["baseline"][0], "a");
        assert_eq!(v["start"], "BA");
        assert_eq!(
            read_header::<AbPlan>(&s.run.samples).expect("reads"),
            s.header
        );
        // The state is written by `drive` from the body's result, the body's error first.
        let dir = s.run.dir.clone();
        let e = s
            .drive(
                |_| Err::<(), RunError>(RunError::NoStateDir),
                |r| match r {
                    Ok(()) => RunState::Complete,
                    Err(_) => RunState::Stopped,
                },
            )
            .expect_err("the body's error");
        assert!(matches!(e, RunError::NoStateDir));
        assert_eq!(
            std::fs::read_to_string(dir.join("state")).expect("state"),
            "stopped\n"
        );
        let resumed = Session::<AbPlan>::resume(RunKind::Ab, 7, &dir, Some(root.path()))
            .expect("resumes by folder");
        assert_eq!(resumed.run.dir, dir);
        assert!(Session::<AbPlan>::resume(RunKind::Ab, 6, &dir, Some(root.path())).is_err());
    }
}
