//! `orrery`: the command line (see `orrery --help`).
//!
//! Every failure ends in one line on stderr, `error: ...`, and a non-zero exit; nothing
//! panics on bad arguments or bad files.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Spatial trees and N-body gravity on CPUs and GPUs.
#[derive(Parser)]
#[command(name = "orrery", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the executors this machine has.
    Info,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: anyhow::Result<()> = match cli.command {
        Command::Info => Ok(()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
