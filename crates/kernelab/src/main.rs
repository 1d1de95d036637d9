//! The `kernelab` binary: the command line of [`kernelab::main_with`].

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(kernelab::main_with(std::env::args_os().collect()))
}
