//! The agent card, its skills and security schemes.

use std::collections::{BTreeMap, HashMap};

use agentwire_types as t;
use serde_json::{Map, Value};

use crate::a2a_v1 as pb;
use crate::convert::{each_into, non_empty};

use super::PROTOCOL_VERSION;

// ---- The agent card ------------------------------------------------------------------------------

/// The v0.3 card, derived as `agentwire_types::dialect::card` derives v0.3's JSON members: the
/// interfaces are those whose protocol version is 0.3, the first being the preferred one (else
/// the card's first interface); the extended card is offered as the *authenticated* one where
/// the card also requires credentials.
impl From<t::AgentCard> for pb::AgentCard {
    fn from(c: t::AgentCard) -> Self {
        let v03: Vec<&t::AgentInterface> =
            c.supported_interfaces.iter().filter(|i| i.protocol_version.starts_with("0.3")).collect();
        let preferred = v03.first().copied().or(c.supported_interfaces.first());
        let (url, preferred_transport) =
            preferred.map(|i| (i.url.clone(), i.protocol_binding.clone())).unwrap_or_default();
        let additional_interfaces = v03
            .iter()
            .map(|i| pb::AgentInterface { url: i.url.clone(), transport: i.protocol_binding.clone() })
            .collect();
        let extended = c.capabilities.extended_agent_card.unwrap_or(false) && !c.security_requirements.is_empty();
        pb::AgentCard {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            name: c.name,
            description: c.description,
            url,
            preferred_transport,
            additional_interfaces,
            provider: c.provider.map(|p| pb::AgentProvider { url: p.url, organization: p.organization }),
            version: c.version,
            documentation_url: c.documentation_url.unwrap_or_default(),
            capabilities: Some(pb::AgentCapabilities {
                streaming: c.capabilities.streaming.unwrap_or(false),
                push_notifications: c.capabilities.push_notifications.unwrap_or(false),
                extensions: each_into(c.capabilities.extensions),
            }),
            security_schemes: c.security_schemes.into_iter().map(|(name, s)| (name, s.into())).collect(),
            security: each_into(c.security_requirements),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: each_into(c.skills),
            supports_authenticated_extended_card: extended,
            signatures: each_into(c.signatures),
        }
    }
}

/// A v0.3 card as the model holds it: the preferred endpoint and the additional interfaces become
/// `supported_interfaces` (once each), at the card's protocol version; a capability that is off
/// is unset.
impl From<pb::AgentCard> for t::AgentCard {
    fn from(c: pb::AgentCard) -> Self {
        let protocol_version = major_minor(&c.protocol_version);
        let interface = |url: String, binding: String| t::AgentInterface {
            url,
            protocol_binding: binding,
            tenant: String::new(),
            protocol_version: protocol_version.clone(),
        };
        let mut supported_interfaces = Vec::new();
        if !c.url.is_empty() {
            // v0.3 reads an empty preferred transport as JSONRPC.
            let binding = non_empty(c.preferred_transport).unwrap_or_else(|| "JSONRPC".to_owned());
            supported_interfaces.push(interface(c.url, binding));
        }
        for i in c.additional_interfaces {
            if !supported_interfaces.iter().any(|s| s.url == i.url && s.protocol_binding == i.transport) {
                supported_interfaces.push(interface(i.url, i.transport));
            }
        }
        let capabilities = c.capabilities.unwrap_or_default();
        t::AgentCard {
            name: c.name,
            description: c.description,
            supported_interfaces,
            provider: c.provider.map(|p| t::AgentProvider { url: p.url, organization: p.organization }),
            version: c.version,
            documentation_url: non_empty(c.documentation_url),
            capabilities: t::AgentCapabilities {
                streaming: capabilities.streaming.then_some(true),
                push_notifications: capabilities.push_notifications.then_some(true),
                extensions: each_into(capabilities.extensions),
                extended_agent_card: c.supports_authenticated_extended_card.then_some(true),
            },
            // A scheme with no member set is no scheme: the card drops it.
            security_schemes: c
                .security_schemes
                .into_iter()
                .filter_map(|(name, s)| Some((name, t::SecurityScheme::try_from(s).ok()?)))
                .collect(),
            security_requirements: each_into(c.security),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: each_into(c.skills),
            signatures: each_into(c.signatures),
            icon_url: None,
        }
    }
}

/// `0.3.0` → `0.3`, the form an interface's version takes; a card without one is 0.3.
fn major_minor(version: &str) -> String {
    let mut numbers = version.split('.');
    match (numbers.next(), numbers.next()) {
        (Some(major), Some(minor)) if !major.is_empty() && !minor.is_empty() => format!("{major}.{minor}"),
        _ => "0.3".to_owned(),
    }
}

impl From<t::AgentSkill> for pb::AgentSkill {
    fn from(s: t::AgentSkill) -> Self {
        pb::AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security: each_into(s.security_requirements),
        }
    }
}

impl From<pb::AgentSkill> for t::AgentSkill {
    fn from(s: pb::AgentSkill) -> Self {
        t::AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security_requirements: each_into(s.security),
        }
    }
}

impl From<t::SecurityRequirement> for pb::Security {
    fn from(r: t::SecurityRequirement) -> Self {
        let schemes = r.schemes.into_iter().map(|(name, scopes)| (name, pb::StringList { list: scopes.list }));
        pb::Security { schemes: schemes.collect() }
    }
}

impl From<pb::Security> for t::SecurityRequirement {
    fn from(r: pb::Security) -> Self {
        let schemes = r.schemes.into_iter().map(|(name, scopes)| (name, t::StringList { list: scopes.list }));
        t::SecurityRequirement { schemes: schemes.collect::<BTreeMap<_, _>>() }
    }
}

// ---- OAuth 2.0 flows -----------------------------------------------------------------------------

/// The model keeps the flows as their JSON object (`{"authorizationCode": {…}}`); the v0.3 oneof
/// holds one flow, the first of the four it knows (so not `deviceCode`, nor `pkceRequired`).
pub(super) fn flows_to_proto(flows: &Value) -> Option<pb::OAuthFlows> {
    use pb::o_auth_flows::Flow;
    let flow = flows.as_object()?.iter().find_map(|(name, flow)| {
        let flow = flow.as_object()?;
        // Read leniently: a member of the wrong type reads as unset.
        let text = |key: &str| flow.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let scopes = || -> HashMap<String, String> {
            let Some(scopes) = flow.get("scopes").and_then(Value::as_object) else { return HashMap::new() };
            scopes.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect()
        };
        Some(match name.as_str() {
            "authorizationCode" => Flow::AuthorizationCode(pb::AuthorizationCodeOAuthFlow {
                authorization_url: text("authorizationUrl"),
                token_url: text("tokenUrl"),
                refresh_url: text("refreshUrl"),
                scopes: scopes(),
            }),
            "clientCredentials" => Flow::ClientCredentials(pb::ClientCredentialsOAuthFlow {
                token_url: text("tokenUrl"),
                refresh_url: text("refreshUrl"),
                scopes: scopes(),
            }),
            "implicit" => Flow::Implicit(pb::ImplicitOAuthFlow {
                authorization_url: text("authorizationUrl"),
                refresh_url: text("refreshUrl"),
                scopes: scopes(),
            }),
            "password" => Flow::Password(pb::PasswordOAuthFlow {
                token_url: text("tokenUrl"),
                refresh_url: text("refreshUrl"),
                scopes: scopes(),
            }),
            _ => return None,
        })
    })?;
    Some(pb::OAuthFlows { flow: Some(flow) })
}

/// The flow as its JSON object; empty URLs are left out, as ProtoJSON leaves out defaults.
pub(super) fn flows_from_proto(flows: pb::OAuthFlows) -> Value {
    use pb::o_auth_flows::Flow;
    let (name, urls, scopes) = match flows.flow {
        None => return Value::Object(Map::new()),
        Some(Flow::AuthorizationCode(f)) => (
            "authorizationCode",
            vec![("authorizationUrl", f.authorization_url), ("tokenUrl", f.token_url), ("refreshUrl", f.refresh_url)],
            f.scopes,
        ),
        Some(Flow::ClientCredentials(f)) => {
            ("clientCredentials", vec![("tokenUrl", f.token_url), ("refreshUrl", f.refresh_url)], f.scopes)
        }
        Some(Flow::Implicit(f)) => {
            ("implicit", vec![("authorizationUrl", f.authorization_url), ("refreshUrl", f.refresh_url)], f.scopes)
        }
        Some(Flow::Password(f)) => {
            ("password", vec![("tokenUrl", f.token_url), ("refreshUrl", f.refresh_url)], f.scopes)
        }
    };
    let mut flow: Map<String, Value> = urls
        .into_iter()
        .filter(|(_, url)| !url.is_empty())
        .map(|(k, url)| (k.to_owned(), Value::String(url)))
        .collect();
    // Sorted, so that the same card always reads the same.
    let scopes: BTreeMap<String, String> = scopes.into_iter().collect();
    flow.insert("scopes".to_owned(), Value::Object(scopes.into_iter().map(|(k, v)| (k, Value::String(v))).collect()));
    Value::Object(Map::from_iter([(name.to_owned(), Value::Object(flow))]))
}
