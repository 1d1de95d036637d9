//! `compare`: baseline runs against candidate runs, per family.

use crate::rank::{rank_options, view_top, RankSettings};
use crate::{json, setting, Hooks, Medium, Outcome, ProgressFor, Recordable, Status, View};
use anyhow::Result;
use kernelab_model::{Document, Profile};
use kernelab_report::documents::CompareBody;
use kernelab_report::{compare_csv, compare_tables, input_docs};
use kernelab_trace::{compare, CompareOptions, RankOptions, ReadOptions};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

/// `compare` as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct CompareSettings {
    /// The baseline's runs (one file each).
    pub base: Vec<PathBuf>,
    /// The candidate's runs.
    pub cand: Vec<PathBuf>,
    /// Grouping, filters and rows.
    pub rank: RankSettings,
    /// Families whose change is a control (expected unchanged).
    pub controls: Vec<String>,
    /// Graphs compared too.
    pub by_graph: bool,
}

/// The runs of a comparison and its documents, each made once for the rows it keeps.
struct Comparisons {
    base: Vec<Profile>,
    cand: Vec<Profile>,
    options: CompareOptions,
    top: Option<usize>,
    made: RefCell<BTreeMap<usize, Rc<Document<CompareBody>>>>,
}

impl Comparisons {
    /// The document keeping `top` rows before "other".
    fn keeping(&self, top: usize) -> Result<Rc<Document<CompareBody>>> {
        if let Some(made) = self.made.borrow().get(&top) {
            return Ok(Rc::clone(made));
        }
        let mut options = self.options.clone();
        options.rank.top = top;
        let made = Rc::new(compare_doc(&self.base, &self.cand, &options)?);
        self.made.borrow_mut().insert(top, Rc::clone(&made));
        Ok(made)
    }

    /// The document of a view read by people (`machine` false) or programs.
    fn shown(&self, machine: bool) -> Result<Rc<Document<CompareBody>>> {
        self.keeping(view_top(self.top, machine))
    }

    fn blocks(&self, medium: Medium) -> Result<Vec<kernelab_report::Block>> {
        let d = &self.shown(false)?.body;
        Ok(compare_tables(
            &d.comparison,
            &d.base_inputs,
            &d.cand_inputs,
            medium.name_width(),
        ))
    }
}

/// `compare`: the runs of `s` read (each reported through `hooks`) and compared per family. The
/// view keeps the rows `--top` asks for; the record holds every row.
pub fn compare_runs(s: &CompareSettings, hooks: &dyn Hooks) -> Result<Outcome> {
    let progress = |p: &std::path::Path| hooks.reading(p);
    if s.base.is_empty() || s.cand.is_empty() {
        return Err(setting(
            "give BASE CAND, or --base FILE... and --cand FILE...",
        ));
    }
    let options = CompareOptions {
        rank: RankOptions {
            top: usize::MAX,
            ..rank_options(&s.rank)?
        },
        controls: s.controls.clone(),
        by_graph: s.by_graph,
    };
    let base = read_runs(&s.base, s.by_graph, &progress)?;
    let cand = read_runs(&s.cand, s.by_graph, &progress)?;
    let all = Rc::new(Comparisons {
        base,
        cand,
        options,
        top: s.rank.top,
        made: RefCell::new(BTreeMap::new()),
    });
    let (for_blocks, for_json, for_csv, for_record) =
        (Rc::clone(&all), Rc::clone(&all), Rc::clone(&all), all);
    let view = View::new(
        move |medium| for_blocks.blocks(medium),
        move || json(&*for_json.shown(true)?),
    )
    .with_csv(move || Ok(compare_csv(&for_csv.shown(true)?.body.comparison)?));
    let inputs: Vec<PathBuf> = s.base.iter().chain(&s.cand).cloned().collect();
    Ok(Outcome::new(view, Status::Pass)
        .recording_later(move || Recordable::of(&*for_record.keeping(usize::MAX)?, &inputs, None)))
}

/// Reads each file as one run of a comparison (no correlation ids: a comparison has no
/// phases).
pub fn read_runs(paths: &[PathBuf], by_graph: bool, progress: ProgressFor) -> Result<Vec<Profile>> {
    paths
        .iter()
        .map(|path| {
            let mut p = Profile::default();
            // A comparison has no phases: correlation ids are needed only to tie replayed
            // kernels to their graph launches (`by_graph`).
            let options = ReadOptions {
                skip_correlations: !by_graph,
                graphs: by_graph,
                ..ReadOptions::default()
            };
            kernelab_trace::read_file(path, &options, &mut p, progress(path).as_ref())?;
            Ok(p)
        })
        .collect()
}

/// The `compare` document of baseline runs `base` and candidate runs `cand`.
pub fn compare_doc(
    base: &[Profile],
    cand: &[Profile],
    options: &CompareOptions,
) -> Result<Document<CompareBody>> {
    let inputs = |runs: &[Profile]| {
        input_docs(
            &runs
                .iter()
                .flat_map(|p| p.sources.clone())
                .collect::<Vec<_>>(),
        )
    };
    Ok(Document::of(CompareBody {
        base_inputs: inputs(base),
        cand_inputs: inputs(cand),
        comparison: compare(base, cand, options)?,
    }))
}
