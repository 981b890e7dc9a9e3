//! What the two HTTP bindings share: writing a call as a request with the endpoint's headers,
//! and reading the answer or the stream of events, each binding in its own form.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;

use http::header::{ACCEPT, CONTENT_TYPE};
use http::StatusCode;

use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::stream::Events;
use crate::transport::Transport;
use crate::{jsonrpc, rest, sse};
use agentwire_types::Binding;
use agentwire_types::{A2aRequest, A2aResponse};

/// JSON-RPC and HTTP+JSON: a request per call on one HTTP client.
#[derive(Debug)]
pub(crate) struct HttpTransport {
    pub(crate) client: reqwest::Client,
    pub(crate) next_request_id: AtomicU64,
    /// The limit on a unary call; streams have none.
    pub(crate) timeout: Option<Duration>,
    /// The largest event of a stream.
    pub(crate) max_event_size: usize,
    /// The largest unary answer.
    pub(crate) max_reply_size: usize,
}

impl Transport for HttpTransport {
    fn unary<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        authorization: Option<http::HeaderValue>,
        call: &'a A2aRequest,
    ) -> BoxFuture<'a, Result<A2aResponse>> {
        Box::pin(async move {
            let id = self.next_request_id.fetch_add(1, Ordering::Relaxed);
            let request = request(&self.client, endpoint, authorization, call, id, Expect::Reply(self.timeout))?;
            let timeout = self.timeout;
            let response = request.send().await.map_err(|e| Error::within(&endpoint.url, timeout, e))?;
            let read = read_reply(endpoint, call, response, self.max_reply_size).await;
            // A body that stops arriving ends at the same limit as an answer that never starts.
            read.map_err(|error| match (error, timeout) {
                (Error::Connection { source, .. }, Some(after)) if is_timeout(&*source) => {
                    Error::Timeout { url: endpoint.url.clone(), after }
                }
                (other, _) => other,
            })
        })
    }

    fn open<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        authorization: Option<http::HeaderValue>,
        call: &'a A2aRequest,
        last_event_id: Option<u64>,
    ) -> BoxFuture<'a, Result<Events>> {
        Box::pin(async move {
            let id = self.next_request_id.fetch_add(1, Ordering::Relaxed);
            let expect = Expect::Events(last_event_id);
            let request = request(&self.client, endpoint, authorization, call, id, expect)?;
            let response = request.send().await.map_err(|e| Error::transport(&endpoint.url, e))?;
            events(endpoint, call, response, self.max_event_size).await
        })
    }
}

/// Whether a transport failure is the request's timeout.
fn is_timeout(source: &(dyn std::error::Error + 'static)) -> bool {
    source.downcast_ref::<reqwest::Error>().is_some_and(reqwest::Error::is_timeout)
}

/// What a request expects back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// One answer, within this time if set.
    Reply(Option<Duration>),
    /// An event stream, after the event with this id if given.
    Events(Option<u64>),
}

/// The HTTP request for `call` at `endpoint`, with a current access token's `authorization` in
/// place of the endpoint's; `id` is the JSON-RPC request id.
pub(crate) fn request(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    authorization: Option<http::HeaderValue>,
    call: &A2aRequest,
    id: u64,
    expect: Expect,
) -> Result<reqwest::RequestBuilder> {
    let request = match endpoint.binding {
        Binding::JsonRpc => http.post(&endpoint.url).json(&jsonrpc::envelope(endpoint, call, id)?),
        Binding::HttpJson => {
            let route = rest::route(call, endpoint.version)?;
            let url = rest::url_under(&endpoint.url, &route.path)?;
            let request = http.request(route.verb, url).query(&route.query);
            match &route.body {
                Some(body) => request.json(body),
                None => request,
            }
        }
        Binding::Grpc => {
            return Err(Error::Unsupported { operation: call.operation(), endpoint: endpoint.to_string() })
        }
    };
    let mut request = request
        .headers(endpoint.headers.clone())
        .headers(crate::trace::context_headers())
        .headers(crate::scoped::call_headers())
        .header("A2A-Version", endpoint.version.header());
    if let Some(authorization) = authorization {
        request = request.header(http::header::AUTHORIZATION, authorization);
    }
    Ok(match expect {
        Expect::Reply(Some(timeout)) => request.timeout(timeout),
        Expect::Reply(None) => request,
        Expect::Events(last_event_id) => {
            let request = request.header(ACCEPT, "text/event-stream");
            match last_event_id {
                Some(seen) => request.header("Last-Event-ID", seen.to_string()),
                None => request,
            }
        }
    })
}

/// Reads a unary answer.
pub(crate) async fn read_reply(
    endpoint: &Endpoint,
    call: &A2aRequest,
    response: reqwest::Response,
    max_bytes: usize,
) -> Result<A2aResponse> {
    let url = response.url().to_string();
    let status = response.status();
    let body = crate::limits::read_limited(response, max_bytes).await?;
    match endpoint.binding {
        // HTTP itself speaks for credentials, whatever error object the body holds.
        Binding::JsonRpc if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN => {
            Err(jsonrpc::refused_credentials(endpoint, &url, status, &body))
        }
        Binding::JsonRpc if !status.is_success() && !jsonrpc::is_envelope(&body) => {
            Err(Error::http(&url, status, &body))
        }
        Binding::JsonRpc => jsonrpc::read_reply(endpoint, call, &url, &body),
        _ => rest::read_reply(endpoint, call, &url, status, &body),
    }
}

/// The events of an answer that should be an event stream, none larger than `max_event_size`;
/// any other answer is read as the refusal it is.
pub(crate) async fn events(
    endpoint: &Endpoint,
    call: &A2aRequest,
    response: reqwest::Response,
    max_event_size: usize,
) -> Result<Events> {
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse {
        let url = response.url().to_string();
        return Err(match read_reply(endpoint, call, response, max_event_size).await {
            Err(error) => error,
            Ok(_) => Error::Decode { url, detail: "expected an event stream".into() },
        });
    }
    let url = response.url().to_string();
    Ok(sse::event_stream(endpoint.clone(), url, response.bytes_stream(), Error::transport, max_event_size))
}
