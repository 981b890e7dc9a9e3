//! The card a gateway serves for an agent: the agent's own, reached through the gateway.

use std::sync::Arc;

use agentwire_jose::SigningKey;
use agentwire_types::{AgentCard, AgentInterface, Authentication};

/// What the gateway changes in an agent's cards: where the agent is reached, how callers prove
/// who they are, and who vouches for the card.
#[derive(Debug, Clone)]
pub(crate) struct Rewrite {
    /// The gateway's interfaces for the agent, in place of the agent's own.
    pub(crate) interfaces: Vec<AgentInterface>,
    /// The gateway's security schemes, in place of the agent's (which are for the gateway to
    /// meet, not the caller).
    pub(crate) authentication: Authentication,
    /// The gateway's key, and the URL of the key set that holds it.
    pub(crate) signer: Option<(Arc<SigningKey>, String)>,
    /// The gateway keeps the agent's tasks: it streams them and delivers their push
    /// notifications itself, whether the agent does or not.
    pub(crate) mirrored: bool,
}

impl Rewrite {
    /// `card` as the gateway serves it. The agent's signatures go: they covered the agent's
    /// interfaces, so they could not verify over the gateway's. With a key, the gateway signs the
    /// card it serves in their place.
    pub(crate) fn apply(&self, mut card: AgentCard) -> AgentCard {
        card.supported_interfaces.clone_from(&self.interfaces);
        card.security_schemes.clear();
        self.authentication.declare(&mut card);
        if self.mirrored {
            card.capabilities.streaming = Some(true);
            card.capabilities.push_notifications = Some(true);
        }
        card.signatures = match &self.signer {
            Some((key, jku)) => vec![agentwire_jose::sign_card(&card, key, Some(jku))],
            None => Vec::new(),
        };
        card
    }
}

/// The interfaces of an agent mounted at `url` (`{gateway}/agents/NAME`), as tenant `name` of
/// the gateway's gRPC service: JSON-RPC and HTTP+JSON at the mount, in both generations; gRPC
/// in v1.0 only, whose requests carry a tenant (a v0.3 gRPC request names no agent, and its
/// paths are the same for every agent).
pub(crate) fn mounted_interfaces(url: &str, name: &str, grpc_target: Option<&str>) -> Vec<AgentInterface> {
    agentwire_server::advertised_interfaces(url, grpc_target)
        .into_iter()
        .filter(|i| i.protocol_binding != "GRPC" || i.protocol_version == "1.0")
        .map(|mut i| {
            if i.protocol_binding == "GRPC" {
                name.clone_into(&mut i.tenant);
            }
            i
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mounted_agent_is_reached_at_its_path_and_as_a_grpc_tenant() {
        let interfaces = mounted_interfaces("http://gw:9000/agents/echo", "echo", None);
        for interface in &interfaces {
            match interface.protocol_binding.as_str() {
                "GRPC" => {
                    assert_eq!((interface.url.as_str(), interface.tenant.as_str()), ("http://gw:9000", "echo"));
                    assert_eq!(interface.protocol_version, "1.0");
                }
                _ => assert_eq!(interface.url, "http://gw:9000/agents/echo"),
            }
        }
        assert_eq!(interfaces.iter().filter(|i| i.protocol_version == "0.3").count(), 2);
    }

    #[test]
    fn the_agents_signatures_and_schemes_give_way_to_the_gateways() {
        let key = Arc::new(SigningKey::generate(agentwire_jose::Algorithm::ES256).unwrap());
        let rewrite = Rewrite {
            interfaces: mounted_interfaces("http://gw/agents/a", "a", None),
            authentication: Authentication::default(),
            signer: Some((Arc::clone(&key), "http://gw/.well-known/jwks.json".into())),
            mirrored: false,
        };
        let upstream: AgentCard = serde_json::from_value(serde_json::json!({
            "name": "a", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}],
            "securitySchemes": {"upstream": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"upstream": {"list": []}}}],
            "signatures": [{"protected": "e30", "signature": "AA"}],
        }))
        .unwrap();
        let served = rewrite.apply(upstream);
        assert!(served.security_schemes.is_empty() && served.security_requirements.is_empty());
        assert!(served.supported_interfaces.iter().all(|i| i.url != "http://a"));
        let keys = agentwire_jose::PublicKeys::from_keys([key.public_key()]);
        assert_eq!(served.signatures.len(), 1);
        agentwire_jose::verify_card(&served, &keys, &[agentwire_jose::Algorithm::ES256]).unwrap();
    }
}
