//! The metalsim command line: a thin layer over the library crates.
//!
//! Exit codes: 0 success, 1 a kernel fault found while running, 2 bad input (a kernel that
//! does not compile, a wrong launch spec, a missing file).

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, Failure};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run(args) => cli::run::run(args),
        Command::Check(args) => cli::check::check(args),
        Command::Asm(args) => cli::asm::asm(args),
        Command::Models(args) => cli::models::models(args),
        Command::Validate(args) => cli::validate::validate(args),
        Command::Emit(args) => cli::emit::emit(args),
        Command::Crosscheck(args) => cli::crosscheck::crosscheck(args),
        Command::Sweep(args) => cli::sweep::sweep(args),
        Command::Tui(args) => cli::tui::tui(args),
        Command::Plot(args) => cli::plot::plot(args),
        Command::Export(args) => cli::export::export(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(msg)) => {
            if !msg.is_empty() {
                eprintln!("error: {msg}");
            }
            ExitCode::from(2)
        }
        Err(Failure::KernelFault) => ExitCode::from(1),
    }
}
