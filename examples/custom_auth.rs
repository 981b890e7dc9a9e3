//! A custom `Authenticator`: API keys in an `X-Api-Key` header, each mapped to a named principal.
//!
//! A missing or unknown key is Unauthenticated (401); a known key whose account is disabled is
//! PermissionDenied (403). Every task belongs to the principal that created it, so each caller
//! sees only its own tasks. The card declares the scheme, so clients know which header to send.
//!
//! ```sh
//! cargo run -p agentwire-examples --example custom_auth
//!
//! # Alice creates a task (TASK = its "id")
//! curl -s localhost:8084/message:send -H 'content-type: application/json' -H 'A2A-Version: 1.0' \
//!   -H 'X-Api-Key: alice-key' -d '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}'
//!
//! # Alice lists her task; Bob lists none, and Alice's task is not found for him
//! curl -s localhost:8084/tasks -H 'A2A-Version: 1.0' -H 'X-Api-Key: alice-key'
//! curl -s localhost:8084/tasks -H 'A2A-Version: 1.0' -H 'X-Api-Key: bob-key'
//! curl -s localhost:8084/tasks/$TASK -H 'A2A-Version: 1.0' -H 'X-Api-Key: bob-key'
//!
//! # No key: 401; Carol's disabled key: 403
//! curl -si localhost:8084/tasks -H 'A2A-Version: 1.0'
//! curl -si localhost:8084/tasks -H 'A2A-Version: 1.0' -H 'X-Api-Key: carol-key'
//! ```

use std::collections::{BTreeMap, HashMap};

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::auth::{async_trait, Authenticator};
use agentwire_server::{serve, App, CardConfig, HttpOptions, Principal, RequestContext, RequestHandler, ServeOptions};
use agentwire_types::Access;
use agentwire_types::{A2AError, AgentCard, AgentSkill, ApiKeySecurityScheme, SecurityScheme};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

const ADDR: &str = "127.0.0.1:8084";
const HEADER: &str = "x-api-key";

struct Account {
    name: &'static str,
    enabled: bool,
}

/// API keys and their accounts. A real deployment would look keys up in its own store.
struct ApiKeys(HashMap<&'static str, Account>);

impl ApiKeys {
    fn demo() -> Self {
        let accounts = [("alice-key", "alice", true), ("bob-key", "bob", true), ("carol-key", "carol", false)];
        Self(accounts.into_iter().map(|(key, name, enabled)| (key, Account { name, enabled })).collect())
    }
}

#[async_trait]
impl Authenticator for ApiKeys {
    async fn authenticate(&self, ctx: &RequestContext, _: Access) -> Result<Principal, A2AError> {
        let key = ctx.metadata.get(HEADER).and_then(|v| v.to_str().ok());
        let key = key.ok_or_else(|| A2AError::unauthenticated("send your API key in X-Api-Key"))?;
        match self.0.get(key) {
            None => Err(A2AError::unauthenticated("unknown API key")),
            Some(Account { name, enabled: false }) => Err(A2AError::permission_denied(format!("{name} is disabled"))),
            // The principal's name is what tasks are owned by; never the key itself.
            Some(account) => Ok(Principal::new(account.name)),
        }
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        let scheme = ApiKeySecurityScheme { location: "header".into(), name: "X-Api-Key".into(), ..Default::default() };
        BTreeMap::from([("apiKey".to_owned(), SecurityScheme::ApiKey(scheme))])
    }

    fn challenge(&self) -> String {
        "ApiKey header=\"X-Api-Key\"".into()
    }
}

/// Greets the caller by the name the authenticator gave it.
struct Greeter;

impl AgentExecutor for Greeter {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let who = ctx.request.principal.as_ref().map_or("stranger", |p| p.name.as_str());
        let reply = format!("Hello {who}, you said: {}", ctx.message.text());
        ctx.run(|_ctx, updater| async move { updater.complete_with(reply).await })
    }
}

fn card() -> AgentCard {
    AgentCard {
        name: "Private greeter".into(),
        description: "Greets callers it knows by their API key".into(),
        skills: vec![AgentSkill {
            id: "greet".into(),
            name: "Greet".into(),
            description: "Replies with the caller's name and message".into(),
            tags: vec!["auth".into()],
            examples: vec!["hi".into()],
            ..AgentSkill::default()
        }],
        ..AgentCard::default()
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();

    let card = CardConfig { card: card(), public_url: format!("http://{ADDR}"), ..CardConfig::default() };
    // Every operation but the public card now needs a key; the card lists the scheme.
    let handler = RequestHandler::builder(Greeter).card(card).build();
    let app = App::new().authenticator(ApiKeys::demo()).router(handler, HttpOptions::default());
    let listener = TcpListener::bind(ADDR).await?;
    tracing::info!("Private greeter listening on http://{ADDR}");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    serve(listener, app, shutdown, ServeOptions::default()).await
}
