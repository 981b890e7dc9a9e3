//! Who may open the console: the loopback and origin gate, the page's security headers, and
//! logging in and out.

use agentwire_types::Peer;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Extension;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::Deserialize;

use super::pages;
use super::state::{refusal, ConsoleState, TOKEN_COOKIE};
use super::{Console, ConsoleAccess};

/// Refuses callers the console is not served to, requests made under another host name, and
/// posts from other sites; hardens every answer it lets through.
pub(super) async fn admit(console: Console, request: Request, next: Next) -> Response {
    let base = &console.site;
    let peer = request.extensions().get::<Peer>();
    if console.access == ConsoleAccess::Loopback && !peer.is_some_and(|peer| peer.addr.ip().is_loopback()) {
        let why = "The console is served to loopback addresses only, as this server authenticates nobody. \
                   Configure authentication (--auth), or open the console to every address (--console-open), \
                   to reach it from elsewhere.";
        return refusal(base, StatusCode::FORBIDDEN, "Not served here", why);
    }
    let host = crate::ServedHosts::named_by(&request);
    if !console.hosts.serves(host) {
        // A page of another site whose name now points at this server (DNS rebinding) names
        // its own host: it gets nothing of the console.
        let why = "The console answers under its own address, localhost, and the names it is configured with \
                   (--public-url).";
        return refusal(base, StatusCode::MISDIRECTED_REQUEST, "Not served under this name", why);
    }
    if request.method() == http::Method::POST && !same_origin(request.headers(), host) {
        return refusal(base, StatusCode::FORBIDDEN, "Refused", "The console takes posts from its own pages only.");
    }
    let mut response = next.run(request).await;
    harden(response.headers_mut());
    response
}

/// The policy of every console page: its own scripts, styles and pages only, in no frame, with
/// no `<base>` elsewhere. A download sets a stricter one of its own (`sandbox`).
pub(super) const PAGE_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

/// Headers every answer of the console carries.
pub(super) fn harden(headers: &mut HeaderMap) {
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_POLICY));
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
}

/// Whether a post comes from a page of this host: browsers name the page's origin in `Origin`,
/// and a post without one (no browser's) is refused.
pub(super) fn same_origin(headers: &HeaderMap, host: &str) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else { return false };
    origin.split_once("://").is_some_and(|(_, authority)| authority == host)
}

/// The login form's fields.
#[derive(Debug, Deserialize)]
pub(super) struct Login {
    pub(super) token: String,
}

/// Keeps the token in a cookie the browser sends to the console only, and to no other site.
pub(super) async fn log_in(
    State(state): State<ConsoleState>,
    peer: Option<Extension<Peer>>,
    body: axum::body::Bytes,
) -> Response {
    let site = &state.console.site;
    let base = &site.base;
    let refused =
        |why: &str| (StatusCode::BAD_REQUEST, Html(pages::login_page(site, Some(why)).into_string())).into_response();
    let Ok(login) = serde_urlencoded::from_bytes::<Login>(&body) else { return refused("Give a token.") };
    let token = login.token.trim();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic() && b != b';' && b != b',') {
        return refused("A token is one word of visible characters.");
    }
    let mut response = Redirect::to(&format!("{base}/tasks")).into_response();
    set_cookie(&mut response, &format!("{TOKEN_COOKIE}={token}; Path={base}; HttpOnly; SameSite=Strict"), peer);
    response
}

pub(super) async fn log_out(State(state): State<ConsoleState>, peer: Option<Extension<Peer>>) -> Response {
    let base = &state.console.site.base;
    let mut response = Redirect::to(&format!("{base}/login")).into_response();
    let cookie = format!("{TOKEN_COOKIE}=; Path={base}; HttpOnly; SameSite=Strict; Max-Age=0");
    set_cookie(&mut response, &cookie, peer);
    response
}

/// Sets `cookie`; one set over TLS is sent back over TLS only (`Secure`).
pub(super) fn set_cookie(response: &mut Response, cookie: &str, peer: Option<Extension<Peer>>) {
    let cookie = match peer {
        Some(Extension(peer)) if peer.tls => format!("{cookie}; Secure"),
        _ => cookie.to_owned(),
    };
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
}
