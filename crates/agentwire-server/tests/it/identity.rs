//! Verified identity over the wire: JWTs of an identity provider the test runs (OIDC discovery,
//! a JWKS that rotates), scopes per operation, TLS client certificates, quotas per principal
//! and the signed agent card, on JSON-RPC, HTTP+JSON and gRPC.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_client::A2aServiceClient;
use agentwire_server::auth::{JwtAuth, ScopeMap, StaticAuth};
use agentwire_server::jose::{unix_now, Algorithm, JwkSet, PublicKeys, SigningKey, Validation};
use agentwire_server::quota::Quotas;
use agentwire_server::{A2aRequest, App, HttpOptions, RequestContext, ServeOptions};
use agentwire_test::{conformance, user_message, Issued, Pki, TestServer, TIMEOUT};
use axum::routing::get;
use axum::Json;
use serde_json::{json, Value};
use tonic::transport::Channel;
use tonic::Code;

const AUDIENCE: &str = "urn:agentwire:test-agent";

/// An OpenID provider on a loopback port: its discovery document and a key set the test can
/// change.
struct IdentityProvider {
    issuer: String,
    keys: Arc<Mutex<JwkSet>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for IdentityProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl IdentityProvider {
    async fn start(keys: &[&SigningKey]) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let set = JwkSet { keys: keys.iter().map(|key| key.public_key().to_jwk()).collect() };
        let keys = Arc::new(Mutex::new(set));
        let discovery = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/keys")});
        let served = Arc::clone(&keys);
        let app = axum::Router::new()
            .route("/.well-known/openid-configuration", get(move || std::future::ready(Json(discovery.clone()))))
            .route("/keys", get(move || std::future::ready(Json(served.lock().unwrap().clone()))));
        let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { issuer, keys, task }
    }

    fn publish(&self, key: &SigningKey) {
        self.keys.lock().unwrap().keys.push(key.public_key().to_jwk());
    }

    /// Claims valid for a minute, for `sub` with `scope`.
    fn claims(&self, sub: &str, scope: &str) -> serde_json::Map<String, Value> {
        let now = unix_now();
        let claims =
            json!({"iss": self.issuer, "sub": sub, "aud": AUDIENCE, "exp": now + 60, "iat": now, "scope": scope});
        claims.as_object().unwrap().clone()
    }
}

/// What a call was answered with, whatever the binding.
#[derive(Debug, PartialEq)]
enum Answer {
    /// The caller was let through (the made-up task is simply not found, the list is served).
    Served,
    /// 401 / UNAUTHENTICATED, with its challenge.
    Unauthenticated(String),
    /// 403 / PERMISSION_DENIED, with its challenge.
    Forbidden(String),
    /// 429 / RESOURCE_EXHAUSTED, with the seconds to wait.
    Busy(u64),
}

#[derive(Debug, Clone, Copy)]
enum Binding {
    JsonRpc,
    Rest,
    Grpc,
}

const BINDINGS: [Binding; 3] = [Binding::JsonRpc, Binding::Rest, Binding::Grpc];

#[derive(Debug, Clone, Copy)]
enum Call {
    GetTask,
    ListTasks,
    SendMessage,
}

async fn call(server: &TestServer, binding: Binding, op: Call, token: Option<&str>) -> Answer {
    match binding {
        Binding::Grpc => grpc_call(server, op, token).await,
        Binding::JsonRpc | Binding::Rest => {
            let request = match (binding, op) {
                (Binding::JsonRpc, _) => {
                    let (method, params) = match op {
                        Call::GetTask => ("GetTask", json!({"id": "no-such-task"})),
                        Call::ListTasks => ("ListTasks", json!({})),
                        Call::SendMessage => {
                            ("SendMessage", json!({"message": user_message("tck-complete-task", "x")}))
                        }
                    };
                    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
                    server.http.post(format!("{}/", server.base)).json(&body)
                }
                (_, Call::GetTask) => server.http.get(format!("{}/tasks/no-such-task", server.base)),
                (_, Call::ListTasks) => server.http.get(format!("{}/tasks", server.base)),
                (_, Call::SendMessage) => server
                    .http
                    .post(format!("{}/message:send", server.base))
                    .json(&json!({"message": user_message("tck-complete-task", "x")})),
            };
            let request = request.header("A2A-Version", "1.0");
            let request = match token {
                Some(token) => request.bearer_auth(token),
                None => request,
            };
            let response = request.send().await.unwrap();
            let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
            let (challenge, retry) = (header("www-authenticate").unwrap_or_default(), header("retry-after"));
            match response.status().as_u16() {
                401 => Answer::Unauthenticated(challenge),
                403 => Answer::Forbidden(challenge),
                429 => Answer::Busy(retry.expect("a 429 says when to retry").parse().unwrap()),
                200 | 404 => Answer::Served,
                status => panic!("unexpected {status}: {}", response.text().await.unwrap()),
            }
        }
    }
}

async fn grpc_call(server: &TestServer, op: Call, token: Option<&str>) -> Answer {
    let channel = Channel::from_shared(server.base.clone()).unwrap().timeout(TIMEOUT).connect().await.unwrap();
    let mut client = A2aServiceClient::new(channel);
    let outcome = match op {
        Call::GetTask => {
            let get = pb::GetTaskRequest { id: "no-such-task".into(), ..Default::default() };
            client.get_task(authorized(get, token)).await.map(drop)
        }
        Call::ListTasks => client.list_tasks(authorized(pb::ListTasksRequest::default(), token)).await.map(drop),
        Call::SendMessage => {
            let message = pb::Message {
                message_id: uuid::Uuid::new_v4().to_string(),
                role: pb::Role::User as i32,
                parts: vec![pb::Part {
                    content: Some(pb::part::Content::Text("tck-complete-task".into())),
                    ..Default::default()
                }],
                ..Default::default()
            };
            let send = pb::SendMessageRequest { message: Some(message), ..Default::default() };
            client.send_message(authorized(send, token)).await.map(drop)
        }
    };
    let Err(status) = outcome else { return Answer::Served };
    let challenge =
        status.metadata().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    match status.code() {
        Code::NotFound => Answer::Served,
        Code::Unauthenticated => Answer::Unauthenticated(challenge),
        Code::PermissionDenied => Answer::Forbidden(challenge),
        Code::ResourceExhausted => {
            use tonic_types::StatusExt as _;
            let wait = status.get_details_retry_info().and_then(|info| info.retry_delay).expect("RetryInfo");
            Answer::Busy(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
        }
        code => panic!("unexpected {code:?}: {status:?}"),
    }
}

fn authorized<T>(message: T, token: Option<&str>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(token) = token {
        request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    request
}

fn invalid_token(answer: &Answer, why: &str) -> bool {
    matches!(answer, Answer::Unauthenticated(challenge)
        if challenge.starts_with("Bearer") && challenge.contains(r#"error="invalid_token""#) && challenge.contains(why))
}

async fn jwt_server(idp: &IdentityProvider) -> TestServer {
    let validation = Validation::new(&idp.issuer, AUDIENCE).with_leeway(Duration::from_secs(5));
    let auth = JwtAuth::discover(validation)
        .await
        .unwrap()
        .with_refresh(Duration::from_secs(3600), Duration::ZERO)
        .with_scopes(ScopeMap::read_write("a2a:read", "a2a:write"));
    TestServer::start_app(conformance(), App::new().authenticator(auth)).await
}

#[tokio::test]
async fn tokens_are_checked_as_rfc_7519_and_8725_ask_on_every_binding() {
    let key = SigningKey::generate(Algorithm::ES256).unwrap();
    let idp = IdentityProvider::start(&[&key]).await;
    let server = jwt_server(&idp).await;
    let now = unix_now();
    let with = |changes: Value| {
        let mut claims = idp.claims("alice", "a2a:read a2a:write");
        claims.extend(changes.as_object().unwrap().clone());
        key.sign_jwt(&claims)
    };
    let b64 = |bytes: &[u8]| {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    };
    let payload = b64(&serde_json::to_vec(&idp.claims("mallory", "a2a:read a2a:write")).unwrap());
    let unsigned = format!("{}.{payload}.", b64(br#"{"alg":"none","typ":"JWT"}"#));
    // HS256 keyed with the public JWK, as a verifier that lets the token pick the algorithm would check it.
    let hs_header = b64(format!(r#"{{"alg":"HS256","kid":"{}"}}"#, key.kid()).as_bytes());
    let public = serde_json::to_vec(&key.public_key().to_jwk()).unwrap();
    let mac = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &public),
        format!("{hs_header}.{payload}").as_bytes(),
    );
    let confused = format!("{hs_header}.{payload}.{}", b64(mac.as_ref()));

    for binding in BINDINGS {
        assert_eq!(call(&server, binding, Call::GetTask, Some(&with(json!({})))).await, Answer::Served, "{binding:?}");
        let refusals = [
            (with(json!({"exp": now - 60})), "expired"),
            (with(json!({"nbf": now + 60})), "not valid yet"),
            (with(json!({"aud": "urn:another-agent"})), "audience"),
            (with(json!({"iss": "https://impostor.example"})), "impostor.example"),
            (unsigned.clone(), "none"),
            (confused.clone(), "HS256"),
        ];
        for (token, why) in refusals {
            let answer = call(&server, binding, Call::GetTask, Some(&token)).await;
            assert!(invalid_token(&answer, why), "{binding:?}, {why}: {answer:?}");
        }
        let answer = call(&server, binding, Call::GetTask, None).await;
        assert!(
            matches!(&answer, Answer::Unauthenticated(c) if c.starts_with("Bearer") && !c.contains("error=")),
            "{answer:?}"
        );
    }
}

/// A layer of the user's own, added to the [`App`] as `examples/operation_layer.rs` shows, runs
/// after authentication: it sees the principal a token names, with its claims, whatever the
/// binding.
#[tokio::test]
async fn a_layer_of_the_app_sees_the_principal_of_a_token_on_every_binding() {
    let key = SigningKey::generate(Algorithm::ES256).unwrap();
    let idp = IdentityProvider::start(&[&key]).await;
    let validation = Validation::new(&idp.issuer, AUDIENCE).with_leeway(Duration::from_secs(5));
    let auth = JwtAuth::discover(validation).await.unwrap().with_refresh(Duration::from_secs(3600), Duration::ZERO);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&seen);
    let record = tower::util::MapRequestLayer::new(move |(ctx, request): (RequestContext, A2aRequest)| {
        let principal = ctx.principal.as_ref().map(|p| (p.name.clone(), p.claims["scope"].clone()));
        recorded.lock().unwrap().push((ctx.binding, principal));
        (ctx, request)
    });
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth).layer(record)).await;
    let token = key.sign_jwt(&idp.claims("alice", "a2a:read"));
    for binding in BINDINGS {
        assert_eq!(call(&server, binding, Call::GetTask, Some(&token)).await, Answer::Served, "{binding:?}");
    }
    let seen = seen.lock().unwrap().clone();
    let alice = Some((format!("{}#alice", idp.issuer), json!("a2a:read")));
    let bindings =
        [agentwire_types::Binding::JsonRpc, agentwire_types::Binding::HttpJson, agentwire_types::Binding::Grpc];
    assert_eq!(seen, bindings.map(|binding| (binding, alice.clone())), "one call a binding, each by alice");
}

#[tokio::test]
async fn a_rotated_key_is_accepted_once_the_provider_publishes_it() {
    let (old, new) = (SigningKey::generate(Algorithm::ES256).unwrap(), SigningKey::generate(Algorithm::EdDSA).unwrap());
    let idp = IdentityProvider::start(&[&old]).await;
    let server = jwt_server(&idp).await;
    let token = new.sign_jwt(&idp.claims("alice", "a2a:read"));
    for binding in BINDINGS {
        let answer = call(&server, binding, Call::GetTask, Some(&token)).await;
        assert!(invalid_token(&answer, "no known key"), "{binding:?}: {answer:?}");
    }
    idp.publish(&new);
    for binding in BINDINGS {
        assert_eq!(call(&server, binding, Call::GetTask, Some(&token)).await, Answer::Served, "{binding:?}");
    }
}

#[tokio::test]
async fn a_read_only_token_can_get_and_list_but_not_send() {
    let key = SigningKey::generate(Algorithm::ES256).unwrap();
    let idp = IdentityProvider::start(&[&key]).await;
    let server = jwt_server(&idp).await;
    let reader = key.sign_jwt(&idp.claims("reader", "a2a:read"));
    let writer = key.sign_jwt(&idp.claims("writer", "a2a:read a2a:write"));
    for binding in BINDINGS {
        assert_eq!(call(&server, binding, Call::GetTask, Some(&reader)).await, Answer::Served, "{binding:?}");
        assert_eq!(call(&server, binding, Call::ListTasks, Some(&reader)).await, Answer::Served, "{binding:?}");
        let refused = call(&server, binding, Call::SendMessage, Some(&reader)).await;
        let expected = r#"Bearer realm="agentwire", error="insufficient_scope", scope="a2a:write""#;
        assert_eq!(refused, Answer::Forbidden(expected.into()), "{binding:?}");
        assert_eq!(call(&server, binding, Call::SendMessage, Some(&writer)).await, Answer::Served, "{binding:?}");
    }
    let (status, card) = server.rest(reqwest::Method::GET, "/.well-known/agent-card.json", None).await;
    assert_eq!(status, 200, "{card}");
    let oidc = &card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"]["openIdConnectUrl"];
    assert_eq!(oidc, &json!(format!("{}/.well-known/openid-configuration", idp.issuer)), "{card}");
}

#[tokio::test]
async fn a_principal_over_its_rate_waits_while_another_is_served() {
    // Two principals a binding, whose buckets no other binding's calls drain.
    let tokens: Vec<String> =
        BINDINGS.iter().enumerate().flat_map(|(i, _)| [format!("alice{i}=a{i}"), format!("bob{i}=b{i}")]).collect();
    let auth = StaticAuth::default().with_spec(&format!("bearer:{}", tokens.join(","))).unwrap();
    let quotas = Quotas { requests_per_second: Some(0.5), request_burst: 2, ..Quotas::default() };
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth).quotas(quotas)).await;
    for (i, binding) in BINDINGS.into_iter().enumerate() {
        let mut answers = Vec::new();
        for _ in 0..3 {
            answers.push(call(&server, binding, Call::GetTask, Some(&format!("a{i}"))).await);
        }
        // A burst of two, then one request every two seconds.
        assert_eq!(answers[..2], [Answer::Served, Answer::Served], "{binding:?}");
        assert!(matches!(answers[2], Answer::Busy(1..=2)), "{binding:?}: {answers:?}");
        assert_eq!(call(&server, binding, Call::GetTask, Some(&format!("b{i}"))).await, Answer::Served, "{binding:?}");
    }
}

#[tokio::test]
async fn a_trusted_client_certificate_is_a_principal_and_an_untrusted_one_is_refused_at_the_handshake() {
    let (servers, clients, strangers) = (Pki::new("server CA"), Pki::new("client CA"), Pki::new("stranger CA"));
    let auth = agentwire_server::auth::CertificateAuth::new();
    let options = ServeOptions { tls: Some(servers.server_requiring(&clients)), ..ServeOptions::default() };
    let server =
        TestServer::start_app_with(conformance(), App::new().authenticator(auth), HttpOptions::default(), options)
            .await;

    let client = |identity: Option<Issued>| {
        let root = reqwest::Certificate::from_pem(servers.ca_pem().as_bytes()).unwrap();
        let builder = reqwest::Client::builder().add_root_certificate(root).timeout(TIMEOUT);
        let builder = match identity {
            Some(issued) => {
                let pem = format!("{}{}", issued.cert, issued.key);
                builder.identity(reqwest::Identity::from_pem(pem.as_bytes()).unwrap())
            }
            None => builder,
        };
        builder.build().unwrap()
    };
    let rpc = |client: &reqwest::Client, method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        client.post(format!("{}/", server.base)).header("A2A-Version", "1.0").json(&body).send()
    };
    let send = |client: reqwest::Client| async move {
        let message = json!({"message": user_message("tck-complete-task", "x")});
        rpc(&client, "SendMessage", message).await
    };
    let listed = |client: reqwest::Client| async move {
        let listed: Value = rpc(&client, "ListTasks", json!({})).await.unwrap().json().await.unwrap();
        listed["result"]["totalSize"].clone()
    };
    let trusted = client(Some(clients.issue("agent-b.internal")));
    let reply: Value = send(trusted.clone()).await.unwrap().json().await.unwrap();
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
    assert_eq!(listed(trusted).await, 1, "the certificate's principal owns its task");
    let other = client(Some(clients.issue("agent-c.internal")));
    let reply: Value = send(other.clone()).await.unwrap().json().await.unwrap();
    assert!(reply["result"]["task"].is_object(), "{reply}");
    assert_eq!(listed(other).await, 1, "another certificate is another principal");

    assert!(send(client(Some(strangers.issue("agent-b.internal")))).await.is_err(), "an untrusted certificate");
    assert!(send(client(None)).await.is_err(), "no certificate, where one is required");
}

#[tokio::test]
async fn the_card_is_signed_and_its_key_is_published() {
    let key = SigningKey::generate(Algorithm::ES256).unwrap();
    let http =
        HttpOptions { signing_keys: Some(JwkSet { keys: vec![key.public_key().to_jwk()] }), ..HttpOptions::default() };
    let auth = StaticAuth::default().with_spec("bearer:alice=secret").unwrap();
    let server = TestServer::start_app_with(
        conformance().signing_key(key),
        App::new().authenticator(auth),
        http,
        ServeOptions::default(),
    )
    .await;

    let keys = server.http.get(format!("{}/.well-known/jwks.json", server.base)).send().await.unwrap();
    assert_eq!(keys.headers()["content-type"], "application/jwk-set+json");
    let keys = PublicKeys::from_jwks(&keys.bytes().await.unwrap()).unwrap();
    let fetch = |version: Option<&'static str>| {
        let request = server.http.get(format!("{}/.well-known/agent-card.json", server.base));
        let request = match version {
            Some(version) => request.header("A2A-Version", version),
            None => request,
        };
        request.send()
    };
    for version in [None, Some("1.0")] {
        let response = fetch(version).await.unwrap();
        let etag = response.headers()["etag"].clone();
        let card = agentwire_types::dialect::card::v1_projection(response.json().await.unwrap()).unwrap();
        let header = agentwire_server::jose::verify_card(&card, &keys, &[Algorithm::ES256]).unwrap();
        assert_eq!(header.jku, Some(format!("{}/.well-known/jwks.json", server.base)));
        assert!(card.security_schemes.contains_key("bearer"), "the signed card declares what is configured");
        assert_eq!(fetch(version).await.unwrap().headers()["etag"], etag);
    }
}

/// The probe's tokens without `sub`, which were all one principal: a token a client got for
/// itself is that client's (`client_id`), and a token that names nobody is refused.
#[tokio::test]
async fn a_token_without_a_subject_is_its_clients_or_refused() {
    let key = SigningKey::generate(Algorithm::ES256).unwrap();
    let idp = IdentityProvider::start(&[&key]).await;
    let server = jwt_server(&idp).await;
    let token = |changes: Value| {
        let mut claims = idp.claims("nobody", "a2a:read a2a:write");
        claims.remove("sub");
        claims.extend(changes.as_object().unwrap().clone());
        format!("Bearer {}", key.sign_jwt(&claims))
    };
    let (a, b, nameless) =
        (token(json!({"client_id": "service-a"})), token(json!({"azp": "service-b"})), token(json!({})));
    let as_ = |token: &str| [("A2A-Version", "1.0"), ("Authorization", token)].map(|(k, v)| (k, v.to_owned()));
    let call = |method: &'static str, params: Value, token: String| {
        let server = &server;
        async move {
            let headers = as_(&token);
            let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            server.rpc_with_headers(method, params, &headers).await
        }
    };
    let sent =
        call("SendMessage", json!({"message": agentwire_test::user_message("m1", "tck-complete-task")}), a.clone())
            .await;
    let id = sent["result"]["task"]["id"].clone();
    assert!(id.is_string(), "{sent}");
    assert_eq!(call("GetTask", json!({"id": id}), a).await["result"]["id"], id);
    assert_eq!(call("GetTask", json!({"id": id}), b).await["error"]["code"], -32001, "another client sees nothing");
    let refused = call("GetTask", json!({"id": id}), nameless).await;
    assert!(refused["error"]["message"].as_str().unwrap_or_default().contains("no subject"), "{refused}");
}

/// The probe's guesser, 8,000 wrong tokens in 1.5 s, all answered 401: past its burst of failed
/// authentications, an address is refused with ResourceExhausted, whatever it sends.
#[tokio::test]
async fn an_address_that_keeps_failing_to_authenticate_is_refused_for_a_while() {
    let auth = agentwire_server::auth::StaticAuth::default().with_spec("bearer:right").unwrap();
    let quotas = Quotas { auth_failure_burst: 5, ..Quotas::default() };
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth).quotas(quotas)).await;
    let get = |token: &'static str| {
        let server = &server;
        async move {
            let headers = [("A2A-Version", "1.0"), ("Authorization", token)];
            server.rpc_with_headers("ListTasks", json!({}), &headers).await
        }
    };
    let mut reasons = Vec::new();
    for _ in 0..8 {
        reasons.push(get("Bearer wrong").await["error"]["data"][0]["reason"].clone());
    }
    assert_eq!(reasons.iter().filter(|r| *r == "UNAUTHENTICATED").count(), 5, "{reasons:?}");
    assert_eq!(reasons.iter().filter(|r| *r == "RESOURCE_EXHAUSTED").count(), 3, "{reasons:?}");
    let limited = get("Bearer right").await;
    assert_eq!(limited["error"]["data"][0]["reason"], "RESOURCE_EXHAUSTED", "{limited}");
}
