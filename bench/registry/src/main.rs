//! How fast a gateway's registry answers searches over many agents: `N` synthetic cards (10,000
//! by default), each served by this program's card server, registered in a SQLite file and
//! indexed as `agentwire gateway` indexes them; then `agentwire gateway` (the binary given) on
//! that file, asked `GET /agents?…` one request at a time, for each kind of query. Prints a
//! markdown table of the latency per kind (p50, p99, max).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use agentwire_store::registry::{CardState, Registration};
use agentwire_store::{SqliteStore, TaskStore};
use agentwire_types::{AgentCard, AgentInterface, AgentSkill};
use clap::Parser;
use tokio::io::AsyncBufReadExt;

#[derive(Debug, Parser)]
struct Opt {
    /// The `agentwire` binary.
    #[arg(long)]
    agentwire: String,
    /// How many agents.
    #[arg(long, default_value_t = 10_000)]
    agents: usize,
    /// Requests per kind of query.
    #[arg(long, default_value_t = 500)]
    requests: usize,
}

/// The query string of the `i`th request of one kind.
type Query<'a> = Box<dyn Fn(usize) -> String + 'a>;

/// What the synthetic agents are about: each is about one of them.
const TOPICS: [&str; 10] =
    ["weather", "finance", "travel", "legal", "medical", "retail", "energy", "media", "sports", "science"];

/// Agent `n`'s card, with its interfaces at `base`.
fn card(n: usize, base: &str) -> AgentCard {
    let topic = TOPICS[n % TOPICS.len()];
    let skills = (0..3)
        .map(|k| AgentSkill {
            id: format!("s{n}-{k}"),
            name: format!("{topic} skill {k}"),
            description: format!("Handles {topic} requests of kind {k} with care (word{n})"),
            tags: vec![topic.to_owned(), format!("tag{}", n % 100)],
            examples: vec![format!("please help with {topic} number {n}")],
            ..AgentSkill::default()
        })
        .collect();
    let interface = |binding: &str| AgentInterface {
        url: format!("{base}/a/{n}"),
        protocol_binding: binding.to_owned(),
        protocol_version: "1.0".to_owned(),
        ..AgentInterface::default()
    };
    AgentCard {
        name: format!("Agent {n} for {topic}"),
        description: format!("A synthetic {topic} agent, number {n}, found by word{n}"),
        version: "1".to_owned(),
        default_input_modes: vec!["text/plain".to_owned()],
        default_output_modes: vec!["text/plain".to_owned()],
        supported_interfaces: vec![interface("JSONRPC"), interface("HTTP+JSON")],
        skills,
        ..AgentCard::default()
    }
}

/// Serves agent `n`'s card at `/a/{n}/.well-known/agent-card.json`; counts the cards served.
async fn card_server() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let served = Arc::new(AtomicUsize::new(0));
    let (counter, card_base) = (Arc::clone(&served), base.clone());
    let app = axum::Router::new().route(
        "/a/{n}/.well-known/agent-card.json",
        axum::routing::get(move |axum::extract::Path(n): axum::extract::Path<usize>| {
            counter.fetch_add(1, Ordering::Relaxed);
            let json = serde_json::to_string(&card(n, &card_base)).unwrap();
            std::future::ready(([(axum::http::header::CONTENT_TYPE, "application/json")], json))
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, served)
}

#[tokio::main]
async fn main() {
    let opt = Opt::parse();
    let (cards, served) = card_server().await;
    let dir = std::env::temp_dir().join(format!("agentwire-registry-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("registry.db");

    // Registered and indexed as the gateway does it, through the store.
    let started = Instant::now();
    {
        let store = SqliteStore::open(&path).await.unwrap();
        let registry = Arc::clone(store.clone().backend().registry());
        for n in 0..opt.agents {
            let name = format!("a{n}");
            registry.register(&Registration::new(&name, &format!("{cards}/a/{n}"), "bench")).await.unwrap();
            registry.record(&name, &CardState::answered(card(n, &cards))).await.unwrap();
        }
        store.close().await.unwrap();
    }
    let indexed = started.elapsed();

    let mut gateway = tokio::process::Command::new(&opt.agentwire)
        .args(["gateway", "--http", "127.0.0.1:0", "--registry-refresh", "3600"])
        .arg("--store")
        .arg(format!("sqlite:{}", path.display()))
        .env("RUST_LOG", "warn,agentwire::serve=info")
        .env("AGENTWIRE_LOG_FORMAT", "text")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("agentwire starts");
    let mut lines = tokio::io::BufReader::new(gateway.stdout.take().unwrap()).lines();
    let address = loop {
        let line = lines.next_line().await.unwrap().expect("the gateway says where it serves");
        if let Some(address) = line.split_whitespace().find_map(|word| word.strip_prefix("address=")) {
            if line.contains("serving a gateway") {
                break address.to_owned();
            }
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let base = format!("http://{address}");
    let http = reqwest::Client::new();

    // Every agent taken in, and checked once (its card fetched from the card server).
    let started = Instant::now();
    loop {
        let listed: serde_json::Value =
            http.get(format!("{base}/agents?pageSize=1")).send().await.unwrap().json().await.unwrap();
        if listed["totalSize"].as_u64() == Some(opt.agents as u64) && served.load(Ordering::Relaxed) >= opt.agents {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "the gateway did not take every agent in: {listed}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let loaded = started.elapsed();

    let agents = opt.agents;
    let kinds: [(&str, Query); 7] = [
        ("one agent's word", Box::new(|i| format!("q=word{}", i * 7919 % agents))),
        ("a topic (10 %)", Box::new(|i| format!("q={}", TOPICS[i % TOPICS.len()]))),
        ("two topics (20 %)", Box::new(|i| format!("q={}+{}", TOPICS[i % 10], TOPICS[(i + 3) % 10]))),
        ("every agent's word", Box::new(|_| "q=synthetic".to_owned())),
        ("a tag filter (1 %)", Box::new(|i| format!("tag=tag{}", i % 100))),
        ("a topic and a tag", Box::new(|i| format!("q={}&tag=tag{}", TOPICS[i % 10], i % 100))),
        ("no query (first page)", Box::new(|_| String::new())),
    ];
    println!(
        "{} agents indexed in {:.1} s; the gateway took them in and checked them in {:.1} s\n",
        opt.agents,
        indexed.as_secs_f64(),
        loaded.as_secs_f64()
    );
    println!("| query | matches | p50 ms | p99 ms | max ms |");
    println!("|---|---:|---:|---:|---:|");
    for (kind, query) in &kinds {
        let mut latencies = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        let mut matches = 0;
        for i in 0..opt.requests {
            let url = format!("{base}/agents?{}", query(i));
            let start = Instant::now();
            let response = http.get(&url).send().await.unwrap();
            assert!(response.status().is_success(), "{url}: {}", response.status());
            let body: serde_json::Value = response.json().await.unwrap();
            latencies.record(start.elapsed().as_micros() as u64).unwrap();
            matches = body["totalSize"].as_u64().unwrap_or_default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        println!(
            "| {kind} | {matches} | {:.2} | {:.2} | {:.2} |",
            ms(latencies.value_at_quantile(0.5)),
            ms(latencies.value_at_quantile(0.99)),
            ms(latencies.max())
        );
    }
    drop(gateway);
    let _ = std::fs::remove_dir_all(&dir);
}
