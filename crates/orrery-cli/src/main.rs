//! `orrery`: the command line (see `orrery --help`).
//!
//! Every failure ends in one line on stderr, `error: ...`, and a non-zero exit; nothing
//! panics on bad arguments or bad files. clap's own usage errors keep clap's format and
//! its exit code 2.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use orrery_cli::{balltree, executor, info, simulate, tree};

/// Spatial trees and N-body gravity on CPUs and GPUs.
#[derive(Parser)]
#[command(name = "orrery", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an N-body simulation: snapshots, diagnostics, plots and a summary.
    Simulate(Box<simulate::SimulateArgs>),
    /// List the executors this machine has: CUDA devices, wgpu adapters, the CPU.
    Info,
    /// Build the Cornerstone tree (octree or binary) of a point set and report it.
    Tree(tree::TreeArgs),
    /// Build batched ball trees (Erwin's layout) of a point set and report them.
    Balltree(balltree::BallTreeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: anyhow::Result<()> = match &cli.command {
        Command::Info => {
            print!("{}", info::report());
            Ok(())
        }
        Command::Simulate(args) => simulate::run(args),
        Command::Tree(args) => tree::run(args),
        Command::Balltree(args) => balltree::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", executor::one_line(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}
