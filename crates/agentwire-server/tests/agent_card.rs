//! The public agent card: served at every well-known path, with validators that let clients and
//! caches reuse it.

use agentwire_test::{conformance, TestServer};
use serde_json::Value;

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
    assert_eq!(headers["vary"], "origin", "browsers get CORS headers, other clients not");
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
