//! The agent card: how an agent describes itself, its endpoints, skills and security.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de::{is_false, null_default};

/// Self-description of an agent, served at `/.well-known/agent-card.json`.
///
/// ```
/// use agentwire_types::AgentCard;
///
/// let card: AgentCard = serde_json::from_str(r#"{"name":"Echo","description":"echoes"}"#).unwrap();
/// assert_eq!(card.name, "Echo");
/// assert!(card.skills.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// Human-readable name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// What the agent does.
    #[serde(default, deserialize_with = "null_default")]
    pub description: String,
    /// Endpoints, in order of preference.
    #[serde(default, deserialize_with = "null_default")]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who runs the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    #[serde(default, deserialize_with = "null_default")]
    pub version: String,
    /// Where its documentation lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// Optional protocol features it supports.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Authentication schemes by name.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Which schemes a client must satisfy (any one entry; all schemes within it).
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types accepted by default.
    #[serde(default, deserialize_with = "null_default")]
    pub default_input_modes: Vec<String>,
    /// Media types produced by default.
    #[serde(default, deserialize_with = "null_default")]
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    #[serde(default, deserialize_with = "null_default")]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the card.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    /// An icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
}

/// One endpoint: a URL, the binding spoken there and the protocol version.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Absolute URL.
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON`, `GRPC` or a custom binding URI.
    #[serde(default, deserialize_with = "null_default")]
    pub protocol_binding: String,
    /// Tenant to put in requests sent to this interface.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// Major.Minor protocol version, e.g. `1.0`.
    #[serde(default, deserialize_with = "null_default")]
    pub protocol_version: String,
}

/// The organisation behind an agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// Its website.
    #[serde(default, deserialize_with = "null_default")]
    pub url: String,
    /// Its name.
    #[serde(default, deserialize_with = "null_default")]
    pub organization: String,
}

/// Optional features. Absent means not supported.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// SendStreamingMessage and SubscribeToTask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// The push-config operations and webhook delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Protocol extensions.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
    /// GetExtendedAgentCard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// Its URI.
    #[serde(default, deserialize_with = "null_default")]
    pub uri: String,
    /// What it does.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Clients must declare it to be served.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "is_false")]
    pub required: bool,
    /// Extension-defined parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// Something the agent can do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique id.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// Human-readable name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// What it does.
    #[serde(default, deserialize_with = "null_default")]
    pub description: String,
    /// Keywords.
    #[serde(default, deserialize_with = "null_default")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Accepted media types, if different from the card's.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    /// Produced media types, if different from the card's.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    /// Security needed for this skill.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<SecurityRequirement>,
}

/// A JWS signature over the card.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCardSignature {
    /// Base64url protected header.
    #[serde(default, deserialize_with = "null_default")]
    pub protected: String,
    /// Base64url signature.
    #[serde(default, deserialize_with = "null_default")]
    pub signature: String,
    /// Unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Map<String, Value>>,
}

/// A set of schemes that must all be satisfied, each with its required scopes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityRequirement {
    /// Scheme name → scopes.
    #[serde(default, deserialize_with = "null_default")]
    pub schemes: BTreeMap<String, StringList>,
}

/// A list of strings (a proto wrapper).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringList {
    /// The strings.
    #[serde(default, deserialize_with = "null_default")]
    pub list: Vec<String>,
}

/// An authentication scheme, after the OpenAPI security scheme object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SecurityScheme {
    /// An API key in a header, query parameter or cookie.
    #[serde(rename = "apiKeySecurityScheme")]
    ApiKey(ApiKeySecurityScheme),
    /// HTTP authentication (`Bearer`, `Basic`, ...).
    #[serde(rename = "httpAuthSecurityScheme")]
    HttpAuth(HttpAuthSecurityScheme),
    /// OAuth 2.0.
    #[serde(rename = "oauth2SecurityScheme")]
    OAuth2(OAuth2SecurityScheme),
    /// OpenID Connect.
    #[serde(rename = "openIdConnectSecurityScheme")]
    OpenIdConnect(OpenIdConnectSecurityScheme),
    /// Mutual TLS.
    #[serde(rename = "mtlsSecurityScheme")]
    MutualTls(MutualTlsSecurityScheme),
}

/// An API key scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `header`, `query` or `cookie`.
    #[serde(default, deserialize_with = "null_default")]
    pub location: String,
    /// The header, parameter or cookie name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
}

/// An HTTP authentication scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The RFC 7235 scheme name, e.g. `Bearer`.
    #[serde(default, deserialize_with = "null_default")]
    pub scheme: String,
    /// A hint about the bearer token format, e.g. `JWT`.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub bearer_format: String,
}

/// An OAuth 2.0 scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2SecurityScheme {
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The flow, as `{"authorizationCode": {..}}` and so on.
    #[serde(default)]
    pub flows: Value,
    /// RFC 8414 metadata URL.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub oauth2_metadata_url: String,
}

/// An OpenID Connect scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The discovery URL.
    #[serde(default, deserialize_with = "null_default")]
    pub open_id_connect_url: String,
}

/// A mutual TLS scheme.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
}
