//! The agent card and its security schemes, between `lf.a2a.v1` and the canonical model.
//!
//! The model keeps OAuth 2.0 flows as their ProtoJSON object (`{"authorizationCode": {...}}`), so
//! that a card read from JSON is served back as written; here that object meets the `OAuthFlows`
//! oneof.

use std::collections::{BTreeMap, HashMap};

use agentwire_types as t;
use serde_json::{Map, Value};

use super::each_into;
use crate::lf_a2a_v1 as pb;

impl From<t::AgentCard> for pb::AgentCard {
    fn from(c: t::AgentCard) -> Self {
        pb::AgentCard {
            name: c.name,
            description: c.description,
            supported_interfaces: each_into(c.supported_interfaces),
            provider: c.provider.map(|p| pb::AgentProvider { url: p.url, organization: p.organization }),
            version: c.version,
            documentation_url: c.documentation_url,
            capabilities: Some(c.capabilities.into()),
            security_schemes: c.security_schemes.into_iter().map(|(name, s)| (name, s.into())).collect(),
            security_requirements: each_into(c.security_requirements),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: each_into(c.skills),
            signatures: each_into(c.signatures),
            icon_url: c.icon_url,
        }
    }
}

impl From<pb::AgentCard> for t::AgentCard {
    fn from(c: pb::AgentCard) -> Self {
        t::AgentCard {
            name: c.name,
            description: c.description,
            supported_interfaces: each_into(c.supported_interfaces),
            provider: c.provider.map(|p| t::AgentProvider { url: p.url, organization: p.organization }),
            version: c.version,
            documentation_url: c.documentation_url,
            capabilities: c.capabilities.map(Into::into).unwrap_or_default(),
            security_schemes: c
                .security_schemes
                .into_iter()
                .filter_map(|(name, s)| Some((name, t::SecurityScheme::try_from(s).ok()?)))
                .collect(),
            security_requirements: each_into(c.security_requirements),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: each_into(c.skills),
            signatures: each_into(c.signatures),
            icon_url: c.icon_url,
        }
    }
}

impl From<t::AgentInterface> for pb::AgentInterface {
    fn from(i: t::AgentInterface) -> Self {
        pb::AgentInterface {
            url: i.url,
            protocol_binding: i.protocol_binding,
            tenant: i.tenant,
            protocol_version: i.protocol_version,
        }
    }
}

impl From<pb::AgentInterface> for t::AgentInterface {
    fn from(i: pb::AgentInterface) -> Self {
        t::AgentInterface {
            url: i.url,
            protocol_binding: i.protocol_binding,
            tenant: i.tenant,
            protocol_version: i.protocol_version,
        }
    }
}

impl From<t::AgentCapabilities> for pb::AgentCapabilities {
    fn from(c: t::AgentCapabilities) -> Self {
        pb::AgentCapabilities {
            streaming: c.streaming,
            push_notifications: c.push_notifications,
            extensions: each_into(c.extensions),
            extended_agent_card: c.extended_agent_card,
        }
    }
}

impl From<pb::AgentCapabilities> for t::AgentCapabilities {
    fn from(c: pb::AgentCapabilities) -> Self {
        t::AgentCapabilities {
            streaming: c.streaming,
            push_notifications: c.push_notifications,
            extensions: each_into(c.extensions),
            extended_agent_card: c.extended_agent_card,
        }
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
            security_requirements: each_into(s.security_requirements),
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
            security_requirements: each_into(s.security_requirements),
        }
    }
}

impl From<t::SecurityRequirement> for pb::SecurityRequirement {
    fn from(r: t::SecurityRequirement) -> Self {
        let schemes = r.schemes.into_iter().map(|(name, scopes)| (name, pb::StringList { list: scopes.list }));
        pb::SecurityRequirement { schemes: schemes.collect() }
    }
}

impl From<pb::SecurityRequirement> for t::SecurityRequirement {
    fn from(r: pb::SecurityRequirement) -> Self {
        let schemes = r.schemes.into_iter().map(|(name, scopes)| (name, t::StringList { list: scopes.list }));
        t::SecurityRequirement { schemes: schemes.collect::<BTreeMap<_, _>>() }
    }
}

// ---- OAuth 2.0 flows ------------------------------------------------------------------------------

/// The flow a ProtoJSON `OAuthFlows` object names. A v0.3 card may list several flows; the
/// v1.0 oneof holds one, the first this version knows.
pub(super) fn flows_to_proto(flows: &Value) -> Option<pb::OAuthFlows> {
    use pb::o_auth_flows::Flow;
    let flows = flows.as_object()?;
    let flow = flows.iter().find_map(|(name, flow)| {
        let f = Fields(flow.as_object()?);
        Some(match name.as_str() {
            "authorizationCode" => Flow::AuthorizationCode(pb::AuthorizationCodeOAuthFlow {
                authorization_url: f.text("authorizationUrl"),
                token_url: f.text("tokenUrl"),
                refresh_url: f.text("refreshUrl"),
                scopes: f.scopes(),
                pkce_required: f.flag("pkceRequired"),
            }),
            "clientCredentials" => Flow::ClientCredentials(pb::ClientCredentialsOAuthFlow {
                token_url: f.text("tokenUrl"),
                refresh_url: f.text("refreshUrl"),
                scopes: f.scopes(),
            }),
            #[allow(deprecated)]
            "implicit" => Flow::Implicit(pb::ImplicitOAuthFlow {
                authorization_url: f.text("authorizationUrl"),
                refresh_url: f.text("refreshUrl"),
                scopes: f.scopes(),
            }),
            #[allow(deprecated)]
            "password" => Flow::Password(pb::PasswordOAuthFlow {
                token_url: f.text("tokenUrl"),
                refresh_url: f.text("refreshUrl"),
                scopes: f.scopes(),
            }),
            "deviceCode" => Flow::DeviceCode(pb::DeviceCodeOAuthFlow {
                device_authorization_url: f.text("deviceAuthorizationUrl"),
                token_url: f.text("tokenUrl"),
                refresh_url: f.text("refreshUrl"),
                scopes: f.scopes(),
            }),
            _ => return None,
        })
    })?;
    Some(pb::OAuthFlows { flow: Some(flow) })
}

#[allow(deprecated)]
pub(super) fn flows_from_proto(flows: pb::OAuthFlows) -> Value {
    use pb::o_auth_flows::Flow;
    let (name, fields): (&str, Vec<(&str, Value)>) = match flows.flow {
        None => return Value::Object(Map::new()),
        Some(Flow::AuthorizationCode(f)) => (
            "authorizationCode",
            vec![
                ("authorizationUrl", f.authorization_url.into()),
                ("tokenUrl", f.token_url.into()),
                ("refreshUrl", f.refresh_url.into()),
                ("scopes", scopes_json(f.scopes)),
                ("pkceRequired", f.pkce_required.into()),
            ],
        ),
        Some(Flow::ClientCredentials(f)) => (
            "clientCredentials",
            vec![
                ("tokenUrl", f.token_url.into()),
                ("refreshUrl", f.refresh_url.into()),
                ("scopes", scopes_json(f.scopes)),
            ],
        ),
        Some(Flow::Implicit(f)) => (
            "implicit",
            vec![
                ("authorizationUrl", f.authorization_url.into()),
                ("refreshUrl", f.refresh_url.into()),
                ("scopes", scopes_json(f.scopes)),
            ],
        ),
        Some(Flow::Password(f)) => (
            "password",
            vec![
                ("tokenUrl", f.token_url.into()),
                ("refreshUrl", f.refresh_url.into()),
                ("scopes", scopes_json(f.scopes)),
            ],
        ),
        Some(Flow::DeviceCode(f)) => (
            "deviceCode",
            vec![
                ("deviceAuthorizationUrl", f.device_authorization_url.into()),
                ("tokenUrl", f.token_url.into()),
                ("refreshUrl", f.refresh_url.into()),
                ("scopes", scopes_json(f.scopes)),
            ],
        ),
    };
    // ProtoJSON leaves out members at their default, and so does this object.
    let set = |v: &Value| !matches!(v, Value::String(s) if s.is_empty()) && *v != Value::Bool(false);
    let flow: Map<String, Value> = fields.into_iter().filter(|(_, v)| set(v)).map(|(k, v)| (k.to_owned(), v)).collect();
    Value::Object(Map::from_iter([(name.to_owned(), Value::Object(flow))]))
}

fn scopes_json(scopes: HashMap<String, String>) -> Value {
    let sorted: BTreeMap<String, String> = scopes.into_iter().collect();
    Value::Object(sorted.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
}

/// The members of one flow object, read leniently: a member of the wrong type reads as unset.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn text(&self, key: &str) -> String {
        self.0.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
    }

    fn flag(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool).unwrap_or_default()
    }

    fn scopes(&self) -> HashMap<String, String> {
        let Some(scopes) = self.0.get("scopes").and_then(Value::as_object) else { return HashMap::new() };
        scopes.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect()
    }
}
