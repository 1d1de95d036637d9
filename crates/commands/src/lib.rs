//! kernelab's use cases: each command is a function from its settings to an [`Outcome`] (the
//! documents to record, the view to show, how it ended, the notes for the user). The command
//! line, the Python module and the MCP server call these functions; none of them builds a
//! document itself. Nothing here parses arguments or prints: progress goes through the
//! [`Hooks`] the caller supplies, notes come back in the outcome, and the caller emits.
//!
//! ```
//! use kernelab_commands::{Medium, Outcome, Status, View};
//! let view = View::new(|_medium| Ok(Vec::new()), || Ok("{}\n".to_string()));
//! let outcome = Outcome::new(view, Status::Pass);
//! assert_eq!(outcome.status, Status::Pass);
//! assert!((outcome.view.json)().is_ok());
//! assert_eq!(Medium::Terminal.name_width(), 80);
//! ```

pub mod ab;
pub mod bundle;
pub mod ceilings;
pub mod check;
pub mod code;
pub mod compare;
pub mod controls;
pub mod counters;
pub mod gate;
pub mod impact;
pub mod kernel;
pub mod metrics;
pub mod profile;
pub mod rank;
pub mod roofline;
pub mod serve;
pub mod sweep;
pub mod verify;

use anyhow::{Context, Result};
use kernelab_model::Document;
use kernelab_report::Block;
use serde::Serialize;
use std::path::{Path, PathBuf};

pub use kernelab_trace::Progress;

/// A progress sink for one file, made by the caller (the readers' own callers use
/// [`Hooks::reading`]).
pub type ProgressFor<'a> = &'a dyn Fn(&Path) -> Box<dyn Progress>;

/// A counter of the steps of a long run (rounds, processes, points), drawn by the caller.
pub trait Counter {
    /// `n` steps done.
    fn set_position(&self, n: u64);
    /// `n` more steps done.
    fn inc(&self, n: u64);
    /// The run is over: the counter goes away.
    fn finish(&self);
}

/// What a long command tells its caller while it works: the CLI draws bars and lines on
/// standard error (or JSON progress lines for the MCP server); the Python module and tests
/// pass [`Quiet`].
pub trait Hooks {
    /// A progress sink for reading the file `path`.
    fn reading(&self, path: &Path) -> Box<dyn Progress>;
    /// A counter of `len` steps named `unit` (`rounds`, `processes`, `points`), drawn with
    /// the indicatif `template`.
    fn counter(&self, len: u64, template: &str, unit: &'static str) -> Box<dyn Counter>;
    /// One step of a runner (`ab`, `serve`): a line a person reads, with its count.
    fn step(&self, step: &kernelab_runner::Step<'_>);
    /// A line for the user now (where the samples go, what was skipped).
    fn say(&self, line: &str);
}

/// Hooks that show nothing.
pub struct Quiet;

impl Counter for Quiet {
    fn set_position(&self, _: u64) {}
    fn inc(&self, _: u64) {}
    fn finish(&self) {}
}

impl Hooks for Quiet {
    fn reading(&self, _: &Path) -> Box<dyn Progress> {
        Box::new(kernelab_trace::NoProgress)
    }
    fn counter(&self, _: u64, _: &str, _: &'static str) -> Box<dyn Counter> {
        Box::new(Quiet)
    }
    fn step(&self, _: &kernelab_runner::Step<'_>) {}
    fn say(&self, _: &str) {}
}

/// A setting that is not valid (a usage error, not bad input): its message is the whole
/// error, as the CLI prints it; the Python module raises it as `kernelab.UsageError`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SettingError(pub String);

/// `message` as a [`SettingError`].
pub fn setting(message: impl Into<String>) -> anyhow::Error {
    SettingError(message.into()).into()
}

/// How a command ended, for the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// It worked and every gate passed.
    Pass,
    /// A gate failed (the documents say which).
    Fail,
    /// The answer is not known yet: part of the work could not run or has not run (the notes
    /// say what; exit 2).
    Incomplete,
}

impl Status {
    /// [`Status::Pass`] when `pass`, else [`Status::Fail`].
    pub fn of(pass: bool) -> Status {
        if pass {
            Status::Pass
        } else {
            Status::Fail
        }
    }
}

/// Where text blocks are drawn: the one width policy of every command's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Medium {
    /// A terminal (or a pipe): tables fitted to its width by the renderer.
    Terminal,
    /// GitHub-flavoured Markdown.
    Markdown,
}

impl Medium {
    /// The most characters of a kernel or family name in a table drawn for this medium
    /// (longer names are cut in the middle).
    pub fn name_width(self) -> usize {
        match self {
            Medium::Terminal => 80,
            Medium::Markdown => 120,
        }
    }
}

/// A text producer of a view.
type Text = Box<dyn Fn() -> Result<String>>;

/// What a command shows, in every format: text blocks for a terminal or Markdown, the JSON
/// document, and CSV rows where the command offers them.
pub struct View {
    /// The blocks drawn for `medium`.
    pub blocks: Box<dyn Fn(Medium) -> Result<Vec<Block>>>,
    /// The JSON document (pretty, with a final newline).
    pub json: Text,
    /// CSV rows, or why the command offers none.
    pub csv: Csv,
}

/// A view's CSV: rows, or the reason there are none.
pub enum Csv {
    /// The command writes CSV rows.
    Rows(Text),
    /// The command offers no CSV; the message says what to use instead.
    Refused(String),
}

impl View {
    /// A view of `blocks` and `json`, with no CSV (`--format csv` refused, naming JSON).
    pub fn new(
        blocks: impl Fn(Medium) -> Result<Vec<Block>> + 'static,
        json: impl Fn() -> Result<String> + 'static,
    ) -> View {
        View {
            blocks: Box::new(blocks),
            json: Box::new(json),
            csv: Csv::Refused("--format csv is not offered for this command; use json".to_string()),
        }
    }

    /// The view of a document whose blocks are drawn from the document itself.
    pub fn shared<T: Serialize + 'static>(
        doc: Document<T>,
        blocks: impl Fn(&Document<T>, Medium) -> Vec<Block> + 'static,
    ) -> View {
        View::shared_rc(std::rc::Rc::new(doc), blocks)
    }

    /// [`View::shared`] of a document other closures hold too.
    fn shared_rc<T: Serialize + 'static>(
        doc: std::rc::Rc<Document<T>>,
        blocks: impl Fn(&Document<T>, Medium) -> Vec<Block> + 'static,
    ) -> View {
        let shown = std::rc::Rc::clone(&doc);
        View::new(
            move |medium| Ok(blocks(&shown, medium)),
            move || json(&*doc),
        )
    }

    /// The view of a document whose blocks and CSV rows are drawn from the document itself.
    pub fn shared_with_csv<T: Serialize + 'static>(
        doc: Document<T>,
        blocks: impl Fn(&Document<T>, Medium) -> Vec<Block> + 'static,
        csv: impl Fn(&Document<T>) -> Result<String> + 'static,
    ) -> View {
        let doc = std::rc::Rc::new(doc);
        let for_csv = std::rc::Rc::clone(&doc);
        View::shared_rc(doc, blocks).with_csv(move || csv(&for_csv))
    }

    /// This view with CSV rows made by `csv`.
    pub fn with_csv(mut self, csv: impl Fn() -> Result<String> + 'static) -> View {
        self.csv = Csv::Rows(Box::new(csv));
        self
    }

    /// This view, refusing CSV with the message `why` (saying what to use instead).
    pub fn without_csv(mut self, why: impl Into<String>) -> View {
        self.csv = Csv::Refused(why.into());
        self
    }
}

/// A document as pretty JSON with a final newline.
pub fn json<T: Serialize>(doc: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(doc).context("serializing JSON")? + "\n")
}

/// A document as it will be recorded in a bundle: its kind, its body, what it read.
#[derive(Clone, Debug)]
pub struct Recordable {
    /// The document's kind.
    pub kind: String,
    /// The document's body (without the envelope: a record carries `schema_version` and
    /// `kind` once).
    pub body: serde_json::Value,
    /// The input files, hashed into the provenance.
    pub inputs: Vec<PathBuf>,
    /// The GPU the inputs name, when they name one.
    pub gpu: Option<String>,
    /// Inputs already hashed, when their files may be gone by the time the bundle is written
    /// (a gate's work trees): recorded after those of `inputs`.
    pub hashed: Vec<kernelab_model::InputFile>,
}

impl Recordable {
    /// `doc` to be recorded with its `inputs` and `gpu`.
    pub fn of<T: Serialize>(
        doc: &Document<T>,
        inputs: &[PathBuf],
        gpu: Option<String>,
    ) -> Result<Recordable> {
        Ok(Recordable {
            kind: doc.kind.clone(),
            body: serde_json::to_value(&doc.body).context("serializing the record")?,
            inputs: inputs.to_vec(),
            gpu,
            hashed: Vec::new(),
        })
    }

    /// This record with its inputs hashed now instead of when the bundle is written.
    pub fn hashed_now(mut self) -> Recordable {
        let inputs = std::mem::take(&mut self.inputs);
        self.hashed
            .extend(kernelab_runner::provenance::hash_inputs(&inputs));
        self
    }
}

/// A record made only when a bundle asks for one.
pub type LazyRecord = Box<dyn FnOnce() -> Result<Recordable>>;

/// A file a command writes besides its output (a chart): where the user asked for it.
#[derive(Clone, Debug)]
pub struct OutputFile {
    /// The option that named it (`--svg`), for messages.
    pub option: &'static str,
    /// Where it goes.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// Replaced whatever `--force` says (a file of kernelab's own results folder).
    pub replace: bool,
}

/// What a command produced.
pub struct Outcome {
    /// The documents a bundle records (each holds every row, whatever the view shows), made
    /// only when they are recorded.
    pub records: Vec<LazyRecord>,
    /// What to show.
    pub view: View,
    /// How it ended.
    pub status: Status,
    /// Hints and warnings for the user (the CLI writes them to standard error before the
    /// output).
    pub notes: Vec<String>,
    /// What the user should know after reading the output (why it is incomplete).
    pub late_notes: Vec<String>,
    /// Files written besides the output, where the user named them.
    pub files: Vec<OutputFile>,
}

impl Outcome {
    /// An outcome showing `view`, ending `status`, with nothing to record.
    pub fn new(view: View, status: Status) -> Outcome {
        Outcome {
            records: Vec::new(),
            view,
            status,
            notes: Vec::new(),
            late_notes: Vec::new(),
            files: Vec::new(),
        }
    }

    /// This outcome, also recording `record`.
    pub fn recording(self, record: Recordable) -> Outcome {
        self.recording_later(move || Ok(record))
    }

    /// This outcome, also recording what `record` makes when a bundle asks for it.
    pub fn recording_later(
        mut self,
        record: impl FnOnce() -> Result<Recordable> + 'static,
    ) -> Outcome {
        self.records.push(Box::new(record));
        self
    }

    /// This outcome, with the note `note` for the user.
    pub fn noting(mut self, note: impl Into<String>) -> Outcome {
        self.notes.push(note.into());
        self
    }
}
