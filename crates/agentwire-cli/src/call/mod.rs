//! The client subcommands: each calls one operation of an agent and shows the answer, as text for
//! a person (colored on a terminal) or, with `--json`, as the protocol's v1.0 ProtoJSON objects
//! for a script, one per line.

pub(crate) mod budgets;
pub(crate) mod cancel;
pub(crate) mod card;
pub(crate) mod get;
pub(crate) mod list;
mod output;
pub(crate) mod push;
pub(crate) mod registry;
pub(crate) mod send;
pub(crate) mod subscribe;
mod wait;

use std::process::ExitCode;
use std::time::Duration;

use agentwire_client::{Binding, CardVerifier, Client, ClientBuilder, Error, EventStream, Version};
use agentwire_types::{StreamResponse, Task, TaskState};
use clap::ValueEnum;
use futures_util::StreamExt;

pub(crate) use output::{colors, error, Output};

/// The client commands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum CallCommand {
    /// Show an agent's card: who it is, where it listens, what it can do.
    Card(card::CardOpt),
    /// Send a message to an agent and show the reply.
    Send(send::SendOpt),
    /// Show a task.
    Get(get::GetOpt),
    /// List tasks.
    List(list::ListOpt),
    /// Cancel a task.
    Cancel(cancel::CancelOpt),
    /// Follow a task's events until it ends or needs input.
    Subscribe(subscribe::SubscribeOpt),
    /// Manage a task's push notification configs (webhooks).
    #[command(subcommand)]
    Push(push::PushCommand),
    /// A gateway's registry of agents: add, remove, list, search.
    #[command(subcommand)]
    Registry(registry::RegistryCommand),
    /// What callers may spend on models and have spent: list, reset.
    #[command(subcommand)]
    Budgets(budgets::BudgetsCommand),
}

impl CallCommand {
    /// Runs the command; the exit status says how it went.
    pub(crate) async fn run(self) -> ExitCode {
        let outcome = match self {
            CallCommand::Card(opt) => card::run(opt).await,
            CallCommand::Send(opt) => send::run(opt).await,
            CallCommand::Get(opt) => get::run(opt).await,
            CallCommand::List(opt) => list::run(opt).await,
            CallCommand::Cancel(opt) => cancel::run(opt).await,
            CallCommand::Subscribe(opt) => subscribe::run(opt).await,
            CallCommand::Push(command) => push::run(command).await,
            CallCommand::Registry(command) => registry::run(command).await,
            CallCommand::Budgets(command) => budgets::run(command).await,
        };
        match outcome {
            Ok(code) => ExitCode::from(code),
            Err(failure) => {
                output::error(&failure.message);
                ExitCode::from(failure.code)
            }
        }
    }
}

/// What the exit status says.
pub(crate) mod exit {
    /// The task completed, or the operation succeeded (a cancel included).
    pub(crate) const OK: u8 = 0;
    /// The command line asks for what cannot be done (clap's convention).
    pub(crate) const USAGE: u8 = 2;
    /// The task failed.
    pub(crate) const FAILED: u8 = 3;
    /// The task was canceled.
    pub(crate) const CANCELED: u8 = 4;
    /// The agent rejected the task.
    pub(crate) const REJECTED: u8 = 5;
    /// The task waits for more input.
    pub(crate) const INPUT_REQUIRED: u8 = 6;
    /// The task waits for authentication.
    pub(crate) const AUTH_REQUIRED: u8 = 7;
    /// The agent answered with a protocol error (unknown task, bad request, refused credentials…).
    pub(crate) const PROTOCOL_ERROR: u8 = 8;
    /// No answer came: the agent could not be reached, the connection broke, or the time ran out.
    pub(crate) const CONNECTION_ERROR: u8 = 9;
    /// The agent's card is not signed by a trusted key (--verify-card-keys, --verify-card-jku).
    pub(crate) const UNTRUSTED: u8 = 10;
    /// An answer came that is not an A2A answer: a body that does not read as one, an HTTP error
    /// without an A2A error (a 405, a gateway's own refusal), no agent card, or a stream the agent
    /// kept ending before its task did.
    pub(crate) const NOT_A2A: u8 = 11;
    /// Ctrl-C stopped a stream being followed (128 + SIGINT, as a shell reports it).
    pub(crate) const INTERRUPTED: u8 = 130;
}

/// The exit codes, for `--help`.
pub(crate) const EXIT_CODES: &str = "Exit status: 0 completed (or done: a cancel that canceled), 3 failed, \
4 canceled, 5 rejected, 6 input required, 7 auth required, 8 the agent answered with an error, 9 no answer \
came (unreachable, a broken connection, out of time), 10 the card is not signed by a trusted key, 11 the \
answer is not A2A (a malformed body, an HTTP error without an A2A error, no agent card), 2 usage error. A \
task still running (send --no-wait) exits 0.";

/// How the client commands reach an agent.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Connection")]
pub(crate) struct ClientArgs {
    /// Print the protocol objects as JSON (v1.0 ProtoJSON), one per line.
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Use this binding only (default: the first the agent's card lists that this client speaks).
    #[arg(long, value_enum, global = true)]
    pub(crate) transport: Option<TransportArg>,

    /// Use interfaces of this protocol version only (default: the card's order; a v1.0 interface
    /// that answers VersionNotSupported makes the client move to a v0.3 one).
    #[arg(long, value_enum, global = true)]
    pub(crate) protocol: Option<ProtocolArg>,

    /// Send `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "TOKEN", env = "AGENTWIRE_TOKEN", global = true, hide_env_values = true)]
    pub(crate) token: Option<String>,

    /// Send this header with every request: `NAME: VALUE` (repeatable; an API key, for example).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE", global = true)]
    pub(crate) headers: Vec<String>,

    /// Trust the agent's card only if it is signed by a key of this JWK Set (a file or a URL).
    #[arg(long, value_name = "FILE|URL", global = true)]
    pub(crate) verify_card_keys: Option<String>,

    /// Trust the agent's card only if it is signed by a key of the set its signature's `jku`
    /// names, when that URL is under URL (such as the agent's origin): the same scheme, host
    /// and port, and a path on or below URL's.
    #[arg(long, value_name = "URL", global = true)]
    pub(crate) verify_card_jku: Option<String>,

    /// Seconds the agent may take to answer (default 30; a blocking send waits for its task as
    /// long as it takes unless this is given; streams wait for their events).
    #[arg(long, value_name = "SECONDS", global = true)]
    pub(crate) timeout: Option<f64>,
}

/// How long an agent may take to answer a call when `--timeout` does not say.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A binding, as `--transport` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TransportArg {
    /// JSON-RPC 2.0.
    Jsonrpc,
    /// HTTP+JSON (REST).
    #[value(name = "http+json", alias = "rest")]
    HttpJson,
    /// gRPC.
    Grpc,
}

/// A protocol version, as `--protocol` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProtocolArg {
    /// A2A 1.0.
    #[value(name = "1.0")]
    V1,
    /// A2A 0.3.
    #[value(name = "0.3")]
    V03,
}

/// `builder`, held to the interfaces of `transport` and `protocol` where they are given.
pub(crate) fn restrict(
    builder: ClientBuilder,
    transport: Option<TransportArg>,
    protocol: Option<ProtocolArg>,
) -> ClientBuilder {
    let builder = match transport {
        None => builder,
        Some(TransportArg::Jsonrpc) => builder.only(Binding::JsonRpc),
        Some(TransportArg::HttpJson) => builder.only(Binding::HttpJson),
        Some(TransportArg::Grpc) => builder.only(Binding::Grpc),
    };
    match protocol {
        None => builder,
        Some(ProtocolArg::V1) => builder.only_version(Version::V1),
        Some(ProtocolArg::V03) => builder.only_version(Version::V03),
    }
}

impl ClientArgs {
    /// A client of the agent at `url`, as the options say, for calls that answer at once.
    pub(crate) async fn connect(&self, url: &str) -> Result<Client, Failure> {
        self.connect_for(url, false).await
    }

    /// A client of the agent at `url`, for calls that wait on the agent's work (`waits`: a
    /// blocking send), which `--timeout` alone limits.
    pub(crate) async fn connect_for(&self, url: &str, waits: bool) -> Result<Client, Failure> {
        check_scheme(url)?;
        let timeout = self.time_limit()?;
        let mut builder = Client::builder(url).card_timeout(timeout.unwrap_or(DEFAULT_TIMEOUT));
        match timeout {
            Some(timeout) => builder = builder.timeout(timeout),
            None if !waits => builder = builder.timeout(DEFAULT_TIMEOUT),
            None => {}
        }
        if let Some(token) = &self.token {
            builder = builder.bearer_token(token);
        }
        for header in &self.headers {
            let Some((name, value)) = header.split_once(':') else {
                return Err(Failure::usage(format!("--header {header:?} is not NAME: VALUE")));
            };
            builder = builder.header(name.trim(), value.trim());
        }
        builder = restrict(builder, self.transport, self.protocol);
        if let Some(verifier) = self.card_verifier()? {
            builder = builder.verify_card(verifier);
        }
        Ok(builder.connect().await?)
    }

    /// What `--timeout` says, if it is given.
    pub(crate) fn time_limit(&self) -> Result<Option<Duration>, Failure> {
        match self.timeout {
            Some(seconds) if seconds.is_finite() && seconds > 0.0 => Ok(Some(Duration::from_secs_f64(seconds))),
            Some(seconds) => Err(Failure::usage(format!("--timeout {seconds} is not a number of seconds above 0"))),
            None => Ok(None),
        }
    }

    /// What `--verify-card-keys` and `--verify-card-jku` ask.
    fn card_verifier(&self) -> Result<Option<CardVerifier>, Failure> {
        let keys = match self.verify_card_keys.as_deref() {
            None => None,
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                Some(CardVerifier::with_key_set_url(url))
            }
            Some(path) => {
                let document = std::fs::read(path).map_err(|e| Failure::usage(format!("cannot read {path}: {e}")))?;
                let keys = agentwire_client::jose::PublicKeys::from_jwks(&document)
                    .map_err(|e| Failure::usage(format!("{path}: {e}")))?;
                Some(CardVerifier::with_keys(keys))
            }
        };
        let jku = self.verify_card_jku.as_deref();
        if let Some(base) = jku.filter(|base| !base.starts_with("http://") && !base.starts_with("https://")) {
            return Err(Failure::usage(format!("--verify-card-jku takes an http or https URL, not {base:?}")));
        }
        Ok(match (keys, jku) {
            (Some(verifier), Some(base)) => Some(verifier.and_jku(base)),
            (None, Some(base)) => Some(CardVerifier::trusting_jku(base)),
            (keys, None) => keys,
        })
    }

    pub(crate) fn output(&self) -> Output {
        Output::new(self.json)
    }
}

/// Why a command did not do what was asked, and the status to exit with.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) code: u8,
}

impl Failure {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure { message: message.into(), code: exit::USAGE }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let code = match error {
            Error::Protocol(_) | Error::Unsupported { .. } => exit::PROTOCOL_ERROR,
            Error::Setting(_) | Error::Encode(_) => exit::USAGE,
            Error::UntrustedCard { .. } => exit::UNTRUSTED,
            Error::Unreachable { .. } | Error::Connection { .. } | Error::Timeout { .. } => exit::CONNECTION_ERROR,
            // Http, Decode, NoCard, NoInterface, StreamEnded: the agent answered, not in A2A.
            _ => exit::NOT_A2A,
        };
        Failure { message: agentwire_client::error_chain(&error), code }
    }
}

/// What to type to follow the task `id` at `url` again, or to cancel it.
pub(crate) fn follow_or_cancel(url: &str, id: &str) -> String {
    format!("`agentwire subscribe {url} {id}` follows it, `agentwire cancel {url} {id}` cancels it")
}

/// Refuses a URL that is not `http://` or `https://`: the HTTP client calls it a "builder error",
/// and `localhost:8080` even parses as a URL of the scheme `localhost`.
fn check_scheme(url: &str) -> Result<(), Failure> {
    let scheme = url.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http" | "https") => Ok(()),
        Some(_) => Err(Failure::usage(format!("{url} is not an http:// or https:// URL"))),
        None => Err(Failure::usage(format!("{url} has no scheme: did you mean http://{url}?"))),
    }
}

/// The status for a task that is in `state`.
pub(crate) fn exit_for(state: TaskState) -> u8 {
    match state {
        TaskState::Failed => exit::FAILED,
        TaskState::Canceled => exit::CANCELED,
        TaskState::Rejected => exit::REJECTED,
        TaskState::InputRequired => exit::INPUT_REQUIRED,
        TaskState::AuthRequired => exit::AUTH_REQUIRED,
        _ => exit::OK,
    }
}

/// Shows a stream's events as they come; returns the status for the state it ended in. Ctrl-C
/// stops following, not the task: the spinner goes, and the line says how to follow it again.
pub(crate) async fn follow(mut events: EventStream, out: &mut Output, url: &str) -> Result<u8, Failure> {
    let mut state = None;
    let mut task_id = String::new();
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        let event = tokio::select! {
            event = events.next() => event,
            _ = &mut interrupted => {
                out.finish_stream();
                let again = match task_id.as_str() {
                    "" => String::new(),
                    id => format!(": {}", follow_or_cancel(url, id)),
                };
                return Err(Failure { message: format!("stopped following; the task goes on at the agent{again}"), code: exit::INTERRUPTED });
            }
        };
        let Some(event) = event else { break };
        let event = match event {
            Ok(event) => event,
            Err(Error::StreamEnded { task_id, times }) => {
                out.finish_stream();
                let message = format!(
                    "the agent ended the subscription {times} times without news; follow the task again with \
                     `agentwire subscribe {url} {task_id}`"
                );
                return Err(Failure { message, code: exit::NOT_A2A });
            }
            Err(error) => return Err(error.into()),
        };
        if task_id.is_empty() {
            event.task_id().clone_into(&mut task_id);
        }
        state = event.task_state().or(state);
        out.event(&event);
        if let StreamResponse::Message(_) = event {
            state = state.or(Some(TaskState::Completed));
        }
    }
    out.finish_stream();
    Ok(state.map(exit_for).unwrap_or(exit::OK))
}

/// Shows a task; returns the status for its state.
pub(crate) fn show_task(task: &Task, out: &mut Output) -> u8 {
    out.task(task);
    exit_for(task.status.state)
}
