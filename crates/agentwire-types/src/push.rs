//! Push notification configuration.

use serde::{Deserialize, Deserializer, Serialize};

use crate::de::null_default;

/// Where and how to deliver a task's updates to a client's webhook.
///
/// ```
/// use agentwire_types::TaskPushNotificationConfig;
///
/// let c: TaskPushNotificationConfig = serde_json::from_str(
///     r#"{"url":"https://client.example/hook","token":"t","authentication":{"schemes":["Bearer"],"credentials":"x"}}"#,
/// ).unwrap();
/// assert_eq!(c.authentication.unwrap().scheme, "Bearer");
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The config's id (server-assigned when the client leaves it empty).
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The task the config belongs to.
    #[serde(alias = "task_id", default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// The webhook URL.
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
    /// A token echoed to the webhook so it can recognise genuine calls.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub token: String,
    /// Credentials the server sends to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// How the server authenticates to a webhook: `Authorization: <scheme> <credentials>`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// An HTTP authentication scheme, e.g. `Bearer`.
    pub scheme: String,
    /// The credentials for that scheme.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub credentials: String,
}

impl<'de> Deserialize<'de> for AuthenticationInfo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// v1.0 has a single `scheme`; v0.1/v0.3 (and v1.0's own example) send `schemes`.
        #[derive(Deserialize)]
        struct Wire {
            scheme: Option<String>,
            #[serde(default, deserialize_with = "null_default")]
            schemes: Vec<String>,
            #[serde(default, deserialize_with = "null_default")]
            credentials: String,
        }
        let w = Wire::deserialize(deserializer)?;
        let scheme = w.scheme.or_else(|| w.schemes.into_iter().next()).unwrap_or_default();
        Ok(Self { scheme, credentials: w.credentials })
    }
}
