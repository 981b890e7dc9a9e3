//! What a call can end with other than its result.

use agentwire_types::A2AError;
use agentwire_types::Operation;

/// The cause of a transport failure, as the HTTP or gRPC client reported it.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A failed call.
///
/// An agent's refusal keeps the protocol error as the agent sent it (its kind, message and the
/// `ErrorInfo` metadata), whichever binding carried it:
///
/// ```
/// use agentwire_client::Error;
/// use agentwire_types::{A2AError, ErrorKind};
///
/// let error = Error::from(A2AError::task_not_found("t-1"));
/// assert_eq!(error.kind(), Some(ErrorKind::TaskNotFound));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The agent answered with an A2A error.
    #[error("{0}")]
    Protocol(#[from] A2AError),
    /// The agent answered with an HTTP error that carries no A2A error.
    #[error("{url} answered HTTP {status}: {body}")]
    Http {
        /// The URL called.
        url: String,
        /// The status.
        status: http::StatusCode,
        /// What the body says, for the reader: the message of the error object it holds (as a
        /// gateway's own answers do), else its start.
        body: String,
    },
    /// No connection to the agent could be made: nothing was sent, so another interface may be
    /// tried.
    #[error("could not connect to {url}: {source}")]
    Unreachable {
        /// The URL called.
        url: String,
        /// What the transport reported.
        #[source]
        source: BoxError,
    },
    /// The connection broke, or the call timed out, after the request was sent.
    #[error("the connection to {url} failed: {source}")]
    Connection {
        /// The URL called.
        url: String,
        /// What the transport reported.
        #[source]
        source: BoxError,
    },
    /// The agent did not answer within the client's time limit
    /// ([`ClientBuilder::timeout`](crate::ClientBuilder::timeout)).
    #[error("{url} did not answer within {} s", after.as_secs_f32())]
    Timeout {
        /// The URL called.
        url: String,
        /// The limit.
        after: std::time::Duration,
    },
    /// The agent answered with something that is not what the protocol says it answers.
    #[error("unexpected answer from {url}: {detail}")]
    Decode {
        /// The URL called.
        url: String,
        /// What did not fit.
        detail: String,
    },
    /// The request could not be written in the interface's form.
    #[error("the request cannot be written: {0}")]
    Encode(String),
    /// The interface's protocol version has no such operation.
    #[error("{operation:?} is not an operation of {endpoint}")]
    Unsupported {
        /// The operation.
        operation: Operation,
        /// The interface, as `BINDING VERSION URL`.
        endpoint: String,
    },
    /// The card offers no interface this client can use.
    #[error("the agent card offers no interface this client speaks ({offered})")]
    NoInterface {
        /// The interfaces the card offers, as `BINDING VERSION URL`.
        offered: String,
    },
    /// No agent card was found.
    #[error("no agent card at {tried}")]
    NoCard {
        /// The URLs tried.
        tried: String,
    },
    /// The card's signatures were to be verified, and none was by a trusted key.
    #[error("the agent card at {url} is not signed by a trusted key: {reason}")]
    UntrustedCard {
        /// Where the card was found.
        url: String,
        /// Why no signature was accepted.
        reason: String,
    },
    /// The agent ended a task's stream while the task went on, and again after each of `times`
    /// subscriptions in a row that brought no news ([`Reconnect`](crate::Reconnect)): the
    /// stream stopped asking.
    #[error(
        "the agent ended the stream of task {task_id} {times} times in a row without news, the task still running"
    )]
    StreamEnded {
        /// The task followed.
        task_id: String,
        /// The subscriptions that brought nothing new.
        times: u32,
    },
    /// A setting of the client builder is not valid.
    #[error("invalid client setting: {0}")]
    Setting(String),
}

impl Error {
    /// The A2A error kind, for an agent's refusal.
    pub fn kind(&self) -> Option<agentwire_types::ErrorKind> {
        match self {
            Error::Protocol(error) => Some(error.kind()),
            _ => None,
        }
    }

    /// A failure of the HTTP client on a call limited to `limit`: a timeout, or [`transport`].
    ///
    /// [`transport`]: Self::transport
    pub(crate) fn within(url: &str, limit: Option<std::time::Duration>, source: reqwest::Error) -> Self {
        match limit {
            Some(after) if source.is_timeout() => Error::Timeout { url: url.to_owned(), after },
            _ => Self::transport(url, source),
        }
    }

    /// A failure of the HTTP client, told apart by whether anything reached the agent.
    pub(crate) fn transport(url: &str, source: reqwest::Error) -> Self {
        let url = url.to_owned();
        if source.is_connect() {
            Error::Unreachable { url, source: Box::new(source) }
        } else {
            Error::Connection { url, source: Box::new(source) }
        }
    }

    pub(crate) fn decode(url: &str, error: impl std::fmt::Display) -> Self {
        Error::Decode { url: url.to_owned(), detail: error.to_string() }
    }

    pub(crate) fn http(url: &str, status: http::StatusCode, body: &[u8]) -> Self {
        let body =
            error_message(body).unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned());
        Error::Http { url: url.to_owned(), status, body }
    }
}

/// The message of the error object an error body holds: `{"error": {"message": …}}` (AIP-193, a
/// JSON-RPC response) or `{"message": …}`, clipped to 300 bytes.
pub(crate) fn error_message(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    // An OAuth error (RFC 6749 §5.2): its code, and its description when it has one.
    if let Some(code) = value.get("error").and_then(|code| code.as_str()) {
        let description = value.get("error_description").and_then(|text| text.as_str());
        let message = description.map_or_else(|| code.to_owned(), |text| format!("{code}: {text}"));
        return Some(agentwire_types::text::clip(message, 300));
    }
    let message = value.pointer("/error/message").or_else(|| value.get("message"))?.as_str()?;
    Some(agentwire_types::text::clip(message.to_owned(), 300)).filter(|message| !message.is_empty())
}

/// A call's outcome.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `error` and the causes under it, each once: the HTTP and gRPC clients' summaries ("error
/// sending request", "transport error") say nothing a person can act on, their causes do
/// (connection refused, a DNS failure, a TLS error).
///
/// ```
/// let error = agentwire_client::Error::Encode("no".into());
/// assert_eq!(agentwire_client::error_chain(&error), "the request cannot be written: no");
/// ```
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    // A transport error names the URL, and so does the HTTP client's summary under it.
    let (mut message, mut cause) = match error.downcast_ref::<Error>() {
        Some(Error::Unreachable { url, source }) => (format!("could not connect to {url}"), Some(&**source as _)),
        Some(Error::Connection { url, source }) => (format!("the connection to {url} failed"), Some(&**source as _)),
        _ => (error.to_string(), error.source()),
    };
    while let Some(error) = cause {
        let text = error.to_string();
        if !is_summary(error) && !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = error.source();
    }
    message
}

/// Whether `error` only sums up its cause, in words a person cannot act on: the HTTP client's
/// "error sending request for url (…)" and its connection pool's "client error (Connect)".
fn is_summary(error: &(dyn std::error::Error + 'static)) -> bool {
    error.source().is_some() && (error.is::<reqwest::Error>() || error.is::<hyper_util::client::legacy::Error>())
}
