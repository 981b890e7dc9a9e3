//! The `agentwire` command.

mod call;
mod identity;
mod mcp;
mod model;
mod opt;
mod serve;
mod telemetry;

use opt::Command;

// A request allocates many small, short-lived objects, and the memory store keeps ended tasks
// until retention evicts them. jemalloc gives the blocks an eviction has just freed to the next
// request while they are still cached; mimalloc (used before) reuses them only when it comes round
// to their pages again, so every new task was written into cold memory. jemalloc takes 13 % off
// the CPU per SendMessage (docs/DECISIONS.md, Performance).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    // Under load, more tasks are ready than a worker's local queue holds (256), and the overflow
    // waits in the shared queue, which tokio visits only every few dozen polls: at 256
    // connections 1 % of requests waited 50 ms. Looking there every other poll keeps the overflow
    // moving (p99 10 ms, same throughput; docs/BENCHMARKS.md).
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().global_queue_interval(2).build();
    match runtime.map_err(anyhow::Error::from).and_then(|runtime| runtime.block_on(run())) {
        Ok(status) => status,
        // The error and its causes, as a sentence: not the Debug form, which prints a backtrace
        // when RUST_BACKTRACE is set.
        Err(error) => {
            call::error(&format!("{error:#}"));
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<std::process::ExitCode> {
    let opt = opt::parse();
    let (serve_opt, gateway) = match opt.command {
        Command::Serve(serve_opt) => (*serve_opt, None),
        Command::Gateway(gateway) => (gateway.serve, Some(gateway.upstreams)),
        Command::Keygen(keygen) => {
            identity::keygen(&keygen)?;
            return Ok(std::process::ExitCode::SUCCESS);
        }
        Command::Mcp(mcp) => {
            let logging = telemetry::Logging { default_filter: "warn", json: false, stderr: true };
            let traces = telemetry::install(logging, None)?;
            let served = mcp::run(mcp).await;
            if let Some(traces) = traces {
                traces.shut_down().await;
            }
            served?;
            return Ok(std::process::ExitCode::SUCCESS);
        }
        Command::Jwt(jwt) => {
            println!("{}", identity::jwt(&jwt)?);
            return Ok(std::process::ExitCode::SUCCESS);
        }
        // The client commands log only what RUST_LOG asks for: their output is the answer.
        Command::Call(command) => {
            let logging = telemetry::Logging { default_filter: "off", json: false, stderr: true };
            let traces = telemetry::install(logging, None)?;
            let status = command.run().await;
            if let Some(traces) = traces {
                traces.shut_down().await;
            }
            return Ok(status);
        }
    };
    let json = serve_opt.log_json || serve_opt.log_format == opt::LogFormat::Json;
    // The MCP SDK logs every session's start and end at info: its warnings are what an operator needs.
    let logging = telemetry::Logging { default_filter: "info,rmcp=warn", json, stderr: false };
    let traces = telemetry::install(logging, serve_opt.otlp_endpoint.clone())?;
    let served = serve::run(serve_opt, gateway, traces.is_some()).await;
    if let Some(traces) = traces {
        traces.shut_down().await;
    }
    served?;
    Ok(std::process::ExitCode::SUCCESS)
}
