//! JSON-RPC 2.0 for every protocol generation: the request and response envelopes, the error
//! object with its `google.rpc.ErrorInfo` detail, and the error codes per generation, both ways
//! (what a server writes for an error kind, and what a client reads back from a code).
//!
//! The A2A-specific codes collide between generations: -32007 is ExtendedAgentCardNotConfigured in
//! v1.0 and v0.3 but EXTENSION_REQUIRED in the legacy `tasks/send` family, whose -32008 is
//! VERSION_NOT_SUPPORTED (v1.0: ExtensionSupportRequired; -32009 is v1.0's VersionNotSupported).
//!
//! ```
//! use agentwire_types::jsonrpc::{error_code, error_kind};
//! use agentwire_types::{Dialect, ErrorKind};
//!
//! assert_eq!(error_code(Dialect::V1, ErrorKind::VersionNotSupported), -32009);
//! assert_eq!(error_code(Dialect::Legacy, ErrorKind::VersionNotSupported), -32008);
//! assert_eq!(error_kind(Dialect::V1, -32008), Some(ErrorKind::ExtensionSupportRequired));
//! assert_eq!(error_kind(Dialect::Legacy, -32008), Some(ErrorKind::VersionNotSupported));
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use crate::{A2AError, Dialect, ErrorKind};

pub use crate::operation::Operation;

/// A request, borrowed from its JSON text: `params` stay raw until the method says what they are.
///
/// ```
/// use agentwire_types::jsonrpc::Request;
///
/// let text = r#"{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{}}}"#;
/// let request: Request<'_> = serde_json::from_str(text).unwrap();
/// assert_eq!((request.method.as_ref(), request.id.unwrap().get()), ("message/send", "7"));
/// assert_eq!(serde_json::to_string(&request).unwrap(), text);
/// ```
#[derive(Debug, Serialize, Deserialize)]
pub struct Request<'a> {
    /// `"2.0"`.
    #[serde(borrow)]
    pub jsonrpc: Cow<'a, str>,
    /// The id, exactly as written; absent for a notification.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a RawValue>,
    /// The method name, which names the protocol generation too.
    #[serde(borrow)]
    pub method: Cow<'a, str>,
    /// The parameters' JSON text.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub params: Option<&'a RawValue>,
}

/// A response: `{"jsonrpc":"2.0","id":…,"result":…}` or `…"error":…}`, with the id exactly as
/// the request wrote it.
///
/// ```
/// use agentwire_types::jsonrpc::{ErrorObject, Response};
/// use agentwire_types::{A2AError, Dialect};
/// use serde_json::value::RawValue;
///
/// let id = RawValue::from_string("\"r1\"".into()).unwrap();
/// let error = ErrorObject::new(Dialect::Legacy, &A2AError::task_not_found("t1"));
/// let text = serde_json::to_string(&Response::<()>::error(&id, error)).unwrap();
/// let back: Response<'_, serde_json::Value> = serde_json::from_str(&text).unwrap();
/// assert_eq!(back.error.unwrap().data[0].reason, "TASK_NOT_FOUND");
/// ```
#[derive(Debug, Serialize, Deserialize)]
pub struct Response<'a, T> {
    /// `"2.0"`.
    #[serde(borrow)]
    pub jsonrpc: Cow<'a, str>,
    /// The request's id (`null` when it could not be read).
    #[serde(borrow)]
    pub id: &'a RawValue,
    /// The result of a call that succeeded (a missing member reads as `None`: serde's rule for
    /// `Option`, which, unlike `default`, asks nothing of `T`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<T>,
    /// The error of a call that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl<'a, T> Response<'a, T> {
    /// A successful response.
    pub fn result(id: &'a RawValue, result: T) -> Self {
        Self { jsonrpc: Cow::Borrowed("2.0"), id, result: Some(result), error: None }
    }

    /// A failed response.
    pub fn error(id: &'a RawValue, error: ErrorObject) -> Self {
        Self { jsonrpc: Cow::Borrowed("2.0"), id, result: None, error: Some(error) }
    }
}

/// The `error` member: the generation's code, the message, and for A2A-specific errors a
/// `google.rpc.ErrorInfo` in `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The code, per [`error_code`].
    pub code: i64,
    /// What went wrong.
    #[serde(default)]
    pub message: String,
    /// `[ErrorInfo]` for A2A-specific errors (read leniently: other shapes read as none).
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "lenient_details")]
    pub data: Vec<ErrorInfo>,
}

impl ErrorObject {
    /// `error` as `dialect` writes it.
    pub fn new(dialect: Dialect, error: &A2AError) -> Self {
        Self {
            code: error_code(dialect, error.kind()),
            message: error.message().to_owned(),
            data: ErrorInfo::of(error).into_iter().collect(),
        }
    }

    /// The error kind `dialect` means by this code, if it defines it.
    pub fn kind(&self, dialect: Dialect) -> Option<ErrorKind> {
        error_kind(dialect, self.code)
    }

    /// The error this object reports, as a client reads it: the kind from the `ErrorInfo` reason
    /// where there is one (it names the error in every generation), else from the code; a code
    /// that `dialect` does not define reads as Internal, with the code in the message.
    ///
    /// ```
    /// use agentwire_types::jsonrpc::ErrorObject;
    /// use agentwire_types::{A2AError, Dialect, ErrorKind};
    ///
    /// let sent = ErrorObject::new(Dialect::V1, &A2AError::task_not_found("t-1"));
    /// let read = sent.into_error(Dialect::V1);
    /// assert_eq!((read.kind(), read.metadata()["taskId"].as_str()), (ErrorKind::TaskNotFound, "t-1"));
    /// ```
    pub fn into_error(self, dialect: Dialect) -> A2AError {
        let (code, info) = (self.code, self.data.into_iter().next());
        let reason = info.as_ref().map(|info| info.reason.as_str());
        let by_code = error_kind(dialect, code);
        let metadata = info.as_ref().map(|info| info.metadata.clone()).unwrap_or_default();
        A2AError::reported(reason, by_code, &*self.message, metadata)
            .unwrap_or_else(|| A2AError::internal(format!("error {code}: {}", self.message)))
    }
}

/// A `google.rpc.ErrorInfo`: the reason (`TASK_NOT_FOUND`, …), the domain, and the facts of the
/// error (`taskId`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// `type.googleapis.com/google.rpc.ErrorInfo`.
    #[serde(rename = "@type", default)]
    pub type_url: String,
    /// The error's reason, in SCREAMING_SNAKE_CASE.
    #[serde(default)]
    pub reason: String,
    /// `a2a-protocol.org`.
    #[serde(default)]
    pub domain: String,
    /// What the error is about.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

impl ErrorInfo {
    /// The detail of an A2A-specific error; `None` for JSON-RPC's own errors.
    pub fn of(error: &A2AError) -> Option<Self> {
        error.kind().is_a2a_specific().then(|| Self {
            type_url: "type.googleapis.com/google.rpc.ErrorInfo".to_owned(),
            reason: error.kind().reason().to_owned(),
            domain: "a2a-protocol.org".to_owned(),
            metadata: error.metadata().clone(),
        })
    }
}

fn lenient_details<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<ErrorInfo>, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// Every JSON-RPC method of every generation: its name, generation and operation. `tasks/get`,
/// `tasks/cancel` and `tasks/list`, which v0.3 shares with the legacy family, are listed as v0.3
/// (docs/PROTOCOL.md rule 1). A server finds a request's method here with [`method`]; a client names its
/// call with [`method_name`].
pub const METHODS: &[(&str, Dialect, Operation)] = &[
    ("SendMessage", Dialect::V1, Operation::SendMessage),
    ("SendStreamingMessage", Dialect::V1, Operation::SendStreamingMessage),
    ("GetTask", Dialect::V1, Operation::GetTask),
    ("ListTasks", Dialect::V1, Operation::ListTasks),
    ("CancelTask", Dialect::V1, Operation::CancelTask),
    ("SubscribeToTask", Dialect::V1, Operation::SubscribeToTask),
    ("CreateTaskPushNotificationConfig", Dialect::V1, Operation::CreatePushConfig),
    ("GetTaskPushNotificationConfig", Dialect::V1, Operation::GetPushConfig),
    ("ListTaskPushNotificationConfigs", Dialect::V1, Operation::ListPushConfigs),
    ("DeleteTaskPushNotificationConfig", Dialect::V1, Operation::DeletePushConfig),
    ("GetExtendedAgentCard", Dialect::V1, Operation::GetExtendedAgentCard),
    ("message/send", Dialect::V03, Operation::SendMessage),
    ("message/stream", Dialect::V03, Operation::SendStreamingMessage),
    ("tasks/get", Dialect::V03, Operation::GetTask),
    ("tasks/list", Dialect::V03, Operation::ListTasks),
    ("tasks/cancel", Dialect::V03, Operation::CancelTask),
    ("tasks/resubscribe", Dialect::V03, Operation::SubscribeToTask),
    ("tasks/pushNotificationConfig/set", Dialect::V03, Operation::CreatePushConfig),
    ("tasks/pushNotificationConfig/get", Dialect::V03, Operation::GetPushConfig),
    ("tasks/pushNotificationConfig/list", Dialect::V03, Operation::ListPushConfigs),
    ("tasks/pushNotificationConfig/delete", Dialect::V03, Operation::DeletePushConfig),
    ("agent/getAuthenticatedExtendedCard", Dialect::V03, Operation::GetExtendedAgentCard),
    ("tasks/send", Dialect::Legacy, Operation::SendMessage),
    ("tasks/sendSubscribe", Dialect::Legacy, Operation::SendStreamingMessage),
    ("tasks/pushNotification/set", Dialect::Legacy, Operation::CreatePushConfig),
    ("tasks/pushNotification/get", Dialect::Legacy, Operation::GetPushConfig),
    ("tasks/pushNotification/list", Dialect::Legacy, Operation::ListPushConfigs),
    ("tasks/pushNotification/delete", Dialect::Legacy, Operation::DeletePushConfig),
];

/// The generation and operation of the method `name`.
///
/// ```
/// use agentwire_types::jsonrpc::method;
/// use agentwire_types::Operation;
/// use agentwire_types::Dialect;
///
/// assert_eq!(method("tasks/resubscribe"), Some((Dialect::V03, Operation::SubscribeToTask)));
/// assert_eq!(method("tasks/unknown"), None);
/// ```
pub fn method(name: &str) -> Option<(Dialect, Operation)> {
    METHODS.iter().find(|(n, ..)| *n == name).map(|(_, dialect, operation)| (*dialect, *operation))
}

/// The name of `operation` in `dialect`'s methods, if the generation has it.
///
/// ```
/// use agentwire_types::jsonrpc::method_name;
/// use agentwire_types::Operation;
/// use agentwire_types::Dialect;
///
/// assert_eq!(method_name(Dialect::V03, Operation::SendStreamingMessage), Some("message/stream"));
/// assert_eq!(method_name(Dialect::Legacy, Operation::GetExtendedAgentCard), None);
/// ```
pub fn method_name(dialect: Dialect, operation: Operation) -> Option<&'static str> {
    METHODS.iter().find(|(_, d, o)| (*d, *o) == (dialect, operation)).map(|(name, ..)| *name)
}

/// The codes every generation shares: JSON-RPC's own, and the A2A codes that never moved.
const SHARED: &[(i64, ErrorKind)] = &[
    (-32700, ErrorKind::Parse),
    (-32600, ErrorKind::InvalidRequest),
    (-32601, ErrorKind::MethodNotFound),
    (-32602, ErrorKind::InvalidParams),
    (-32603, ErrorKind::Internal),
    (-32001, ErrorKind::TaskNotFound),
    (-32002, ErrorKind::TaskNotCancelable),
    (-32003, ErrorKind::PushNotificationNotSupported),
    (-32004, ErrorKind::UnsupportedOperation),
    (-32005, ErrorKind::ContentTypeNotSupported),
    (-32006, ErrorKind::InvalidAgentResponse),
    (-32010, ErrorKind::Unauthenticated),
    (-32011, ErrorKind::PermissionDenied),
];

/// v1.0 (seed 000 §5.4); v0.3 (seed 001 §8.2) defines -32001 to -32007 alike and nothing beyond,
/// so it borrows v1.0's codes for the errors it has no code of its own for.
const V1: &[(i64, ErrorKind)] = &[
    (-32007, ErrorKind::ExtendedAgentCardNotConfigured),
    (-32008, ErrorKind::ExtensionSupportRequired),
    (-32009, ErrorKind::VersionNotSupported),
];

/// The legacy family (seed 004).
const LEGACY: &[(i64, ErrorKind)] =
    &[(-32007, ErrorKind::ExtensionSupportRequired), (-32008, ErrorKind::VersionNotSupported)];

fn table(dialect: Dialect) -> impl Iterator<Item = &'static (i64, ErrorKind)> {
    let own = match dialect {
        Dialect::V1 | Dialect::V03 => V1,
        Dialect::Legacy => LEGACY,
    };
    own.iter().chain(SHARED)
}

/// The code a server writes for `kind` in `dialect`. Kinds a generation has no code for take the
/// nearest JSON-RPC one: a refusal by a server limit is an invalid request (-32600), and the
/// legacy family, which has no extended card, reports that as an unsupported operation.
pub fn error_code(dialect: Dialect, kind: ErrorKind) -> i64 {
    if let Some((code, _)) = table(dialect).find(|(_, k)| *k == kind) {
        return *code;
    }
    match kind {
        ErrorKind::PayloadTooLarge | ErrorKind::ResourceExhausted => -32600,
        ErrorKind::ExtendedAgentCardNotConfigured => -32004,
        // The dev-1.1 draft's code, which v1.0 servers (agentwire among them) gave
        // Unauthenticated: a client tells the two apart by the error's reason.
        ErrorKind::TaskGenerationMismatch => -32010,
        _ => -32603,
    }
}

/// The error kind a client reads from `code` in `dialect`; `None` for a code the generation does
/// not define.
pub fn error_kind(dialect: Dialect, code: i64) -> Option<ErrorKind> {
    table(dialect).find(|(c, _)| *c == code).map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ErrorKind; 19] = [
        ErrorKind::Parse,
        ErrorKind::InvalidRequest,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::Internal,
        ErrorKind::TaskNotFound,
        ErrorKind::TaskNotCancelable,
        ErrorKind::PushNotificationNotSupported,
        ErrorKind::UnsupportedOperation,
        ErrorKind::ContentTypeNotSupported,
        ErrorKind::InvalidAgentResponse,
        ErrorKind::ExtendedAgentCardNotConfigured,
        ErrorKind::ExtensionSupportRequired,
        ErrorKind::VersionNotSupported,
        ErrorKind::Unauthenticated,
        ErrorKind::PermissionDenied,
        ErrorKind::PayloadTooLarge,
        ErrorKind::ResourceExhausted,
        ErrorKind::TaskGenerationMismatch,
    ];

    #[test]
    fn an_operation_is_named_as_its_v1_method() {
        for (name, _, operation) in METHODS.iter().filter(|(_, dialect, _)| matches!(dialect, Dialect::V1)) {
            assert_eq!(operation.name(), *name);
        }
    }

    #[test]
    fn every_code_reads_back_as_its_kind_in_every_dialect() {
        for dialect in [Dialect::V1, Dialect::V03, Dialect::Legacy] {
            for kind in ALL {
                let code = error_code(dialect, kind);
                let back = error_kind(dialect, code).unwrap_or_else(|| panic!("{dialect:?} {kind:?} -> {code}"));
                // A kind without a code of its own reads back as the kind whose code it borrowed.
                if table(dialect).any(|(_, k)| *k == kind) {
                    assert_eq!(back, kind, "{dialect:?} {code}");
                }
            }
        }
    }

    #[test]
    fn the_colliding_codes_follow_each_generation() {
        assert_eq!(error_code(Dialect::V1, ErrorKind::ExtensionSupportRequired), -32008);
        assert_eq!(error_code(Dialect::V03, ErrorKind::ExtendedAgentCardNotConfigured), -32007);
        assert_eq!(error_code(Dialect::Legacy, ErrorKind::ExtensionSupportRequired), -32007);
        assert_eq!(error_code(Dialect::Legacy, ErrorKind::ExtendedAgentCardNotConfigured), -32004);
        assert_eq!(error_kind(Dialect::Legacy, -32009), None);
        assert_eq!(error_code(Dialect::V1, ErrorKind::ResourceExhausted), -32600);
        assert_eq!(error_code(Dialect::V1, ErrorKind::TaskGenerationMismatch), -32010);
        assert_eq!(error_kind(Dialect::V1, -32010), Some(ErrorKind::Unauthenticated));
    }
}
