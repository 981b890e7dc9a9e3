//! `loadgen`: a closed-loop HTTP/1.1 load generator for the agentwire benchmarks.
//!
//! Every virtual user owns one keep-alive connection and sends its next request as soon as the
//! previous response has been read. Everything runs on one thread so the generator fits on one
//! core beside the server it measures.

mod check;
mod closed_loop;
mod conn;
mod idle_sse;
mod opt;
mod procfs;
mod recorder;
mod schedule;
mod summary;
mod table;
mod target;

use std::process::ExitCode;

use clap::Parser;

use opt::{Command, Opt};

fn main() -> anyhow::Result<ExitCode> {
    let opt = Opt::parse();
    match opt.command {
        Command::Report(report) => {
            table::run(&report)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Rps(load) => run_load(closed_loop::Mode::Unary, load),
        Command::Stream(load) => run_load(closed_loop::Mode::Stream, load),
        Command::IdleSse(idle) => {
            let summary = runtime()?.block_on(idle_sse::run(&idle))?;
            Ok(emit(&summary, idle.target.json))
        }
    }
}

fn run_load(mode: closed_loop::Mode, load: opt::LoadOpt) -> anyhow::Result<ExitCode> {
    let summary = runtime()?.block_on(closed_loop::run(mode, &load))?;
    Ok(emit(&summary, load.target.json))
}

/// One thread: the generator is meant to use a single core.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build()
}

/// Prints the human line, and with `--json` the JSON line on stdout (the human one then goes to
/// stderr); a run with errors fails.
fn emit(summary: &summary::RunSummary, json: bool) -> ExitCode {
    if json {
        eprintln!("{}", summary.human());
        println!("{}", summary.json());
    } else {
        println!("{}", summary.human());
    }
    if summary.errors() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
