use agentwire_types as t;
use prost::Message as _;
use serde_json::json;

use crate::lf_a2a_v1 as pb;

fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn message() -> t::Message {
    let mut data = t::Part::data(json!({"n": 3, "pi": 3.25, "list": [true, null, "x"], "nested": {"k": -7}}));
    data.metadata = Some(object(json!({"source": "tool"})));
    t::Message {
        message_id: "m-1".into(),
        context_id: "c-1".into(),
        task_id: "t-1".into(),
        role: t::Role::Agent,
        parts: vec![
            t::Part::text("hello"),
            t::Part::raw(vec![0, 1, 2, 255], "a.bin", "application/octet-stream"),
            t::Part::url("https://example.com/f.pdf", "f.pdf", "application/pdf"),
            data,
        ],
        metadata: Some(object(json!({"trace": "abc", "depth": 2}))),
        extensions: vec!["https://example.com/ext".into()],
        reference_task_ids: vec!["t-0".into()],
    }
}

fn task() -> t::Task {
    let status = t::TaskStatus {
        state: t::TaskState::InputRequired,
        message: Some(Box::new(message())),
        timestamp: t::Timestamp::from_millis(1_767_225_600_123),
    };
    let mut artifact = t::Artifact::new("a-1", "report", vec![t::Part::text("body")]);
    artifact.description = "the report".into();
    artifact.extensions = vec!["urn:x".into()];
    artifact.metadata = Some(object(json!({"pages": 4})));
    t::Task {
        generation: None,
        id: "t-1".into(),
        context_id: "c-1".into(),
        status,
        artifacts: vec![artifact],
        history: vec![message(), t::Message::user("m-0", "hi")],
        metadata: Some(object(json!({"owner": "me"}))),
    }
}

/// Encodes to bytes and back too, so that the round trip crosses the wire and not just the structs.
fn through_the_wire<P: prost::Message + Default>(value: P) -> P {
    P::decode(value.encode_to_vec().as_slice()).expect("decodes")
}

fn round_trip<C, P>(value: C) -> C
where
    C: Clone + Into<P> + TryFrom<P>,
    <C as TryFrom<P>>::Error: std::fmt::Debug,
    P: prost::Message + Default,
{
    C::try_from(through_the_wire(value.into())).expect("converts back")
}

#[test]
fn tasks_messages_and_events_survive_the_round_trip() {
    assert_eq!(round_trip::<_, pb::Message>(message()), message());
    assert_eq!(round_trip::<_, pb::Task>(task()), task());
    let status = t::TaskStatusUpdateEvent {
        generation: None,
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        status: task().status,
        metadata: Some(object(json!({"final": true}))),
    };
    let artifact = t::TaskArtifactUpdateEvent {
        generation: None,
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        artifact: task().artifacts.remove(0),
        append: true,
        last_chunk: true,
        metadata: None,
    };
    for event in [
        t::StreamResponse::Task(task()),
        t::StreamResponse::Message(message()),
        t::StreamResponse::StatusUpdate(status),
        t::StreamResponse::ArtifactUpdate(artifact),
    ] {
        assert_eq!(round_trip::<_, pb::StreamResponse>(event.clone()), event);
    }
    for reply in [t::SendMessageResponse::Task(task()), t::SendMessageResponse::Message(message())] {
        assert_eq!(round_trip::<_, pb::SendMessageResponse>(reply.clone()), reply);
    }
}

#[test]
fn requests_survive_the_round_trip() {
    let push = t::TaskPushNotificationConfig {
        tenant: "acme".into(),
        id: "cfg".into(),
        task_id: "t-1".into(),
        url: "https://hooks.example.com/a2a".into(),
        token: "secret".into(),
        authentication: Some(t::AuthenticationInfo { scheme: "Bearer".into(), credentials: "tok".into() }),
    };
    let send = t::SendMessageRequest {
        tenant: "acme".into(),
        message: message(),
        configuration: Some(t::SendMessageConfiguration {
            if_generation_match: None,
            accepted_output_modes: vec!["text/plain".into()],
            task_push_notification_config: Some(push.clone()),
            history_length: Some(0),
            return_immediately: true,
        }),
        metadata: Some(object(json!({"a": [1, 2]}))),
    };
    assert_eq!(round_trip::<_, pb::SendMessageRequest>(send.clone()), send);
    let list = t::ListTasksRequest {
        tenant: "acme".into(),
        context_id: "c-1".into(),
        status: Some(t::TaskState::Working),
        page_size: Some(10),
        page_token: "next".into(),
        history_length: Some(2),
        status_timestamp_after: t::Timestamp::from_millis(1_000),
        include_artifacts: Some(false),
    };
    assert_eq!(round_trip::<_, pb::ListTasksRequest>(list.clone()), list);
    let listed =
        t::ListTasksResponse { tasks: vec![task()], next_page_token: "p2".into(), page_size: 1, total_size: 9 };
    assert_eq!(round_trip::<_, pb::ListTasksResponse>(listed.clone()), listed);

    let get = t::GetTaskRequest {
        current_generation: None,
        tenant: "acme".into(),
        id: "t-1".into(),
        history_length: Some(3),
    };
    assert_eq!(t::GetTaskRequest::from(through_the_wire(pb::GetTaskRequest::from(get.clone()))), get);
    let cancel =
        t::CancelTaskRequest { tenant: "".into(), id: "t-1".into(), metadata: Some(object(json!({"why": "x"}))) };
    assert_eq!(t::CancelTaskRequest::from(through_the_wire(pb::CancelTaskRequest::from(cancel.clone()))), cancel);
    let subscribe = t::SubscribeToTaskRequest { tenant: "acme".into(), id: "t-1".into() };
    let back = t::SubscribeToTaskRequest::from(through_the_wire(pb::SubscribeToTaskRequest::from(subscribe.clone())));
    assert_eq!(back, subscribe);
    assert_eq!(
        t::TaskPushNotificationConfig::from(through_the_wire(pb::TaskPushNotificationConfig::from(push.clone()))),
        push
    );
    let config = t::TaskPushNotificationConfigRef { tenant: "acme".into(), task_id: "t-1".into(), id: "cfg".into() };
    let got = through_the_wire(pb::GetTaskPushNotificationConfigRequest::from(config.clone()));
    assert_eq!(t::TaskPushNotificationConfigRef::from(got), config);
    let deleted = through_the_wire(pb::DeleteTaskPushNotificationConfigRequest::from(config.clone()));
    assert_eq!(t::TaskPushNotificationConfigRef::from(deleted), config);
    let configs = t::ListTaskPushNotificationConfigsRequest {
        tenant: "acme".into(),
        task_id: "t-1".into(),
        page_size: Some(5),
        page_token: "p".into(),
    };
    let back = through_the_wire(pb::ListTaskPushNotificationConfigsRequest::from(configs.clone()));
    assert_eq!(t::ListTaskPushNotificationConfigsRequest::from(back), configs);
    let page = t::ListTaskPushNotificationConfigsResponse { configs: vec![push], next_page_token: "n".into() };
    let back = through_the_wire(pb::ListTaskPushNotificationConfigsResponse::from(page.clone()));
    assert_eq!(t::ListTaskPushNotificationConfigsResponse::from(back), page);
}

#[test]
fn the_agent_card_survives_the_round_trip() {
    let card: t::AgentCard = serde_json::from_value(json!({
        "name": "Echo",
        "description": "echoes",
        "version": "1.2.3",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:8080", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "127.0.0.1:8080", "protocolBinding": "GRPC", "protocolVersion": "1.0", "tenant": "t"}
        ],
        "provider": {"url": "https://example.com", "organization": "Example"},
        "documentationUrl": "https://example.com/docs",
        "iconUrl": "https://example.com/icon.png",
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extendedAgentCard": true,
            "extensions": [{"uri": "urn:ext", "description": "d", "required": true, "params": {"x": 1}}]
        },
        "securitySchemes": {
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "code": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
                "authorizationUrl": "https://a", "tokenUrl": "https://t", "scopes": {"read": "r"},
                "pkceRequired": true}}}},
            "device": {"oauth2SecurityScheme": {"flows": {"deviceCode": {
                "deviceAuthorizationUrl": "https://d", "tokenUrl": "https://t", "scopes": {}}}}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o"}},
            "mtls": {"mtlsSecurityScheme": {"description": "client certs"}}
        },
        "securityRequirements": [{"schemes": {"bearer": {"list": ["read"]}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{"id": "echo", "name": "Echo", "description": "d", "tags": ["t"], "examples": ["hi"],
                    "inputModes": ["text/plain"], "outputModes": ["text/plain"],
                    "securityRequirements": [{"schemes": {"key": {"list": []}}}]}],
        "signatures": [{"protected": "eyJ", "signature": "sig", "header": {"kid": "k1"}}]
    }))
    .unwrap_or_else(|e| panic!("the fixture is a card: {e}"));
    assert!(card.security_schemes.len() >= 6, "the fixture's schemes all parse");
    let back = t::AgentCard::from(through_the_wire(pb::AgentCard::from(card.clone())));
    assert_eq!(back, card);
}

#[test]
fn wire_numbers_are_the_published_ones() {
    assert_eq!(pb::TaskState::from(t::TaskState::Submitted) as i32, 1);
    assert_eq!(pb::TaskState::from(t::TaskState::Canceled) as i32, 5);
    assert_eq!(pb::TaskState::from(t::TaskState::AuthRequired) as i32, 8);
    assert_eq!(pb::Role::from(t::Role::Agent) as i32, 2);
    assert_eq!(pb::TaskState::Rejected.as_str_name(), "TASK_STATE_REJECTED");
    // A v1.0 ListTaskPushNotificationConfigsRequest puts the tenant in field 4.
    let request = pb::ListTaskPushNotificationConfigsRequest { tenant: "x".into(), ..Default::default() };
    assert_eq!(request.encode_to_vec(), vec![0x22, 1, b'x']);
}

#[test]
fn what_the_model_cannot_hold_is_invalid_params() {
    let no_content = pb::Message { parts: vec![pb::Part::default()], role: 1, ..Default::default() };
    let error = t::Message::try_from(no_content).expect_err("a part needs content");
    assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
    assert!(error.message().contains("part"), "{}", error.message());

    let unknown_role = pb::Message { role: 9, ..Default::default() };
    assert_eq!(t::Message::try_from(unknown_role).unwrap_err().kind(), t::ErrorKind::InvalidParams);

    let unknown_state = pb::ListTasksRequest { status: 42, ..Default::default() };
    let error = t::ListTasksRequest::try_from(unknown_state).unwrap_err();
    assert!(error.message().contains("42"), "{}", error.message());

    let no_message = pb::SendMessageRequest::default();
    assert!(t::SendMessageRequest::try_from(no_message).unwrap_err().message().contains("message"));
}

#[test]
fn whole_numbers_in_data_stay_integers() {
    let part = t::Part::data(json!({"count": 3, "ratio": 0.5, "big": 1e300}));
    let back = round_trip::<_, pb::Part>(part);
    let t::PartContent::Data(value) = back.content else { panic!("a data part") };
    assert_eq!(value["count"], json!(3));
    assert!(value["count"].is_i64());
    assert_eq!(value["ratio"], json!(0.5));
    assert_eq!(value["big"], json!(1e300));
}
