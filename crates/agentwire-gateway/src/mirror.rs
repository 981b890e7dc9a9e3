//! A gateway that keeps what it relays: every task of its agents, with its event log, in a store
//! of its own. The gateway then serves GetTask, ListTasks, resumable subscriptions and push
//! notifications itself, with the server's [`RequestHandler`], whatever the agent offers; the
//! agent is reached through a [`Relay`], an executor that forwards each message and translates
//! what the agent answers into the mirrored task's events.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agentwire_client::Client;
use agentwire_server::agent::{AgentError, AgentEvent, AgentExecutor, EventStream, ExecutionContext, TaskUpdater};
use agentwire_server::{check_input_modes, Limits, PushSettings, RequestHandler, RequestHandlerBuilder, Retention};
use agentwire_store::{Backend, Scope, TaskStore};
use agentwire_types::{
    A2AError, A2aRequest, A2aResponse, AgentCard, Artifact, CancelTaskRequest, ErrorKind, GetTaskRequest, Message,
    RequestContext, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState,
};
use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use tower::util::BoxCloneSyncService;
use tower::ServiceExt;

use crate::directory::Directory;
use crate::upstream::Upstream as Agent;
use agentwire_server::Operations;

/// Where and how a gateway keeps the tasks it relays; see
/// [`GatewayBuilder::mirror`](crate::GatewayBuilder::mirror).
///
/// ```
/// use agentwire_gateway::Mirror;
/// use agentwire_store::{MemoryStore, RetentionPolicy};
///
/// // At most 10,000 ended tasks in memory (SQLite and PostgreSQL stores make backends too).
/// let store = MemoryStore::with_retention(RetentionPolicy { max_terminal_tasks: Some(10_000), ..Default::default() });
/// let mirror = Mirror { backend: store.backend(), ..Mirror::default() };
/// # drop(mirror);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Mirror {
    /// The store, with its bus and cancel signal: memory, SQLite or PostgreSQL.
    pub backend: Backend,
    /// The limits on each caller's requests and tasks, as a server applies them.
    pub limits: Limits,
    /// How the gateway calls its callers' webhooks.
    pub push: PushSettings,
    /// How long ended tasks are kept.
    pub retention: Retention,
}

/// The metadata key that names the agent's task a mirrored task mirrors, as
/// `{"taskId": ..., "contextId": ...}`: on the mirrored task's first status event, and on every
/// message of the agent's that the mirror keeps in the task's history.
pub const UPSTREAM_KEY: &str = "agentwire.gateway.upstream";

/// How often a task is read back from an agent that cannot stream, until it settles.
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The agent's ids of a mirrored task.
#[derive(Debug, Clone, PartialEq)]
struct Upstream {
    task_id: String,
    context_id: String,
}

impl Upstream {
    fn metadata(&self) -> Map<String, Value> {
        let ids = json!({ "taskId": self.task_id, "contextId": self.context_id });
        Map::from_iter([(UPSTREAM_KEY.to_owned(), ids)])
    }

    /// The ids a status event's metadata names, if it is the one that announced them.
    fn named_by(metadata: Option<&Map<String, Value>>) -> Option<Self> {
        let ids = metadata?.get(UPSTREAM_KEY)?;
        let text = |key: &str| ids.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Self { task_id: text("taskId")?, context_id: text("contextId").unwrap_or_default() })
    }

    /// The ids the newest message of the agent's in `task`'s history names.
    fn in_history(task: &Task) -> Option<Self> {
        task.history.iter().rev().find_map(|message| Self::named_by(message.metadata.as_ref()))
    }

    /// The agent's ids of the task `task_id` mirrors: as the agent's messages in its history
    /// name them, else as its first status event does (which a SQL store's compaction of the log
    /// may have folded away).
    async fn of(tasks: &dyn TaskStore, scope: &Scope, task_id: &str) -> Result<Option<Self>, A2AError> {
        let failed = |e: agentwire_store::StoreError| A2AError::internal(e.to_string());
        let record = tasks.get(scope, task_id).await.map_err(failed)?;
        if let Some(ids) = record.as_ref().and_then(|record| Self::in_history(&record.task)) {
            return Ok(Some(ids));
        }
        let events = tasks.events_after(scope, task_id, 0, 16).await.map_err(failed)?;
        Ok(events.iter().find_map(|stored| match &*stored.event {
            StreamResponse::StatusUpdate(update) => Self::named_by(update.metadata.as_ref()),
            _ => None,
        }))
    }

    /// `message`, naming this task in its metadata.
    fn mark(&self, mut message: Message) -> Message {
        message.metadata.get_or_insert_with(Map::new).extend(self.metadata());
        message
    }
}

/// The scope a request's tasks are kept in, as the server computes it.
fn scope_of(ctx: &RequestContext, tenant: &str) -> Scope {
    Scope::new(ctx.tenant_for(tenant).to_owned(), ctx.owner().to_owned())
}

/// The executor of a mirroring gateway: each message goes to the agent the request's tenant
/// names (or the root agent), and the agent's answer becomes the mirrored task's events.
pub(crate) struct Relay {
    agents: Directory,
    root: Option<Agent>,
    tasks: Arc<dyn TaskStore>,
}

impl Relay {
    /// The relay to `agents` and `root`, and the handler that mirrors their tasks into
    /// `mirror`'s store, reached by its callers at `public_url`.
    pub(crate) fn handler(
        agents: Directory,
        root: Option<Agent>,
        mirror: Mirror,
        public_url: &str,
    ) -> RequestHandlerBuilder {
        let tasks = Arc::clone(mirror.backend.tasks());
        let relay = Self { agents, root, tasks };
        // The handler's own card is never served (each agent's rewritten card is); it says what
        // the handler offers whatever the agents do, and takes every media type: each agent's
        // own modes are checked before the handler (see `mirrored`).
        let any = vec!["*/*".to_owned()];
        let card = AgentCard { default_input_modes: any.clone(), default_output_modes: any, ..AgentCard::default() };
        let card = agentwire_server::CardConfig { card, public_url: public_url.to_owned(), ..Default::default() };
        RequestHandler::builder(relay)
            .card(card)
            .backend(mirror.backend)
            .limits(mirror.limits)
            .push_settings(mirror.push)
            .retention(mirror.retention)
    }
}

impl AgentExecutor for Relay {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let mounted = self.agents.get(&ctx.request.tenant).map(|mounted| mounted.upstream.clone());
        let reached = mounted.or_else(|| self.root.clone());
        let tasks = Arc::clone(&self.tasks);
        ctx.run(move |ctx, updater| async move {
            let reached = reached.ok_or_else(|| format!("no agent serves the tenant {:?}", ctx.request.tenant))?;
            let agent = reached.client().map_err(|error| error.message().to_owned())?;
            let upstream = match ctx.task.as_deref().map(Upstream::in_history) {
                Some(Some(ids)) => Some(ids),
                Some(None) => {
                    let scope = scope_of(&ctx.request, "");
                    let ids = Upstream::of(&*tasks, &scope, &ctx.task_id).await?;
                    Some(ids.ok_or("the agent's task behind this one is not known")?)
                }
                None => None,
            };
            let mut message = ctx.message.clone();
            match &upstream {
                Some(ids) => {
                    message.task_id.clone_from(&ids.task_id);
                    message.context_id.clone_from(&ids.context_id);
                }
                None => {
                    message.task_id.clear();
                    message.context_id.clone_from(&ctx.context_id);
                }
            }
            let request = SendMessageRequest::new(message);
            let mut mirror = Mirroring::new(upstream);
            // The request's hop count and token were checked when it arrived (`mount::mounted`).
            let hops = crate::hops::relayed(&ctx.request.metadata, u32::MAX).unwrap_or_default();
            let headers = reached
                .credentials(hops, &ctx.request.metadata, ctx.request.principal.as_ref())
                .await
                .map_err(|error| error.message().to_owned())?;
            tokio::select! {
                relayed = agentwire_client::with_call_headers(headers, relay(&agent, request, &mut mirror, &updater)) => {
                    relayed.map_err(|error| format!("{}: {error}", reached.describe()).into())
                }
                // The gateway told the agent already (see `mirrored`); the mirror ends with it.
                () = ctx.cancellation().cancelled() => updater.canceled().await,
            }
        })
    }
}

/// Sends `request` to `agent` and mirrors what it answers, until the task settles: over a
/// stream when the agent streams (the client resumes a stream cut on the way), else by reading
/// the task back.
async fn relay(
    agent: &Client,
    request: SendMessageRequest,
    mirror: &mut Mirroring,
    updater: &TaskUpdater,
) -> Result<(), AgentError> {
    if agent.card().capabilities.streaming == Some(true) {
        let mut events = agent.send_streaming_message(request).await?;
        while let Some(event) = events.next().await {
            mirror.send(event?, updater).await?;
            if mirror.settled() {
                return Ok(());
            }
        }
        if mirror.upstream.is_none() || mirror.settled() {
            return Ok(());
        }
    } else {
        // Answered at once, then read back: each call is short, within the client's timeout,
        // however long the agent works.
        let mut request = request;
        request.configuration.get_or_insert_with(Default::default).return_immediately = true;
        match agent.send_message(request).await? {
            SendMessageResponse::Message(message) => {
                return mirror.send(StreamResponse::Message(message), updater).await;
            }
            SendMessageResponse::Task(task) => mirror.send(StreamResponse::Task(task), updater).await?,
        }
    }
    // An agent that cannot stream, or a stream that ended early: the task as the agent has it,
    // until it settles.
    let Some(ids) = mirror.upstream.clone() else { return Ok(()) };
    loop {
        let task = agent.get_task(GetTaskRequest { id: ids.task_id.clone(), ..Default::default() }).await?;
        mirror.send(StreamResponse::Task(task), updater).await?;
        if mirror.settled() {
            return Ok(());
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// The translation of one execution's upstream events into the mirrored task's: what the
/// mirror has seen, so that a task read again (a resumed stream's opening snapshot, a poll)
/// adds only what changed.
#[derive(Default)]
struct Mirroring {
    upstream: Option<Upstream>,
    /// Whether the ids are in the mirror's log: a continuation's are, a new task's go with the
    /// first status it writes.
    announced: bool,
    /// A continuation whose agent has not answered yet: its stream opens with the task as the
    /// message left it, still waiting for the client, which says nothing new.
    opening: bool,
    state: Option<TaskState>,
    status_message: Option<String>,
    artifacts: HashMap<String, Artifact>,
}

impl Mirroring {
    /// The mirroring of a new task (`None`), or of a continuation of the agent's task `upstream`.
    fn new(upstream: Option<Upstream>) -> Self {
        let continuation = upstream.is_some();
        Self { upstream, announced: continuation, opening: continuation, ..Self::default() }
    }

    fn settled(&self) -> bool {
        self.state.is_some_and(|s| s.is_terminal() || s.is_interrupted())
    }

    /// Sends the mirror's events for `event`.
    async fn send(&mut self, event: StreamResponse, updater: &TaskUpdater) -> Result<(), AgentError> {
        for event in self.translate(event) {
            updater.send(event).await?;
        }
        Ok(())
    }

    fn translate(&mut self, event: StreamResponse) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        let opening = std::mem::take(&mut self.opening);
        if let StreamResponse::Task(task) = &event
            && opening
            && task.status.state.is_interrupted()
        {
            return out;
        }
        match event {
            StreamResponse::Task(task) => self.snapshot(task, &mut out),
            StreamResponse::StatusUpdate(update) => {
                self.learn(&update.task_id, &update.context_id);
                out.push(self.status(update.status.state, update.status.message.map(|m| *m), update.metadata));
            }
            StreamResponse::ArtifactUpdate(update) => {
                self.learn(&update.task_id, &update.context_id);
                let artifact = update.artifact;
                match self.artifacts.get_mut(&artifact.artifact_id) {
                    Some(known) if update.append => known.parts.extend_from_slice(&artifact.parts),
                    _ => {
                        self.artifacts.insert(artifact.artifact_id.clone(), artifact.clone());
                    }
                }
                out.push(AgentEvent::Artifact { artifact, append: update.append, last_chunk: update.last_chunk });
            }
            // Before any task, the agent's whole reply (no task is made); after, a message in
            // its history.
            StreamResponse::Message(message) => out.push(AgentEvent::Message(self.marked(message))),
        }
        out
    }

    /// What changed in the agent's task since the mirror last saw it. The artifacts go before a
    /// terminal status (an ended task takes no more events), after any other.
    fn snapshot(&mut self, task: Task, out: &mut Vec<AgentEvent>) {
        self.learn(&task.id, &task.context_id);
        let message_id = task.status.message.as_ref().map(|m| m.message_id.clone());
        let changed =
            self.state != Some(task.status.state) || (message_id.is_some() && message_id != self.status_message);
        let last_chunk = task.status.state.is_terminal();
        // What the agent reports spending (the usage extension), read as any report is, joins
        // the mirror's task with the status that ends the turn; its other metadata is its own.
        let usage = agentwire_types::Usage::in_metadata(task.metadata.as_ref()).map(|usage| usage.metadata());
        let status = (changed || !self.announced)
            .then(|| self.status(task.status.state, task.status.message.map(|m| *m), usage));
        let artifacts_at = out.len();
        if let Some(status) = status {
            out.push(status);
        }
        let mut artifacts = Vec::new();
        for artifact in task.artifacts {
            let id = artifact.artifact_id.clone();
            match self.artifacts.insert(id, artifact.clone()) {
                Some(known) if known == artifact => {}
                // Chunks the mirror missed (a resumed stream that could not ask for them): only
                // they are new.
                Some(known) if extends(&artifact, &known) => {
                    let tail = Artifact { parts: artifact.parts[known.parts.len()..].to_vec(), ..artifact };
                    artifacts.push(AgentEvent::Artifact { artifact: tail, append: true, last_chunk });
                }
                _ => artifacts.push(AgentEvent::Artifact { artifact, append: false, last_chunk }),
            }
        }
        if last_chunk {
            out.splice(artifacts_at..artifacts_at, artifacts);
        } else {
            out.extend(artifacts);
        }
    }

    fn learn(&mut self, task_id: &str, context_id: &str) {
        if self.upstream.is_none() && !task_id.is_empty() {
            self.upstream = Some(Upstream { task_id: task_id.to_owned(), context_id: context_id.to_owned() });
        }
    }

    /// `message` as the mirror keeps it: naming the agent's task, once it is known, so that a
    /// follow-up finds it in the history (which outlives the log's first events).
    fn marked(&self, message: Message) -> Message {
        match &self.upstream {
            Some(upstream) => upstream.mark(message),
            None => message,
        }
    }

    /// A status event; the first one a new task gets names the agent's task.
    fn status(
        &mut self,
        state: TaskState,
        message: Option<Message>,
        metadata: Option<Map<String, Value>>,
    ) -> AgentEvent {
        self.state = Some(state);
        self.status_message = message.as_ref().map(|m| m.message_id.clone());
        let message = message.map(|m| self.marked(m));
        let metadata = match (&self.upstream, self.announced) {
            (Some(upstream), false) => {
                self.announced = true;
                let mut metadata = metadata.unwrap_or_default();
                metadata.extend(upstream.metadata());
                Some(metadata)
            }
            _ => metadata,
        };
        AgentEvent::Status { state, message, metadata }
    }
}

/// Whether `artifact` is `known` with more parts after its own.
fn extends(artifact: &Artifact, known: &Artifact) -> bool {
    let same_but_parts =
        Artifact { parts: Vec::new(), ..artifact.clone() } == Artifact { parts: Vec::new(), ..known.clone() };
    same_but_parts && artifact.parts.len() > known.parts.len() && artifact.parts.starts_with(&known.parts)
}

/// The operations of one agent whose tasks the gateway mirrors with `handler`: all but the
/// cards are the handler's; a cancel is the agent's first, so that its task ends too.
pub(crate) fn mirrored(reached: Agent, handler: RequestHandler, tasks: Arc<dyn TaskStore>) -> Operations {
    let service = tower::service_fn(move |(mut ctx, request): (RequestContext, A2aRequest)| {
        let (reached, handler, tasks) = (reached.clone(), handler.clone(), Arc::clone(&tasks));
        // A mounted agent's tasks are kept under its name, apart from every other agent's.
        if !reached.name().is_empty() {
            reached.name().clone_into(&mut ctx.tenant);
        }
        async move {
            if let A2aRequest::SendMessage(send) | A2aRequest::SendStreamingMessage(send) = &request {
                check_input_modes(reached.client()?.card(), &send.message)?;
            }
            let A2aRequest::CancelTask(cancel) = request else { return handler.oneshot((ctx, request)).await };
            let agent = reached.client()?;
            let canceled_upstream =
                cancel_upstream(&agent, &*tasks, &ctx, &cancel).await.map_err(|error| reached.failed(error))?;
            let get = GetTaskRequest { id: cancel.id.clone(), tenant: cancel.tenant.clone(), ..Default::default() };
            match handler.clone().oneshot((ctx.clone(), A2aRequest::CancelTask(cancel))).await {
                // The execution mirrored the agent's CANCELED before the handler got to it: this
                // request canceled the task all the same.
                Err(error) if canceled_upstream && error.kind() == ErrorKind::TaskNotCancelable => {
                    match handler.oneshot((ctx, A2aRequest::GetTask(get))).await? {
                        A2aResponse::Task(task) if task.status.state == TaskState::Canceled => {
                            Ok(A2aResponse::Task(task))
                        }
                        _ => Err(error),
                    }
                }
                answer => answer,
            }
        }
    });
    BoxCloneSyncService::new(service)
}

/// Cancels the agent's task behind the mirrored task `cancel` names; returns whether the agent
/// canceled it. The agent's refusal is the caller's answer, but for a task it no longer has,
/// which the mirror then cancels alone.
async fn cancel_upstream(
    agent: &Client,
    tasks: &dyn TaskStore,
    ctx: &RequestContext,
    cancel: &CancelTaskRequest,
) -> Result<bool, A2AError> {
    let scope = scope_of(ctx, &cancel.tenant);
    let Some(upstream) = Upstream::of(tasks, &scope, &cancel.id).await? else { return Ok(false) };
    let request = CancelTaskRequest { id: upstream.task_id, ..Default::default() };
    match agent.cancel_task(request).await {
        Ok(_) => Ok(true),
        Err(error) if error.kind() == Some(ErrorKind::TaskNotFound) => Ok(false),
        Err(error) => {
            let error = A2AError::from(error);
            // The agent's words name its task; the caller knows the mirror's.
            if error.kind() == ErrorKind::TaskNotCancelable {
                let message = format!("task {} cannot be canceled: {}", cancel.id, error.message());
                return Err(A2AError::new(ErrorKind::TaskNotCancelable, message).with_metadata("taskId", &cancel.id));
            }
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use agentwire_types::{Part, TaskArtifactUpdateEvent, TaskStatus, TaskStatusUpdateEvent};

    use super::*;

    fn task(state: TaskState, artifacts: Vec<Artifact>) -> Task {
        Task {
            id: "up-1".into(),
            context_id: "ctx".into(),
            status: TaskStatus::new(state),
            artifacts,
            ..Task::default()
        }
    }

    #[test]
    fn the_first_status_names_the_agents_task_once() {
        let mut mirror = Mirroring::new(None);
        let first = mirror.translate(StreamResponse::Task(task(TaskState::Submitted, vec![])));
        let [AgentEvent::Status { metadata: Some(metadata), .. }] = &first[..] else { panic!("{first:?}") };
        let ids = Upstream::named_by(Some(metadata)).unwrap();
        assert_eq!(ids, Upstream { task_id: "up-1".into(), context_id: "ctx".into() });
        let update = TaskStatusUpdateEvent {
            generation: None,
            task_id: "up-1".into(),
            context_id: "ctx".into(),
            status: TaskStatus::new(TaskState::Working),
            metadata: None,
        };
        let next = mirror.translate(StreamResponse::StatusUpdate(update));
        assert!(matches!(&next[..], [AgentEvent::Status { state: TaskState::Working, metadata: None, .. }]));
    }

    #[test]
    fn a_task_read_again_adds_only_what_changed() {
        let mut mirror = Mirroring::new(None);
        let chunk = |text: &str| Artifact::new("a", "answer", vec![Part::text(text)]);
        mirror.translate(StreamResponse::Task(task(TaskState::Working, vec![])));
        let update = TaskArtifactUpdateEvent {
            generation: None,
            task_id: "up-1".into(),
            context_id: "ctx".into(),
            artifact: chunk("one"),
            append: false,
            last_chunk: false,
            metadata: None,
        };
        mirror.translate(StreamResponse::ArtifactUpdate(update.clone()));
        let appended = TaskArtifactUpdateEvent { artifact: chunk("two"), append: true, ..update };
        mirror.translate(StreamResponse::ArtifactUpdate(appended));
        let mut both = chunk("one");
        both.parts.push(Part::text("two"));
        // A resumed stream opens with the task as the agent has it: nothing new, or only the
        // chunks the mirror missed.
        assert!(mirror.translate(StreamResponse::Task(task(TaskState::Working, vec![both.clone()]))).is_empty());
        let mut three = both.clone();
        three.parts.push(Part::text("three"));
        let missed = mirror.translate(StreamResponse::Task(task(TaskState::Working, vec![three.clone()])));
        let [AgentEvent::Artifact { artifact, append: true, .. }] = &missed[..] else { panic!("{missed:?}") };
        assert_eq!(artifact.parts, [Part::text("three")]);
        let both = three;
        let done = mirror.translate(StreamResponse::Task(task(TaskState::Completed, vec![both])));
        assert!(matches!(&done[..], [AgentEvent::Status { state: TaskState::Completed, .. }]), "{done:?}");
        assert!(mirror.settled());
    }

    #[test]
    fn a_reply_before_any_task_is_the_whole_answer() {
        let mut mirror = Mirroring::new(None);
        let reply = mirror.translate(StreamResponse::Message(Message::agent("m", "hi")));
        assert!(matches!(&reply[..], [AgentEvent::Message(_)]));
        assert!(mirror.upstream.is_none());
    }

    #[test]
    fn the_agents_messages_in_the_history_name_its_task() {
        let mut mirror = Mirroring::new(None);
        mirror.translate(StreamResponse::Task(task(TaskState::Working, vec![])));
        let question = Message::agent("q", "which one?");
        let update = TaskStatusUpdateEvent {
            generation: None,
            task_id: "up-1".into(),
            context_id: "ctx".into(),
            status: TaskStatus { message: Some(Box::new(question)), ..TaskStatus::new(TaskState::InputRequired) },
            metadata: None,
        };
        let events = mirror.translate(StreamResponse::StatusUpdate(update));
        let [AgentEvent::Status { message: Some(kept), .. }] = &events[..] else { panic!("{events:?}") };
        let mirrored = Task { history: vec![Message::user("m", "hi"), kept.clone()], ..Task::default() };
        let named = Upstream::in_history(&mirrored);
        assert_eq!(named, Some(Upstream { task_id: "up-1".into(), context_id: "ctx".into() }));
    }

    #[test]
    fn a_continuation_is_not_settled_by_the_task_it_continues() {
        let upstream = Upstream { task_id: "up-1".into(), context_id: "ctx".into() };
        let mut mirror = Mirroring::new(Some(upstream));
        assert!(mirror.translate(StreamResponse::Task(task(TaskState::InputRequired, vec![]))).is_empty());
        assert!(!mirror.settled());
        let working = mirror.translate(StreamResponse::Task(task(TaskState::Working, vec![])));
        assert!(matches!(&working[..], [AgentEvent::Status { metadata: None, .. }]), "{working:?}");
    }
}
