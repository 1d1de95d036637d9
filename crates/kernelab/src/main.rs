//! `kernelab`: evidence for GPU kernel changes. This binary only wires the library crates
//! together; every command lives in `commands/`.

mod cli;
mod cli_counters;
mod cli_roofline;
mod cli_sweep;
mod commands;
mod output;
mod progress;
mod record;
mod settings;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything worked.
    Success,
    /// A gate failed.
    Failure,
    /// Usage error or bad input.
    Error,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> Self {
        match s {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Failure => ExitCode::from(1),
            ExitStatus::Error => ExitCode::from(2),
        }
    }
}

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let mut session = record::Session::new(cli.record.clone(), cli.label.clone());
    let s = &mut session;
    let result = match cli.command {
        cli::Command::Profile(args) => commands::profile::run(args, s),
        cli::Command::Metrics(args) => commands::metrics::run(args, s),
        cli::Command::Compare(args) => commands::compare::run(args, s),
        cli::Command::Code(cmd) => commands::code::run(cmd, s),
        cli::Command::Check(cmd) => commands::check::run(cmd, s),
        cli::Command::Ab(args) => commands::ab::run(*args, s),
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
        Ok(status) => status.into(),
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(std::io::stderr(), "kernelab: error: {err:#}");
            ExitStatus::Error.into()
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
