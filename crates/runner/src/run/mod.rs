//! The experiment run shared by `ab`, `serve`, `kernel run`, `counters` and sweep points: a
//! folder of its own under the per-user state folder (`$XDG_STATE_HOME/kernelab/runs/`, else
//! `~/.local/state/kernelab/runs/`, never the working directory), named by an id that cannot
//! collide (the folder is created with `mkdir`, which fails when it exists), holding the typed
//! JSONL samples file (`samples.jsonl`, created never clobbering; its first line is the header:
//! kind, schema version, id, label, start, the spec's hash and the plan), the profiler's work
//! folders and the servers' logs, and `state` once the run has ended.
//!
//! ```
//! use kernelab_runner::run::{Identity, RunKind};
//! let dir = tempfile::tempdir().unwrap();
//! let run = kernelab_runner::run::create_in(dir.path(), RunKind::Ab, "demo", None).unwrap();
//! assert!(run.id.starts_with("ab-"));
//! assert!(run.dir.starts_with(dir.path()));
//! ```

use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// What kind of experiment a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunKind {
    /// `kernelab ab`: ABBA pairs of fresh processes.
    Ab,
    /// `kernelab serve`: rounds of two inference servers.
    Serve,
    /// `kernelab kernel run`: timed launches of two builds of a kernel.
    KernelRun,
    /// `kernelab counters`: profiler passes.
    Counters,
    /// One timed kernel point of `kernelab sweep` (in the sweep's results folder, `runs/`).
    SweepPoint,
}

impl RunKind {
    /// The name used in ids, headers and `kernelab runs`.
    pub fn name(self) -> &'static str {
        match self {
            RunKind::Ab => "ab",
            RunKind::Serve => "serve",
            RunKind::KernelRun => "kernel_run",
            RunKind::Counters => "counters",
            RunKind::SweepPoint => "sweep_point",
        }
    }
    /// What `kernelab runs` counts for this kind.
    pub fn unit(self) -> &'static str {
        match self {
            RunKind::Ab => "pairs",
            RunKind::Serve => "rounds",
            RunKind::KernelRun | RunKind::SweepPoint => "samples",
            RunKind::Counters => "processes",
        }
    }
}

/// The run fields of a samples file's header line (`{"kind": "header", "run": …}`), beside the
/// command's own plan fields. Every field is absent in files written before runs had ids.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Identity {
    /// The kind of run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunKind>,
    /// The run's id (its folder's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A label for people (`--label`, else what is compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When the run started (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
}

/// A run: its id, its folder and its samples file.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The kind of run.
    pub kind: RunKind,
    /// The id (the folder's name).
    pub id: String,
    /// The run's folder (samples, profiler work folders, server logs, `state`).
    pub dir: PathBuf,
    /// The samples file.
    pub samples: PathBuf,
    /// The header's run fields.
    pub identity: Identity,
}

/// Why a run could not be created, found or resumed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// Neither `XDG_STATE_HOME` nor `HOME` is set.
    #[error("no state folder: set XDG_STATE_HOME or HOME (runs are kept in $XDG_STATE_HOME/kernelab/runs/)")]
    NoStateDir,
    /// A file or folder could not be created, read or written.
    #[error("{}: {what}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// `--resume` names neither a file nor a run id.
    #[error("--resume {0}: neither a samples file nor the id of a run in {1} (`kernelab runs` lists them)")]
    NotFound(String, String),
    /// The file resumed is not a samples file of this kind or version.
    #[error("{}: line 1: {message}", path.display())]
    Header {
        /// The samples file.
        path: PathBuf,
        /// What was expected.
        message: String,
    },
    /// A run's folder, `state` file or samples file is not what kernelab writes there: a
    /// symbolic link (never followed out of the state folder), a FIFO, a file too large, a
    /// line too long, a state it does not know.
    #[error("{}: {message}", path.display())]
    Refused {
        /// The file or folder.
        path: PathBuf,
        /// What it is, and what was expected.
        message: String,
    },
}

/// Largest `state` file read: 64 bytes (it holds one word).
pub const MAX_STATE_BYTES: u64 = 64;

/// Refuses `path` when it is a symbolic link (not followed: a run's folder or `state` file
/// is kernelab's own, inside the state folder). `Ok(false)`: it does not exist.
fn not_a_link(path: &Path, what: &str) -> Result<bool, RunError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(RunError::Refused {
            path: path.to_path_buf(),
            message: format!(
                "a symbolic link where {what} is expected; links are not followed out of the state folder"
            ),
        }),
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(path, "cannot read")(e)),
    }
}

/// Whether `id` is a run id: one plain file name (no `/`, not `.` or `..`), so that the state
/// folder joined with it stays inside the state folder.
fn is_plain_name(id: &Path) -> bool {
    let mut c = id.components();
    matches!(
        (c.next(), c.next()),
        (Some(std::path::Component::Normal(_)), None)
    )
}

/// A run's `state` (`None`: no `state` file, the run is incomplete), read as a regular file of
/// at most [`MAX_STATE_BYTES`] (a FIFO is refused without blocking, a link is not followed).
fn read_state(dir: &Path) -> Result<Option<RunState>, RunError> {
    let p = dir.join("state");
    if !not_a_link(&p, "a run's state file")? {
        return Ok(None);
    }
    let refused = |message: String| RunError::Refused {
        path: p.clone(),
        message,
    };
    let text = kernelab_model::read_regular_text(&p, MAX_STATE_BYTES)
        .map_err(|e| refused(format!("cannot read the run's state: {e}")))?;
    let word = text.trim();
    [RunState::Complete, RunState::Stopped, RunState::Failed]
        .into_iter()
        .find(|s| s.name() == word)
        .map(Some)
        .ok_or_else(|| {
            refused(format!(
                "line 1: {:?}: expected complete, stopped or failed",
                word.chars().take(64).collect::<String>()
            ))
        })
}

fn io<'a>(path: &'a Path, what: &'static str) -> impl FnOnce(std::io::Error) -> RunError + 'a {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        what,
        source,
    }
}

/// The folder runs are kept in: `$XDG_STATE_HOME/kernelab/runs` (an absolute
/// `XDG_STATE_HOME` only, as the XDG spec says), else `$HOME/.local/state/kernelab/runs`.
pub fn state_dir() -> Result<PathBuf, RunError> {
    let xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = match xdg {
        Some(p) => p,
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .ok_or(RunError::NoStateDir)?
            .join(".local/state"),
    };
    Ok(base.join("kernelab").join("runs"))
}

/// 64 unpredictable bits: the standard library's randomly keyed hasher over the time and pid.
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish()
}

/// A coin flip for the order of the first pair or round.
pub fn coin_flip() -> kernelab_stats::Order {
    if random_u64() & 1 == 0 {
        kernelab_stats::Order::AB
    } else {
        kernelab_stats::Order::BA
    }
}

/// Creates a run of `kind` in the state folder ([`state_dir`]): its folder, and its samples
/// file, at `samples` when given (created there, never clobbering; the run's folder then
/// holds `samples.jsonl` as a link to it), else `samples.jsonl` in the folder.
pub fn create(kind: RunKind, label: &str, samples: Option<&Path>) -> Result<Run, RunError> {
    create_in(&state_dir()?, kind, label, samples)
}

/// [`create`] under `root` instead of the state folder.
pub fn create_in(
    root: &Path,
    kind: RunKind,
    label: &str,
    samples: Option<&Path>,
) -> Result<Run, RunError> {
    let (id, dir, started) = make_dir(root, kind)?;
    let in_dir = dir.join("samples.jsonl");
    let samples = match samples {
        Some(p) => {
            create_new(p)?;
            let abs = std::path::absolute(p).map_err(io(p, "cannot resolve"))?;
            std::os::unix::fs::symlink(&abs, &in_dir)
                .map_err(io(&in_dir, "cannot link the samples file"))?;
            p.to_path_buf()
        }
        None => {
            create_new(&in_dir)?;
            in_dir
        }
    };
    Ok(Run {
        kind,
        identity: Identity {
            run: Some(kind),
            id: Some(id.clone()),
            label: Some(label.to_string()),
            started: Some(started),
        },
        id,
        dir,
        samples,
    })
}

/// A new, empty run folder under `root`: its id, path and start time.
fn make_dir(root: &Path, kind: RunKind) -> Result<(String, PathBuf, String), RunError> {
    std::fs::create_dir_all(root).map_err(io(root, "cannot create the runs folder"))?;
    let started = crate::provenance::rfc3339(std::time::SystemTime::now());
    let stamp: String = started
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(15)
        .collect();
    // `mkdir` fails when the folder exists: a clash (same second, same random) draws again.
    loop {
        let id = format!(
            "{}-{stamp}-{:06x}",
            kind.name().replace('_', "-"),
            random_u64() & 0xff_ffff
        );
        let dir = root.join(&id);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok((id, dir, started)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&dir, "cannot create the run's folder")(e)),
        }
    }
}

fn create_new(p: &Path) -> Result<(), RunError> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(RunError::Io {
            path: p.to_path_buf(),
            what:
                "already exists; a samples file is never overwritten (name another, or --resume it)",
            source: e,
        }),
        Err(e) => Err(io(p, "cannot create the samples file")(e)),
    }
}

/// The header line's fields every kind shares, as read back.
#[derive(Clone, Debug, Deserialize)]
struct Probe {
    kind: String,
    #[serde(default)]
    schema_version: Option<u32>,
    #[serde(flatten)]
    identity: Identity,
    #[serde(default)]
    baseline: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    spec: Option<serde_json::Value>,
}

impl Probe {
    /// The kind: the header's `run`, or (files written before it) told by the plan's fields.
    fn kind(&self) -> Option<RunKind> {
        self.identity.run.or(if self.baseline.is_some() {
            Some(RunKind::Ab)
        } else if self.spec.as_ref().is_some_and(|s| s.is_object()) {
            Some(RunKind::Serve)
        } else {
            None
        })
    }
}

fn first_line(path: &Path) -> Result<String, RunError> {
    let f = kernelab_model::open_regular(path).map_err(io(path, "cannot read the samples file"))?;
    // The header is small; a first line longer than 64 MiB is not a header.
    let mut buf = Vec::new();
    std::io::Read::take(std::io::BufReader::new(f), 64 << 20)
        .read_until(b'\n', &mut buf)
        .map_err(io(path, "cannot read the samples file"))?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn probe(path: &Path) -> Result<Probe, RunError> {
    let line = first_line(path)?;
    let bad = |message: String| RunError::Header {
        path: path.to_path_buf(),
        message,
    };
    let p: Probe = serde_json::from_str(line.trim())
        .map_err(|e| bad(format!("expected a kernelab samples header ({e})")))?;
    if p.kind != "header" {
        return Err(bad(format!(
            "expected a header record, found kind {:?}; not a kernelab samples file",
            p.kind
        )));
    }
    Ok(p)
}

/// Finds the run `arg` names (a samples file's path, a run's folder, or a run id in the state
/// folder) and checks that its header is of `kind` and of a schema version at most `max_version`.
pub fn resume(arg: &Path, kind: RunKind, max_version: u32) -> Result<Run, RunError> {
    let root = state_dir()?;
    resume_in(&root, arg, kind, max_version)
}

/// [`resume`] with runs under `root`.
pub fn resume_in(
    root: &Path,
    arg: &Path,
    kind: RunKind,
    max_version: u32,
) -> Result<Run, RunError> {
    let as_id = root.join(arg);
    let bare = is_plain_name(arg);
    let samples = if std::fs::symlink_metadata(arg).is_ok() {
        if arg.is_dir() {
            arg.join("samples.jsonl")
        } else {
            // A FIFO or device is refused by the read, without blocking.
            arg.to_path_buf()
        }
    } else if bare && not_a_link(&as_id, "a run's folder")? && as_id.is_dir() {
        as_id.join("samples.jsonl")
    } else if bare {
        return Err(RunError::NotFound(
            arg.display().to_string(),
            root.display().to_string(),
        ));
    } else {
        // A path that is not there: the read names it and says why.
        arg.to_path_buf()
    };
    let p = probe(&samples)?;
    let bad = |message: String| RunError::Header {
        path: samples.clone(),
        message,
    };
    let found = p.kind();
    if found != Some(kind) {
        return Err(bad(format!(
            "a {} run cannot be resumed here; this file holds {}",
            kind.name(),
            found.map_or("an unknown kind of run".to_string(), |k| format!(
                "a {} run",
                k.name()
            ))
        )));
    }
    match p.schema_version {
        Some(v) if v <= max_version => {}
        Some(v) => {
            return Err(bad(format!(
                "schema_version {v} is newer than this kernelab reads ({max_version}); use a newer kernelab"
            )))
        }
        None => return Err(bad("the header has no schema_version".into())),
    }
    // The run's folder: where the header's id says, else (files written before runs had ids,
    // or a file moved elsewhere) a new run folder linking to the file.
    if let Some(id) = &p.identity.id {
        if !is_plain_name(Path::new(id)) {
            return Err(bad(format!(
                "the header's id {:?} is not a run id (one plain name in the state folder)",
                id.chars().take(64).collect::<String>()
            )));
        }
        not_a_link(&root.join(id), "a run's folder")?;
    }
    let dir = match &p.identity.id {
        Some(id) if root.join(id).is_dir() => root.join(id),
        _ => {
            let run = create_linked(root, kind, &samples)?;
            return Ok(Run {
                identity: Identity {
                    run: Some(kind),
                    ..p.identity
                },
                ..run
            });
        }
    };
    Ok(Run {
        kind,
        id: p.identity.id.clone().unwrap_or_default(),
        dir,
        samples,
        identity: p.identity,
    })
}

/// A new run folder for an existing samples file (linked, not copied).
fn create_linked(root: &Path, kind: RunKind, samples: &Path) -> Result<Run, RunError> {
    let (id, dir, started) = make_dir(root, kind)?;
    let link = dir.join("samples.jsonl");
    let abs = std::path::absolute(samples).map_err(io(samples, "cannot resolve"))?;
    std::os::unix::fs::symlink(&abs, &link).map_err(io(&link, "cannot link the samples file"))?;
    Ok(Run {
        kind,
        identity: Identity {
            run: Some(kind),
            id: Some(id.clone()),
            label: None,
            started: Some(started),
        },
        id,
        dir,
        samples: samples.to_path_buf(),
    })
}

/// How a run ended, kept in its folder's `state` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Every planned pair, round or point was run.
    Complete,
    /// Stopped early (a failure, a stop rule); `--resume` may continue it.
    Stopped,
    /// Ended with an error.
    Failed,
}

impl RunState {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            RunState::Complete => "complete",
            RunState::Stopped => "stopped",
            RunState::Failed => "failed",
        }
    }
}

impl Run {
    /// A folder inside the run's folder (created): profiler work folders, server logs. One
    /// that is a symbolic link is refused, not followed.
    pub fn subdir(&self, name: &str) -> Result<PathBuf, RunError> {
        let d = self.dir.join(name);
        // A link planted there would put the run's files outside its folder.
        not_a_link(&d, "a folder of the run")?;
        std::fs::create_dir_all(&d).map_err(io(&d, "cannot create the folder"))?;
        Ok(d)
    }
    /// The end of every run's lifecycle: records the state `state_of` gives the body's
    /// `result` (`state` in the run's folder) and returns the result. The body's own error
    /// wins over a failure to write the state; a state that cannot be written fails a body
    /// that worked.
    pub fn conclude<T, E: From<RunError>>(
        &self,
        result: Result<T, E>,
        state_of: impl FnOnce(&Result<T, E>) -> RunState,
    ) -> Result<T, E> {
        let written = self.finish(state_of(&result));
        let value = result?;
        written?;
        Ok(value)
    }

    /// Records how the run ended (`state` in its folder, replaced on a resumed run).
    pub fn finish(&self, state: RunState) -> Result<(), RunError> {
        let p = self.dir.join("state");
        kernelab_model::write_file(&p, format!("{}\n", state.name()).as_bytes(), true)
            .map_err(io(&p, "cannot write the run's state"))
    }
}

/// One line of `kernelab runs`.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunSummary {
    /// The run's id.
    pub id: String,
    /// Its kind (`None`: the header is unreadable).
    pub kind: Option<RunKind>,
    /// Its label.
    pub label: String,
    /// When it started.
    pub started: String,
    /// Pairs (ab), rounds (serve), samples (kernel run) or processes recorded.
    pub count: usize,
    /// `complete`, `stopped`, `failed`, or `incomplete` (running, or killed: `--resume`
    /// continues it).
    pub state: String,
    /// The samples file.
    pub samples: PathBuf,
}

/// The runs in the state folder, oldest first.
pub fn list() -> Result<Vec<RunSummary>, RunError> {
    list_in(&state_dir()?)
}

/// [`list`] of the runs under `root`.
pub fn list_in(root: &Path) -> Result<Vec<RunSummary>, RunError> {
    let entries = match std::fs::read_dir(root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(root, "cannot list the runs folder")(e)),
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let dir = e.path();
        let Some(id) = dir.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
            continue;
        };
        let samples = dir.join("samples.jsonl");
        if id.starts_with('.') {
            continue;
        }
        // A run's folder is never a link: one would take the listing out of the state folder.
        not_a_link(&dir, "a run's folder")?;
        // A run is a folder with a samples file (a sweep's results folder also holds
        // `points/` and `slurm/`, which are not runs).
        if !dir.is_dir() || samples.symlink_metadata().is_err() {
            continue;
        }
        let p = probe(&samples).ok();
        let kind = p.as_ref().and_then(Probe::kind);
        let state = read_state(&dir)?
            .map_or("incomplete", RunState::name)
            .to_string();
        let count = match kind {
            Some(k) => count(&samples, k)?,
            None => 0,
        };
        out.push(RunSummary {
            count,
            label: p
                .as_ref()
                .and_then(|p| p.identity.label.clone())
                .unwrap_or_default(),
            started: p
                .as_ref()
                .and_then(|p| p.identity.started.clone())
                .unwrap_or_default(),
            kind,
            id,
            state,
            samples,
        });
    }
    out.sort_by(|a, b| (&a.started, &a.id).cmp(&(&b.started, &b.id)));
    Ok(out)
}

/// Pairs, rounds, samples or processes in a samples file, read line by line (a line longer
/// than [`MAX_LINE_BYTES`] is an error naming it; one that is not a record is not counted).
fn count(samples: &Path, kind: RunKind) -> Result<usize, RunError> {
    #[derive(Deserialize)]
    struct Line {
        kind: String,
        #[serde(default)]
        round: Option<usize>,
        #[serde(default)]
        aa: bool,
    }
    let Ok(mut lines) = Lines::open(samples, MAX_LINE_BYTES) else {
        return Ok(0);
    };
    let (mut runs, mut rounds, mut others) = (0usize, 0usize, 0usize);
    loop {
        let line = match lines.next_line() {
            Ok(Some((_, line, _))) => line,
            Ok(None) | Err(LineError::Read(_)) => break,
            Err(e) => {
                return Err(RunError::Refused {
                    path: samples.to_path_buf(),
                    message: e.to_string(),
                })
            }
        };
        let Ok(l) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        match l.kind.as_str() {
            "run" if !l.aa => runs += 1,
            "stop" => rounds = rounds.max(l.round.map_or(0, |r| r + 1)),
            "header" | "fingerprint" => {}
            _ => others += 1,
        }
    }
    Ok(match kind {
        RunKind::Ab => runs / 2,
        RunKind::Serve => rounds,
        _ => others,
    })
}

/// Longest line of a samples file read (every kind's): 64 MiB. A record is far smaller; a
/// longer line is refused before it is held whole.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// One line of [`Lines`]: its 1-based number, its bytes (the newline left off) and whether it
/// ended with a newline.
pub type Line<'a> = (u64, &'a [u8], bool);

/// Why [`Lines::next_line`] stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// The file could not be read.
    #[error("{0}")]
    Read(#[source] std::io::Error),
    /// A line longer than the cap (1-based line number).
    #[error("line {line}: longer than {limit} bytes: not a samples record")]
    TooLong {
        /// The line.
        line: u64,
        /// The cap.
        limit: usize,
    },
}

/// A samples file read line by line: each line's buffer grows as its bytes are read, and a
/// line longer than the cap is an error before more of it is held (a 3 GB line costs no more
/// memory than the cap).
pub struct Lines {
    r: std::io::BufReader<std::fs::File>,
    buf: Vec<u8>,
    n: u64,
    limit: usize,
}

impl Lines {
    /// Opens `path` (a regular file: a FIFO is refused without blocking) with lines of at most
    /// `limit` bytes.
    pub fn open(path: &Path, limit: usize) -> std::io::Result<Lines> {
        let f = kernelab_model::open_regular(path)?;
        Ok(Lines {
            r: std::io::BufReader::with_capacity(1 << 16, f),
            buf: Vec::new(),
            n: 0,
            limit,
        })
    }

    /// The next line: its 1-based number, its bytes (the newline left off) and whether it
    /// ended with a newline (a last line without one is torn: a run killed mid-write).
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>, LineError> {
        use std::io::Read;
        self.buf.clear();
        let got = (&mut self.r)
            .take(self.limit as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(LineError::Read)?;
        if got == 0 {
            return Ok(None);
        }
        self.n += 1;
        let complete = self.buf.last() == Some(&b'\n');
        let len = self.buf.len() - usize::from(complete);
        if len > self.limit {
            return Err(LineError::TooLong {
                line: self.n,
                limit: self.limit,
            });
        }
        Ok(Some((
            self.n,
            self.buf.get(..len).unwrap_or_default(),
            complete,
        )))
    }
}

/// Appends one JSON line and flushes it: the samples writer of every run kind.
pub struct JsonlWriter {
    file: std::fs::File,
    /// The file.
    pub path: PathBuf,
}

impl JsonlWriter {
    /// Opens `path` for appending (creating it). A torn last line (the previous run was killed
    /// mid-write) is cut off first, so that new records start on a line of their own.
    pub fn append(path: &Path) -> std::io::Result<Self> {
        let file = kernelab_model::open_append_regular(path)?;
        kernelab_model::cut_torn_tail(&file)?;
        Ok(JsonlWriter {
            file,
            path: path.to_path_buf(),
        })
    }
    /// Writes one record and flushes it to the OS.
    pub fn write<T: Serialize>(&mut self, r: &T) -> std::io::Result<()> {
        let mut line = serde_json::to_string(r).map_err(std::io::Error::other)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}

mod drive;
mod lines;

pub use drive::{read_header, Begin, Header, New, Session};
pub use lines::{OwnPlan, Plan, SampleLine};

#[cfg(test)]
mod tests;
