//! Headers sent with every call made inside a scope: what a gateway passes on from the request
//! it relays (its hop count), without a client of its own for each request.

use std::future::Future;

use http::HeaderMap;

tokio::task_local! {
    static CALL_HEADERS: HeaderMap;
}

/// Runs `future`, sending `headers` with every call a [`Client`](crate::Client) makes inside it
/// (HTTP headers on the JSON bindings, metadata on gRPC), besides the client's own. Card fetches
/// do not carry them, nor a stream resumed once `future` has returned.
///
/// ```no_run
/// # async fn run(client: agentwire_client::Client) -> agentwire_client::Result<()> {
/// use agentwire_types::{Message, SendMessageRequest};
/// use http::{HeaderMap, HeaderValue};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("a2a-gateway-hops", HeaderValue::from_static("1"));
/// let send = client.send_message(SendMessageRequest::new(Message::user("m-1", "hello")));
/// let reply = agentwire_client::with_call_headers(headers, send).await?;
/// # drop(reply);
/// # Ok(())
/// # }
/// ```
pub async fn with_call_headers<F: Future>(headers: HeaderMap, future: F) -> F::Output {
    CALL_HEADERS.scope(headers, future).await
}

/// The headers of the innermost [`with_call_headers`] around the caller; none outside one.
pub(crate) fn call_headers() -> HeaderMap {
    CALL_HEADERS.try_with(HeaderMap::clone).unwrap_or_default()
}
