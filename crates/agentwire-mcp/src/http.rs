//! MCP over streamable HTTP at `/mcp`: callers authenticated as A2A callers are, a refusal that
//! points at the protected-resource metadata (RFC 9728) MCP's authorization asks for, and that
//! metadata at `/.well-known/oauth-protected-resource/mcp`.

use std::sync::Arc;

use agentwire_server::App;
use agentwire_types::jsonrpc::Operation;
use agentwire_types::{A2AError, Binding, Dialect, ErrorKind, Peer, RequestContext, SecurityScheme};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use http::{header, HeaderValue};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;

use crate::server::{McpCaller, McpServer};

/// Where the MCP endpoint is served.
pub const MCP_PATH: &str = "/mcp";
/// Where its protected-resource metadata is served (RFC 9728 §3.1, for the path `/mcp`).
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// How the MCP endpoint is served.
#[derive(Debug, Clone)]
pub struct McpHttpOptions {
    /// The server's public URL (scheme, host, port), as its cards name it.
    pub public_url: String,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
}

/// The routes of `server` over streamable HTTP, behind `app`'s authentication: `/mcp`, and its
/// protected-resource metadata. Merge them into the agent's or the gateway's router.
///
/// ```
/// use agentwire_mcp::{router, McpHttpOptions, McpServer, OneAgent};
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{App, RequestHandler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let app = App::new();
/// let server = McpServer::new(OneAgent::new(app.service(RequestHandler::builder(EchoAgent).build())));
/// let options = McpHttpOptions { public_url: "http://127.0.0.1:8080".into(), max_body_bytes: 4 << 20 };
/// let routes: axum::Router = router(server, app, options);
/// # drop(routes);
/// # });
/// ```
pub fn router(server: McpServer, app: App, options: McpHttpOptions) -> Router {
    let public_url = options.public_url.trim_end_matches('/').to_owned();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(&public_url))
        .with_max_request_body_bytes(options.max_body_bytes);
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let guard = Arc::new(Guard { app: app.clone(), public_url: public_url.clone() });
    let mcp =
        Router::new().nest_service(MCP_PATH, service).layer(axum::middleware::from_fn_with_state(guard, authenticate));
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

struct Guard {
    app: App,
    public_url: String,
}

/// Lets in a caller the app's authentication accepts (anyone without authentication), with its
/// principal in the request for the tools; refuses the others as MCP's authorization says: 401
/// with a challenge naming the resource metadata, 403 for a caller without the right.
async fn authenticate(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let mut ctx = RequestContext::new(Dialect::V1, Binding::HttpJson);
    ctx.metadata = request.headers().clone();
    ctx.peer = request.extensions().get::<Peer>().cloned();
    let required = guard.app.authentication().is_some();
    match guard.app.identify(ctx, Operation::SendMessage, required).await {
        Ok(principal) => {
            request.extensions_mut().insert(McpCaller(principal));
            next.run(request).await
        }
        Err(error) => refusal(&error, &guard.public_url),
    }
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
