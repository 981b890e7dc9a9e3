//! The gateway on loopback, in front of agentwire's conformance agent and of the official Python
//! SDK's agent (`interop/python-server`), driven by agentwire's client over every binding and
//! protocol version the gateway serves: the client's scenarios (`agentwire-client`'s
//! `tests/it/common`) pass through it as they pass against the agents themselves.

#[path = "../../agentwire-client/tests/it/common/mod.rs"]
mod common;

use std::time::Duration;

use agentwire_client::{Binding, Client, Version, WebhookReceiver};
use agentwire_gateway::{Gateway, Mirror};
use agentwire_server::agent::{AgentExecutor, EventStream as AgentEvents, ExecutionContext};
use agentwire_server::auth::StaticAuth;
use agentwire_server::{serve, App, PushSettings, RequestHandler, ServeOptions, WebhookGuard};
use agentwire_store::SqliteStore;
use agentwire_test::{conformance, ticker_behind_a_proxy, SdkOptions, SdkServer, TestServer, TICKS, TIMEOUT};
use agentwire_types::{
    A2aRequest, AgentCard, CancelTaskRequest, ErrorKind, GetTaskRequest, ListTasksRequest, Message, RequestContext,
    SendMessageRequest, StreamResponse, TaskPushNotificationConfig, TaskState,
};
use common::{Agent, INTERFACES, TOKEN};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A gateway on a loopback port; stopped when dropped.
struct TestGateway {
    base: String,
    task: JoinHandle<std::io::Result<()>>,
}

impl Drop for TestGateway {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A client of the agent at `url` as the gateway holds one: with the token the agents under
/// test take, the public card, and the interfaces `only` allows.
async fn upstream(url: &str, only: Option<(Binding, Version)>) -> Client {
    let mut builder = Client::builder(url).bearer_token(TOKEN).extended_card(false).timeout(TIMEOUT);
    if let Some((binding, version)) = only {
        builder = builder.only(binding).only_version(version);
    }
    builder.connect().await.expect("the gateway reaches the agent")
}

/// Starts a gateway that `build` puts together, given the gateway's own URL; the gateway asks
/// callers for the same token the agents take.
async fn start(build: impl AsyncFnOnce(&str) -> agentwire_gateway::GatewayBuilder) -> TestGateway {
    start_with(build, App::new()).await
}

/// [`start`], with `app`'s layers in front of the agents besides the authentication.
async fn start_with(build: impl AsyncFnOnce(&str) -> agentwire_gateway::GatewayBuilder, app: App) -> TestGateway {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let auth = StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let app = build(&base).await.app(app.authenticator(auth)).build();
    let options = ServeOptions { drain: Duration::ZERO, ..ServeOptions::default() };
    let task = tokio::spawn(serve(listener, app, std::future::pending(), options));
    TestGateway { base, task }
}

/// The client's scenarios through the gateway, at every interface.
async fn every_scenario(agent: &Agent) {
    for (binding, version) in INTERFACES {
        common::task_operations(agent, binding, version).await;
        common::streams(agent, binding, version).await;
        common::push_configs(agent, binding, version).await;
        common::extended_card(agent, binding, version).await;
    }
}

async fn in_front_of_agentwire() -> (TestServer, TestGateway, Agent) {
    let auth = StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let gateway = start(async |base| Gateway::builder(base).agent(upstream(&server.base, None).await)).await;
    let agent = Agent {
        base: gateway.base.clone(),
        lists_tasks: true,
        lists_tasks_in_v03: true,
        deletes_configs_over_v03_rest: true,
    };
    (server, gateway, agent)
}

/// The Python SDK's agent, called by the gateway in v0.3 over JSON-RPC alone, as an agent that
/// speaks nothing else is called. v0.3 has no ListTasks, so the gateway has none to offer.
async fn in_front_of_a_v03_python_agent() -> Option<(SdkServer, TestGateway, Agent)> {
    let server = SdkServer::start(SdkOptions { token: Some(TOKEN.into()), ..SdkOptions::default() }).await?;
    let only = Some((Binding::JsonRpc, Version::V03));
    let gateway = start(async |base| Gateway::builder(base).agent(upstream(&server.base, only).await)).await;
    let agent = Agent {
        base: gateway.base.clone(),
        lists_tasks: false,
        lists_tasks_in_v03: false,
        deletes_configs_over_v03_rest: true,
    };
    Some((server, gateway, agent))
}

#[tokio::test]
async fn every_operation_passes_through_to_agentwire_at_every_interface() {
    let (_server, _gateway, agent) = in_front_of_agentwire().await;
    every_scenario(&agent).await;
}

#[tokio::test]
async fn a_v03_json_rpc_agent_is_served_in_every_generation_and_binding() {
    let Some((_server, _gateway, agent)) = in_front_of_a_v03_python_agent().await else { return };
    every_scenario(&agent).await;
    // What the agent cannot do is refused as such, in the caller's generation.
    let client = common::client(&agent, Binding::HttpJson, Version::V1).await;
    let refused = client.list_tasks(Default::default()).await.unwrap_err();
    assert_eq!(refused.kind(), Some(ErrorKind::UnsupportedOperation), "{refused}");
}

#[tokio::test]
async fn the_card_names_the_gateway_and_is_signed_by_it() {
    let auth = StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let key = agentwire_jose::SigningKey::generate(agentwire_jose::Algorithm::ES256).unwrap();
    let public = key.public_key();
    let gateway =
        start(async |base| Gateway::builder(base).agent(upstream(&server.base, None).await).signing_key(key)).await;
    let http = reqwest::Client::new();
    let get = async |url: String, version: &str| -> serde_json::Value {
        let request = http.get(url).header("A2A-Version", version);
        request.send().await.unwrap().error_for_status().unwrap().json().await.unwrap()
    };
    let card_url = format!("{}/.well-known/agent-card.json", gateway.base);
    let combined = get(card_url.clone(), "0.3").await;
    assert_eq!(combined["url"], gateway.base, "v0.3's URL is the gateway's");
    let card: AgentCard = serde_json::from_value(get(card_url, "1.0").await).unwrap();
    assert!(!card.supported_interfaces.is_empty());
    for interface in &card.supported_interfaces {
        assert!(!interface.url.contains(&server.base[7..]), "{interface:?} is the agent's own address");
    }
    assert!(card.security_schemes.contains_key("bearer"), "the gateway's own scheme: {:?}", card.security_schemes);
    let keys = get(format!("{}/.well-known/jwks.json", gateway.base), "1.0").await;
    assert_eq!(keys["keys"][0], serde_json::to_value(public.to_jwk()).unwrap());
    let keys = agentwire_jose::PublicKeys::from_keys([public]);
    agentwire_jose::verify_card(&card, &keys, &[agentwire_jose::Algorithm::ES256]).expect("signed by the gateway");
    // A client that trusts the gateway's key set reaches the agent through it.
    let verifier = agentwire_client::CardVerifier::trusting_jku(&gateway.base);
    let client = Client::builder(&gateway.base).bearer_token(TOKEN).verify_card(verifier).connect().await.unwrap();
    assert_eq!(client.card().name, card.name);
}

#[tokio::test]
async fn two_agents_at_their_paths_listed_at_agents() {
    let auth = || StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let first = TestServer::start_app(conformance(), App::new().authenticator(auth())).await;
    let echo = agentwire_server::RequestHandler::builder(agentwire_server::agent::EchoAgent);
    let second = TestServer::start_app(echo, App::new().authenticator(auth())).await;
    let gateway = start(async |base| {
        Gateway::builder(base)
            .mount("conformance", upstream(&first.base, None).await)
            .mount("echo", upstream(&second.base, None).await)
    })
    .await;
    let listing: serde_json::Value =
        reqwest::get(format!("{}/agents", gateway.base)).await.unwrap().json().await.unwrap();
    let names: Vec<&str> = listing["agents"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["conformance", "echo"]);
    assert_eq!(listing["agents"][1]["url"], format!("{}/agents/echo", gateway.base));

    let conformance = Agent {
        base: format!("{}/agents/conformance", gateway.base),
        lists_tasks: true,
        lists_tasks_in_v03: true,
        deletes_configs_over_v03_rest: true,
    };
    for (binding, version) in INTERFACES.into_iter().filter(|i| *i != (Binding::Grpc, Version::V03)) {
        common::task_operations(&conformance, binding, version).await;
    }
    // Each agent is itself at its path, over HTTP and as a gRPC tenant; a task of one is not
    // the other's.
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let echo = Client::builder(&format!("{}/agents/echo", gateway.base)).bearer_token(TOKEN).only(binding);
        let echo = echo.connect().await.unwrap();
        assert_eq!(echo.card().name, Client::connect(&second.base).await.unwrap().card().name);
        let task = common::send(&echo, agentwire_types::SendMessageRequest::new(common::message("hi"))).await;
        assert_eq!(task.artifacts[0].parts[0].as_text(), Some("hi"), "{binding:?}");
        // The same task over every binding: the tenant that names the agent over gRPC is not
        // the agent's.
        for other in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
            let same = Client::builder(&format!("{}/agents/echo", gateway.base)).bearer_token(TOKEN).only(other);
            let same = same.connect().await.unwrap();
            let found = same.get_task(GetTaskRequest { id: task.id.clone(), ..Default::default() }).await;
            assert_eq!(found.unwrap().id, task.id, "sent over {binding:?}, read over {other:?}");
        }
        let other = Client::builder(&conformance.base).bearer_token(TOKEN).only(binding).connect().await.unwrap();
        let unknown = other.get_task(GetTaskRequest { id: task.id, ..Default::default() }).await.unwrap_err();
        assert_eq!(unknown.kind(), Some(ErrorKind::TaskNotFound), "{binding:?}");
    }
}

#[tokio::test]
async fn every_operation_layer_wraps_the_agent() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let auth = StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let counters = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
    // Each counts the calls that reach it authenticated.
    let counting = |counter: &Arc<AtomicUsize>| {
        let counter = Arc::clone(counter);
        tower::util::MapRequestLayer::new(move |(ctx, request): (RequestContext, A2aRequest)| {
            if ctx.principal.is_some() {
                counter.fetch_add(1, Ordering::Relaxed);
            }
            (ctx, request)
        })
    };
    let layers = App::new().layer(counting(&counters[0])).layer(counting(&counters[1]));
    let gateway =
        start_with(async |base| Gateway::builder(base).agent(upstream(&server.base, None).await), layers).await;
    let client = Client::builder(&gateway.base).bearer_token(TOKEN).extended_card(false).connect().await.unwrap();
    let unknown = client.get_task(GetTaskRequest { id: "none".into(), ..Default::default() }).await.unwrap_err();
    assert_eq!(unknown.kind(), Some(ErrorKind::TaskNotFound));
    let counted = counters.each_ref().map(|counter| counter.load(Ordering::Relaxed));
    assert!(counted[0] > 0 && counted[0] == counted[1], "each layer saw every call: {counted:?}");
}

/// A mirror in memory whose webhooks may be on loopback, as the tests' are.
fn mirror() -> Mirror {
    let push = PushSettings { guard: WebhookGuard { allow_private: true }, ..PushSettings::default() };
    Mirror { push, ..Mirror::default() }
}

/// An agent, as the callers of a mirroring gateway see it: the gateway lists its tasks in every
/// generation, whatever the agent does.
fn mirrored(gateway: &TestGateway) -> Agent {
    Agent {
        base: gateway.base.clone(),
        lists_tasks: true,
        lists_tasks_in_v03: true,
        deletes_configs_over_v03_rest: true,
    }
}

#[tokio::test]
async fn a_mirror_serves_every_operation_of_agentwire_at_every_interface() {
    let auth = StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let gateway =
        start(async |base| Gateway::builder(base).agent(upstream(&server.base, None).await).mirror(mirror())).await;
    let agent = mirrored(&gateway);
    every_scenario(&agent).await;
}

/// The Python SDK's agent in v0.3 over JSON-RPC alone has no ListTasks, and streams only what it
/// sends: the mirror lists its tasks in every generation, and delivers a v1.0 client's push
/// notifications as v1.0 events.
#[tokio::test]
async fn a_mirror_gives_a_v03_agent_task_lists_and_v1_push_notifications() {
    let Some(server) = SdkServer::start(SdkOptions { token: Some(TOKEN.into()), ..SdkOptions::default() }).await else {
        return;
    };
    let only = Some((Binding::JsonRpc, Version::V03));
    let gateway =
        start(async |base| Gateway::builder(base).agent(upstream(&server.base, only).await).mirror(mirror())).await;
    let agent = mirrored(&gateway);
    for (binding, version) in INTERFACES {
        common::task_operations(&agent, binding, version).await;
        common::streams(&agent, binding, version).await;
    }

    let (router, mut notifications) = WebhookReceiver::new().token("hook-token").into_router();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/a2a", listener.local_addr().unwrap());
    let receiver = tokio::spawn(async move { axum::serve(listener, router).await });
    let client = common::client(&agent, Binding::HttpJson, Version::V1).await;
    let task = common::send(&client, SendMessageRequest::new(common::message("tck-multi-turn hooked"))).await;
    let config = TaskPushNotificationConfig {
        task_id: task.id.clone(),
        id: "hook".into(),
        url: hook,
        token: "hook-token".into(),
        ..Default::default()
    };
    client.create_push_config(config).await.expect("CreateTaskPushNotificationConfig");
    let follow_up =
        Message { task_id: task.id.clone(), context_id: task.context_id.clone(), ..common::message("done") };
    common::send(&client, SendMessageRequest::new(follow_up)).await;
    loop {
        let notification = tokio::time::timeout(TIMEOUT, notifications.recv()).await.expect("in time").unwrap();
        assert_eq!(notification.event.task_id(), task.id);
        assert_eq!(notification.token.as_deref(), Some("hook-token"));
        assert!(
            !matches!(notification.event, StreamResponse::Task(_)),
            "a v1.0 event, not a v0.3 task: {notification:?}"
        );
        if notification.event.task_state() == Some(TaskState::Completed) {
            break;
        }
    }
    receiver.abort();
}

/// The gateway reaches the agent through a proxy that cuts the connection under a stream: the
/// gateway resumes the agent's stream, and its caller reads every chunk once, over an upstream
/// that numbers its events (SSE) and one that does not (gRPC).
#[tokio::test]
async fn a_stream_cut_between_gateway_and_agent_loses_and_repeats_nothing() {
    let (proxy, server, proxied) = ticker_behind_a_proxy().await;
    for only in [(Binding::JsonRpc, Version::V1), (Binding::HttpJson, Version::V03), (Binding::Grpc, Version::V1)] {
        let gateway =
            start(async |base| Gateway::builder(base).agent(upstream(&proxied, Some(only)).await).mirror(mirror()))
                .await;
        let client = common::client(&mirrored(&gateway), Binding::JsonRpc, Version::V1).await;
        let events = client.send_streaming_message(SendMessageRequest::new(common::message("tick"))).await.unwrap();
        let seen = common::read_with_a_cut(events, 3, || proxy.cut()).await;
        assert_eq!(seen.delivered, common::numbers(TICKS), "upstream {only:?}");
        assert_eq!(seen.last_state, Some(TaskState::Completed), "upstream {only:?}");
        let tasks = client.list_tasks(Default::default()).await.unwrap().tasks;
        let [task] = &tasks[..] else { panic!("one task: {tasks:?}") };
        let task = client.get_task(GetTaskRequest { id: task.id.clone(), ..Default::default() }).await.unwrap();
        let parts: Vec<&str> = task.artifacts[0].parts.iter().filter_map(|p| p.as_text()).collect();
        assert_eq!(parts, common::numbers(TICKS), "the mirrored artifact, upstream {only:?}");
    }
    server.abort();
}

/// Canceling a task that waits for input cancels the agent's task behind it, which no execution
/// is running to tell.
#[tokio::test]
async fn canceling_a_mirrored_task_cancels_the_agents() {
    let auth = StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let gateway =
        start(async |base| Gateway::builder(base).agent(upstream(&server.base, None).await).mirror(mirror())).await;
    let client = common::client(&mirrored(&gateway), Binding::Grpc, Version::V1).await;
    let waiting = common::send(&client, SendMessageRequest::new(common::message("tck-multi-turn cancel me"))).await;
    assert_eq!(waiting.status.state, TaskState::InputRequired);
    let canceled = client.cancel_task(CancelTaskRequest { id: waiting.id.clone(), ..Default::default() }).await;
    assert_eq!(canceled.unwrap().status.state, TaskState::Canceled);
    // The agent's task is in the same context as the mirrored one.
    let agent = upstream(&server.base, None).await;
    let listed = agent.list_tasks(ListTasksRequest { context_id: waiting.context_id, ..Default::default() }).await;
    let tasks = listed.unwrap().tasks;
    let [task] = &tasks[..] else { panic!("the agent's task: {tasks:?}") };
    assert_ne!(task.id, waiting.id);
    assert_eq!(task.status.state, TaskState::Canceled);
}

/// Reports progress many times, then asks a question; the answer completes the task.
struct Chatty;

impl AgentExecutor for Chatty {
    fn execute(&self, ctx: ExecutionContext) -> AgentEvents {
        ctx.run(|ctx, updater| async move {
            if ctx.task.is_some() {
                return updater.complete_with("thanks").await;
            }
            for _ in 0..300 {
                updater.working().await?;
            }
            updater.input_required("which one?").await
        })
    }
}

/// A mirror on SQLite compacts a long task's log into one event, first status event included: the
/// follow-up and the cancel still find the agent's task, named by the agent's question in the
/// task's history.
#[tokio::test]
async fn a_compacted_mirror_still_knows_the_agents_task() {
    let server = TestServer::start(RequestHandler::builder(Chatty)).await;
    let dir = std::env::temp_dir().join(format!("agentwire-mirror-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteStore::open_url(&format!("sqlite:{}", dir.join("mirror.db").display())).await.unwrap();
    let mirror = Mirror { backend: store.backend(), ..mirror() };
    let gateway =
        start(async |base| Gateway::builder(base).agent(upstream(&server.base, None).await).mirror(mirror)).await;
    let client = common::client(&mirrored(&gateway), Binding::JsonRpc, Version::V1).await;
    let agent = upstream(&server.base, None).await;
    let agents_task = async |context_id: String| {
        let tasks = agent.list_tasks(ListTasksRequest { context_id, ..Default::default() }).await.unwrap().tasks;
        let [task] = &tasks[..] else { panic!("the agent's task: {tasks:?}") };
        task.clone()
    };

    let asked = common::send(&client, SendMessageRequest::new(common::message("start"))).await;
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let answer = Message { task_id: asked.id.clone(), context_id: asked.context_id.clone(), ..common::message("that") };
    let done = common::send(&client, SendMessageRequest::new(answer)).await;
    assert_eq!((done.id.as_str(), done.status.state), (asked.id.as_str(), TaskState::Completed));
    assert_eq!(agents_task(asked.context_id).await.status.state, TaskState::Completed);

    let asked = common::send(&client, SendMessageRequest::new(common::message("start"))).await;
    let canceled = client.cancel_task(CancelTaskRequest { id: asked.id.clone(), ..Default::default() }).await;
    assert_eq!(canceled.unwrap().status.state, TaskState::Canceled);
    assert_eq!(agents_task(asked.context_id).await.status.state, TaskState::Canceled);
    drop(gateway);
    std::fs::remove_dir_all(&dir).ok();
}

/// Two mounted agents behind one mirror: each keeps its tasks apart from the other's, over HTTP
/// at its path and over gRPC as its tenant, and a follow-up reaches the agent that asked.
#[tokio::test]
async fn a_mirror_keeps_each_mounted_agents_tasks_apart() {
    let auth = || StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let (first, second) = (
        TestServer::start_app(conformance(), App::new().authenticator(auth())).await,
        TestServer::start_app(conformance(), App::new().authenticator(auth())).await,
    );
    let gateway = start(async |base| {
        Gateway::builder(base)
            .mount("first", upstream(&first.base, None).await)
            .mount("second", upstream(&second.base, None).await)
            .mirror(mirror())
    })
    .await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let at = |name: &str| Agent { base: format!("{}/agents/{name}", gateway.base), ..mirrored(&gateway) };
        let (one, two) = (
            common::client(&at("first"), binding, Version::V1).await,
            common::client(&at("second"), binding, Version::V1).await,
        );
        let asked = common::send(&one, SendMessageRequest::new(common::message("tck-multi-turn start"))).await;
        assert_eq!(asked.status.state, TaskState::InputRequired, "{binding:?}");
        let unknown = two.get_task(GetTaskRequest { id: asked.id.clone(), ..Default::default() }).await.unwrap_err();
        assert_eq!(unknown.kind(), Some(ErrorKind::TaskNotFound), "{binding:?}");
        let listed = two.list_tasks(ListTasksRequest { context_id: asked.context_id.clone(), ..Default::default() });
        assert!(listed.await.unwrap().tasks.is_empty(), "{binding:?}");
        let answer =
            Message { task_id: asked.id.clone(), context_id: asked.context_id.clone(), ..common::message("done") };
        let done = common::send(&one, SendMessageRequest::new(answer)).await;
        assert_eq!(done.status.state, TaskState::Completed, "{binding:?}");
        // The agent behind the first mount did the work; the second has no task in that context.
        let first_agent = upstream(&first.base, None).await;
        let theirs =
            first_agent.list_tasks(ListTasksRequest { context_id: asked.context_id.clone(), ..Default::default() });
        assert_eq!(theirs.await.unwrap().tasks[0].status.state, TaskState::Completed, "{binding:?}");
        let second_agent = upstream(&second.base, None).await;
        let none = second_agent.list_tasks(ListTasksRequest { context_id: asked.context_id, ..Default::default() });
        assert!(none.await.unwrap().tasks.is_empty(), "{binding:?}");
    }
}
