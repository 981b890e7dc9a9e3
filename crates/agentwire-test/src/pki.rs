//! Certificate authorities and the certificates they issue, for TLS and mutual-TLS tests.

use std::path::Path;

use agentwire_server::TlsConfig;

/// A certificate authority made for one test.
pub struct Pki {
    ca: rcgen::Certificate,
    key: rcgen::KeyPair,
}

/// A certificate and its private key, in PEM.
pub struct Issued {
    /// The certificate.
    pub cert: String,
    /// Its private key.
    pub key: String,
}

impl Pki {
    /// A CA whose common name is `name`.
    pub fn new(name: &str) -> Self {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name.push(rcgen::DnType::CommonName, name);
        let key = rcgen::KeyPair::generate().expect("a CA key");
        Self { ca: params.self_signed(&key).expect("a CA certificate"), key }
    }

    /// The CA's certificate, in PEM.
    pub fn ca_pem(&self) -> String {
        self.ca.pem()
    }

    /// A certificate for the subject alternative name `san` (an IP address or a DNS name).
    pub fn issue(&self, san: &str) -> Issued {
        let params = rcgen::CertificateParams::new(vec![san.to_owned()]).expect("certificate parameters");
        let key = rcgen::KeyPair::generate().expect("a key");
        let cert = params.signed_by(&key, &self.ca, &self.key).expect("a certificate");
        Issued { cert: cert.pem(), key: key.serialize_pem() }
    }

    /// A listener configuration serving a certificate of this CA for `127.0.0.1`; clients trust
    /// it by [`Pki::ca_pem`].
    pub fn server(&self) -> TlsConfig {
        self.with_server_files(|cert, key, _| TlsConfig::from_pem_files(cert, key))
    }

    /// [`Pki::server`], asking every client for a certificate of `clients` (required: a
    /// handshake without one fails).
    pub fn server_requiring(&self, clients: &Pki) -> TlsConfig {
        self.with_server_files(|cert, key, dir| {
            let ca = dir.join("clients.pem");
            std::fs::write(&ca, clients.ca_pem()).expect("write the client CA");
            TlsConfig::verifying_clients(cert, key, &ca, true)
        })
    }

    /// `configure` given the files of a server certificate for `127.0.0.1`, its key and their
    /// directory, removed once it returns.
    fn with_server_files(
        &self,
        configure: impl FnOnce(&Path, &Path, &Path) -> std::io::Result<TlsConfig>,
    ) -> TlsConfig {
        let dir = std::env::temp_dir().join(format!("agentwire-pki-{}-{}", std::process::id(), next_id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let server = self.issue("127.0.0.1");
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cert, server.cert).expect("write the certificate");
        std::fs::write(&key, server.key).expect("write the key");
        let tls = configure(&cert, &key, &dir).expect("a TLS configuration");
        std::fs::remove_dir_all(&dir).expect("remove the temporary directory");
        tls
    }
}

/// A name no other call of this process has made.
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
