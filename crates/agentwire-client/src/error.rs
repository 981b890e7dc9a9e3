//! What a call can end with other than its result.

use agentwire_types::A2AError;

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
        /// The start of the body, for the reader.
        body: String,
    },
    /// The agent could not be reached, or the connection broke.
    #[error("could not reach {url}: {source}")]
    Connection {
        /// The URL called.
        url: String,
        /// What the HTTP client reported.
        #[source]
        source: reqwest::Error,
    },
    /// The agent answered with something that is not what the protocol says it answers.
    #[error("unexpected answer from {url}: {detail}")]
    Decode {
        /// The URL called.
        url: String,
        /// What did not fit.
        detail: String,
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
}

impl Error {
    /// The A2A error kind, for an agent's refusal.
    pub fn kind(&self) -> Option<agentwire_types::ErrorKind> {
        match self {
            Error::Protocol(error) => Some(error.kind()),
            _ => None,
        }
    }

    /// Whether the call never reached the agent, so another interface may be tried.
    pub(crate) fn is_unreachable(&self) -> bool {
        matches!(self, Error::Connection { source, .. } if source.is_connect())
    }
}

/// A call's outcome.
pub type Result<T, E = Error> = std::result::Result<T, E>;
