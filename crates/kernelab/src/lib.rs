//! `kernelab`: evidence for GPU kernel changes. The command line, as a library: the binary
//! (`main.rs`) and the Python module's `kernelab` command both call [`main_with`]; this crate
//! only wires the library crates together, and every command lives in `commands/`.

mod cli;
mod commands;
mod emit;
mod output;
mod progress;
mod record;
mod settings;

use clap::Parser;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything worked.
    Success,
    /// A gate failed.
    Failure,
    /// Usage error or bad input.
    Error,
    /// The measurement ended before it decided (`gate`).
    Inconclusive,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Error => 2,
            ExitStatus::Inconclusive => 3,
        }
    }
}

/// Runs the command line `argv` (the program name first) and returns its exit code: 0 success,
/// 1 a gate failed, 2 usage error or bad input (the message is on standard error), 3 `gate`
/// inconclusive.
pub fn main_with(argv: Vec<std::ffi::OsString>) -> u8 {
    if let Some(code) = commands::kernel::python_run(&argv) {
        return code;
    }
    let cli = match cli::Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            if !e.use_stderr() {
                let _ = e.print();
                return 0;
            }
            // A usage error quotes the argument it refuses: where an argument holds a control
            // character, the message goes through the one printer of messages (plain text,
            // escape sequences left out, other control characters escaped), never raw.
            let control = |c: char| c.is_control() && c != '\n' && c != '\t';
            if argv
                .iter()
                .any(|a| a.to_string_lossy().chars().any(control))
            {
                output::to_stderr(e.render().to_string().trim_end());
            } else {
                let _ = e.print();
            }
            return 2;
        }
    };
    let argv = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut session = record::Session::new(cli.record.clone(), cli.label.clone(), argv);
    let s = &mut session;
    let result = match cli.command {
        cli::Command::Profile(args) => commands::profile::run(args, s),
        cli::Command::Metrics(args) => commands::metrics::run(args, s),
        cli::Command::Compare(args) => commands::compare::run(args, s),
        cli::Command::Code(cmd) => commands::code::run(cmd, s),
        cli::Command::Check(cmd) => commands::check::run(cmd, s),
        cli::Command::Ab(args) => commands::ab::run(*args, s),
        cli::Command::Gate(args) => commands::gate::run(*args, s),
        cli::Command::Serve(args) => commands::serve::run(args, s),
        cli::Command::Kernel(cmd) => commands::kernel::run(cmd, s),
        cli::Command::Report(args) => commands::report::run(args, s),
        cli::Command::Impact(args) => commands::impact::run(args, s),
        cli::Command::Record(args) => commands::record::run(args, s),
        cli::Command::Ceilings(args) => commands::ceilings::run(args, s),
        cli::Command::Roofline(args) => commands::roofline::run(*args, s),
        cli::Command::Counters(args) => commands::counters::run(*args, s),
        cli::Command::Sweep(args) => commands::sweep::run(*args, s),
        cli::Command::Export(args) => commands::export::run(args, s),
        cli::Command::Mcp(args) => commands::mcp::run(args, s),
        cli::Command::Runs(args) => commands::runs::run(args, s),
        cli::Command::Completions(args) => commands::completions::completions(args, s),
        cli::Command::Man(args) => commands::completions::man(args, s),
    };
    // The command succeeded: its documents become records of the bundle, once.
    let result = result.and_then(|status| session.finish().map(|()| status));
    match result {
        Ok(status) => status.code(),
        Err(err) => {
            if is_broken_pipe(&err) {
                return 0;
            }
            output::to_stderr(&format!("kernelab: error: {err:#}"));
            ExitStatus::Error.code()
        }
    }
}

/// The program that runs this command line again (sweep workers, counter launches): the
/// binary itself, or what `KERNELAB_EXE` names when the command line runs inside another
/// program (the Python module's `kernelab` command sets it to its own launcher).
pub(crate) fn self_exe() -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    match std::env::var_os("KERNELAB_EXE").filter(|v| !v.is_empty()) {
        Some(exe) => Ok(exe.into()),
        None => std::env::current_exe().context("finding the kernelab executable"),
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
