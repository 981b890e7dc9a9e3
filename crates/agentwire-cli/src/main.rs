//! The `agentwire` command.

mod opt;
mod serve;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use opt::{Command, Opt};

// A request allocates many small, short-lived objects; mimalloc serves them several times cheaper
// than the system allocator (see docs/BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let opt = Opt::parse();
    let Command::Serve(serve_opt) = opt.command;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    if serve_opt.log_json {
        tracing_subscriber::fmt().json().with_env_filter(filter).init();
    } else {
        tracing_subscriber::fmt().with_env_filter(filter).init();
    }
    serve::run(serve_opt).await
}
