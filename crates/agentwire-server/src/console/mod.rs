//! The web console at `/console`: the agent's card, its tasks, their timelines and artifacts,
//! and a form that sends a message and shows its stream, for a browser.
//!
//! Every page is rendered on the server from the answers of the operation service the bindings
//! call, through the same layers: a page shows what the caller may see over the API and nothing
//! else. A browser cannot attach a bearer token to a page load, so the login form keeps the token
//! in a cookie that the console hands to the operations as the `Authorization` header. The page's
//! script only follows live changes (EventSource) and streams a sent message; no asset is fetched
//! from anywhere but the console itself.

mod access;
mod download;
mod form;
mod live;
mod pages;
mod routes;
mod state;
mod usage;

use std::sync::Arc;

use agentwire_store::CommitFeed;

pub(crate) use routes::routes;
pub(crate) use usage::{UsageReport, UsageView};

/// Who may open the console: any address (authentication decides what each caller sees), or
/// loopback addresses only, for a server without authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleAccess {
    /// Callers on loopback addresses only; others are refused.
    Loopback,
    /// Callers on any address.
    Anyone,
}

/// Opens one of a caller's streams under the quotas in front of the operations, or refuses it;
/// the permit is held for as long as the stream is open.
pub(crate) type StreamGate = std::sync::Arc<
    dyn Fn(
            crate::RequestContext,
        ) -> futures_util::future::BoxFuture<
            'static,
            Result<Option<crate::quota::StreamPermit>, agentwire_types::A2AError>,
        > + Send
        + Sync,
>;

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
    /// Where the console's pages are, as the browser sees them, and whose console it is.
    pub(crate) site: Arc<Site>,
    /// Host names the console answers under besides addresses and `localhost`.
    pub(crate) hosts: crate::ServedHosts,
    /// Where a live list takes its place among its caller's open streams (an `App`'s quotas).
    pub(crate) streams: Option<StreamGate>,
    /// What the usage page shows its caller (an `App`'s usage counters and budgets).
    pub(crate) usage: Option<UsageView>,
}

/// Where a console's pages are, as the browser sees them, and, for an agent's console among
/// several, the agent's name and the console that lists them all.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub(crate) base: Arc<str>,
    pub(crate) agent: Option<(Arc<str>, Arc<str>)>,
    /// Whether it has a usage page.
    pub(crate) usage: bool,
    /// Whether it is the page that lists several agents' consoles.
    pub(crate) directory: bool,
}

impl Default for Site {
    fn default() -> Self {
        Self { base: Arc::from("/console"), agent: None, usage: false, directory: false }
    }
}

/// Follows the commits of the tasks a console shows.
pub(crate) type Changes = Arc<dyn Fn() -> ChangeBell + Send + Sync>;

/// Rings when tasks change: at each commit this process makes and, on a store several
/// instances serve, at each commit any of them makes.
pub(crate) struct ChangeBell {
    feed: CommitFeed,
    elsewhere: Option<tokio::sync::watch::Receiver<u64>>,
    /// Cancelled when the server starts to stop: a followed list ends then, rather than hold the
    /// stop for its whole drain.
    stopping: tokio_util::sync::CancellationToken,
}

impl ChangeBell {
    /// Waits for the next change (or a lag, commits missed, which is a change too): `true`; or
    /// for the server to start stopping: `false`, and the list is followed no further.
    pub(crate) async fn rung(&mut self) -> bool {
        let elsewhere = async {
            match self.elsewhere.as_mut() {
                Some(elsewhere) => {
                    if elsewhere.changed().await.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = self.feed.recv() => true,
            () = elsewhere => true,
            () = self.stopping.cancelled() => false,
        }
    }

    /// Forgets the changes so far: what follows is news.
    pub(crate) fn skip_to_now(&mut self) {
        self.feed = self.feed.resubscribe();
        if let Some(elsewhere) = self.elsewhere.as_mut() {
            elsewhere.mark_unchanged();
        }
    }
}

impl Console {
    /// A console for callers on loopback addresses only: the choice for a server without
    /// authentication.
    pub fn loopback_only() -> Self {
        Self {
            access: ConsoleAccess::Loopback,
            changes: None,
            site: Arc::default(),
            hosts: crate::ServedHosts::default(),
            streams: None,
            usage: None,
        }
    }

    /// A console for callers on any address; each sees what its credentials let it see.
    pub fn open() -> Self {
        Self {
            access: ConsoleAccess::Anyone,
            changes: None,
            site: Arc::default(),
            hosts: crate::ServedHosts::default(),
            streams: None,
            usage: None,
        }
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
        Arc::make_mut(&mut self.site).base = Arc::from(path.trim_end_matches('/'));
        self
    }

    /// The console of the agent mounted as `name` among several, whose list is the console at
    /// `directory` (a gateway's `/console`): every page names the agent and links back there.
    ///
    /// ```
    /// use agentwire_server::Console;
    ///
    /// let console = Console::open().at("/agents/weather/console").of_agent("weather", "/console");
    /// # drop(console);
    /// ```
    pub fn of_agent(mut self, name: &str, directory: &str) -> Self {
        Arc::make_mut(&mut self.site).agent = Some((Arc::from(name), Arc::from(directory)));
        self
    }

    /// Answers under the host name `host` too (a `--public-url`'s, or a reverse proxy's). The
    /// console answers requests whose `Host` is an IP address or `localhost` and refuses other
    /// names (421), so that a page whose name an attacker points at this server (DNS rebinding)
    /// cannot read or use it.
    ///
    /// ```
    /// use agentwire_server::Console;
    ///
    /// let console = Console::open().allow_host("agents.example.com");
    /// # drop(console);
    /// ```
    pub fn allow_host(mut self, host: &str) -> Self {
        self.hosts = self.hosts.with_host(host);
        self
    }

    /// Updates the task list as `handler` commits changes, and as the other instances on its
    /// store do when it shares one; a followed list ends when the handler
    /// [drains](crate::RequestHandler::drain). Without it (a console before a service that is not
    /// a handler), the list is read again every few seconds.
    pub fn following(mut self, handler: &crate::RequestHandler) -> Self {
        let handler = handler.clone();
        self.changes = Some(Arc::new(move || ChangeBell {
            feed: handler.commit_feed(),
            elsewhere: handler.shared_commits(),
            stopping: handler.draining(),
        }));
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
        self.directory_of(move || agents.clone())
    }

    /// [`Console::directory`] of the agents `agents` lists when the page is asked for: a gateway
    /// lists an agent that was down at its start by its card once it is reached.
    ///
    /// ```
    /// use agentwire_server::Console;
    /// use agentwire_types::AgentCard;
    ///
    /// let directory = Console::loopback_only().directory_of(|| {
    ///     let card = AgentCard { name: "Weather".into(), ..AgentCard::default() };
    ///     vec![("weather".into(), "/agents/weather/console".into(), card)]
    /// });
    /// # drop(directory);
    /// ```
    pub fn directory_of(
        &self,
        agents: impl Fn() -> Vec<(String, String, agentwire_types::AgentCard)> + Send + Sync + 'static,
    ) -> axum::Router {
        let listed = move |_: crate::RequestContext, _: Option<String>| {
            let listed =
                agents().into_iter().map(|(name, console, card)| ListedAgent { name, console, card, registry: None });
            let listed: Vec<ListedAgent> = listed.collect();
            Box::pin(std::future::ready(listed)) as futures_util::future::BoxFuture<'static, Vec<ListedAgent>>
        };
        routes::directory(self, Arc::new(listed), false)
    }

    /// The console of a registry of agents: a page at `/console` that lists, for each caller
    /// (its credentials, or the login cookie's token, in the context given), the agents `search`
    /// finds for the text of the page's search box (none: every agent it may see), with each
    /// one's health, last check and signature.
    ///
    /// ```
    /// use agentwire_server::{Console, ListedAgent, RegistryFacts};
    ///
    /// let directory = Console::loopback_only().registry_of(|_ctx, _text| {
    ///     let facts = RegistryFacts { healthy: true, signature: "unsigned".into(), ..RegistryFacts::default() };
    ///     let agent = ListedAgent { name: "fx".into(), console: "/agents/fx/console".into(), registry: Some(facts), ..ListedAgent::default() };
    ///     Box::pin(std::future::ready(vec![agent]))
    /// });
    /// # drop(directory);
    /// ```
    pub fn registry_of(
        &self,
        search: impl Fn(crate::RequestContext, Option<String>) -> futures_util::future::BoxFuture<'static, Vec<ListedAgent>>
            + Send
            + Sync
            + 'static,
    ) -> axum::Router {
        routes::directory(self, Arc::new(search), true)
    }
}

/// An agent a console of several agents lists.
#[derive(Debug, Clone, Default)]
pub struct ListedAgent {
    /// Its name at the gateway.
    pub name: String,
    /// The path of its own console.
    pub console: String,
    /// Its card, as the gateway serves it.
    pub card: agentwire_types::AgentCard,
    /// What a registry knows of it, for a registered agent.
    pub registry: Option<RegistryFacts>,
}

/// What a registry knows of an agent: its health, when it was last checked, its card's
/// signature.
#[derive(Debug, Clone, Default)]
pub struct RegistryFacts {
    /// Whether it answered its last checks.
    pub healthy: bool,
    /// When it was last checked (RFC 3339).
    pub last_checked: Option<String>,
    /// When it last answered (RFC 3339).
    pub last_answered: Option<String>,
    /// Its card's signature: `unsigned`, `verified`, `unchecked` or `invalid`.
    pub signature: String,
    /// Why its last check failed.
    pub error: Option<String>,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("access", &self.access)
            .field("at", &self.site.base)
            .field("hosts", &self.hosts)
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
        answer(console, from, request).await.status()
    }

    async fn answer(console: Console, from: &str, mut request: Request<Body>) -> http::Response<axum::body::Body> {
        let app = router_with(
            RequestHandler::builder(EchoAgent).build(),
            HttpOptions { console: Some(console), ..HttpOptions::default() },
        );
        let addr: SocketAddr = from.parse().unwrap();
        request.extensions_mut().insert(Peer { addr, certificate: None, tls: false });
        app.oneshot(request).await.unwrap()
    }

    fn get(path: &str) -> Request<Body> {
        Request::get(path).header("host", "127.0.0.1:8080").body(Body::empty()).unwrap()
    }

    /// Without authentication, a caller on another address is refused; loopback callers and,
    /// when the console is open, anyone are served.
    #[tokio::test]
    async fn a_loopback_console_refuses_other_addresses() {
        assert_eq!(status(Console::loopback_only(), "10.1.2.3:5000", get("/console")).await, StatusCode::FORBIDDEN);
        assert_eq!(status(Console::loopback_only(), "[::1]:5000", get("/console")).await, StatusCode::OK);
        assert_eq!(status(Console::loopback_only(), "127.0.0.1:5000", get("/console/tasks")).await, StatusCode::OK);
        assert_eq!(status(Console::open(), "10.1.2.3:5000", get("/console")).await, StatusCode::OK);
        let refused = answer(Console::loopback_only(), "10.1.2.3:5000", get("/console")).await;
        let page = http_body_util::BodyExt::collect(refused.into_body()).await.unwrap().to_bytes();
        let page = String::from_utf8_lossy(&page);
        assert!(page.contains("--auth") && page.contains("--console-open"), "the refusal says what opens it: {page}");
    }

    /// A post from another site's page (a form aimed at the console) changes nothing, nor does a
    /// post that names no origin (no browser's: a login forged by a script elsewhere).
    #[tokio::test]
    async fn posts_from_other_sites_are_refused() {
        let post = |origin: Option<&str>| {
            let mut request = Request::post("/console/tasks/some-task/cancel").header("host", "127.0.0.1:8080");
            if let Some(origin) = origin {
                request = request.header("origin", origin);
            }
            request.body(Body::empty())
        };
        let refused =
            status(Console::loopback_only(), "127.0.0.1:5000", post(Some("https://elsewhere.example")).unwrap());
        assert_eq!(refused.await, StatusCode::FORBIDDEN);
        let nameless = status(Console::loopback_only(), "127.0.0.1:5000", post(None).unwrap()).await;
        assert_eq!(nameless, StatusCode::FORBIDDEN);
        let own =
            status(Console::loopback_only(), "127.0.0.1:5000", post(Some("http://127.0.0.1:8080")).unwrap()).await;
        assert_eq!(own, StatusCode::NOT_FOUND, "a post from the console's own page reaches the operation");
    }

    /// The probe's DNS rebinding: a page of `evil.example`, whose name now resolves to this
    /// server, asks under its own name and gets nothing; addresses, localhost and the names the
    /// console is given are served.
    #[tokio::test]
    async fn the_console_answers_under_its_own_names_only() {
        let under = |host: &str| Request::get("/console/tasks").header("host", host).body(Body::empty()).unwrap();
        let loopback = Console::loopback_only;
        assert_eq!(
            status(loopback(), "127.0.0.1:5000", under("evil.example:8080")).await,
            StatusCode::MISDIRECTED_REQUEST
        );
        assert_eq!(
            status(loopback(), "127.0.0.1:5000", under("localhost.evil.example")).await,
            StatusCode::MISDIRECTED_REQUEST
        );
        for host in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "10.0.0.5", "LOCALHOST"] {
            assert_eq!(status(loopback(), "127.0.0.1:5000", under(host)).await, StatusCode::OK, "{host}");
        }
        let named = loopback().allow_host("agents.example.com");
        assert_eq!(status(named, "127.0.0.1:5000", under("agents.example.com:443")).await, StatusCode::OK);
        let posted = Request::post("/console/tasks/t/cancel")
            .header("host", "evil.example:8080")
            .header("origin", "http://evil.example:8080")
            .body(Body::empty())
            .unwrap();
        assert_eq!(status(loopback(), "127.0.0.1:5000", posted).await, StatusCode::MISDIRECTED_REQUEST);
    }

    /// Every page says that only the console's own scripts run in it and that no other site
    /// may frame it.
    #[tokio::test]
    async fn every_page_carries_a_content_security_policy() {
        for path in ["/console", "/console/tasks", "/console/send", "/console/login", "/console/tasks/nope"] {
            let page = answer(Console::loopback_only(), "127.0.0.1:5000", get(path)).await;
            let policy = page.headers().get("content-security-policy").unwrap().to_str().unwrap();
            assert!(
                policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'"),
                "{path}: {policy}"
            );
            assert_eq!(page.headers()["x-frame-options"], "DENY");
        }
    }

    /// Over TLS, the login cookie is sent back over TLS only.
    #[tokio::test]
    async fn the_login_cookie_is_secure_over_tls() {
        for tls in [false, true] {
            let app = router_with(
                RequestHandler::builder(EchoAgent).build(),
                HttpOptions { console: Some(Console::open()), ..HttpOptions::default() },
            );
            let mut login = Request::post("/console/login")
                .header("host", "127.0.0.1:8443")
                .header("origin", "https://127.0.0.1:8443")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from("token=abc"))
                .unwrap();
            login.extensions_mut().insert(Peer { addr: "127.0.0.1:5000".parse().unwrap(), certificate: None, tls });
            let answer = app.oneshot(login).await.unwrap();
            let cookie = answer.headers()["set-cookie"].to_str().unwrap();
            assert_eq!(cookie.contains("; Secure"), tls, "{cookie}");
            assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
        }
    }
}

/// What an agent's artifacts can do to the console's origin: nothing.
#[cfg(test)]
mod hostile_artifacts {
    use agentwire_types::{Artifact, Part, Peer};
    use axum::body::Body;
    use http::{Request, StatusCode};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::Console;
    use crate::agent::{AgentExecutor, EventStream, ExecutionContext};
    use crate::{router_with, HttpOptions, RequestHandler};

    /// The probe's hostile agent: an HTML file whose name holds a control character, and file
    /// URLs that are scripts.
    struct Hostile;

    const SCRIPT_URLS: [&str; 4] = [
        "javascript:alert(document.domain)",
        " JavaScript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
    ];

    impl AgentExecutor for Hostile {
        fn execute(&self, ctx: ExecutionContext) -> EventStream {
            ctx.run(|_, updater| async move {
                let mut parts =
                    vec![Part::raw(b"<script>alert('download')</script>".to_vec(), "a\u{1}b.html", "text/html")];
                parts.extend(SCRIPT_URLS.iter().map(|url| Part::url(*url, "x.html", "text/html")));
                parts.push(Part::url("https://example.com/report.pdf", "report.pdf", "application/pdf"));
                let artifact = Artifact { artifact_id: "a".into(), parts, ..Artifact::default() };
                updater.add_artifact(artifact).await?;
                updater.complete().await
            })
        }
    }

    async fn call(app: &axum::Router, request: Request<Body>) -> (http::response::Parts, String) {
        let mut request = request;
        request.extensions_mut().insert(Peer {
            addr: "127.0.0.1:5000".parse().unwrap(),
            certificate: None,
            tls: false,
        });
        let (parts, body) = app.clone().oneshot(request).await.unwrap().into_parts();
        (parts, String::from_utf8_lossy(&body.collect().await.unwrap().to_bytes()).into_owned())
    }

    fn get(path: &str) -> Request<Body> {
        Request::get(path).header("host", "127.0.0.1:8080").body(Body::empty()).unwrap()
    }

    #[tokio::test]
    async fn a_hostile_agents_files_download_and_its_script_urls_are_no_links() {
        let handler = RequestHandler::builder(Hostile).build();
        let app =
            router_with(handler, HttpOptions { console: Some(Console::loopback_only()), ..HttpOptions::default() });
        let send = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
        let request = Request::post("/").header("content-type", "application/json").body(Body::from(send.to_string()));
        let (_, sent) = call(&app, request.unwrap()).await;
        let sent: serde_json::Value = serde_json::from_str(&sent).unwrap();
        let task = sent["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{sent}")).to_owned();

        let (head, page) = call(&app, get(&format!("/console/tasks/{task}"))).await;
        assert_eq!(head.status, StatusCode::OK, "{page}");
        for url in ["javascript:", "JavaScript:", "data:", "java\tscript"] {
            assert!(
                !page.contains(&format!("<a href=\"{url}")) && !page.contains(&format!("<a href=\" {url}")),
                "{url}: {page}"
            );
        }
        assert!(page.contains("href=\"https://example.com/report.pdf\""), "a web address is a link: {page}");

        let (head, body) = call(&app, get(&format!("/console/tasks/{task}/artifacts/a/0"))).await;
        assert_eq!(head.status, StatusCode::OK);
        assert_eq!(head.headers["content-type"], "application/octet-stream", "HTML downloads as bytes");
        let disposition = head.headers["content-disposition"].to_str().unwrap();
        assert!(disposition.starts_with("attachment; "), "{disposition}");
        assert!(disposition.contains("filename*=UTF-8''ab.html"), "the control character is dropped: {disposition}");
        assert_eq!(head.headers["content-security-policy"], "sandbox");
        assert_eq!(head.headers["x-content-type-options"], "nosniff");
        assert!(body.contains("<script>"), "the bytes are the agent's, as a file");

        for index in 1..=SCRIPT_URLS.len() {
            let (head, _) = call(&app, get(&format!("/console/tasks/{task}/artifacts/a/{index}"))).await;
            assert!(!head.status.is_redirection(), "no redirect to {:?}: {:?}", SCRIPT_URLS[index - 1], head.headers);
        }
        let (head, _) = call(&app, get(&format!("/console/tasks/{task}/artifacts/a/{}", SCRIPT_URLS.len() + 1))).await;
        assert_eq!(head.headers["location"], "https://example.com/report.pdf");
    }
}
