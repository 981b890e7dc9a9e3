//! MCP over streamable HTTP at `/mcp`: callers authenticated as A2A callers are, a refusal that
//! points at the protected-resource metadata (RFC 9728) MCP's authorization asks for, and that
//! metadata at `/.well-known/oauth-protected-resource/mcp`.

use std::sync::Arc;
use std::time::Duration;

use agentwire_server::quota::Caller;
use agentwire_server::App;
use agentwire_types::Access;
use agentwire_types::{A2AError, ErrorKind, Front, RequestContext, SecurityScheme};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::StreamExt as _;
use http::{header, HeaderValue};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

use crate::server::{McpCaller, McpServer, DEFAULT_ELICITATION_TIMEOUT};
use crate::sessions::{BoundSessions, Full, InFlight, NotYours, SessionLimits};

/// The header that names a session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Where the MCP endpoint is served.
pub const MCP_PATH: &str = "/mcp";
/// Where its protected-resource metadata is served (RFC 9728 §3.1, for the path `/mcp`).
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// How the MCP endpoint is served.
///
/// ```
/// use agentwire_mcp::McpHttpOptions;
///
/// let options = McpHttpOptions::new("https://agents.example.com").with_allowed_origins(["https://app.example.com"]);
/// # drop(options);
/// ```
#[derive(Debug, Clone)]
pub struct McpHttpOptions {
    /// The server's public URL (scheme, host, port), as its cards name it.
    pub public_url: String,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Browser origins allowed besides loopback ones and the public URL's, such as
    /// `https://app.example.com` (`*`: any). A request with another `Origin` is refused (403).
    pub allowed_origins: Vec<String>,
    /// How many sessions are held, and for how long.
    pub sessions: SessionLimits,
    /// How long a call waits for the answer to a question put to the user (elicitation) before
    /// it ends, leaving its task waiting for input (10 minutes by default).
    pub elicitation_timeout: Duration,
    /// Host names requests may name besides loopback ones and the public URL's (`*`: any), as a
    /// server's `--allow-host` gives them. A request naming another is refused (403).
    pub allowed_hosts: Vec<String>,
}

impl McpHttpOptions {
    /// Serving at `public_url`, with 4 MiB bodies and the default limits.
    pub fn new(public_url: impl Into<String>) -> Self {
        Self {
            public_url: public_url.into(),
            max_body_bytes: 4 << 20,
            allowed_origins: Vec::new(),
            sessions: SessionLimits::default(),
            elicitation_timeout: DEFAULT_ELICITATION_TIMEOUT,
            allowed_hosts: Vec::new(),
        }
    }

    /// The largest request body accepted, in bytes.
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Browser origins allowed besides loopback ones and the public URL's (`*`: any).
    pub fn with_allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// How many sessions are held, and for how long.
    pub fn with_sessions(mut self, limits: SessionLimits) -> Self {
        self.sessions = limits;
        self
    }

    /// Host names requests may name besides loopback ones and the public URL's (`*`: any).
    pub fn with_allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// How long a call waits for the user's answer to a question.
    pub fn with_elicitation_timeout(mut self, wait: Duration) -> Self {
        self.elicitation_timeout = wait;
        self
    }
}

/// The routes of `server` over streamable HTTP, behind `app`'s authentication: `/mcp`, and its
/// protected-resource metadata. Merge them into the agent's or the gateway's router.
///
/// Opening a session (a request without `Mcp-Session-Id`) is charged to the caller's rate
/// quota, and refused past the session limits; a session serves only the principal that opened
/// it; a request from a browser origin not allowed is refused. The options' elicitation timeout
/// applies to `server`'s calls.
///
/// ```
/// use agentwire_mcp::{router, McpHttpOptions, McpServer, OneAgent};
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{App, RequestHandler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let app = App::new();
/// let server = McpServer::new(OneAgent::new(app.service(RequestHandler::builder(EchoAgent).build())));
/// let options = McpHttpOptions::new("http://127.0.0.1:8080");
/// let routes: axum::Router = router(server, app, options);
/// # drop(routes);
/// # });
/// ```
pub fn router(server: McpServer, app: App, options: McpHttpOptions) -> Router {
    let public_url = options.public_url.trim_end_matches('/').to_owned();
    let mut config = StreamableHttpServerConfig::default().with_max_request_body_bytes(options.max_body_bytes);
    config = if options.allowed_hosts.iter().any(|host| host.trim() == "*") {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(allowed_hosts(&public_url).into_iter().chain(options.allowed_hosts.iter().cloned()))
    };
    if !options.allowed_origins.iter().any(|origin| origin.trim() == "*") {
        config = config
            .with_allowed_origins(allowed_origins(&public_url, &options.allowed_origins))
            .enforce_origin_validation();
    }
    let sessions = BoundSessions::new(options.sessions.clone());
    let server = server.elicitation_timeout(options.elicitation_timeout);
    let service = StreamableHttpService::new(move || Ok(server.for_session()), Arc::clone(&sessions), config);
    let guard = Arc::new(Guard {
        app: app.clone(),
        public_url: public_url.clone(),
        sessions,
        max_body_bytes: options.max_body_bytes,
    });
    let mcp =
        Router::new().nest_service(MCP_PATH, service).layer(axum::middleware::from_fn_with_state(guard, guard_mcp));
    let metadata = resource_metadata(&app, &public_url);
    mcp.route(RESOURCE_METADATA_PATH, get(move || std::future::ready(Json(metadata.clone()))))
}

/// The hosts a request may name (the streamable HTTP transport refuses others, against DNS
/// rebinding): loopback, and the public URL's host.
fn allowed_hosts(public_url: &str) -> Vec<String> {
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()];
    if let Ok(uri) = public_url.parse::<http::Uri>()
        && let Some(host) = uri.host()
    {
        hosts.push(host.trim_start_matches('[').trim_end_matches(']').to_owned());
    }
    hosts
}

/// The browser origins a request may come from (MCP's transport says a server must check
/// them): loopback pages on any port, the public URL's origin, and those the operator allows.
fn allowed_origins(public_url: &str, extra: &[String]) -> Vec<String> {
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
        .collect();
    origins.extend(with_port(public_url));
    origins.extend(extra.iter().map(|origin| with_port(origin).unwrap_or_else(|| origin.trim().to_owned())));
    origins
}

/// `origin` with its port named: rmcp takes an origin without one to allow every port, where a
/// browser's origin without one means the scheme's own.
fn with_port(origin: &str) -> Option<String> {
    let uri = origin.trim().trim_end_matches('/').parse::<http::Uri>().ok()?;
    let (scheme, authority) = (uri.scheme_str()?, uri.authority()?);
    let port = authority.port_u16().or(match scheme {
        "https" => Some(443),
        "http" => Some(80),
        _ => None,
    })?;
    Some(format!("{scheme}://{}:{port}", authority.host()))
}

struct Guard {
    app: App,
    public_url: String,
    sessions: Arc<BoundSessions>,
    max_body_bytes: usize,
}

/// Lets in a caller the app's authentication accepts (anyone without authentication), with its
/// principal in the request for the tools; refuses the others as MCP's authorization says: 401
/// with a challenge naming the resource metadata, 403 for a caller without the right. A request
/// that may open a session is charged to the caller's rate and needs a place among the
/// sessions (429 otherwise); one in a session must come from the session's principal (404, as
/// for a session that does not exist, otherwise).
async fn guard_mcp(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let mut ctx = RequestContext::from_http(Front::Mcp, request.headers(), request.extensions());
    let required = guard.app.authentication().is_some();
    let session = request.headers().get(SESSION_HEADER).map(|id| id.to_str().unwrap_or_default().to_owned());
    // Only `initialize` opens a session; a request of the 2026-07-28 revision without one is
    // served statelessly, and its calls are charged as the A2A operations they make.
    let opening = if session.is_none() {
        let opens;
        (request, opens) = match opens_session(request, guard.max_body_bytes).await {
            Ok(read) => read,
            Err(refused) => return refused,
        };
        opens
    } else {
        false
    };
    let identified = if opening {
        guard.app.beside(ctx.clone(), Access::OpenMcpSession, required, |caller| std::future::ready(Ok(caller))).await
    } else {
        guard.app.identify(ctx.clone(), Access::UseMcp, required).await
    };
    let principal = match identified {
        Ok(principal) => principal,
        Err(error) => return refusal(&error, &guard.public_url),
    };
    let owner = principal.as_ref().map(|principal| principal.name.clone());
    request.extensions_mut().insert(McpCaller(principal.clone()));
    let ending = request.method() == http::Method::DELETE;
    match session {
        Some(id) => match guard.sessions.enter(&id, owner.as_deref()) {
            Ok(in_flight) => held_while_served(session_ended(next.run(request).await, ending), in_flight),
            Err(NotYours) => session_not_found(),
        },
        None if !opening => next.run(request).await,
        None => {
            guard.sessions.sweep(false).await;
            ctx.principal = principal;
            match guard.sessions.reserve(Caller::of(&ctx), owner).await {
                Ok(reservation) => crate::sessions::opening(reservation, next.run(request)).await,
                Err(Full(why)) => {
                    let error = A2AError::resource_exhausted(why).with_retry_after(Duration::from_secs(1));
                    agentwire_server::error_response(&error)
                }
            }
        }
    }
}

/// `request` as it came, and whether it is an `initialize` request (a POST whose JSON-RPC method
/// is `initialize`): its body is read, within `max` bytes, and put back.
async fn opens_session(request: Request, max: usize) -> Result<(Request, bool), Response> {
    if request.method() != http::Method::POST {
        return Ok((request, false));
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, max).await else {
        let message = format!("the request body is larger than {max} bytes, or could not be read");
        return Err((http::StatusCode::PAYLOAD_TOO_LARGE, message).into_response());
    };
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    let envelope = serde_json::from_slice::<Envelope<'_>>(&bytes);
    let initialize = envelope.is_ok_and(|envelope| envelope.method.as_deref() == Some("initialize"));
    Ok((Request::from_parts(parts, Body::from(bytes)), initialize))
}

/// `response`, whose body holds `in_flight` until it is sent or dropped: a session is busy as
/// long as a call's stream is open.
fn held_while_served(response: Response, in_flight: InFlight) -> Response {
    response.map(|body| {
        let stream = body.into_data_stream().map(move |chunk| {
            let _busy = &in_flight;
            chunk
        });
        Body::from_stream(stream)
    })
}

/// `response`, with 200 for a session ended (`DELETE`): rmcp answers 202, which the MCP Python
/// SDK reports as a failure to end the session (it takes 200 and 204). MCP's transport names no
/// status for it; 200 is what the official SDKs' own servers answer.
fn session_ended(mut response: Response, ending: bool) -> Response {
    if ending && response.status() == http::StatusCode::ACCEPTED {
        *response.status_mut() = http::StatusCode::OK;
    }
    response
}

/// What MCP's transport answers for a session it does not hold.
fn session_not_found() -> Response {
    (http::StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

fn refusal(error: &A2AError, public_url: &str) -> Response {
    let mut response = agentwire_server::error_response(error);
    let metadata = format!("resource_metadata=\"{public_url}{RESOURCE_METADATA_PATH}\"");
    let headers = response.headers_mut();
    let earlier: Vec<HeaderValue> = headers.get_all(header::WWW_AUTHENTICATE).iter().cloned().collect();
    match error.kind() {
        // Where to get a token: a challenge of its own, before the server's.
        ErrorKind::Unauthenticated => {
            headers.remove(header::WWW_AUTHENTICATE);
            let first = HeaderValue::from_str(&format!("Bearer {metadata}")).ok();
            for value in first.into_iter().chain(earlier) {
                headers.append(header::WWW_AUTHENTICATE, value);
            }
        }
        // A token without the scope: its Bearer challenge names the metadata too.
        ErrorKind::PermissionDenied => {
            headers.remove(header::WWW_AUTHENTICATE);
            for value in earlier {
                let named = match value.to_str() {
                    Ok(challenge) if challenge.starts_with("Bearer ") => {
                        HeaderValue::from_str(&format!("{challenge}, {metadata}")).unwrap_or(value)
                    }
                    _ => value,
                };
                headers.append(header::WWW_AUTHENTICATE, named);
            }
        }
        _ => {}
    }
    response.into_response()
}

/// The protected-resource metadata of `/mcp`: the resource, the authorization servers the app's
/// OpenID Connect schemes name, and bearer tokens in the header.
fn resource_metadata(app: &App, public_url: &str) -> serde_json::Value {
    let servers: Vec<String> = app
        .authentication()
        .map(|authentication| {
            authentication
                .schemes
                .values()
                .filter_map(|scheme| match scheme {
                    SecurityScheme::OpenIdConnect(oidc) => {
                        Some(oidc.open_id_connect_url.trim_end_matches("/.well-known/openid-configuration").to_owned())
                    }
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "resource": format!("{public_url}{MCP_PATH}"),
        "authorization_servers": servers,
        "bearer_methods_supported": ["header"],
        "resource_name": "agentwire MCP server",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_host_is_allowed_beside_loopback() {
        assert!(allowed_hosts("https://agents.example.com:8443").contains(&"agents.example.com".to_owned()));
        assert!(allowed_hosts("http://[::1]:80").contains(&"::1".to_owned()));
    }

    #[test]
    fn origins_name_their_ports() {
        let origins = allowed_origins("https://agents.example.com", &["http://app.example".into(), "null".into()]);
        assert!(origins.contains(&"https://agents.example.com:443".to_owned()), "{origins:?}");
        assert!(origins.contains(&"http://app.example:80".to_owned()), "{origins:?}");
        assert!(origins.contains(&"http://127.0.0.1:*".to_owned()), "{origins:?}");
        assert!(origins.contains(&"null".to_owned()), "the operator may allow `null` by name");
    }

    #[test]
    fn an_unauthenticated_caller_is_pointed_at_the_metadata() {
        let response = refusal(&A2AError::unauthenticated("who are you?"), "http://h:1");
        assert_eq!(response.status(), 401);
        let challenge = response.headers().get(header::WWW_AUTHENTICATE).unwrap().to_str().unwrap();
        assert_eq!(challenge, "Bearer resource_metadata=\"http://h:1/.well-known/oauth-protected-resource/mcp\"");
    }

    #[test]
    fn a_caller_without_the_scope_is_pointed_at_the_metadata_too() {
        let challenge = "Bearer realm=\"agentwire\", error=\"insufficient_scope\", scope=\"a2a:send\"";
        let error =
            A2AError::permission_denied("SendMessage needs the scope a2a:send").with_challenge(challenge.to_owned());
        let response = refusal(&error, "http://h:1");
        assert_eq!(response.status(), 403);
        let named = response.headers().get(header::WWW_AUTHENTICATE).unwrap().to_str().unwrap();
        assert_eq!(
            named,
            format!("{challenge}, resource_metadata=\"http://h:1/.well-known/oauth-protected-resource/mcp\"")
        );
    }
}
