//! The documents of the evidence commands, made from their inputs: the one place where the
//! command line (`crates/kernelab`) and the Python module (`crates/python`) turn settings and
//! files into the same documents. Neither caller holds logic of its own.

use crate::bundle::{self, Bad, Entry};
use crate::documents::{AbBody, CompareBody, ProfileBody};
use crate::{input_docs, profile_document};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_model::ab::{AbResult, MetricAnalysis};
use kernelab_model::{Document, FamilyRules, Grouping, Profile};
use kernelab_stats::Pair;
use kernelab_trace::{
    compare, parse_time_range, rank, CompareOptions, Filters, Progress, RankOptions, Ranking,
    ReadOptions,
};
use regex::Regex;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A setting that is not valid (a usage error, not bad input): its message is the whole
/// error, as the CLI prints it; the Python module raises it as `kernelab.UsageError`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SettingError(pub String);

/// `message` as a [`SettingError`].
pub fn setting(message: impl Into<String>) -> anyhow::Error {
    SettingError(message.into()).into()
}

/// The most rows `top` may ask for.
pub const MAX_TOP: usize = 1_000_000;
/// The largest family rules file read.
const MAX_RULES_BYTES: u64 = 16 << 20;

/// Grouping, family rules, filters and row count as a user gives them (`--group`, `--rules`,
/// `--name`, `--device`, `--stream`, `--time-range`, `--top`).
#[derive(Clone, Debug, Default)]
pub struct RankSettings {
    /// Rows per family (`true`) or per exact name.
    pub family: bool,
    /// A TOML file of family rules.
    pub rules: Option<PathBuf>,
    /// A regular expression on full kernel names.
    pub name: Option<String>,
    /// Only this device.
    pub device: Option<u32>,
    /// Only this stream or queue.
    pub stream: Option<u64>,
    /// `START:END` after the first kernel.
    pub time_range: Option<String>,
    /// Rows before "other" (`None`: every row).
    pub top: Option<usize>,
}

/// Ranking settings from `s` (rules file read, regular expression and time range parsed).
pub fn rank_options(s: &RankSettings) -> Result<RankOptions> {
    let rules = match &s.rules {
        Some(path) => {
            let mut text = String::new();
            kernelab_model::open_regular(path)
                .and_then(|f| f.take(MAX_RULES_BYTES).read_to_string(&mut text))
                .with_context(|| format!("{}", path.display()))?;
            FamilyRules::parse(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?
        }
        None => FamilyRules::default(),
    };
    let name = match &s.name {
        Some(re) => Some(
            Regex::new(re)
                .map_err(|e| setting(format!("--name: invalid regular expression: {e}")))?,
        ),
        None => None,
    };
    let time_range = match &s.time_range {
        Some(t) => Some(parse_time_range(t).map_err(|e| setting(format!("--time-range {e}")))?),
        None => None,
    };
    if let Some(top) = s.top.filter(|t| *t > MAX_TOP) {
        return Err(setting(format!("--top {top}: expected at most {MAX_TOP}")));
    }
    Ok(RankOptions {
        grouping: if s.family {
            Grouping::Family
        } else {
            Grouping::None
        },
        rules,
        top: s.top.unwrap_or(usize::MAX),
        filters: Filters {
            device: s.device,
            stream: s.stream,
            name,
            time_range,
        },
        ..RankOptions::default()
    })
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

/// A progress sink for one file.
pub type ProgressFor<'a> = &'a dyn Fn(&Path) -> Box<dyn Progress>;

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
    Ok(Document::new(
        "compare",
        CompareBody {
            base_inputs: inputs(base),
            cand_inputs: inputs(cand),
            comparison: compare(base, cand, options)?,
        },
    ))
}

/// The `ab` document of paired samples analysed under `design` (`ab analyze`): `main` the A/B
/// pairs of `metric`, `aa` the A/A pairs, `failures` and `runs` as the samples recorded.
pub fn ab_analysis(
    samples: Option<&Path>,
    metric: String,
    main: &[Pair],
    aa: &[Pair],
    counts: (usize, usize),
    design: &kernelab_stats::Design,
) -> Document<AbBody> {
    let result = AbResult {
        aa: (!aa.is_empty()).then(|| kernelab_stats::aa_check(aa, design)),
        analyses: vec![MetricAnalysis {
            metric,
            analysis: kernelab_stats::analyze(main, design),
        }],
        failures: counts.0,
        runs: counts.1,
    };
    ab_doc(samples, result, main, aa)
}

/// The `ab` document of `result`, with the log ratios of the primary metric's pairs it used
/// and of the A/A pairs, for plots.
pub fn ab_doc(
    samples: Option<&Path>,
    result: AbResult,
    main: &[Pair],
    aa: &[Pair],
) -> Document<AbBody> {
    let used = result
        .analyses
        .first()
        .map_or(main.len(), |m| m.analysis.pairs.min(main.len()));
    Document::new(
        "ab",
        AbBody {
            samples: samples.map(|p| p.display().to_string()),
            log_ratios: kernelab_stats::log_ratios(&main[..used]),
            aa_log_ratios: kernelab_stats::log_ratios(aa),
            result,
        },
    )
}

/// The records of the bundle `dir` and those that could not be read: at least one record, or
/// an error naming the folder.
pub fn bundle_records(dir: &Path) -> Result<(Vec<Entry>, Vec<Bad>)> {
    if !dir.is_dir() {
        bail!(
            "{}: not a directory; expected a bundle written with --record DIR",
            dir.display()
        );
    }
    let (records, bad) = bundle::read_all(dir)?;
    if records.is_empty() {
        if let Some(b) = bad.into_iter().next() {
            return Err(b.error.into());
        }
        bail!(
            "{}: no records; run commands with --record {} first",
            dir.display(),
            dir.display()
        );
    }
    Ok((records, bad))
}

/// The largest note read.
pub const MAX_NOTE_BYTES: u64 = 64 << 20;

/// The text of the note `path` that `report check` audits: UTF-8, at most [`MAX_NOTE_BYTES`].
pub fn read_note(path: &Path) -> Result<String> {
    let file = kernelab_model::open_regular(path).with_context(|| path.display().to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_NOTE_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| path.display().to_string())?;
    if bytes.len() as u64 > MAX_NOTE_BYTES {
        bail!(
            "{}: larger than {MAX_NOTE_BYTES} bytes; not a note",
            path.display()
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// The evidence report of the bundle `dir`: records that cannot be read are listed as
/// unreadable (with a warning from the caller), or refused with `strict`.
pub fn bundle_report(dir: &Path, strict: bool) -> Result<crate::Report> {
    let (records, mut bad) = bundle_records(dir)?;
    if strict && !bad.is_empty() {
        return Err(bad.swap_remove(0).error.into());
    }
    let mut report = crate::evidence(&records);
    report.unreadable = bad.iter().map(Bad::unreadable).collect();
    Ok(report)
}

/// `kernelab report --format json` (`kind: "report"`): the title, every record's headline
/// and the request impacts (the one type of the document, with its JSON Schema).
pub fn report_summary(title: &str, report: &crate::Report) -> crate::schema::ReportSummary {
    crate::schema::ReportSummary {
        title: title.to_string(),
        records: report.heads.clone(),
        impacts: report.impacts.clone(),
    }
}

/// The `report_check` document: the figures of `note` that the bundle `dir` does not
/// support, and the records that could not be read (the note is checked against the others).
pub fn report_check(
    note: &str,
    dir: &Path,
) -> Result<(
    Document<crate::audit::Audit>,
    Vec<crate::bundle::Unreadable>,
)> {
    let (entries, bad) = bundle_records(dir)?;
    let found = crate::audit::audit(note, &entries);
    Ok((
        Document::new("report_check", found),
        bad.iter().map(Bad::unreadable).collect(),
    ))
}

/// The `serve` document of the samples file `samples` analysed as `result`: it passes only
/// when every compared output is identical, something was compared, no request failed and
/// every point gave successful requests.
pub fn serve_doc(
    samples: &Path,
    spec_sha256: String,
    result: kernelab_model::serve::ServeResult,
) -> Document<crate::documents::ServeBody> {
    // Nothing compared is no evidence of identity.
    let pass = result.identity.identical == result.identity.compared
        && result.identity.compared > 0
        && result.request_failures == 0
        && result.failed_points == 0;
    Document::new(
        "serve",
        crate::documents::ServeBody {
            samples: samples.display().to_string(),
            spec_sha256,
            pass,
            result,
        },
    )
}

/// The `code_matrix` of a baseline and a candidate build (`code matrix`): each build's files
/// (or the files below its folder) paired by `key`; a build without code objects is an error.
/// Also the labels of every object read, for the record's inputs.
pub fn code_matrix(
    base: (Option<&Path>, &[PathBuf]),
    cand: (Option<&Path>, &[PathBuf]),
    key: Option<&str>,
    options: &kernelab_code::LoadOptions,
) -> Result<(kernelab_code::Matrix, Vec<PathBuf>)> {
    let key = key
        .map(Regex::new)
        .transpose()
        .map_err(|e| setting(format!("--key: {e}")))?;
    let base = kernelab_code::load_build(base.0, base.1, key.as_ref(), options)?;
    let cand = kernelab_code::load_build(cand.0, cand.1, key.as_ref(), options)?;
    if base.is_empty() || cand.is_empty() {
        bail!(
            "no code objects found in the {} build",
            if base.is_empty() {
                "baseline"
            } else {
                "candidate"
            }
        );
    }
    let inputs = base
        .values()
        .chain(cand.values())
        .map(|(label, _)| PathBuf::from(label))
        .collect();
    Ok((kernelab_code::matrix(&base, &cand), inputs))
}
