//! What the console's handlers share: their state, the context an operation runs in for the
//! page's caller (the login cookie as a bearer token), and rendering a page or an error.

use std::sync::Arc;

use agentwire_types::{A2AError, A2aRequest, A2aResponse, Binding, Dialect, ErrorKind};
use axum::extract::State;
use axum::response::{Html, IntoResponse, Response};
use http::request::Parts;
use http::{header, HeaderMap, HeaderValue, StatusCode};

use crate::http::errors::http_status;
use crate::service::call;
use crate::service::Operations;
use crate::RequestContext;

use super::pages::{self, Page};
use super::{Console, Site};

/// The cookie that carries the token given at the login form.
pub(super) const TOKEN_COOKIE: &str = "agentwire_console_token";

/// What the console's routes share.
#[derive(Clone)]
pub(super) struct ConsoleState {
    pub(super) operations: Operations,
    /// The keys the card's signatures verify with.
    pub(super) signing_keys: Option<Arc<agentwire_jose::JwkSet>>,
    pub(super) console: Console,
}

pub(super) fn refusal(base: &Site, status: StatusCode, title: &str, why: &str) -> Response {
    (status, Html(pages::message_page(base, title, why).into_string())).into_response()
}

/// The context the console's operations run in: the page request's, with the login cookie's
/// token as its bearer credential when the request has no `Authorization` of its own.
pub(super) fn context(parts: &mut Parts) -> Result<RequestContext, A2AError> {
    let mut headers = parts.headers.clone();
    if !headers.contains_key(header::AUTHORIZATION)
        && let Some(token) = cookie(&headers, TOKEN_COOKIE)
        && let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {token}"))
    {
        value.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, value);
    }
    let ctx = crate::layers::context_from(&mut parts.extensions, headers, "", Dialect::V1, Binding::HttpJson)?;
    Ok(ctx.with_front(agentwire_types::Front::Console))
}

/// The value of cookie `name`.
pub(super) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(name)?.strip_prefix('=').map(str::to_owned))
        .filter(|token| !token.is_empty())
}

/// Runs `request` in the console's context.
pub(super) async fn run<T>(state: &ConsoleState, ctx: &RequestContext, request: A2aRequest) -> Result<T, A2AError>
where
    T: TryFrom<A2aResponse, Error = A2AError>,
{
    call(&state.operations, ctx.clone(), request).await
}

/// A page, or the page that says why not: the login form for a caller without credentials.
pub(super) fn page(base: &Site, result: Result<Page, A2AError>) -> Response {
    match result {
        Ok(page) => Html(page.into_string()).into_response(),
        Err(error) => error_page(base, &error),
    }
}

/// The page for an operation's error, with the status HTTP+JSON answers it with.
pub(super) fn error_page(base: &Site, error: &A2AError) -> Response {
    let (status, message) = (http_status(error.kind()), error.message());
    let title = match error.kind() {
        ErrorKind::Unauthenticated => {
            return (status, Html(pages::login_page(base, Some(message)).into_string())).into_response();
        }
        ErrorKind::PermissionDenied => "Not allowed",
        ErrorKind::TaskNotFound => "No such task",
        _ if status.is_client_error() => "Not understood",
        _ => "Something went wrong",
    };
    refusal(base, status, title, message)
}

pub(super) async fn login_page(State(state): State<ConsoleState>) -> Response {
    Html(pages::login_page(&state.console.site, None).into_string()).into_response()
}
