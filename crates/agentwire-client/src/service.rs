//! The client as an operation service: the same `Service<(RequestContext, A2aRequest)>` the
//! server's bindings call, so that a server can serve a remote agent (a gateway) as it serves
//! its own.

use std::task::{Context, Poll};

use agentwire_types::{A2AError, A2aRequest, A2aResponse, ErrorKind, RequestContext, StreamItem};
use futures_util::future::BoxFuture;
use futures_util::StreamExt as _;

use crate::client::Client;
use crate::error::Error;
use crate::stream::EventStream;

/// Runs each operation at the remote agent: [`Client`] is a `tower::Service` over the canonical
/// operations, answering as the server's own handler does. The context's `last_event_id` resumes
/// a subscription after that event; the rest of the context stays here (the client calls with
/// its own credentials). A failure that is not the agent's A2A error is told as the A2A error of
/// the same nature ([`From<Error> for A2AError`](Error)).
///
/// ```no_run
/// # async fn run() -> agentwire_client::Result<()> {
/// use agentwire_client::Client;
/// use agentwire_types::{A2aRequest, ListTasksRequest, RequestContext};
/// use tower::ServiceExt;
///
/// let client = Client::connect("http://127.0.0.1:8080").await?;
/// let list = A2aRequest::ListTasks(ListTasksRequest::default());
/// let page = client.oneshot((RequestContext::default(), list)).await?;
/// # drop(page);
/// # Ok(())
/// # }
/// ```
impl tower::Service<(RequestContext, A2aRequest)> for Client {
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = BoxFuture<'static, Result<A2aResponse, A2AError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), A2AError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        let client = self.clone();
        Box::pin(async move { client.operate(ctx, request).await.map_err(A2AError::from) })
    }
}

impl Client {
    async fn operate(&self, ctx: RequestContext, request: A2aRequest) -> crate::Result<A2aResponse> {
        match request {
            A2aRequest::SendStreamingMessage(request) => Ok(numbered(self.send_streaming_message(request).await?)),
            A2aRequest::SubscribeToTask(request) => {
                Ok(numbered(self.subscribe_after(request, ctx.last_event_id).await?))
            }
            A2aRequest::GetAgentCard => Ok(A2aResponse::Card(Box::new(self.card().clone()))),
            request => self.unary(request).await,
        }
    }
}

/// A stream of the agent's events as the server's streams are: each with the agent's number
/// for it, or 0 (no SSE id) where the agent gave none.
fn numbered(events: EventStream) -> A2aResponse {
    let items = events.numbered().map(|event| match event {
        Ok((id, response)) => Ok(StreamItem { seq: id.unwrap_or(0), response: std::sync::Arc::new(response) }),
        Err(error) => Err(A2AError::from(error)),
    });
    A2aResponse::Stream(Box::pin(items))
}

/// What a caller of a remote agent learns of a failed call, as an A2A error: the agent's own
/// error as it sent it; an operation its interface lacks, or that it does not know (its
/// MethodNotFound: the caller's method was found, here), as UnsupportedOperation; an answer that
/// is not A2A as InvalidAgentResponse; a refusal of our credentials, a broken connection or an
/// agent that cannot be reached as Internal, naming the agent (the caller's credentials were not
/// the ones refused).
impl From<Error> for A2AError {
    fn from(error: Error) -> Self {
        let message = crate::error::error_chain(&error);
        match error {
            Error::Protocol(error) => match error.kind() {
                ErrorKind::Unauthenticated | ErrorKind::PermissionDenied => {
                    A2AError::internal(format!("the remote agent refused this client: {message}"))
                }
                ErrorKind::MethodNotFound => A2AError::unsupported_operation(format!(
                    "the remote agent does not offer this operation: {message}"
                )),
                _ => error,
            },
            Error::Unsupported { .. } => A2AError::unsupported_operation(message),
            Error::Decode { .. } => A2AError::invalid_agent_response(message),
            Error::Encode(_) => A2AError::invalid_params(message),
            _ => A2AError::internal(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_errors_keep_their_kind_and_ours_become_internal() {
        let not_found = Error::Protocol(A2AError::task_not_found("t-1"));
        assert_eq!(A2AError::from(not_found).kind(), ErrorKind::TaskNotFound);
        let refused = Error::Protocol(A2AError::unauthenticated("no token").with_challenge("Bearer"));
        let refused = A2AError::from(refused);
        assert_eq!(refused.kind(), ErrorKind::Internal);
        assert!(refused.challenge().is_none(), "the agent's challenge is for us, not for our caller");
        let http = Error::Http { url: "http://a".into(), status: http::StatusCode::BAD_GATEWAY, body: String::new() };
        assert_eq!(A2AError::from(http).kind(), ErrorKind::Internal);
        let unknown = A2AError::from(Error::Protocol(A2AError::method_not_found("tasks/list")));
        assert_eq!(unknown.kind(), ErrorKind::UnsupportedOperation);
        let decode = Error::Decode { url: "http://a".into(), detail: "not JSON".into() };
        assert_eq!(A2AError::from(decode).kind(), ErrorKind::InvalidAgentResponse);
    }
}
