//! The `agentwire` command.

mod opt;
mod serve;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use opt::{Command, Opt};

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
