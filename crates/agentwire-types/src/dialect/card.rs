//! The agent card every client generation can read (docs/PROTOCOL.md rule 7): the v1.0 card with v0.3's
//! members beside it; and, for a client, any generation's card read as the canonical one.

use serde_json::{json, Map, Value};

use crate::{AgentCard, AgentInterface, SecurityScheme};

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
    let (mut value, description) = match scheme {
        SecurityScheme::ApiKey(s) => (json!({"type": "apiKey", "in": s.location, "name": s.name}), &s.description),
        SecurityScheme::HttpAuth(s) => {
            let mut value = json!({"type": "http", "scheme": s.scheme});
            if !s.bearer_format.is_empty() {
                value["bearerFormat"] = json!(s.bearer_format);
            }
            (value, &s.description)
        }
        SecurityScheme::OAuth2(s) => {
            let mut value = json!({"type": "oauth2", "flows": s.flows});
            if !s.oauth2_metadata_url.is_empty() {
                value["oauth2MetadataUrl"] = json!(s.oauth2_metadata_url);
            }
            (value, &s.description)
        }
        SecurityScheme::OpenIdConnect(s) => {
            (json!({"type": "openIdConnect", "openIdConnectUrl": s.open_id_connect_url}), &s.description)
        }
        SecurityScheme::MutualTls(s) => (json!({"type": "mutualTLS"}), &s.description),
    };
    // Every member the scheme has: a v0.3 reader that rebuilds the v1.0 scheme from these (the
    // official Python SDK does) must find the same scheme, or a card signature over it fails.
    if !description.is_empty() {
        value["description"] = json!(description);
    }
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The names of a scheme's v1.0 member, one per kind.
const SCHEME_KEYS: [&str; 5] = [
    "apiKeySecurityScheme",
    "httpAuthSecurityScheme",
    "oauth2SecurityScheme",
    "openIdConnectSecurityScheme",
    "mtlsSecurityScheme",
];

/// A card of any generation as the canonical card, for a client: a v1.0 card as it is; a v0.3
/// card's interfaces (`url` with `preferredTransport`, then `additionalInterfaces`, at its
/// `protocolVersion`) after any v1.0 ones (a combined card lists them in both forms, so those are
/// kept once), its flat security schemes and `security` as v1.0's, and its
/// `supportsAuthenticatedExtendedCard` as the extended-card capability. A scheme of a kind neither
/// generation defines is left out rather than failing the card.
///
/// ```
/// use agentwire_types::dialect::card::read;
/// use agentwire_types::SecurityScheme;
/// use serde_json::json;
///
/// let card = read(json!({
///     "name": "Old", "protocolVersion": "0.3.0", "url": "http://a/rpc",
///     "additionalInterfaces": [{"url": "http://a/rest", "transport": "HTTP+JSON"}],
///     "securitySchemes": {"bearer": {"type": "http", "scheme": "Bearer"}},
/// })).unwrap();
/// let interfaces: Vec<_> = card.supported_interfaces.iter().map(|i| i.protocol_binding.as_str()).collect();
/// assert_eq!(interfaces, ["JSONRPC", "HTTP+JSON"]);
/// assert!(matches!(&card.security_schemes["bearer"], SecurityScheme::HttpAuth(s) if s.scheme == "Bearer"));
/// ```
pub fn read(mut card: Value) -> serde_json::Result<AgentCard> {
    let v03_interfaces = v03_interfaces(&card);
    let supports_extended = card.get("supportsAuthenticatedExtendedCard").and_then(Value::as_bool);
    let security = card.get("security").cloned();
    if let Some(Value::Object(schemes)) = card.get_mut("securitySchemes") {
        schemes.retain(|_, scheme| match v1_scheme(scheme) {
            Some(v1) => {
                *scheme = v1;
                true
            }
            None => false,
        });
    }
    let mut parsed: AgentCard = serde_json::from_value(card)?;
    for interface in v03_interfaces {
        let listed = parsed.supported_interfaces.iter().any(|i| {
            i.url == interface.url
                && i.protocol_binding == interface.protocol_binding
                && major_minor(&i.protocol_version) == major_minor(&interface.protocol_version)
        });
        if !listed {
            parsed.supported_interfaces.push(interface);
        }
    }
    if parsed.capabilities.extended_agent_card.is_none() {
        parsed.capabilities.extended_agent_card = supports_extended;
    }
    if parsed.security_requirements.is_empty()
        && let Some(Value::Array(security)) = security
    {
        let requirements = security.into_iter().filter_map(|requirement| {
            let schemes: Map<String, Value> =
                requirement.as_object()?.iter().map(|(name, scopes)| (name.clone(), json!({"list": scopes}))).collect();
            serde_json::from_value(json!({"schemes": schemes})).ok()
        });
        parsed.security_requirements = requirements.collect();
    }
    Ok(parsed)
}

/// The v1.0 card a card of any form carries, and nothing else: what a card signature covers
/// (A2A v1.0 §8.4). Members of other generations fall away, and a security scheme keeps only its
/// v1.0 member, so that the v0.3 members a combined card (or a gateway) adds after signing never
/// change what is verified. Unlike [`read`], nothing is converted from v0.3's members.
///
/// ```
/// use agentwire_types::dialect::card::v1_projection;
/// use serde_json::json;
///
/// let card = v1_projection(json!({
///     "name": "A", "url": "http://a/", "protocolVersion": "0.3.0",
///     "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}, "type": "http", "scheme": "Bearer"}},
/// })).unwrap();
/// assert!(card.supported_interfaces.is_empty());
/// assert_eq!(serde_json::to_value(&card.security_schemes).unwrap(), json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}));
/// ```
pub fn v1_projection(mut card: Value) -> serde_json::Result<AgentCard> {
    if let Some(Value::Object(schemes)) = card.get_mut("securitySchemes") {
        for scheme in schemes.values_mut() {
            if let Some(object) = scheme.as_object_mut() {
                object.retain(|key, _| SCHEME_KEYS.contains(&key.as_str()));
            }
        }
    }
    serde_json::from_value(card)
}

/// `0.3` of `0.3.0`.
fn major_minor(version: &str) -> Vec<&str> {
    version.split('.').take(2).collect()
}

/// A v0.3 card's interfaces, in its order of preference.
fn v03_interfaces(card: &Value) -> Vec<AgentInterface> {
    let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    let (url, version) = (text(card, "url"), text(card, "protocolVersion"));
    if url.is_empty() || version.is_empty() {
        return Vec::new();
    }
    let interface = |url: String, binding: String| AgentInterface {
        url,
        protocol_binding: binding,
        tenant: String::new(),
        protocol_version: version.clone(),
    };
    let preferred = Some(text(card, "preferredTransport")).filter(|t| !t.is_empty());
    let mut found = vec![interface(url, preferred.unwrap_or_else(|| "JSONRPC".to_owned()))];
    for additional in card.get("additionalInterfaces").and_then(Value::as_array).into_iter().flatten() {
        let candidate = interface(text(additional, "url"), text(additional, "transport"));
        let listed = found.iter().any(|f| f.url == candidate.url && f.protocol_binding == candidate.protocol_binding);
        if !candidate.url.is_empty() && !listed {
            found.push(candidate);
        }
    }
    found
}

/// A security scheme in v1.0's form: its v1.0 member alone, or its v0.3 flat members converted.
fn v1_scheme(scheme: &Value) -> Option<Value> {
    let object = scheme.as_object()?;
    if let Some((key, value)) = object.iter().find(|(key, _)| SCHEME_KEYS.contains(&key.as_str())) {
        return Some(json!({ key.clone(): value }));
    }
    let member = |key: &str| object.get(key).cloned().unwrap_or(Value::Null);
    let described = |mut value: Value| {
        if let Some(description) = object.get("description") {
            value["description"] = description.clone();
        }
        value
    };
    let (key, value) = match object.get("type")?.as_str()? {
        "apiKey" => ("apiKeySecurityScheme", json!({"location": member("in"), "name": member("name")})),
        "http" => {
            ("httpAuthSecurityScheme", json!({"scheme": member("scheme"), "bearerFormat": member("bearerFormat")}))
        }
        "oauth2" => (
            "oauth2SecurityScheme",
            json!({"flows": member("flows"), "oauth2MetadataUrl": member("oauth2MetadataUrl")}),
        ),
        "openIdConnect" => ("openIdConnectSecurityScheme", json!({"openIdConnectUrl": member("openIdConnectUrl")})),
        "mutualTLS" => ("mtlsSecurityScheme", json!({})),
        _ => return None,
    };
    Some(json!({ key: described(value) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_combined_card_reads_back_as_the_card_it_was_made_from() {
        let card: AgentCard = serde_json::from_value(json!({
            "name": "Both",
            "supportedInterfaces": [
                {"url": "http://a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "http://a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            ],
            "capabilities": {"extendedAgentCard": true},
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        }))
        .unwrap();
        assert_eq!(read(combined(&card)).unwrap(), card);
    }

    #[test]
    fn a_v03_card_gets_v1_schemes_requirements_and_capabilities() {
        let card = read(json!({
            "name": "Old", "protocolVersion": "0.3.0", "url": "http://a",
            "supportsAuthenticatedExtendedCard": true,
            "securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-Key", "description": "a key"},
                "strange": {"type": "carrierPigeon"},
            },
            "security": [{"key": []}],
        }))
        .unwrap();
        assert!(
            matches!(&card.security_schemes["key"], SecurityScheme::ApiKey(s) if s.name == "X-Key" && s.location == "header")
        );
        assert!(!card.security_schemes.contains_key("strange"));
        assert!(card.security_requirements[0].schemes.contains_key("key"));
        assert_eq!(card.capabilities.extended_agent_card, Some(true));
        assert_eq!(card.supported_interfaces[0].protocol_version, "0.3.0");
    }
}
