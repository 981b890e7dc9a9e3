//! The TLS roots and client certificate of the connections the client makes itself, on every
//! binding.

use crate::error::{Error, Result};

impl TlsSettings {
    /// An HTTP client with these roots and this identity.
    pub(crate) fn http_client(&self) -> Result<reqwest::Client> {
        let setting = |what: &str, e: reqwest::Error| Error::Setting(format!("{what}: {e}"));
        let mut builder = reqwest::Client::builder();
        for pem in &self.roots {
            for root in reqwest::Certificate::from_pem_bundle(pem).map_err(|e| setting("a TLS root", e))? {
                builder = builder.add_root_certificate(root);
            }
        }
        if let Some((chain, key)) = &self.identity {
            let identity = reqwest::Identity::from_pem(&[chain.as_slice(), b"\n", key.as_slice()].concat())
                .map_err(|e| setting("the TLS client certificate", e))?;
            builder = builder.identity(identity);
        }
        builder.build().map_err(|e| setting("the HTTP client", e))
    }
}

/// The TLS roots and client certificate of the connections the client makes itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct TlsSettings {
    /// PEM roots trusted beside the web's.
    pub(crate) roots: Vec<Vec<u8>>,
    /// A PEM certificate chain and its PEM private key.
    pub(crate) identity: Option<(Vec<u8>, Vec<u8>)>,
}
