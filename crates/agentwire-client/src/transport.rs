//! How a call reaches an interface: one transport per kind of binding, chosen by the client for
//! the endpoint it calls. The client keeps discovery, ranking and fallback between endpoints.

use agentwire_types::{A2aRequest, A2aResponse};
use futures_util::future::BoxFuture;

use crate::endpoint::Endpoint;
use crate::error::Result;
use crate::stream::Events;

/// Writes calls on one kind of binding and reads their answers.
pub(crate) trait Transport: Send + Sync {
    /// A call with one answer, with a current access token's `authorization` in place of the
    /// endpoint's credentials.
    fn unary<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        authorization: Option<http::HeaderValue>,
        call: &'a A2aRequest,
    ) -> BoxFuture<'a, Result<A2aResponse>>;

    /// A call answered with a stream of events, after the event `last_event_id` where the
    /// binding numbers them.
    fn open<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        authorization: Option<http::HeaderValue>,
        call: &'a A2aRequest,
        last_event_id: Option<u64>,
    ) -> BoxFuture<'a, Result<Events>>;
}
