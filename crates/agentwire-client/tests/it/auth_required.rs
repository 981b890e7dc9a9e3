//! A stream goes on after AUTH_REQUIRED (credentials may arrive out of band) until the task ends,
//! at every interface the client speaks.

use crate::common;
use agentwire_server::App;

use crate::common::{Agent, INTERFACES, TOKEN};
use agentwire_server::auth::StaticAuth;
use agentwire_server::RequestHandler;
use agentwire_test::{Gate, NeedsAuth, TestServer};
use agentwire_types::{SendMessageRequest, TaskState};

#[tokio::test]
async fn streams_read_past_auth_required_at_every_interface() {
    // Credentials "arrive" at once: every stream still passes AUTH_REQUIRED on its way.
    let gate = Gate::default();
    gate.open();
    let auth = StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let server =
        TestServer::start_app(RequestHandler::builder(NeedsAuth(gate.clone())), App::new().authenticator(auth)).await;
    let agent = Agent {
        base: server.base.clone(),
        lists_tasks: true,
        lists_tasks_in_v03: true,
        deletes_configs_over_v03_rest: true,
    };
    for (binding, version) in INTERFACES {
        let client = common::client(&agent, binding, version).await;
        let events = client.send_streaming_message(SendMessageRequest::new(common::message("hi"))).await.unwrap();
        let states = common::states(&common::collect(events).await);
        assert_eq!(
            states.last(),
            Some(&TaskState::Completed),
            "{binding:?} {version:?}: the stream ended at {states:?}"
        );
        assert!(states.contains(&TaskState::AuthRequired), "{binding:?} {version:?}: {states:?}");
    }
}
