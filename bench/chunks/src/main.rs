//! A streaming agent writes 1,000 artifact chunks to one task, one at a time, the way an LLM
//! agent streams its answer; the client reads the stream. Prints, for each of several streams in
//! a row, the time per chunk of the first 100 chunks and of the last 100 as the reader saw them,
//! and their ratio, each window taken from the stream where it was fastest: a store whose commits
//! cost the size of the whole task (rather than of the event) makes the last chunks slower than
//! the first.
//!
//! ```sh
//! chunks --store sqlite:/tmp/chunks.db     # or memory, or postgres://…
//! ```
//!
//! The server runs in this process (the request handler, without HTTP): what is measured is the
//! execution's commits, the store and the fan-out to the reader.

use std::time::Duration;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::RequestHandler;
use agentwire_store::{Backend, MemoryStore, PostgresStore, SqliteStore};
use agentwire_types::{Artifact, Message, Part, RequestContext, SendMessageRequest, StreamResponse, TaskState};
use clap::Parser;
use futures_util::StreamExt;
use tokio::time::Instant;

#[derive(Parser)]
struct Opt {
    /// `memory`, `sqlite:PATH` or a `postgres://` URL.
    #[arg(long, default_value = "memory")]
    store: String,
    /// Chunks per stream.
    #[arg(long, default_value_t = 1_000)]
    chunks: usize,
    /// How many chunks make the early and the late window.
    #[arg(long, default_value_t = 100)]
    window: usize,
    /// Streams, one after the other.
    #[arg(long, default_value_t = 5)]
    streams: usize,
    /// Bytes of text per chunk.
    #[arg(long, default_value_t = 40)]
    chunk_bytes: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Sends `chunks` chunks of one artifact, then completes.
struct Chunker {
    chunks: usize,
    text: String,
}

impl AgentExecutor for Chunker {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let (chunks, text) = (self.chunks, self.text.clone());
        ctx.run(move |_ctx, updater| async move {
            updater.working().await?;
            for i in 0..chunks {
                let chunk = Artifact::new("answer", "answer", vec![Part::text(text.clone())]);
                updater.artifact_chunk(chunk, i > 0, i + 1 == chunks).await?;
            }
            updater.complete().await
        })
    }
}

async fn backend(url: &str) -> Backend {
    if url == "memory" {
        MemoryStore::default().backend()
    } else if url.starts_with("postgres") {
        let store = PostgresStore::connect(url).await.expect("connect to PostgreSQL");
        store.backend(Duration::from_secs(10)).await.expect("start the PostgreSQL coordinator")
    } else {
        SqliteStore::open_url(url).await.expect("open the SQLite store").backend()
    }
}

/// The times at which the reader of one stream saw each chunk.
async fn one_stream(handler: &RequestHandler, n: usize) -> Vec<Instant> {
    let request = SendMessageRequest::new(Message::user(format!("m{n}"), "stream"));
    let mut stream = handler.send_streaming_message(&RequestContext::default(), request).await.expect("send");
    let mut seen = Vec::new();
    let mut state = TaskState::Unspecified;
    while let Some(item) = stream.next().await {
        match &*item.expect("stream item").response {
            StreamResponse::ArtifactUpdate(_) => seen.push(Instant::now()),
            StreamResponse::StatusUpdate(update) => state = update.status.state,
            _ => {}
        }
    }
    assert_eq!(state, TaskState::Completed, "the stream ends with the completed task");
    seen
}

#[tokio::main]
async fn main() {
    let opt = Opt::parse();
    assert!(opt.chunks >= 2 * opt.window, "--chunks must hold two windows");
    let agent = Chunker { chunks: opt.chunks, text: "x".repeat(opt.chunk_bytes) };
    let handler = RequestHandler::builder(agent).backend(backend(&opt.store).await).build();
    let per_chunk = |times: &[Instant]| {
        times[times.len() - 1].duration_since(times[0]).as_secs_f64() * 1e6 / (times.len() - 1) as f64
    };
    let mut rows = Vec::new();
    for n in 0..opt.streams {
        let seen = one_stream(&handler, n).await;
        assert_eq!(seen.len(), opt.chunks, "every chunk reaches the reader");
        let (first, last) = (per_chunk(&seen[..opt.window]), per_chunk(&seen[seen.len() - opt.window..]));
        let total = per_chunk(&seen);
        if !opt.json {
            println!(
                "stream {n}: {first:.1} µs/chunk first {}, {last:.1} last {}, ratio {:.2}, {total:.1} overall",
                opt.window,
                opt.window,
                last / first
            );
        }
        rows.push((first, last, total));
    }
    handler.shutdown().await;
    // Each window's fastest stream: on a shared machine, noise only ever adds time.
    let fastest = |window: fn(&(f64, f64, f64)) -> f64| rows.iter().map(window).fold(f64::INFINITY, f64::min);
    let (first, last, total) = (fastest(|r| r.0), fastest(|r| r.1), fastest(|r| r.2));
    let summary = serde_json::json!({
        "store": opt.store.split(':').next(),
        "chunks": opt.chunks,
        "window": opt.window,
        "first_us_per_chunk": first,
        "last_us_per_chunk": last,
        "ratio": last / first,
        "overall_us_per_chunk": total,
    });
    if opt.json {
        println!("{summary}");
    } else {
        println!("fastest of each window: {summary}");
    }
}
