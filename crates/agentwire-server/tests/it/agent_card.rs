//! The public agent card: served at every well-known path, with validators that let clients and
//! caches reuse it.

use agentwire_server::App;
use agentwire_test::{conformance, TestServer};
use serde_json::{json, Value};

const PATHS: [&str; 3] = ["/.well-known/agent-card.json", "/.well-known/agent.json", "/agentCard"];

#[tokio::test]
async fn the_card_is_served_with_validators_and_revalidated_with_304() {
    let server = TestServer::start(conformance()).await;
    let first = server.http.get(format!("{}{}", server.base, PATHS[0])).send().await.unwrap();
    assert_eq!(first.status(), 200);
    let headers = first.headers().clone();
    let etag = headers["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "a strong ETag: {etag}");
    assert!(headers.get("last-modified").is_some());
    assert!(headers["cache-control"].to_str().unwrap().contains("max-age"));
    // Browsers get CORS headers, other clients not; a version header chooses the card's form.
    assert_eq!(headers["vary"], "origin, a2a-version, opvs-version");
    let card: Value = first.json().await.unwrap();
    assert_eq!(card["supportedInterfaces"][0]["url"], server.base.as_str());

    for path in PATHS {
        let url = format!("{}{path}", server.base);
        let same = server.http.get(&url).send().await.unwrap();
        assert_eq!(same.headers()["etag"].to_str().unwrap(), etag, "{path} serves the same card");
        let unchanged = server.http.get(&url).header("If-None-Match", &etag).send().await.unwrap();
        assert_eq!(unchanged.status(), 304, "{path}");
        assert_eq!(unchanged.headers()["etag"].to_str().unwrap(), etag);
        assert!(unchanged.bytes().await.unwrap().is_empty(), "a 304 has no body");
        let listed = format!("\"other\", W/{etag}");
        let weak = server.http.get(&url).header("If-None-Match", listed).send().await.unwrap();
        assert_eq!(weak.status(), 304, "{path}: any listed tag, weak or strong, matches");
        let stale = server.http.get(&url).header("If-None-Match", "\"stale\"").send().await.unwrap();
        assert_eq!(stale.status(), 200, "{path}");
    }
}

#[tokio::test]
async fn every_generation_reads_the_combined_card_and_a_v1_client_may_ask_for_the_v1_card_alone() {
    let server = TestServer::start(conformance()).await;
    let url = format!("{}{}", server.base, PATHS[0]);
    let combined: Value = server.http.get(&url).send().await.unwrap().json().await.unwrap();
    let interfaces = combined["supportedInterfaces"].as_array().unwrap();
    let offered: Vec<_> = interfaces
        .iter()
        .map(|i| (i["protocolBinding"].as_str().unwrap(), i["protocolVersion"].as_str().unwrap()))
        .collect();
    let v1 = [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0")];
    let v03 = [("JSONRPC", "0.3"), ("HTTP+JSON", "0.3"), ("GRPC", "0.3")];
    assert_eq!(offered, [v1, v03].concat(), "v1.0's first, then v0.3's");
    let urls: Vec<_> = interfaces.iter().map(|i| i["url"].as_str().unwrap()).collect();
    assert!(urls.iter().all(|url| *url == server.base), "every interface a URL of the card's origin: {urls:?}");
    assert_eq!(combined["url"], server.base.as_str());
    assert_eq!(combined["preferredTransport"], "JSONRPC");
    assert_eq!(combined["protocolVersion"], "0.3.0");
    assert_eq!(combined["additionalInterfaces"][1]["transport"], "HTTP+JSON");
    assert_eq!(combined["additionalInterfaces"][2], json!({"url": server.base, "transport": "GRPC"}));
    // The extended card is for authenticated callers: a server that authenticates none offers
    // it in neither generation.
    assert_eq!(
        (
            combined["capabilities"]["extendedAgentCard"].as_bool(),
            combined["supportsAuthenticatedExtendedCard"].as_bool()
        ),
        (Some(false), Some(false))
    );

    for header in ["A2A-Version", "OPVS-Version"] {
        let response = server.http.get(&url).header(header, "1.0").send().await.unwrap();
        let v1: Value = response.json().await.unwrap();
        assert_eq!(v1["supportedInterfaces"], combined["supportedInterfaces"]);
        for member in ["url", "preferredTransport", "additionalInterfaces", "protocolVersion"] {
            assert!(v1.get(member).is_none(), "{header}: {member} is not a v1.0 member");
        }
    }
    let v03: Value = server.http.get(&url).header("A2A-Version", "0.3").send().await.unwrap().json().await.unwrap();
    assert_eq!(v03, combined);
}

#[tokio::test]
async fn a_v03_client_is_offered_the_authenticated_card_where_credentials_are_required() {
    let auth = agentwire_server::auth::StaticAuth::default().with_spec("bearer:secret").unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let card: Value =
        server.http.get(format!("{}{}", server.base, PATHS[0])).send().await.unwrap().json().await.unwrap();
    assert_eq!(card["supportsAuthenticatedExtendedCard"], true);
    assert_eq!(card["security"], serde_json::json!([{"bearer": []}]), "{card}");
    assert_eq!(card["securitySchemes"]["bearer"]["type"], "http", "v0.3's flat members beside v1.0's: {card}");
    assert!(card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"].is_object());
}

/// An [`AuthLayer`](agentwire_server::auth::AuthLayer) put around a handler by hand, without an
/// `App`: the card declares its scheme and offers the extended card, which an authenticated
/// caller gets and an unauthenticated one is refused.
#[tokio::test]
async fn a_handler_behind_an_auth_layer_declares_its_scheme_and_serves_its_extended_card() {
    use agentwire_server::auth::{AuthLayer, StaticAuth};
    use tower::Layer as _;

    let auth = AuthLayer::new(StaticAuth::default().with_spec("bearer:alice=secret").unwrap());
    let server =
        TestServer::start_router(|base| agentwire_server::router(auth.layer(conformance().card_url(base).build())))
            .await;
    let (_, card) = server.rest(reqwest::Method::GET, PATHS[0], None).await;
    assert_eq!(card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer", "{card}");
    assert_eq!(card["securityRequirements"], json!([{"schemes": {"bearer": {"list": []}}}]), "{card}");
    assert_eq!(card["capabilities"]["extendedAgentCard"], true, "{card}");
    let with_token = [("A2A-Version", "1.0"), ("Authorization", "Bearer secret")];
    let served = server.rpc_with_headers("GetExtendedAgentCard", json!({}), &with_token).await;
    assert!(served["result"]["name"].is_string(), "{served}");
    assert_eq!(served["result"]["securitySchemes"], card["securitySchemes"], "{served}");
    let refused = server.rpc("GetExtendedAgentCard", json!({})).await;
    assert_eq!(refused["error"]["data"][0]["reason"], "UNAUTHENTICATED", "{refused}");
}

/// The same handler served with nothing in front of it: its card declares no scheme and offers
/// no extended card, which is for authenticated callers only.
#[tokio::test]
async fn a_handler_without_authentication_offers_no_extended_card() {
    let server = TestServer::start(conformance()).await;
    let (_, card) = server.rest(reqwest::Method::GET, PATHS[0], None).await;
    assert_eq!(card["capabilities"]["extendedAgentCard"], false, "{card}");
    assert!(
        card.get("securitySchemes").is_none_or(|schemes| schemes.as_object().is_some_and(|s| s.is_empty())),
        "{card}"
    );
    let refused = server.rpc("GetExtendedAgentCard", json!({})).await;
    assert_eq!(refused["error"]["data"][0]["reason"], "UNSUPPORTED_OPERATION", "{refused}");
}
