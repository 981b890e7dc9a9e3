//! Callers named by their TLS client certificate.

use std::collections::BTreeMap;

use agentwire_types::Access;
use agentwire_types::{A2AError, MutualTlsSecurityScheme, RequestContext, SecurityScheme};
use serde_json::{Map, Value};
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer as _, X509Certificate};

use super::{async_trait, Authenticator};
use crate::Principal;

/// Names the caller after the client certificate it presented at the TLS handshake, which the
/// listener has verified against its client CAs
/// ([`TlsConfig::verifying_clients`](crate::TlsConfig::verifying_clients)): the first subject
/// alternative name (a URI such as a SPIFFE id, a DNS name or an e-mail address), or else the
/// subject's common name. The principal's claims hold the subject and every name.
///
/// Trust comes from the listener: served without client verification, no certificate reaches
/// it and every caller is refused.
#[derive(Debug, Clone, Default)]
pub struct CertificateAuth {
    _private: (),
}

impl CertificateAuth {
    /// Names callers after their verified certificates.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The principal a DER certificate names.
fn principal(der: &[u8]) -> Result<Principal, String> {
    let (_, certificate) = X509Certificate::from_der(der).map_err(|e| format!("unreadable certificate: {e}"))?;
    let mut names = Vec::new();
    if let Ok(Some(alternatives)) = certificate.subject_alternative_name() {
        for name in &alternatives.value.general_names {
            match name {
                GeneralName::URI(uri) => names.push(format!("uri:{uri}")),
                GeneralName::DNSName(dns) => names.push(format!("dns:{dns}")),
                GeneralName::RFC822Name(mail) => names.push(format!("email:{mail}")),
                _ => {}
            }
        }
    }
    let subject = certificate.subject().to_string();
    let common_name = certificate.subject().iter_common_name().next().and_then(|cn| cn.as_str().ok());
    let name = match (names.first(), common_name) {
        (Some(name), _) => name.clone(),
        (None, Some(cn)) => format!("cn:{cn}"),
        (None, None) => return Err("the certificate names no subject".into()),
    };
    let mut claims = Map::new();
    claims.insert("subject".into(), Value::String(subject));
    claims.insert("names".into(), Value::from(names));
    Ok(Principal { name, claims })
}

#[async_trait]
impl Authenticator for CertificateAuth {
    async fn authenticate(&self, ctx: &RequestContext, _: Access) -> Result<Principal, A2AError> {
        let certificate = ctx.peer.as_ref().and_then(|peer| peer.certificate.as_deref());
        let certificate = certificate.ok_or_else(|| A2AError::unauthenticated("a client certificate is required"))?;
        principal(certificate).map_err(A2AError::unauthenticated)
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        BTreeMap::from([("mtls".to_owned(), SecurityScheme::MutualTls(MutualTlsSecurityScheme::default()))])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_is_named_by_its_first_alternative_name_or_its_common_name() {
        let mut params = rcgen::CertificateParams::new(vec!["agent-b.internal".to_owned()]).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, "agent-b");
        let key = rcgen::KeyPair::generate().unwrap();
        let der = params.self_signed(&key).unwrap().der().to_vec();
        let who = principal(&der).unwrap();
        assert_eq!(who.name, "dns:agent-b.internal");
        assert!(who.claims["subject"].as_str().unwrap().contains("CN=agent-b"));

        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, "billing");
        assert_eq!(principal(params.self_signed(&key).unwrap().der()).unwrap().name, "cn:billing");
    }
}
