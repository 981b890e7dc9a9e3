//! The agent card every client generation can read (DESIGN §4.7): the v1.0 card with v0.3's
//! members beside it.

use serde_json::{json, Map, Value};

use crate::{AgentCard, SecurityScheme};

/// `card` as v0.3 and v1.0 clients alike read it: its v1.0 members, plus v0.3's `url`,
/// `preferredTransport`, `additionalInterfaces`, `protocolVersion`,
/// `supportsAuthenticatedExtendedCard` and `security`; each security scheme carries v0.3's flat
/// members (`type`, `scheme`, `in`, …) beside its v1.0 member. v0.3's interfaces are those of
/// `supportedInterfaces` whose `protocolVersion` is 0.3; the first is the preferred one. v0.3's
/// extended card is the *authenticated* one: it is declared where the card also requires
/// credentials.
///
/// ```
/// use agentwire_types::dialect::card::combined;
/// use agentwire_types::{AgentCard, AgentInterface};
///
/// let interface = |binding: &str, version: &str| AgentInterface {
///     url: "http://127.0.0.1:8080".into(),
///     protocol_binding: binding.into(),
///     protocol_version: version.into(),
///     ..AgentInterface::default()
/// };
/// let card = AgentCard {
///     supported_interfaces: vec![interface("JSONRPC", "1.0"), interface("JSONRPC", "0.3"), interface("HTTP+JSON", "0.3")],
///     ..AgentCard::default()
/// };
/// let json = combined(&card);
/// assert_eq!((json["url"].as_str(), json["preferredTransport"].as_str()), (Some("http://127.0.0.1:8080"), Some("JSONRPC")));
/// assert_eq!(json["additionalInterfaces"][1]["transport"], "HTTP+JSON");
/// assert_eq!(json["supportedInterfaces"][0]["protocolVersion"], "1.0");
/// ```
pub fn combined(card: &AgentCard) -> Value {
    let mut json = serde_json::to_value(card).unwrap_or_else(|_| json!({}));
    let Value::Object(object) = &mut json else { return json };
    let v03: Vec<_> = card.supported_interfaces.iter().filter(|i| i.protocol_version.starts_with("0.3")).collect();
    let preferred = v03.first().copied().or(card.supported_interfaces.first());
    if let Some(preferred) = preferred {
        object.insert("url".into(), json!(preferred.url));
        object.insert("preferredTransport".into(), json!(preferred.protocol_binding));
    }
    let additional: Vec<Value> = v03.iter().map(|i| json!({"url": i.url, "transport": i.protocol_binding})).collect();
    object.insert("additionalInterfaces".into(), Value::Array(additional));
    object.insert("protocolVersion".into(), json!("0.3.0"));
    // v0.3 names the card "authenticated": it is offered where the agent requires credentials.
    let extended = card.capabilities.extended_agent_card.unwrap_or(false) && !card.security_requirements.is_empty();
    object.insert("supportsAuthenticatedExtendedCard".into(), json!(extended));
    if let Some(Value::Object(schemes)) = object.get_mut("securitySchemes") {
        for (name, scheme) in schemes.iter_mut() {
            if let (Value::Object(scheme), Some(declared)) = (scheme, card.security_schemes.get(name)) {
                scheme.extend(flat_scheme(declared));
            }
        }
    }
    if !card.security_requirements.is_empty() {
        let security: Vec<Value> = card
            .security_requirements
            .iter()
            .map(|requirement| {
                let schemes = requirement.schemes.iter().map(|(name, scopes)| (name.clone(), json!(scopes.list)));
                Value::Object(schemes.collect())
            })
            .collect();
        object.insert("security".into(), Value::Array(security));
    }
    json
}

/// A security scheme's v0.3 members.
fn flat_scheme(scheme: &SecurityScheme) -> Map<String, Value> {
    let value = match scheme {
        SecurityScheme::ApiKey(s) => json!({"type": "apiKey", "in": s.location, "name": s.name}),
        SecurityScheme::HttpAuth(s) => {
            let mut value = json!({"type": "http", "scheme": s.scheme});
            if !s.bearer_format.is_empty() {
                value["bearerFormat"] = json!(s.bearer_format);
            }
            value
        }
        SecurityScheme::OAuth2(s) => json!({"type": "oauth2", "flows": s.flows}),
        SecurityScheme::OpenIdConnect(s) => json!({"type": "openIdConnect", "openIdConnectUrl": s.open_id_connect_url}),
        SecurityScheme::MutualTls(_) => json!({"type": "mutualTLS"}),
    };
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
