//! An agent behind the gateway: its client once it answered, the card the gateway serves for it,
//! and, for an agent that could not be reached, why, while it is tried again in the background.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use agentwire_client::{Client, ClientBuilder};
use agentwire_server::Operations;
use agentwire_types::{A2AError, A2aRequest, A2aResponse, AgentCard, RequestContext};
use futures_util::future::BoxFuture;

use agentwire_client::CallerAuth;

use crate::card::Rewrite;

/// One agent behind the gateway. Cloning is cheap: clones share the agent.
#[derive(Clone)]
pub(crate) struct Upstream(Arc<Inner>);

struct Inner {
    /// The name it is mounted under; empty at the root.
    name: String,
    /// The URL the gateway was given for it.
    url: String,
    rewrite: Rewrite,
    /// How it is called as its callers; `None` when it is called with its client's credentials.
    caller_auth: Option<CallerAuth>,
    state: RwLock<State>,
}

enum State {
    /// Its client, and its card as the gateway serves it.
    Ready { client: Client, card: Arc<AgentCard> },
    /// Not reached yet, and why.
    Waiting(String),
}

/// The first wait between two attempts to reach an agent that could not be reached; it doubles
/// up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(30);

impl Upstream {
    /// An agent whose client is connected; called as its callers as `caller_auth` says, else with
    /// the client's credentials.
    pub(crate) fn ready(
        name: &str,
        url: &str,
        client: Client,
        rewrite: Rewrite,
        caller_auth: Option<CallerAuth>,
    ) -> Self {
        let card = Arc::new(rewrite.apply(client.card().clone()));
        Self::with_state(name, url, rewrite, caller_auth, State::Ready { client, card })
    }

    fn with_state(name: &str, url: &str, rewrite: Rewrite, caller_auth: Option<CallerAuth>, state: State) -> Self {
        let (name, url, state) = (name.to_owned(), url.to_owned(), RwLock::new(state));
        Self(Arc::new(Inner { name, url, rewrite, caller_auth, state }))
    }

    /// An agent not reached yet, because of `why`: `connect` is tried again in the background,
    /// with a growing pause, until it gives a client. Needs a Tokio runtime.
    pub(crate) fn waiting<F>(
        name: &str,
        url: &str,
        why: String,
        rewrite: Rewrite,
        caller_auth: Option<CallerAuth>,
        connect: F,
    ) -> Self
    where
        F: Fn() -> BoxFuture<'static, agentwire_client::Result<Client>> + Send + Sync + 'static,
    {
        let upstream = Self::with_state(name, url, rewrite, caller_auth, State::Waiting(why));
        tokio::spawn(retry(Arc::downgrade(&upstream.0), connect));
        upstream
    }

    /// An agent not reached yet, because of `why`, until [`reached`](Self::reached) gives it a
    /// client: a registered agent, which the registry checks on its own schedule.
    pub(crate) fn pending(
        name: &str,
        url: &str,
        why: String,
        rewrite: Rewrite,
        caller_auth: Option<CallerAuth>,
    ) -> Self {
        Self::with_state(name, url, rewrite, caller_auth, State::Waiting(why))
    }

    /// Calls the agent with `client` from now on, and serves the card it holds.
    pub(crate) fn reached(&self, client: Client) {
        let card = Arc::new(self.0.rewrite.apply(client.card().clone()));
        *write(&self.0.state) = State::Ready { client, card };
    }

    /// Says why it cannot be reached, while it has not been.
    pub(crate) fn unreached(&self, why: &str) {
        let mut state = write(&self.0.state);
        if let State::Waiting(was) = &mut *state {
            why.clone_into(was);
        }
    }

    /// Whether it has been reached.
    pub(crate) fn is_ready(&self) -> bool {
        matches!(&*read(&self.0.state), State::Ready { .. })
    }

    /// The URL the gateway was given for it.
    pub(crate) fn url(&self) -> &str {
        &self.0.url
    }

    /// How to connect to the agent at `url` with `builder`, as [`waiting`](Self::waiting) asks.
    pub(crate) fn connector(
        builder: ClientBuilder,
    ) -> impl Fn() -> BoxFuture<'static, agentwire_client::Result<Client>> {
        move || Box::pin(builder.clone().connect())
    }

    /// The name it is mounted under; empty at the root.
    pub(crate) fn name(&self) -> &str {
        &self.0.name
    }

    /// Its client, or the error a caller gets while it cannot be reached.
    pub(crate) fn client(&self) -> Result<Client, A2AError> {
        self.read_ready(|client, _| client.clone())
    }

    /// Its card as the gateway serves it, or the error a caller gets while it cannot be reached.
    pub(crate) fn card(&self) -> Result<Arc<AgentCard>, A2AError> {
        self.read_ready(|_, card| Arc::clone(card))
    }

    /// `read` of its client and card, or why it cannot be reached.
    fn read_ready<T>(&self, read_ready: impl FnOnce(&Client, &Arc<AgentCard>) -> T) -> Result<T, A2AError> {
        match &*read(&self.0.state) {
            State::Ready { client, card } => Ok(read_ready(client, card)),
            State::Waiting(why) => Err(A2AError::internal(format!("{} cannot be reached: {why}", self.describe()))),
        }
    }

    /// `headers` (a relayed call's) with what proves who is calling to the agent when it is
    /// called as its callers ([`CallerAuth`]), or why the call is refused; `headers` as they are
    /// otherwise (the client sends its own credentials).
    pub(crate) async fn credentials(
        &self,
        mut headers: http::HeaderMap,
        metadata: &http::HeaderMap,
        principal: Option<&agentwire_types::Principal>,
    ) -> Result<http::HeaderMap, A2AError> {
        if let Some(auth) = &self.0.caller_auth {
            let authorization = auth.authorization(&self.describe(), metadata, principal).await?;
            headers.insert(http::header::AUTHORIZATION, authorization);
        }
        Ok(headers)
    }

    /// The gateway's rewrite of the agent's cards.
    pub(crate) fn rewrite(&self) -> &Rewrite {
        &self.0.rewrite
    }

    /// The agent, as an error message names it: `the agent NAME (URL)`.
    pub(crate) fn describe(&self) -> String {
        match self.0.name.as_str() {
            "" => format!("the agent at {}", self.0.url),
            name => format!("the agent {name:?} ({})", self.0.url),
        }
    }

    /// `error` of a call to the agent, as the caller is told it and the gateway logs it: a
    /// failure of the gateway's own (the agent out of reach, refusing the gateway, answering
    /// what is not A2A) names the agent; the agent's own A2A errors go through as they are. Only
    /// a call's errors come here: those [`client`](Self::client) makes name the agent already.
    pub(crate) fn failed(&self, error: A2AError) -> A2AError {
        use agentwire_types::ErrorKind::{Internal, InvalidAgentResponse};
        if !matches!(error.kind(), Internal | InvalidAgentResponse) {
            return error;
        }
        tracing::warn!(agent = %self.0.name, url = %self.0.url, error = %error.message(), "a call to an agent failed");
        let message = format!("{}: {}", self.describe(), error.message());
        A2AError::new(error.kind(), message)
    }
}

/// Tries `connect` until it gives a client (or the agent is gone), pausing longer each time.
async fn retry<F>(agent: std::sync::Weak<Inner>, connect: F)
where
    F: Fn() -> BoxFuture<'static, agentwire_client::Result<Client>>,
{
    let mut pause = FIRST_RETRY;
    loop {
        tokio::time::sleep(pause).await;
        if agent.strong_count() == 0 {
            return;
        }
        let outcome = connect().await;
        let Some(inner) = agent.upgrade() else { return };
        match outcome {
            Ok(client) => {
                tracing::info!(name = %inner.name, url = %inner.url, agent = %client.card().name, interface = %client.endpoint(), "upstream agent reached");
                Upstream(inner).reached(client);
                return;
            }
            Err(error) => {
                let why = agentwire_client::error_chain(&error);
                tracing::warn!(name = %inner.name, url = %inner.url, error = %why, retry_in = ?pause.saturating_mul(2).min(MAX_RETRY), "upstream agent still out of reach");
                *write(&inner.state) = State::Waiting(why);
            }
        }
        pause = pause.saturating_mul(2).min(MAX_RETRY);
    }
}

fn read(state: &RwLock<State>) -> std::sync::RwLockReadGuard<'_, State> {
    state.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write(state: &RwLock<State>) -> std::sync::RwLockWriteGuard<'_, State> {
    state.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The agent's own operations, through its client, once it has been reached. The client speaks
/// released versions only: a caller asking for the dev-1.1 draft is refused, as by a server
/// that does not serve it, rather than answered without what it asked for.
pub(crate) fn service(upstream: Upstream) -> Operations {
    let service = tower::service_fn(move |(ctx, request): (RequestContext, A2aRequest)| {
        let upstream = upstream.clone();
        async move {
            if ctx.task_generations {
                return Err(A2AError::version_not_supported("1.1", &agentwire_server::SUPPORTED_VERSIONS));
            }
            let client = upstream.client()?;
            let answer: Result<A2aResponse, A2AError> = tower::ServiceExt::oneshot(client, (ctx, request)).await;
            answer.map_err(|error| upstream.failed(error))
        }
    });
    tower::util::BoxCloneSyncService::new(service)
}
