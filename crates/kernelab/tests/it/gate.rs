//! `kernelab gate` end to end on a throwaway git repository of a CPU "kernel" (a shell script
//! that sleeps): a planted 2× slowdown is called SLOWER with exit 1, a commit that changes
//! nothing SAME with exit 0, a broken build exit 2, a spent budget exit 3; the summary, the
//! comment's marker and the workflow commands are checked against GitHub's formats, and the
//! temporary work trees are gone afterwards.

use super::kernelab;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `git ARGS` in `dir`, which must succeed.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stages everything in `dir` and commits it as `message`.
fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", message]);
}

/// A new git repository `root/name` (with `src/`) on branch `main`, committing as the tests;
/// `None` when git is absent.
fn new_repo(root: &Path, name: &str) -> Option<PathBuf> {
    if Command::new("git").arg("--version").output().is_err() {
        kernelab_testkit::skip("git", "git is not installed");
        return None;
    }
    let r = root.join(name);
    std::fs::create_dir_all(r.join("src")).expect("mkdir");
    git(&r, &["init", "--quiet", "-b", "main"]);
    git(&r, &["config", "user.name", "kernelab tests"]);
    git(&r, &["config", "user.email", "tests@kernelab.invalid"]);
    git(&r, &["config", "commit.gpgsign", "false"]);
    Some(r)
}

/// Writes `text` to `dir/name`.
fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// The gate's configuration of the tests: ten pairs, five A/A pairs, a coarse threshold (a
/// 2-core box's noise cannot reach it; the planted change is far beyond it).
const CONFIG: &str = r#"
[build]
command = "sh build.sh"

[bench]
command = "./kernel.sh"
threshold = "25%"
min_pairs = 10
max_pairs = 10
aa_pairs = 5
warmup = 0
"#;

/// A kernel at two clocks: every third run sleeps twice as long.
const BIMODAL: &str = "#!/bin/sh\nn=$(cat count 2>/dev/null || echo 0)\necho $((n + 1)) > count\n\
                       if [ $((n % 3)) = 0 ]; then sleep 0.2; else sleep 0.1; fi\n";

/// A repository whose `main` has the kernel (`sleep 0.1`, "built" by copying it) and the
/// gate's configuration, with branches `slow` (sleeps twice as long), `same` (a change that
/// does not touch the kernel), `broken` (a build that fails) and `bimodal` (a kernel at two
/// clocks). `None` when git is absent.
fn repo(root: &Path) -> Option<PathBuf> {
    let r = new_repo(root, "repo")?;
    write(&r, "kernel.sh.in", "#!/bin/sh\nsleep 0.1\n");
    write(
        &r,
        "build.sh",
        "cp kernel.sh.in kernel.sh && chmod +x kernel.sh\n",
    );
    write(&r, ".gitignore", "kernel.sh\n");
    write(&r, ".kernelab/gate.toml", CONFIG);
    commit(&r, "the kernel");
    for (branch, file, text) in [
        ("slow", "kernel.sh.in", "#!/bin/sh\nsleep 0.2\n"),
        (
            "same",
            "README",
            "a change that does not touch the kernel\n",
        ),
        (
            "broken",
            "build.sh",
            "echo 'kernel.cu:1: error: planted' >&2\nexit 1\n",
        ),
        ("bimodal", "kernel.sh.in", BIMODAL),
    ] {
        git(&r, &["checkout", "--quiet", "-b", branch, "main"]);
        write(&r, file, text);
        commit(&r, branch);
    }
    git(&r, &["checkout", "--quiet", "main"]);
    Some(r)
}

/// What one gate run left: exit status, stdout, stderr, the summary and the comment.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    summary: String,
    comment: String,
}

/// `kernelab gate --head HEAD_REV` in `repo` as a GitHub Actions step, its temporary files
/// under `root/tmp` (checked empty afterwards), with `extra` arguments.
fn gate(root: &Path, repo: &Path, head: &str, extra: &[&str]) -> Run {
    gate_with_path(root, repo, head, extra, None)
}

/// [`gate`] with `bin` first on PATH, when given.
fn gate_with_path(root: &Path, repo: &Path, head: &str, extra: &[&str], bin: Option<&Path>) -> Run {
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let summary = root.join(format!("summary-{head}.md"));
    let comment = root.join(format!("comment-{head}.md"));
    let out = kernelab()
        .arg("gate")
        .arg("--repo")
        .arg(repo)
        .args(["--head", head, "--comment"])
        .arg(&comment)
        .args(extra)
        .env("TMPDIR", &tmp)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env_remove("GITHUB_BASE_REF")
        .env_remove("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")
        .env(
            "PATH",
            match bin {
                Some(b) => format!(
                    "{}:{}",
                    b.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
                None => std::env::var("PATH").unwrap_or_default(),
            },
        )
        .output()
        .expect("runs");
    // The work trees are removed, from the disk and from git's list.
    let left: Vec<_> = std::fs::read_dir(&tmp).expect("tmp").collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    let list = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["worktree", "list", "--porcelain"])
        .output()
        .expect("git");
    let list = String::from_utf8_lossy(&list.stdout);
    assert_eq!(list.matches("worktree ").count(), 1, "{list}");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        comment: std::fs::read_to_string(&comment).unwrap_or_default(),
    }
}

/// Every line of `stdout` that starts with `::` is a workflow command in GitHub's documented
/// form `::KIND title=TITLE::MESSAGE`, or `::KIND file=F,line=L,endLine=E,title=TITLE::MESSAGE`
/// on lines of a file (property values with `:` and `,` escaped, no raw line break), and the
/// lines of `kind` are returned.
fn workflow_commands<'a>(stdout: &'a str, kind: &str) -> Vec<&'a str> {
    let re = regex::Regex::new(
        r"^::(error|warning|notice) (file=[^:,\r\n]+,line=[1-9][0-9]*,endLine=[1-9][0-9]*,)?title=[^:,\r\n]*::[^\r\n]*$",
    )
    .expect("regex");
    let commands: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::")).collect();
    for c in &commands {
        assert!(re.is_match(c), "not a workflow command: {c}");
    }
    commands
        .into_iter()
        .filter(|c| c.starts_with(&format!("::{kind} ")))
        .collect()
}

#[test]
fn the_gate_calls_a_planted_slowdown_and_passes_a_change_that_touches_nothing() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = repo(root.path()) else {
        return;
    };
    let bundle = root.path().join("bundle");
    let b = bundle.to_str().expect("utf-8");

    let slow = gate(root.path(), &repo, "slow", &["--record", b]);
    assert_eq!(slow.code, 1, "{}\n{}", slow.stdout, slow.stderr);
    assert!(
        slow.summary
            .starts_with("## ❌ kernelab gate: regression\n"),
        "{}",
        slow.summary
    );
    assert!(
        slow.summary
            .contains("| metric | verdict | change | interval | pairs | gate |\n|---|"),
        "{}",
        slow.summary
    );
    assert!(
        slow.summary.contains("| wall_s | **SLOWER** | +"),
        "{}",
        slow.summary
    );
    assert!(
        slow.comment.starts_with("<!-- kernelab-gate -->\n## ❌"),
        "{}",
        slow.comment
    );
    let errors = workflow_commands(&slow.stdout, "error");
    assert_eq!(errors.len(), 1, "{}", slow.stdout);
    assert!(
        errors[0]
            .starts_with("::error title=kernelab gate - wall_s regressed::wall_s is worse by +"),
        "{}",
        errors[0]
    );
    assert!(slow.stdout.contains("SLOWER"), "{}", slow.stdout);
    // The bundle holds the gate's decision and the A/B record, renders, and the report
    // passes its own audit.
    let report = super::report_of(&bundle, "json");
    assert!(report.contains("\"ab\""), "{report}");
    assert!(report.contains("\"kind\": \"gate\""), "{report}");
    let md = super::report_of(&bundle, "md");
    assert!(md.contains("kernelab gate: regression (exit 1)"), "{md}");
    assert!(md.contains("Gate verdicts, head against base"), "{md}");
    let note = root.path().join("report.md");
    std::fs::write(&note, &md).expect("write");
    let out = kernelab()
        .args(["report", "check"])
        .arg(&note)
        .arg("--bundle")
        .arg(&bundle)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let audit: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{audit}");
    assert_eq!(audit["mismatches"], serde_json::json!([]), "{audit}");

    let same = gate(root.path(), &repo, "same", &[]);
    assert_eq!(same.code, 0, "{}\n{}", same.stdout, same.stderr);
    assert!(
        same.summary.starts_with("## ✅ kernelab gate: pass\n"),
        "{}",
        same.summary
    );
    assert!(
        same.summary.contains("| wall_s | **SAME** |"),
        "{}",
        same.summary
    );
    assert!(
        same.comment.starts_with("<!-- kernelab-gate -->\n"),
        "{}",
        same.comment
    );
    assert!(
        workflow_commands(&same.stdout, "error").is_empty(),
        "{}",
        same.stdout
    );
    assert_eq!(
        workflow_commands(&same.stdout, "notice").len(),
        1,
        "{}",
        same.stdout
    );
}

#[test]
fn a_broken_build_bad_config_and_a_spent_budget_have_their_own_exit_statuses() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = repo(root.path()) else {
        return;
    };

    let broken = gate(root.path(), &repo, "broken", &[]);
    assert_eq!(broken.code, 2, "{}\n{}", broken.stdout, broken.stderr);
    assert!(
        broken.stderr.contains("the build of the head")
            && broken.stderr.contains("kernel.cu:1: error: planted"),
        "{}",
        broken.stderr
    );
    assert!(
        broken
            .summary
            .starts_with("## ⚠️ kernelab gate: could not run (exit 2)"),
        "{}",
        broken.summary
    );
    assert!(
        broken.comment.starts_with("<!-- kernelab-gate -->\n"),
        "{}",
        broken.comment
    );
    assert_eq!(
        workflow_commands(&broken.stdout, "error").len(),
        1,
        "{}",
        broken.stdout
    );

    let bad = root.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[bench]\ncommand = \"./kernel.sh\"\nthreshold = \"200%\"\n",
    )
    .expect("w");
    let run = gate(
        root.path(),
        &repo,
        "same",
        &["--config", bad.to_str().expect("p"), "--force"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("threshold"), "{}", run.stderr);

    // A design out of range is refused before anything is built.
    std::fs::write(&bad, CONFIG.replace("min_pairs = 10", "min_pairs = 1")).expect("w");
    let run = gate(
        root.path(),
        &repo,
        "same",
        &["--config", bad.to_str().expect("p"), "--force"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--min-pairs 1") && !run.stderr.contains("building"),
        "{}",
        run.stderr
    );

    // Outside GitHub Actions no workflow command is printed.
    let out = kernelab()
        .arg("gate")
        .arg("--repo")
        .arg(&repo)
        .arg("--config")
        .arg(&bad)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let unknown = gate(root.path(), &repo, "no-such-branch", &["--force"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown
            .stderr
            .contains("\"no-such-branch\" names no commit"),
        "{}",
        unknown.stderr
    );

    // A budget spent after two pairs: no interval yet, so inconclusive (exit 3).
    let spent = root.path().join("spent.toml");
    std::fs::write(
        &spent,
        CONFIG.replace("aa_pairs = 5", "aa_pairs = 0\nbudget = \"0.001s\""),
    )
    .expect("w");
    let run = gate(
        root.path(),
        &repo,
        "slow",
        &["--config", spent.to_str().expect("p"), "--force"],
    );
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.summary.contains("## ⚠️ kernelab gate: inconclusive"),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains("the budget was spent after 2 pairs"),
        "{}",
        run.summary
    );
    assert_eq!(
        workflow_commands(&run.stdout, "warning").len(),
        1,
        "{}",
        run.stdout
    );
}

/// Writes the executable script `text` to `path`.
fn script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn the_actions_entry_script_reports_the_status_and_updates_the_marked_comment() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = repo(root.path()) else {
        return;
    };
    let (bin, runner) = (root.path().join("bin"), root.path().join("runner"));
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::create_dir_all(&runner).expect("runner");
    // A `gh` that logs its calls, and lists one comment (id 42) as the marked one.
    let log = root.path().join("gh.log");
    script(
        &bin.join("gh"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\ncase \"$*\" in *--paginate*) echo 42;; esac\n",
            log.display()
        ),
    );
    let (output, summary) = (root.path().join("output"), root.path().join("summary.md"));
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new("bash")
        .arg(super::root().join("ci/github-gate.sh"))
        .current_dir(&repo)
        .envs(kernelab_testkit::isolated_env())
        .env("KERNELAB", assert_cmd::cargo::cargo_bin("kernelab"))
        .env("PATH", path)
        .env("RUNNER_TEMP", &runner)
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "owner/kernels")
        .env("GATE_HEAD", "broken")
        .env("PR", "7")
        .env_remove("GITHUB_BASE_REF")
        .output()
        .expect("bash runs");
    assert!(status.status.success(), "the script itself exits 0");
    let stdout = String::from_utf8_lossy(&status.stdout);
    assert_eq!(workflow_commands(&stdout, "error").len(), 1, "{stdout}");
    assert_eq!(
        std::fs::read_to_string(&output).expect("GITHUB_OUTPUT"),
        "exit-status=2\n"
    );
    assert!(std::fs::read_to_string(&summary)
        .expect("summary")
        .starts_with("## ⚠️ kernelab gate: could not run (exit 2)"));
    let body = runner.join("kernelab-gate-comment.md");
    assert!(std::fs::read_to_string(&body)
        .expect("comment")
        .starts_with("<!-- kernelab-gate -->\n"));
    let calls = std::fs::read_to_string(&log).expect("gh was called");
    assert!(
        calls.contains("api --paginate repos/owner/kernels/issues/7/comments"),
        "{calls}"
    );
    assert!(
        calls.contains(&format!(
            "api --method PATCH repos/owner/kernels/issues/comments/42 -F body=@{}",
            body.display()
        )),
        "{calls}"
    );
    assert!(
        !calls.contains("POST"),
        "the marked comment is updated: {calls}"
    );
}

#[test]
fn a_base_at_two_clocks_is_named_in_the_summary() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = repo(root.path()) else {
        return;
    };
    let run = gate(root.path(), &repo, "bimodal", &["--base", "bimodal"]);
    assert!(
        [0, 1, 3].contains(&run.code),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.summary
            .contains("the base's wall_s runs form two separated groups ("),
        "{}",
        run.summary
    );
}

/// A fake `nvidia-smi` in `bin`: `--version` says CUDA 13.0; a `--query-gpu` call answers as
/// an H100 whose application SM clock is 1980 MHz for the first `change_after` calls and
/// 1410 MHz (set by someone mid-run) after them. It checks that it is asked for CSV without
/// header or units, and logs the columns asked for.
pub(crate) fn fake_nvidia_smi(bin: &Path, change_after: usize) {
    std::fs::create_dir_all(bin).expect("bin");
    let calls = bin.join("calls");
    script(
        &bin.join("nvidia-smi"),
        &format!(
            r#"#!/bin/sh
case "$1" in
  --version) printf 'NVIDIA-SMI version  : 580.159.04\nCUDA Version        : 13.0\n'; exit 0;;
  --query-gpu=*) [ "$2" = "--format=csv,noheader,nounits" ] || exit 6;;
  *) exit 4;;
esac
echo "$1" > '{dir}/columns'
n=$(cat '{calls}' 2>/dev/null || echo 0)
echo $((n + 1)) > '{calls}'
clock=1980
if [ "$n" -ge {change_after} ]; then clock=1410; fi
echo "GPU-8b407799-36d2-0743-babd-293f8944a796, NVIDIA H100 80GB HBM3, 580.159.04, $clock, 2619, 1980, 2619, Not Active, 700.00, Enabled, Enabled, Default"
"#,
            dir = bin.display(),
            calls = calls.display(),
        ),
    );
}

#[test]
fn clocks_changed_mid_run_refuse_the_verdict_naming_the_field_and_both_values() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = repo(root.path()) else {
        return;
    };
    // 5 A/A pairs and 10 pairs: the clocks change before the 9th fingerprint, in the pairs.
    let bin = root.path().join("bin");
    fake_nvidia_smi(&bin, 8);
    let run = gate_with_path(root.path(), &repo, "same", &[], Some(&bin));
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.summary
            .starts_with("## ⚠️ kernelab gate: refused, the conditions changed\n"),
        "{}",
        run.summary
    );
    assert!(
        run.summary
            .contains("gpu 0 sm_clock_mhz: 1980 → 1410 (pair 3)"),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains("gpu 0 clocks_locked: no → yes"),
        "{}",
        run.summary
    );
    assert_eq!(
        workflow_commands(&run.stdout, "warning").len(),
        1,
        "{}",
        run.stdout
    );
    // Asked by column name, as documented.
    let columns = std::fs::read_to_string(bin.join("columns")).expect("asked");
    assert_eq!(
        columns.trim(),
        "--query-gpu=uuid,name,driver_version,clocks.applications.graphics,\
         clocks.applications.memory,clocks.default_applications.graphics,\
         clocks.default_applications.memory,clocks_event_reasons.applications_clocks_setting,\
         enforced.power.limit,ecc.mode.current,persistence_mode,compute_mode"
    );
}

#[test]
fn unchanged_conditions_keep_the_verdict_and_are_shown() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = repo(root.path()) else {
        return;
    };
    let bin = root.path().join("bin");
    fake_nvidia_smi(&bin, 1_000_000);
    let bundle = root.path().join("bundle");
    let run = gate_with_path(
        root.path(),
        &repo,
        "same",
        &["--record", bundle.to_str().expect("utf-8")],
        Some(&bin),
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.summary.contains(
            "Conditions (checked before each pair): nvidia-smi, CUDA 13.0; gpu 0 NVIDIA H100 \
             80GB HBM3 GPU-8b407799-36d2-0743-babd-293f8944a796 driver 580.159.04, SM 1980 MHz, \
             memory 2619 MHz, clocks default, power cap 700.00 W, ECC Enabled, persistence \
             Enabled, compute mode Default"
        ),
        "{}",
        run.summary
    );
    // The record holds the fingerprint of the first pair and no change; the samples one line
    // per pair (5 A/A and 10).
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(bundle.join("0002-ab.json")).expect("the ab record"),
    )
    .expect("JSON");
    let conditions = &record["result"]["conditions"];
    assert_eq!(conditions["changed"], serde_json::json!([]), "{conditions}");
    assert_eq!(
        conditions["fingerprint"]["gpus"][0]["sm_clock_mhz"], "1980",
        "{conditions}"
    );
    assert_eq!(
        conditions["fingerprint"]["command"], "./kernel.sh",
        "{conditions}"
    );
    let calls = std::fs::read_to_string(bin.join("calls")).expect("calls");
    assert_eq!(calls.trim(), "15");
}

/// A kernel on a machine at two clocks shared by both sides: a counter outside the work trees
/// puts every third pair (both its runs) at the slow clock, where the kernel takes 0.4 s
/// whatever the commit; at the fast clock it takes `fast` seconds (groups far apart, so a
/// loaded machine's noise cannot merge them).
fn clocked_kernel(clock: &Path, fast: &str) -> String {
    format!(
        "#!/bin/sh\nn=$(cat '{c}' 2>/dev/null || echo 0)\necho $((n + 1)) > '{c}'\n\
         if [ $(((n / 2) % 3)) = 0 ]; then sleep 0.4; else sleep {fast}; fi\n",
        c = clock.display()
    )
}

#[test]
fn a_slowdown_at_one_of_the_base_clocks_only_is_inconclusive_with_why() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = repo(root.path()) else {
        return;
    };
    let clock = root.path().join("clock");
    for (branch, fast) in [("clock-base", "0.05"), ("clock-head", "0.1")] {
        git(&repo, &["checkout", "--quiet", "-b", branch, "main"]);
        write(&repo, "kernel.sh.in", &clocked_kernel(&clock, fast));
        commit(&repo, branch);
    }
    git(&repo, &["checkout", "--quiet", "main"]);
    let run = gate(root.path(), &repo, "clock-head", &["--base", "clock-base"]);
    // Twice as slow at the fast clock, unchanged at the slow one: SLOWER overall, but which
    // clock the runs get decides, so the gate does not call it.
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.summary
            .starts_with("## ⚠️ kernelab gate: inconclusive\n"),
        "{}",
        run.summary
    );
    assert!(
        run.summary
            .contains("the base's wall_s runs form two separated groups ("),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains(
            "the decision is unstable across the base's two groups: the 7 pairs whose base ran \
             in the lower group change by +"
        ) && run.summary.contains("the 3 in the upper group by "),
        "{}",
        run.summary
    );
    assert_eq!(
        workflow_commands(&run.stdout, "warning").len(),
        1,
        "{}",
        run.stdout
    );
}

#[test]
fn the_changed_kernel_source_lines_are_annotated_with_the_decision() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = repo(root.path()) else {
        return;
    };
    let config = root.path().join("annotate.toml");
    std::fs::write(
        &config,
        format!("{CONFIG}\n[annotate]\npaths = [\"*.in\", \"kernels/*.cu\"]\n"),
    )
    .expect("w");
    let file = root.path().join("annotations.txt");
    let run = gate(
        root.path(),
        &repo,
        "slow",
        &[
            "--config",
            config.to_str().expect("p"),
            "--annotations",
            file.to_str().expect("p"),
        ],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    // `slow` changed line 2 of kernel.sh.in (`sleep 0.1` to `sleep 0.2`).
    let on_lines: Vec<&str> = workflow_commands(&run.stdout, "warning")
        .into_iter()
        .filter(|c| c.contains(" file="))
        .collect();
    assert_eq!(on_lines.len(), 1, "{}", run.stdout);
    assert!(
        on_lines[0].starts_with(
            "::warning file=kernel.sh.in,line=2,endLine=2,title=kernelab gate - regression in \
             this change::kernel code changed here; kernelab gate: regression (exit 1), head "
        ) && on_lines[0].contains(": wall_s SLOWER +"),
        "{}",
        on_lines[0]
    );
    // The file holds the same commands: the verdict's error, then the line's warning.
    let written = std::fs::read_to_string(&file).expect("--annotations");
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 2, "{written}");
    assert!(lines[0].starts_with("::error title=kernelab gate - wall_s regressed::"));
    assert_eq!(lines[1], on_lines[0]);
    assert_eq!(workflow_commands(&written, "warning").len(), 1);

    // A change that touches no kernel source annotates no line.
    let same = gate(
        root.path(),
        &repo,
        "same",
        &["--config", config.to_str().expect("p"), "--force"],
    );
    assert_eq!(same.code, 0, "{}\n{}", same.stdout, same.stderr);
    assert!(!same.stdout.contains(" file="), "{}", same.stdout);
}

/// A gate that could not run (no GPU here): exit 2, saying so in the summary.
fn could_not_run(r: &Run) {
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.summary.contains("could not run (exit 2)"),
        "{}",
        r.summary
    );
}

/// A repository of a Triton kernel "built" by copying its cubin and metadata to `build/`, with
/// the launch spec `bench/k.toml` naming the build's files for both sides: `main`, `same` (a
/// change that does not touch the kernel) and `retuned` (the kernel compiled with another
/// config, w4s4 for w4s3). `None` when git is absent.
fn kernel_repo(root: &Path) -> Option<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let r = new_repo(root, "kernel-repo")?;
    let put = |config: &str| {
        for ext in ["cubin", "json"] {
            std::fs::copy(
                fixtures.join(format!("code/recompute_w_u_fwd_kernel_{config}.{ext}")),
                r.join(format!("src/kernel.{ext}")),
            )
            .expect("copy");
        }
    };
    put("w4s3");
    let spec = std::fs::read_to_string(fixtures.join("kernel/recompute_w4s3_aa.toml"))
        .expect("spec")
        .replace(
            "../code/recompute_w_u_fwd_kernel_w4s3.cubin",
            "../build/kernel.cubin",
        );
    write(&r, "bench/k.toml", &spec);
    write(
        &r,
        "build.sh",
        "mkdir -p build && cp src/kernel.cubin src/kernel.json build/\n",
    );
    write(&r, ".gitignore", "build/\n");
    write(
        &r,
        ".kernelab/gate.toml",
        "[build]\ncommand = \"sh build.sh\"\n\n[kernel]\nspec = \"bench/k.toml\"\nthreshold = \"1%\"\nrounds = 4\n",
    );
    commit(&r, "the kernel");
    git(&r, &["checkout", "--quiet", "-b", "same", "main"]);
    write(&r, "README", "a change that does not touch the kernel\n");
    commit(&r, "same");
    git(&r, &["checkout", "--quiet", "-b", "retuned", "main"]);
    put("w4s4");
    commit(&r, "retuned");
    git(&r, &["checkout", "--quiet", "main"]);
    Some(r)
}

#[test]
fn a_kernel_spec_gate_compares_each_sides_own_build_before_it_needs_the_gpu() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = kernel_repo(root.path()) else {
        return;
    };
    // The head's build is the candidate, the base's the baseline: the machine code of the two
    // work trees' `build/kernel.cubin` is compared before the GPU is opened.
    let same = gate(root.path(), &repo, "same", &["--base", "main"]);
    assert!(
        same.stderr
            .contains("identical machine code: any difference is noise"),
        "{}",
        same.stderr
    );
    let retuned = gate(root.path(), &repo, "retuned", &["--base", "main"]);
    assert!(
        !retuned.stderr.contains("identical machine code")
            && retuned.stderr.contains("kernelab gate: machine code"),
        "{}",
        retuned.stderr
    );
    if std::path::Path::new("/dev/nvidia0").exists() {
        // With a GPU the A/B runs: the identical side is never called a regression.
        assert_ne!(same.code, 1, "{}\n{}", same.stdout, same.stderr);
        return;
    }
    // Without one, exit 2 naming why, in the summary, the comment and an error annotation.
    for r in [&same, &retuned] {
        could_not_run(r);
        assert!(
            r.comment.starts_with("<!-- kernelab-gate -->\n"),
            "{}",
            r.comment
        );
        assert_eq!(
            workflow_commands(&r.stdout, "error").len(),
            1,
            "{}",
            r.stdout
        );
    }
}

#[test]
fn a_kernel_or_python_benchmark_that_does_not_resolve_is_exit_2_naming_it() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = kernel_repo(root.path()) else {
        return;
    };
    // The head's spec names a build file the base never made (no [build]); a Python file
    // the base does not hold.
    let config = root.path().join("gate.toml");
    for (text, says) in [
        (
            "[kernel]\nspec = \"bench/k.toml\"\nthreshold = \"1%\"\n",
            &["bench/k.toml", "kernel.cubin", "cannot read"][..],
        ),
        (
            "[python]\nmodule = \"bench/missing.py\"\nfunction = \"run\"\ninputs = \"make\"\nthreshold = \"1%\"\n",
            &["[python] module bench/missing.py: no such file in the base's work tree"][..],
        ),
    ] {
        std::fs::write(&config, text).expect("write");
        let r = gate(
            root.path(),
            &repo,
            "same",
            &["--base", "main", "--force", "--config", config.to_str().expect("utf-8")],
        );
        assert_eq!(r.code, 2, "{}", r.stderr);
        for s in says {
            assert!(r.stderr.contains(s), "{s}: {}", r.stderr);
        }
    }
}

/// An `.npy` file of `values` (f32, one dimension).
fn npy_f32(values: &[f32]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
        values.len()
    );
    // Magic, version 1.0, the header length, the header padded with spaces to a multiple of
    // 64 bytes (with its newline).
    let pad = 64 - (10 + dict.len() + 1) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad % 64));
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    for v in values {
        out.extend(v.to_le_bytes());
    }
    out
}

/// A repository whose build "computes" a kernel's outputs per size (copies `src/T1.npy` and
/// `src/T2.npy` to `out/`) and whose `bench/sweep.toml` holds them bitwise, the base's against
/// the head's: `main`, `same` (a change that does not touch the outputs) and `wrong` (the T=2
/// output differs in one element). `None` when git is absent.
fn tensor_sweep_repo(root: &Path) -> Option<PathBuf> {
    let r = new_repo(root, "sweep-repo")?;
    std::fs::write(r.join("src/T1.npy"), npy_f32(&[1.0, 2.0])).expect("write");
    std::fs::write(r.join("src/T2.npy"), npy_f32(&[1.0, 2.0, 3.0, 4.0])).expect("write");
    write(
        &r,
        "build.sh",
        "mkdir -p out && cp src/T1.npy src/T2.npy out/\n",
    );
    write(
        &r,
        "bench/sweep.toml",
        "[tensor]\ngate = \"bitwise\"\nbaseline = \"../out/T{T}.npy\"\ncandidate = \"../out/T{T}.npy\"\n\n[grid.sizes]\nT = [1, 2]\n",
    );
    write(&r, ".gitignore", "out/\n");
    write(
        &r,
        ".kernelab/gate.toml",
        "[build]\ncommand = \"sh build.sh\"\n\n[sweep]\nfile = \"bench/sweep.toml\"\nthreshold = \"2%\"\n",
    );
    commit(&r, "the kernel");
    git(&r, &["checkout", "--quiet", "-b", "same", "main"]);
    write(&r, "README", "a change that does not touch the kernel\n");
    commit(&r, "same");
    git(&r, &["checkout", "--quiet", "-b", "wrong", "main"]);
    std::fs::write(r.join("src/T2.npy"), npy_f32(&[1.0, 2.0, 3.5, 4.0])).expect("write");
    commit(&r, "wrong");
    git(&r, &["checkout", "--quiet", "main"]);
    Some(r)
}

#[test]
fn a_sweep_gate_holds_every_config_of_the_heads_build_against_the_bases() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = tensor_sweep_repo(root.path()) else {
        return;
    };
    let bundle = root.path().join("bundle-same");
    let same = gate(
        root.path(),
        &repo,
        "same",
        &[
            "--base",
            "main",
            "--record",
            bundle.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(same.code, 0, "{}\n{}", same.stdout, same.stderr);
    for says in [
        "2 of 2 configs bitwise equal",
        "no config was timed: the gates decide",
        "sweep bench/sweep.toml of 2 configs, the base's build against the head's",
    ] {
        assert!(same.summary.contains(says), "{says}: {}", same.summary);
    }
    // The bundle holds the decision and the matrix, and its report passes its own audit.
    let md = root.path().join("report.md");
    let r = kernelab()
        .args(["report", "--format", "md", "--out"])
        .arg(&md)
        .arg(&bundle)
        .output()
        .expect("report");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let c = kernelab()
        .args(["report", "check", "--bundle"])
        .arg(&bundle)
        .arg(&md)
        .output()
        .expect("report check");
    assert!(
        c.status.success(),
        "{}{}",
        String::from_utf8_lossy(&c.stdout),
        String::from_utf8_lossy(&c.stderr)
    );
    let kinds: Vec<String> = std::fs::read_dir(&bundle)
        .expect("bundle")
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.ok()?.path()).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            Some(v["kind"].as_str()?.to_string())
        })
        .collect();
    assert!(
        kinds.contains(&"gate".to_string()) && kinds.contains(&"sweep".to_string()),
        "{kinds:?}"
    );
    // One element of the head's T=2 output differs from the base's: the bitwise gate fails
    // there, exit 1, the config named.
    let wrong = gate(root.path(), &repo, "wrong", &["--base", "main"]);
    assert_eq!(wrong.code, 1, "{}\n{}", wrong.stdout, wrong.stderr);
    assert!(
        wrong
            .summary
            .contains("a correctness gate failed in 1 of 2 configs: T=2"),
        "{}",
        wrong.summary
    );
    assert!(
        wrong.summary.contains("1 of 2 configs bitwise equal"),
        "{}",
        wrong.summary
    );
}

#[test]
fn a_kernel_sweep_gate_compares_each_configs_machine_code_before_it_needs_the_gpu() {
    let root = tempfile::tempdir().expect("tmp");
    let Some(repo) = kernel_repo(root.path()) else {
        return;
    };
    let config = root.path().join("gate.toml");
    std::fs::write(
        &config,
        "[build]\ncommand = \"sh build.sh\"\n\n[sweep]\nfile = \"bench/sweep.toml\"\nthreshold = \"1%\"\n",
    )
    .expect("write");
    // The sweep lives in the repository: each branch gets it (the base's copy is not read).
    for branch in ["main", "same", "retuned"] {
        git(&repo, &["checkout", "--quiet", branch]);
        write(
            &repo,
            "bench/sweep.toml",
            "spec = \"k.toml\"\ntiming = true\nrounds = 4\n\n[grid.sizes]\nT = [4096, 8192]\n\n[[grid.build]]\nkey = \"build\"\nbaseline = \"../build/kernel.cubin\"\ncandidate = \"../build/kernel.cubin\"\n",
        );
        commit(&repo, "the sweep");
    }
    git(&repo, &["checkout", "--quiet", "main"]);
    let args = [
        "--base",
        "main",
        "--force",
        "--config",
        config.to_str().expect("utf-8"),
    ];
    let same = gate(root.path(), &repo, "same", &args);
    assert!(
        same.stderr
            .contains("identical machine code in all 2 configs: any difference is noise"),
        "{}",
        same.stderr
    );
    let retuned = gate(root.path(), &repo, "retuned", &args);
    assert!(
        retuned
            .stderr
            .contains("machine code differs in 2 of 2 configs"),
        "{}",
        retuned.stderr
    );
    if std::path::Path::new("/dev/nvidia0").exists() {
        assert_ne!(same.code, 1, "{}\n{}", same.stdout, same.stderr);
        return;
    }
    for r in [&same, &retuned] {
        could_not_run(r);
    }
}
