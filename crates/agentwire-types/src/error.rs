//! The protocol error: a kind, a message and details. Bindings map kinds to wire codes.

use std::collections::BTreeMap;
use std::fmt;

/// What went wrong, independent of any wire format.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The body is not valid JSON.
    Parse,
    /// The request envelope is malformed.
    InvalidRequest,
    /// No such method or route.
    MethodNotFound,
    /// A parameter is missing or invalid.
    InvalidParams,
    /// The server failed.
    Internal,
    /// No such task (or not visible to the caller).
    TaskNotFound,
    /// The task can no longer be canceled.
    TaskNotCancelable,
    /// The agent does not support push notifications.
    PushNotificationNotSupported,
    /// The operation is not supported in this situation.
    UnsupportedOperation,
    /// A media type is not supported.
    ContentTypeNotSupported,
    /// The agent produced something invalid.
    InvalidAgentResponse,
    /// The extended card is declared but not configured.
    ExtendedAgentCardNotConfigured,
    /// The agent requires an extension the client did not declare.
    ExtensionSupportRequired,
    /// The requested protocol version is not supported.
    VersionNotSupported,
    /// No valid credentials were presented.
    Unauthenticated,
    /// The caller is known but not allowed to do this.
    PermissionDenied,
    /// The request body exceeds the configured limit.
    PayloadTooLarge,
    /// The caller has used up a quota (such as its tasks in progress); it may retry later.
    ResourceExhausted,
    /// The dev-1.1 draft's precondition failed: the task's generation is not the one the send
    /// expected.
    TaskGenerationMismatch,
}

impl ErrorKind {
    /// The `google.rpc.ErrorInfo` reason: the error name in UPPER_SNAKE_CASE without "Error".
    pub fn reason(self) -> &'static str {
        match self {
            Self::Parse => "PARSE_ERROR",
            Self::InvalidRequest => "INVALID_REQUEST",
            Self::MethodNotFound => "METHOD_NOT_FOUND",
            Self::InvalidParams => "INVALID_PARAMS",
            Self::Internal => "INTERNAL",
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            Self::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            Self::ExtensionSupportRequired => "EXTENSION_SUPPORT_REQUIRED",
            Self::VersionNotSupported => "VERSION_NOT_SUPPORTED",
            Self::Unauthenticated => "UNAUTHENTICATED",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::TaskGenerationMismatch => "TASK_GENERATION_MISMATCH",
        }
    }

    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 19] = [
        Self::Parse,
        Self::InvalidRequest,
        Self::MethodNotFound,
        Self::InvalidParams,
        Self::Internal,
        Self::TaskNotFound,
        Self::TaskNotCancelable,
        Self::PushNotificationNotSupported,
        Self::UnsupportedOperation,
        Self::ContentTypeNotSupported,
        Self::InvalidAgentResponse,
        Self::ExtendedAgentCardNotConfigured,
        Self::ExtensionSupportRequired,
        Self::VersionNotSupported,
        Self::Unauthenticated,
        Self::PermissionDenied,
        Self::PayloadTooLarge,
        Self::ResourceExhausted,
        Self::TaskGenerationMismatch,
    ];

    /// The kind an `ErrorInfo` reason names, the inverse of [`ErrorKind::reason`].
    ///
    /// ```
    /// use agentwire_types::ErrorKind;
    ///
    /// assert_eq!(ErrorKind::from_reason("TASK_NOT_FOUND"), Some(ErrorKind::TaskNotFound));
    /// assert_eq!(ErrorKind::from_reason("NO_SUCH_REASON"), None);
    /// ```
    pub fn from_reason(reason: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.reason() == reason)
    }

    /// Whether this is one of the A2A-specific errors (which carry an `ErrorInfo`).
    pub fn is_a2a_specific(self) -> bool {
        !matches!(
            self,
            Self::Parse | Self::InvalidRequest | Self::MethodNotFound | Self::InvalidParams | Self::Internal
        )
    }
}

/// An A2A protocol error.
///
/// ```
/// use agentwire_types::{A2AError, ErrorKind};
///
/// let e = A2AError::task_not_found("t-1");
/// assert_eq!(e.kind(), ErrorKind::TaskNotFound);
/// assert_eq!(e.metadata()["taskId"], "t-1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct A2AError {
    kind: ErrorKind,
    message: String,
    metadata: BTreeMap<String, String>,
    /// What a refusal tells the caller beyond the error, boxed: few errors have it, and every
    /// `Result` of the crate is as large as this type.
    refusal: Option<Box<Refusal>>,
}

/// How to authenticate, and when to try again.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Refusal {
    /// The HTTP `WWW-Authenticate` challenge that says how to authenticate.
    challenge: Option<String>,
    /// For a refusal that passes: how long to wait before trying again.
    retry_after: Option<std::time::Duration>,
    /// The request conflicts with what the server holds (HTTP's 409), whatever its kind.
    conflict: bool,
}

/// A conversion that cannot fail converts where a fallible one is expected.
impl From<std::convert::Infallible> for A2AError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// `Result` with [`A2AError`] as the error.
pub type Result<T, E = A2AError> = std::result::Result<T, E>;

impl A2AError {
    /// An error of `kind` with a human-readable message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), metadata: BTreeMap::new(), refusal: None }
    }

    /// Adds an `ErrorInfo` metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Adds the `WWW-Authenticate` challenge a refusal is answered with on HTTP (RFC 9110 §11.6.1).
    ///
    /// ```
    /// use agentwire_types::A2AError;
    ///
    /// let refused = A2AError::unauthenticated("a bearer token is required").with_challenge("Bearer realm=\"a2a\"");
    /// assert_eq!(refused.challenge(), Some("Bearer realm=\"a2a\""));
    /// ```
    pub fn with_challenge(mut self, challenge: impl Into<String>) -> Self {
        self.refusal.get_or_insert_default().challenge = Some(challenge.into());
        self
    }

    /// The `WWW-Authenticate` challenge of a refusal, if it has one.
    pub fn challenge(&self) -> Option<&str> {
        self.refusal.as_ref().and_then(|r| r.challenge.as_deref())
    }

    /// Adds how long the caller should wait before trying again: HTTP's `Retry-After`, gRPC's
    /// `google.rpc.RetryInfo`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use agentwire_types::A2AError;
    ///
    /// let busy = A2AError::resource_exhausted("too many requests").with_retry_after(Duration::from_secs(2));
    /// assert_eq!(busy.retry_after(), Some(Duration::from_secs(2)));
    /// ```
    pub fn with_retry_after(mut self, wait: std::time::Duration) -> Self {
        self.refusal.get_or_insert_default().retry_after = Some(wait);
        self
    }

    /// Marks an error as a conflict with what the server holds, which HTTP answers with
    /// `409 Conflict` whatever the kind (such as an idempotency key reused for another request).
    ///
    /// ```
    /// use agentwire_types::A2AError;
    ///
    /// let reused = A2AError::invalid_params("the key was used for another request").with_conflict();
    /// assert!(reused.is_conflict());
    /// ```
    pub fn with_conflict(mut self) -> Self {
        self.refusal.get_or_insert_default().conflict = true;
        self
    }

    /// Whether the error is a conflict with what the server holds ([`with_conflict`](Self::with_conflict)).
    pub fn is_conflict(&self) -> bool {
        self.refusal.as_ref().is_some_and(|r| r.conflict)
    }

    /// How long to wait before trying again, for a refusal that passes.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.refusal.as_ref().and_then(|r| r.retry_after)
    }

    /// An error as a peer reported it: of the kind its `google.rpc.ErrorInfo` `reason` names
    /// (the reason names the error in every generation and binding), else of `kind_by_code`,
    /// the kind the wire's code means; with the `ErrorInfo` metadata. `None` when neither tells.
    ///
    /// ```
    /// use agentwire_types::{A2AError, ErrorKind};
    ///
    /// let metadata = [("taskId".to_owned(), "t-1".to_owned())];
    /// let read = A2AError::reported(Some("TASK_NOT_FOUND"), None, "gone", metadata).unwrap();
    /// assert_eq!((read.kind(), read.metadata()["taskId"].as_str()), (ErrorKind::TaskNotFound, "t-1"));
    /// assert!(A2AError::reported(Some("NO_SUCH_REASON"), None, "?", []).is_none());
    /// ```
    pub fn reported(
        reason: Option<&str>,
        kind_by_code: Option<ErrorKind>,
        message: impl Into<String>,
        metadata: impl IntoIterator<Item = (String, String)>,
    ) -> Option<Self> {
        let kind = reason.and_then(ErrorKind::from_reason).or(kind_by_code)?;
        Some(metadata.into_iter().fold(Self::new(kind, message), |error, (key, value)| error.with_metadata(key, value)))
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `ErrorInfo` metadata (e.g. `taskId`).
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    /// The body is not valid JSON.
    pub fn parse(detail: impl fmt::Display) -> Self {
        Self::new(ErrorKind::Parse, format!("invalid JSON: {detail}"))
    }

    /// The request envelope is malformed.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidRequest, message)
    }

    /// No such method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorKind::MethodNotFound, format!("method not found: {method}")).with_metadata("method", method)
    }

    /// A parameter is missing or invalid.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, message)
    }

    /// The server failed; the message must not reveal internals.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// No task with this id is visible to the caller.
    pub fn task_not_found(task_id: &str) -> Self {
        Self::new(ErrorKind::TaskNotFound, format!("task not found: {task_id}")).with_metadata("taskId", task_id)
    }

    /// The task is in a state that cannot be canceled.
    pub fn task_not_cancelable(task_id: &str, state: crate::TaskState) -> Self {
        Self::new(ErrorKind::TaskNotCancelable, format!("task {task_id} cannot be canceled: it is {state}"))
            .with_metadata("taskId", task_id)
    }

    /// Push notifications are not supported by this agent.
    pub fn push_notification_not_supported() -> Self {
        Self::new(ErrorKind::PushNotificationNotSupported, "push notifications are not supported by this agent")
    }

    /// The operation is not supported here.
    pub fn unsupported_operation(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::UnsupportedOperation, message)
    }

    /// A media type is not supported.
    pub fn content_type_not_supported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ContentTypeNotSupported, message)
    }

    /// The agent produced an invalid response.
    pub fn invalid_agent_response(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidAgentResponse, message)
    }

    /// The extended card is declared but not configured.
    pub fn extended_agent_card_not_configured() -> Self {
        Self::new(ErrorKind::ExtendedAgentCardNotConfigured, "the extended agent card is not configured")
    }

    /// A required extension was not declared by the client.
    pub fn extension_support_required(uri: &str) -> Self {
        Self::new(
            ErrorKind::ExtensionSupportRequired,
            format!("the agent requires extension {uri}; declare it in the A2A-Extensions header"),
        )
        .with_metadata("extension", uri)
    }

    /// The requested protocol version is not supported.
    pub fn version_not_supported(requested: &str, supported: &[&str]) -> Self {
        Self::new(
            ErrorKind::VersionNotSupported,
            format!("protocol version {requested:?} is not supported; supported: {}", supported.join(", ")),
        )
        .with_metadata("requestedVersion", requested)
        .with_metadata("supportedVersions", supported.join(","))
    }

    /// The dev-1.1 draft's TaskGenerationMismatch: a send expected task `task_id` at generation
    /// `expected`, and it is at `current`.
    ///
    /// ```
    /// use agentwire_types::{A2AError, ErrorKind};
    ///
    /// let e = A2AError::task_generation_mismatch("t-1", 3, 5);
    /// assert_eq!(e.kind(), ErrorKind::TaskGenerationMismatch);
    /// assert_eq!(e.message(), "Task generation mismatch: expected 3 but current generation is 5");
    /// assert_eq!(e.metadata()["currentGeneration"], "5");
    /// ```
    pub fn task_generation_mismatch(task_id: &str, expected: i64, current: i64) -> Self {
        Self::new(
            ErrorKind::TaskGenerationMismatch,
            format!("Task generation mismatch: expected {expected} but current generation is {current}"),
        )
        .with_metadata("taskId", task_id)
        .with_metadata("expectedGeneration", expected.to_string())
        .with_metadata("currentGeneration", current.to_string())
    }

    /// No valid credentials were presented.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unauthenticated, message)
    }

    /// The caller may not do this.
    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::PermissionDenied, message)
    }

    /// The request body is over the limit.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(ErrorKind::PayloadTooLarge, format!("request body exceeds the limit of {limit} bytes"))
            .with_metadata("limitBytes", limit.to_string())
    }

    /// The caller has used up a quota.
    pub fn resource_exhausted(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ResourceExhausted, message)
    }
}

impl fmt::Display for A2AError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for A2AError {}
