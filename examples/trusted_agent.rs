//! An agent that proves who it is and knows who calls it: JWTs of an identity provider with a
//! scope per kind of operation, a rate limit per caller, and an agent card and webhook
//! deliveries signed by the agent's own key, whose public half it publishes.
//!
//! The identity provider is played by a key made at start; the program prints a read-only and a
//! read-write token signed with it, as `export` lines to paste into the shell that runs the
//! commands below. A real deployment would use `JwtAuth::discover` with its provider's issuer URL
//! instead.
//!
//! ```sh
//! cargo run -p agentwire-examples --example trusted_agent
//! # then, in another terminal, paste the two `export READER=… WRITER=…` lines it printed
//!
//! # The reader can list, not send (403 insufficient_scope); the writer can send
//! agentwire list http://127.0.0.1:8089 --token "$READER"
//! agentwire send http://127.0.0.1:8089 hi --token "$READER"
//! agentwire send http://127.0.0.1:8089 hi --token "$WRITER"
//!
//! # The card verifies against the key set it names
//! agentwire card http://127.0.0.1:8089 --verify-card-jku http://127.0.0.1:8089/
//! ```

use agentwire_server::agent::EchoAgent;
use agentwire_server::auth::{JwtAuth, ScopeMap};
use agentwire_server::jose::{unix_now, Algorithm, JwkSet, PublicKeys, SigningKey, Validation};
use agentwire_server::quota::Quotas;
use agentwire_server::{App, CardConfig, HttpOptions, RequestHandler, Server};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

const ADDR: &str = "127.0.0.1:8089";
const ISSUER: &str = "https://idp.example";
const AUDIENCE: &str = "urn:agent:trusted-echo";

/// A token of the stand-in identity provider for `subject`, with `scope`, valid for an hour.
fn token(idp: &SigningKey, subject: &str, scope: &str) -> String {
    let now = unix_now();
    let claims = serde_json::json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": subject, "scope": scope, "iat": now, "exp": now + 3600,
    });
    idp.sign_jwt(claims.as_object().expect("claims are an object"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();

    let idp = SigningKey::generate(Algorithm::ES256)?;
    // Lines to paste into a shell, for the commands at the top of this file.
    println!("export READER={}", token(&idp, "reader", "a2a:read"));
    println!("export WRITER={}", token(&idp, "writer", "a2a:read a2a:write"));

    // Who may call: the provider's tokens for this agent, reads and writes each with its scope.
    let auth = JwtAuth::with_keys(Validation::new(ISSUER, AUDIENCE), PublicKeys::from_keys([idp.public_key()]))
        .with_scopes(ScopeMap::read_write("a2a:read", "a2a:write"));
    // How much: ten requests a second per caller, in bursts of twenty.
    let quotas = Quotas { requests_per_second: Some(10.0), request_burst: 20, ..Quotas::default() };
    // What it signs: its card and its webhook deliveries, with a key whose public half is served.
    let agent_key = SigningKey::generate(Algorithm::EdDSA)?;
    let published = JwkSet { keys: vec![agent_key.public_key().to_jwk()] };

    let card = CardConfig { card: EchoAgent::card(), public_url: format!("http://{ADDR}"), ..CardConfig::default() };
    let handler = RequestHandler::builder(EchoAgent).card(card).signing_key(agent_key).build();
    // In front of it, in this order: who calls (the card declares the scheme), then how much.
    let app = App::new().authenticator(auth).quotas(quotas);
    let http = HttpOptions { signing_keys: Some(published), ..HttpOptions::default() };
    let listener = TcpListener::bind(ADDR).await?;
    tracing::info!("trusted echo agent listening on http://{ADDR}");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Server::builder(listener).handler(handler.clone()).serve(app.router(handler, http), shutdown).await?;
    Ok(())
}
