//! The test token service of interop/token-service: RFC 8693 token exchange, and an OpenID
//! provider's discovery when it is its own issuer.

use serde_json::Value;

use super::Idp;

/// The service, killed when dropped.
pub(crate) struct TokenService {
    child: std::process::Child,
    pub(crate) url: String,
}

impl TokenService {
    /// The service for `idp`'s key and tokens of `issuer` (`self`: its own URL), with the client
    /// `client` (`ID:SECRET`), refusing to exchange `deny`'s tokens; `None` without the Python that
    /// has PyJWT (the MCP SDK's venv), except under CI.
    pub(crate) fn start(idp: &Idp, issuer: &str, client: &str, deny: &str) -> Option<Self> {
        use std::io::BufRead;
        let Some(python) = std::env::var_os("AGENTWIRE_MCP_PYTHON") else {
            assert!(std::env::var_os("CI").is_none(), "CI runs need AGENTWIRE_MCP_PYTHON (scripts/test sets it)");
            eprintln!("skipped: AGENTWIRE_MCP_PYTHON is not set");
            return None;
        };
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../interop/token-service/exchange.py");
        let mut child = std::process::Command::new(python)
            .args([script, "--key", idp.key().to_str().unwrap(), "--issuer", issuer, "--client", client])
            .args(["--deny-subject", deny])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the token service starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("{line}")).to_owned();
        Some(Self { child, url })
    }

    /// The exchanges made so far: (subject, audience, the issued token's claims).
    pub(crate) async fn exchanges(&self) -> Vec<(String, String, Value)> {
        let made: Vec<Value> = reqwest::get(format!("{}/exchanges", self.url)).await.unwrap().json().await.unwrap();
        let text = |value: &Value| value.as_str().unwrap().to_owned();
        made.iter().map(|made| (text(&made["subject"]), text(&made["audience"]), made["claims"].clone())).collect()
    }
}

impl Drop for TokenService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
