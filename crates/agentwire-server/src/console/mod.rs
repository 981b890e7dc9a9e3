//! The web console at `/console`: the agent's card, its tasks, their timelines and artifacts,
//! and a form that sends a message and shows its stream, for a browser.
//!
//! Every page is rendered on the server from the answers of the operation service the bindings
//! call, through the same layers: a page shows what the caller may see over the API and nothing
//! else. A browser cannot attach a bearer token to a page load, so the login form keeps the token
//! in a cookie that the console hands to the operations as the `Authorization` header. The page's
//! script only follows live changes (EventSource) and streams a sent message; no asset is fetched
//! from anywhere but the console itself.

mod pages;
mod routes;

use std::sync::Arc;

use agentwire_store::CommitFeed;

pub(crate) use routes::routes;

/// Who may open the console: any address (authentication decides what each caller sees), or
/// loopback addresses only, for a server without authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleAccess {
    /// Callers on loopback addresses only; others are refused.
    Loopback,
    /// Callers on any address.
    Anyone,
}

/// Serves the web console at `/console` beside the A2A routes ([`HttpOptions::console`]).
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{router_with, Console, HttpOptions, RequestHandler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let handler = RequestHandler::builder(EchoAgent).build();
/// let console = Console::loopback_only().following(&handler);
/// let app = router_with(handler, HttpOptions { console: Some(console), ..HttpOptions::default() });
/// # drop(app);
/// # });
/// ```
///
/// [`HttpOptions::console`]: crate::HttpOptions::console
#[derive(Clone)]
pub struct Console {
    pub(crate) access: ConsoleAccess,
    pub(crate) changes: Option<Changes>,
    /// Where the console's pages are, as the browser sees them.
    pub(crate) base: Arc<str>,
}

/// Follows the commits of the tasks a console shows.
pub(crate) type Changes = Arc<dyn Fn() -> CommitFeed + Send + Sync>;

impl Console {
    /// A console for callers on loopback addresses only: the choice for a server without
    /// authentication.
    pub fn loopback_only() -> Self {
        Self { access: ConsoleAccess::Loopback, changes: None, base: Arc::from("/console") }
    }

    /// A console for callers on any address; each sees what its credentials let it see.
    pub fn open() -> Self {
        Self { access: ConsoleAccess::Anyone, changes: None, base: Arc::from("/console") }
    }

    /// Who may open the console.
    pub fn access(&self) -> ConsoleAccess {
        self.access
    }

    /// For a router nested under a prefix: the console's pages are at `path` (the prefix, then
    /// `/console`) as the browser sees them, and link there.
    ///
    /// ```
    /// use agentwire_server::Console;
    ///
    /// let console = Console::open().at("/agents/weather/console");
    /// # drop(console);
    /// ```
    pub fn at(mut self, path: &str) -> Self {
        self.base = Arc::from(path.trim_end_matches('/'));
        self
    }

    /// Updates the task list as `handler` commits changes. Without it (a console before a
    /// service that is not a handler), the list is read again every few seconds.
    pub fn following(mut self, handler: &crate::RequestHandler) -> Self {
        let handler = handler.clone();
        self.changes = Some(Arc::new(move || handler.commit_feed()));
        self
    }
}

impl Console {
    /// The console of several agents, each with a console of its own: a page at `/console` that
    /// lists them, by name, with their cards' names and descriptions, each linking to its
    /// `console` path. A gateway serves it beside its mounted agents.
    ///
    /// ```
    /// use agentwire_server::Console;
    /// use agentwire_types::AgentCard;
    ///
    /// let card = AgentCard { name: "Weather".into(), ..AgentCard::default() };
    /// let directory = Console::loopback_only().directory(vec![("weather".into(), "/agents/weather/console".into(), card)]);
    /// # drop(directory);
    /// ```
    pub fn directory(&self, agents: Vec<(String, String, agentwire_types::AgentCard)>) -> axum::Router {
        routes::directory(self, agents)
    }
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("access", &self.access)
            .field("at", &self.base)
            .field("follows", &self.changes.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use agentwire_types::Peer;
    use axum::body::Body;
    use http::{Request, StatusCode};
    use tower::ServiceExt;

    use super::Console;
    use crate::agent::EchoAgent;
    use crate::{router_with, HttpOptions, RequestHandler};

    async fn status(console: Console, from: &str, request: Request<Body>) -> StatusCode {
        let app = router_with(
            RequestHandler::builder(EchoAgent).build(),
            HttpOptions { console: Some(console), ..HttpOptions::default() },
        );
        let mut request = request;
        let addr: SocketAddr = from.parse().unwrap();
        request.extensions_mut().insert(Peer { addr, certificate: None });
        app.oneshot(request).await.unwrap().status()
    }

    fn get(path: &str) -> Request<Body> {
        Request::get(path).body(Body::empty()).unwrap()
    }

    /// Without authentication, a caller on another address is refused; loopback callers and,
    /// when the console is open, anyone are served.
    #[tokio::test]
    async fn a_loopback_console_refuses_other_addresses() {
        assert_eq!(status(Console::loopback_only(), "10.1.2.3:5000", get("/console")).await, StatusCode::FORBIDDEN);
        assert_eq!(status(Console::loopback_only(), "[::1]:5000", get("/console")).await, StatusCode::OK);
        assert_eq!(status(Console::loopback_only(), "127.0.0.1:5000", get("/console/tasks")).await, StatusCode::OK);
        assert_eq!(status(Console::open(), "10.1.2.3:5000", get("/console")).await, StatusCode::OK);
    }

    /// A post from another site's page (a form aimed at the console) changes nothing.
    #[tokio::test]
    async fn posts_from_other_sites_are_refused() {
        let post = |origin: &str| {
            Request::post("/console/tasks/some-task/cancel")
                .header("host", "127.0.0.1:8080")
                .header("origin", origin)
                .body(Body::empty())
                .unwrap()
        };
        let refused = status(Console::loopback_only(), "127.0.0.1:5000", post("https://elsewhere.example")).await;
        assert_eq!(refused, StatusCode::FORBIDDEN);
        let own = status(Console::loopback_only(), "127.0.0.1:5000", post("http://127.0.0.1:8080")).await;
        assert_eq!(own, StatusCode::NOT_FOUND, "a post from the console's own page reaches the operation");
    }
}
