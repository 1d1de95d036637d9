//! `profile`: read trace files into one profile, rank it, and show the ranking.

use crate::rank::{rank_options, view_top, RankSettings};
use crate::{json, Hooks, Medium, Outcome, ProgressFor, Recordable, Status, View};
use anyhow::Result;
use kernelab_model::{Document, Grouping, Profile};
use kernelab_report::documents::ProfileBody;
use kernelab_report::{
    graph_sections, profile_csv, profile_document, profile_tables, rank_sections,
};
use kernelab_trace::{rank, RankOptions, Ranking, ReadOptions};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

/// `profile` as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct ProfileSettings {
    /// The trace files, read as one profile.
    pub files: Vec<PathBuf>,
    /// Grouping, filters and rows.
    pub rank: RankSettings,
    /// Time per annotated phase.
    pub by_phase: bool,
    /// Time per graph and graph node.
    pub by_graph: bool,
    /// Kernel time per rank (device).
    pub by_rank: bool,
}

/// A ranking and its document.
type Made = Rc<(Ranking, Document<ProfileBody>)>;

/// A profile's rankings, each made once for the rows it keeps.
struct Rankings {
    profile: Profile,
    options: RankOptions,
    settings: ProfileSettings,
    made: RefCell<BTreeMap<usize, Made>>,
}

impl Rankings {
    /// The ranking and document keeping `top` rows before "other".
    fn keeping(&self, top: usize) -> Result<Made> {
        if let Some(made) = self.made.borrow().get(&top) {
            return Ok(Rc::clone(made));
        }
        let options = RankOptions {
            top,
            ..self.options.clone()
        };
        let s = &self.settings;
        let made = Rc::new(profile_doc(&self.profile, &options, s.by_graph, s.by_rank)?);
        self.made.borrow_mut().insert(top, Rc::clone(&made));
        Ok(made)
    }

    /// The ranking for a view read by people (`machine` false) or programs.
    fn shown(&self, machine: bool) -> Result<Made> {
        self.keeping(view_top(self.settings.rank.top, machine))
    }

    /// The blocks of the ranking shown in `medium`.
    fn blocks(&self, medium: Medium) -> Result<Vec<kernelab_report::Block>> {
        let made = self.shown(false)?;
        let (ranking, doc) = (&made.0, &made.1);
        let family = self.options.grouping == Grouping::Family;
        let mut s = profile_tables(ranking, &self.profile.sources, family, medium.name_width());
        if let Some(r) = &doc.body.ranks {
            s.extend(rank_sections(r));
        }
        if let Some(g) = &doc.body.graphs {
            s.extend(graph_sections(g));
        }
        Ok(s)
    }
}

/// `profile`: the files of `s` read (each reported through `hooks`) and ranked. The view shows the
/// rows `--top` asks for (20 for people, all for programs when not given); the record holds
/// every row.
pub fn profile(s: &ProfileSettings, hooks: &dyn Hooks) -> Result<Outcome> {
    let options = RankOptions {
        by_phase: s.by_phase,
        ..rank_options(&s.rank)?
    };
    let reads = ProfileReads {
        by_phase: s.by_phase,
        by_graph: s.by_graph,
        correlations: false,
    };
    let profile = read_profile(&s.files, reads, &|p| hooks.reading(p))?;
    let gpu = profile_gpu(&profile);
    let rankings = Rc::new(Rankings {
        profile,
        options,
        settings: s.clone(),
        made: RefCell::new(BTreeMap::new()),
    });
    let (for_blocks, for_json, for_csv, for_record) = (
        Rc::clone(&rankings),
        Rc::clone(&rankings),
        Rc::clone(&rankings),
        rankings,
    );
    let view = View::new(
        move |medium| for_blocks.blocks(medium),
        move || json(&for_json.shown(true)?.1),
    )
    .with_csv(move || Ok(profile_csv(&for_csv.shown(true)?.0)?));
    let files = s.files.clone();
    Ok(Outcome::new(view, Status::Pass)
        .recording_later(move || Recordable::of(&for_record.keeping(usize::MAX)?.1, &files, gpu)))
}

/// What a profile reads besides the dispatches.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProfileReads {
    /// Host launches, for `by_phase`.
    pub by_phase: bool,
    /// Graph replays, for `by_graph`.
    pub by_graph: bool,
    /// Every dispatch's correlation id even without phases or graphs (the Python dispatch
    /// table shows it).
    pub correlations: bool,
}

/// Reads `files` into one profile (`kernelab profile`).
pub fn read_profile(
    files: &[PathBuf],
    reads: ProfileReads,
    progress: ProgressFor,
) -> Result<Profile> {
    let options = ReadOptions {
        host_launches: reads.by_phase,
        // Phases place a replayed kernel where its launch was captured, when the capture is in
        // the trace: that needs the graph launches and captures too.
        graphs: reads.by_graph || reads.by_phase,
        graph_operators: reads.by_graph,
        // Only phases and graphs use correlation ids: without them a dispatch takes 12 bytes.
        skip_correlations: !(reads.by_phase || reads.by_graph || reads.correlations),
        ..ReadOptions::default()
    };
    let mut profile = Profile::default();
    for path in files {
        kernelab_trace::read_file(path, &options, &mut profile, progress(path).as_ref())?;
    }
    Ok(profile)
}

/// The `profile` document of `profile` ranked by `options` (the rows `options.top` keeps),
/// with its graphs and ranks when asked for, and the ranking it shows.
pub fn profile_doc(
    profile: &Profile,
    options: &RankOptions,
    by_graph: bool,
    by_rank: bool,
) -> Result<(Ranking, Document<ProfileBody>)> {
    let ranking = rank(profile, options)?;
    let grouping = if options.grouping == Grouping::Family {
        "family"
    } else {
        "none"
    };
    let mut doc = profile_document(&ranking, &profile.sources, grouping);
    doc.body.graphs = by_graph.then(|| kernelab_trace::graphs(profile));
    doc.body.ranks = by_rank.then(|| kernelab_trace::ranks(profile));
    Ok((ranking, doc))
}

/// The GPU the profile's inputs name, when one does.
pub fn profile_gpu(profile: &Profile) -> Option<String> {
    profile.sources.iter().find_map(|s| {
        s.facts
            .iter()
            .find(|(k, _)| k == "device")
            .map(|(_, v)| v.clone())
    })
}
