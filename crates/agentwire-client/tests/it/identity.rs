//! The client proves who it is: OAuth 2.0 client-credentials tokens, fetched once and renewed
//! before they expire, and a TLS client certificate, on every binding.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agentwire_client::jose::{unix_now, Algorithm, PublicKeys, SigningKey, Validation};
use agentwire_client::{Binding, Client, ClientCredentials};
use agentwire_server::auth::{CertificateAuth, JwtAuth, ScopeMap};
use agentwire_server::App;
use agentwire_server::{HttpOptions, ServeOptions};
use agentwire_test::{conformance, Pki, TestServer, TIMEOUT};
use agentwire_types::{ListTasksRequest, Message, SendMessageRequest, SendMessageResponse, TaskState};
use axum::routing::post;
use serde_json::json;

const ISSUER: &str = "https://idp.test";
const AUDIENCE: &str = "urn:agent:test";

/// A token endpoint that takes `agent-1` with `s3cret!` (HTTP Basic) and issues tokens of
/// `lifetime` seconds; counts what it issued.
async fn token_endpoint(key: Arc<SigningKey>, lifetime: i64, issued: Arc<AtomicUsize>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/token", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/token",
        post(move |headers: axum::http::HeaderMap, form: String| {
            let (key, issued) = (Arc::clone(&key), Arc::clone(&issued));
            async move {
                use base64::Engine as _;
                let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("agent-1:s3cret%21"));
                if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
                    return (axum::http::StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_client"})));
                }
                assert!(form.contains("grant_type=client_credentials") && form.contains("scope=a2a%3Aread+a2a%3Awrite"), "{form}");
                issued.fetch_add(1, Ordering::SeqCst);
                let now = unix_now();
                let claims = json!({"iss": ISSUER, "sub": "agent-1", "aud": AUDIENCE, "iat": now, "exp": now + lifetime, "scope": "a2a:read a2a:write"});
                let token = key.sign_jwt(claims.as_object().unwrap());
                let body = json!({"access_token": token, "token_type": "Bearer", "expires_in": lifetime});
                (axum::http::StatusCode::OK, axum::Json(body))
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::test]
async fn client_credentials_tokens_are_fetched_once_and_renewed_before_they_expire() {
    let key = Arc::new(SigningKey::generate(Algorithm::ES256).unwrap());
    let auth = JwtAuth::with_keys(Validation::new(ISSUER, AUDIENCE), PublicKeys::from_keys([key.public_key()]))
        .with_scopes(ScopeMap::read_write("a2a:read", "a2a:write"));
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let issued = Arc::new(AtomicUsize::new(0));
    let long_lived = token_endpoint(Arc::clone(&key), 3600, Arc::clone(&issued)).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let before = issued.load(Ordering::SeqCst);
        let tokens = ClientCredentials::new(&long_lived, "agent-1", "s3cret!").scope("a2a:read a2a:write");
        // Connecting fetches the extended card with the token already.
        let client =
            Client::builder(&server.base).only(binding).timeout(TIMEOUT).oauth2(tokens).connect().await.unwrap();
        let reply = client.send_message(SendMessageRequest::new(Message::user("m", "hi"))).await.unwrap();
        assert!(
            matches!(reply, SendMessageResponse::Task(ref t) if t.status.state == TaskState::Completed),
            "{binding:?}"
        );
        let listed = client.list_tasks(ListTasksRequest::default()).await.unwrap();
        assert!(!listed.tasks.is_empty(), "{binding:?}: the token's principal owns its tasks");
        assert_eq!(issued.load(Ordering::SeqCst) - before, 1, "{binding:?}: one token for every call");
    }

    // A token is renewed 30 s before it expires: one of 40 s serves the next calls too, one of
    // 30 s is renewed for each.
    for (lifetime, tokens_for_two_calls) in [(40, 0), (30, 2)] {
        let endpoint = token_endpoint(Arc::clone(&key), lifetime, Arc::clone(&issued)).await;
        let tokens = ClientCredentials::new(&endpoint, "agent-1", "s3cret!").scope("a2a:read a2a:write");
        let client = Client::builder(&server.base).timeout(TIMEOUT).oauth2(tokens).connect().await.unwrap();
        let before = issued.load(Ordering::SeqCst);
        client.list_tasks(ListTasksRequest::default()).await.unwrap();
        client.list_tasks(ListTasksRequest::default()).await.unwrap();
        assert_eq!(issued.load(Ordering::SeqCst) - before, tokens_for_two_calls, "a token of {lifetime} s");
    }

    let wrong = ClientCredentials::new(&long_lived, "agent-1", "guess").scope("a2a:read a2a:write");
    let client =
        Client::builder(&server.base).extended_card(false).timeout(TIMEOUT).oauth2(wrong).connect().await.unwrap();
    let refused = client.list_tasks(ListTasksRequest::default()).await.unwrap_err();
    assert!(refused.to_string().contains("401"), "the provider's refusal is the error: {refused}");
}

#[tokio::test]
async fn a_client_certificate_names_the_client_on_every_binding() {
    let (servers, clients) = (Pki::new("servers"), Pki::new("clients"));
    let options = ServeOptions { tls: Some(servers.server_requiring(&clients)), ..ServeOptions::default() };
    let server = TestServer::start_app_with(
        conformance(),
        App::new().authenticator(CertificateAuth::new()),
        HttpOptions::default(),
        options,
    )
    .await;

    let identity = clients.issue("agent-b.internal");
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let client = Client::builder(&server.base)
            .only(binding)
            .timeout(TIMEOUT)
            .tls_root_certificates(servers.ca_pem().as_bytes())
            .tls_identity(identity.cert.as_bytes(), identity.key.as_bytes())
            .connect()
            .await
            .unwrap();
        let reply = client.send_message(SendMessageRequest::new(Message::user("m", "hi"))).await.unwrap();
        assert!(matches!(reply, SendMessageResponse::Task(_)), "{binding:?}");
    }
    let anonymous = Client::builder(&server.base).tls_root_certificates(servers.ca_pem().as_bytes()).connect().await;
    assert!(anonymous.is_err(), "without a certificate the handshake fails");
}
