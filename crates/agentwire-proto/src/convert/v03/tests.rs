use agentwire_types as t;
use prost::Message as _;
use serde_json::json;

use crate::a2a_v1 as pb;

fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// Encodes to bytes and back, so that a round trip crosses the wire and not just the structs.
fn through_the_wire<P: prost::Message + Default>(value: P) -> P {
    P::decode(value.encode_to_vec().as_slice()).expect("decodes")
}

/// canonical → proto → bytes → proto → canonical.
fn round_trip<C, P>(value: C) -> C
where
    C: Into<P> + TryFrom<P>,
    <C as TryFrom<P>>::Error: std::fmt::Debug,
    P: prost::Message + Default,
{
    C::try_from(through_the_wire(value.into())).expect("converts back")
}

/// proto → canonical → proto, for requests a server reads.
fn read_and_write<P, C>(wire: P) -> P
where
    P: prost::Message + Default + From<C>,
    C: TryFrom<P>,
    <C as TryFrom<P>>::Error: std::fmt::Debug,
{
    P::from(C::try_from(through_the_wire(wire)).expect("reads"))
}

/// A message with only what v0.3 can carry.
fn message() -> t::Message {
    t::Message {
        message_id: "m-1".into(),
        context_id: "c-1".into(),
        task_id: "t-1".into(),
        role: t::Role::Agent,
        parts: vec![
            t::Part::text("hello"),
            t::Part::raw(vec![0, 1, 2, 255], "blob.bin", "application/octet-stream"),
            t::Part::url("https://example.com/f.pdf", "f.pdf", "application/pdf"),
            t::Part::data(json!({"n": 3, "pi": 3.25, "list": [true, null, "x"], "nested": {"k": -7}})),
        ],
        metadata: Some(object(json!({"trace": "abc", "depth": 2}))),
        extensions: vec!["https://example.com/ext".into()],
        reference_task_ids: Vec::new(),
    }
}

fn task(state: t::TaskState) -> t::Task {
    let mut artifact = t::Artifact::new("a-1", "report", vec![t::Part::text("body")]);
    artifact.description = "the report".into();
    artifact.extensions = vec!["urn:x".into()];
    artifact.metadata = Some(object(json!({"pages": 4})));
    t::Task {
        generation: None,
        id: "t-1".into(),
        context_id: "c-1".into(),
        status: t::TaskStatus {
            state,
            message: Some(Box::new(message())),
            timestamp: t::Timestamp::from_millis(1_767_225_600_123),
        },
        artifacts: vec![artifact],
        history: vec![message(), t::Message::user("m-0", "hi")],
        metadata: Some(object(json!({"owner": "me"}))),
    }
}

fn push_config() -> t::TaskPushNotificationConfig {
    t::TaskPushNotificationConfig {
        tenant: String::new(),
        id: "cfg".into(),
        task_id: "t-1".into(),
        url: "https://hooks.example.com/a2a".into(),
        token: "secret".into(),
        authentication: Some(t::AuthenticationInfo { scheme: "Bearer".into(), credentials: "tok".into() }),
    }
}

fn status_update(state: t::TaskState) -> t::StreamResponse {
    t::StreamResponse::StatusUpdate(t::TaskStatusUpdateEvent {
        generation: None,
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        status: t::TaskStatus { state, message: None, timestamp: t::Timestamp::from_millis(5) },
        metadata: Some(object(json!({"k": "v"}))),
    })
}

#[test]
fn every_state_keeps_its_number_and_canceled_is_spelled_cancelled() {
    for state in t::TaskState::ALL {
        let wire = pb::TaskState::from(state);
        assert_eq!(wire as i32, state.number(), "{state:?}");
        assert_eq!(t::TaskState::from(wire), state);
    }
    assert_eq!(pb::TaskState::from(t::TaskState::Canceled), pb::TaskState::Cancelled);
    assert_eq!(pb::TaskState::Cancelled as i32, 5);
    assert_eq!(pb::TaskState::Cancelled.as_str_name(), "TASK_STATE_CANCELLED");
    assert_eq!(pb::TaskState::AuthRequired as i32, 8);
    assert_eq!(pb::TaskState::Unspecified as i32, 0);
    assert_eq!(pb::Role::User as i32, 1);
    assert_eq!(pb::Role::from(t::Role::Agent) as i32, 2);

    let unknown = pb::TaskStatus { state: 9, ..Default::default() };
    let error = t::TaskStatus::try_from(unknown).unwrap_err();
    assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
    assert!(error.message().contains('9'), "{}", error.message());
    let unknown_role = pb::Message { role: 3, ..Default::default() };
    assert_eq!(t::Message::try_from(unknown_role).unwrap_err().kind(), t::ErrorKind::InvalidParams);
}

#[test]
fn field_numbers_are_the_published_ones() {
    // A message's parts are field 5 (`content`); an artifact's name is field 3.
    let wire = pb::Message { content: vec![pb::Part::default()], ..Default::default() };
    assert_eq!(wire.encode_to_vec(), vec![0x2a, 0]);
    let wire = pb::Artifact { name: "n".into(), ..Default::default() };
    assert_eq!(wire.encode_to_vec(), vec![0x1a, 1, b'n']);
    // `final` is field 4 of a status update; a send's message is field 1 (`request`).
    let wire = pb::TaskStatusUpdateEvent { r#final: true, ..Default::default() };
    assert_eq!(wire.encode_to_vec(), vec![0x20, 1]);
    let wire = pb::SendMessageRequest { request: Some(pb::Message::default()), ..Default::default() };
    assert_eq!(wire.encode_to_vec(), vec![0x0a, 0]);
    // A card's protocol version is field 16.
    let wire = pb::AgentCard { protocol_version: "x".into(), ..Default::default() };
    assert_eq!(wire.encode_to_vec(), vec![0x82, 0x01, 1, b'x']);
}

#[test]
fn messages_tasks_and_events_survive_the_round_trip() {
    assert_eq!(round_trip::<_, pb::Message>(message()), message());
    for state in [t::TaskState::Canceled, t::TaskState::InputRequired, t::TaskState::Working] {
        assert_eq!(round_trip::<_, pb::Task>(task(state)), task(state));
    }
    let artifact = t::TaskArtifactUpdateEvent {
        generation: None,
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        artifact: task(t::TaskState::Working).artifacts.remove(0),
        append: true,
        last_chunk: true,
        metadata: None,
    };
    for event in [
        t::StreamResponse::Task(task(t::TaskState::Submitted)),
        t::StreamResponse::Message(message()),
        status_update(t::TaskState::Completed),
        status_update(t::TaskState::Working),
        t::StreamResponse::ArtifactUpdate(artifact),
    ] {
        assert_eq!(round_trip::<_, pb::StreamResponse>(event.clone()), event);
    }
    for reply in
        [t::SendMessageResponse::Task(task(t::TaskState::Completed)), t::SendMessageResponse::Message(message())]
    {
        assert_eq!(round_trip::<_, pb::SendMessageResponse>(reply.clone()), reply);
    }
}

#[test]
fn parts_take_the_v03_shapes() {
    use pb::file_part::File;
    use pb::part::Part as Content;
    let wire = pb::Part::from(t::Part::url("https://x.example/f", "f.txt", "text/plain"));
    let expected = pb::FilePart {
        file: Some(File::FileWithUri("https://x.example/f".into())),
        mime_type: "text/plain".into(),
        name: "f.txt".into(),
    };
    assert_eq!(wire.part, Some(Content::File(expected)));
    // The bytes field holds the file's base64 text, as the official v0.3 SDKs fill it.
    let wire = pb::Part::from(t::Part::raw(b"hello".to_vec(), "g", ""));
    let expected = pb::FilePart {
        file: Some(File::FileWithBytes(b"aGVsbG8=".to_vec())),
        mime_type: String::new(),
        name: "g".into(),
    };
    assert_eq!(wire.part, Some(Content::File(expected.clone())));
    assert_eq!(t::Part::try_from(wire).unwrap().content, t::PartContent::Raw(b"hello".to_vec()));
    // The JavaScript v0.3 SDK puts the file itself there.
    let js = pb::FilePart { file: Some(File::FileWithBytes(vec![0xff, 0xd8])), ..expected };
    let part = t::Part::try_from(pb::Part { part: Some(Content::File(js)) }).unwrap();
    assert_eq!(part.content, t::PartContent::Raw(vec![0xff, 0xd8]));
    let Some(Content::Data(data)) = pb::Part::from(t::Part::data(json!({"k": [1]}))).part else {
        panic!("a data part")
    };
    assert_eq!(data.data.map(super::struct_to_json), Some(object(json!({"k": [1]}))));
}

#[test]
fn what_v03_cannot_carry_is_dropped() {
    let mut data = t::Part::data(json!({"k": 1}));
    data.metadata = Some(object(json!({"source": "tool"})));
    let full = t::Message {
        parts: vec![t::Part::url("https://x.example/f", "f.txt", "text/plain"), data, t::Part::data(json!([1, 2]))],
        reference_task_ids: vec!["t-0".into()],
        ..message()
    };
    let back = round_trip::<_, pb::Message>(full);
    assert!(back.reference_task_ids.is_empty());
    assert_eq!(back.parts[0].filename.as_deref(), Some("f.txt"));
    assert_eq!(back.parts[0].media_type.as_deref(), Some("text/plain"));
    assert_eq!(back.parts[1].metadata, None);
    // A Struct holds only objects: a list comes back wrapped, as v0.3's JSON carries it.
    assert_eq!(back.parts[2].content, t::PartContent::Data(json!({"value": [1, 2]})));

    let cancel = t::CancelTaskRequest { tenant: "acme".into(), id: "t-1".into(), metadata: Some(object(json!({}))) };
    let back = t::CancelTaskRequest::try_from(through_the_wire(pb::CancelTaskRequest::from(cancel))).unwrap();
    assert_eq!(back, t::CancelTaskRequest { tenant: String::new(), id: "t-1".into(), metadata: None });
}

#[test]
fn status_updates_are_final_where_the_stream_ends() {
    let is_final = |state| match pb::StreamResponse::from(status_update(state)).payload {
        Some(pb::stream_response::Payload::StatusUpdate(update)) => update.r#final,
        other => panic!("a status update, not {other:?}"),
    };
    for (state, expected) in [
        (t::TaskState::Submitted, false),
        (t::TaskState::Working, false),
        (t::TaskState::Completed, true),
        (t::TaskState::Failed, true),
        (t::TaskState::Canceled, true),
        (t::TaskState::Rejected, true),
        (t::TaskState::InputRequired, true),
        // Credentials may arrive out of band: the stream goes on.
        (t::TaskState::AuthRequired, false),
    ] {
        assert_eq!(is_final(state), expected, "{state:?}");
    }
}

#[test]
fn push_configs_are_named_resources() {
    let wire = pb::TaskPushNotificationConfig::from(push_config());
    assert_eq!(wire.name, "tasks/t-1/pushNotificationConfigs/cfg");
    let inner = wire.push_notification_config.clone().expect("the config");
    assert_eq!(inner.id, "cfg");
    assert_eq!(inner.authentication.map(|a| a.schemes), Some(vec!["Bearer".to_owned()]));
    assert_eq!(round_trip::<_, pb::TaskPushNotificationConfig>(push_config()), push_config());

    // Without an inner id, the name's is used; only the first scheme is kept.
    let mut wire = wire;
    if let Some(inner) = wire.push_notification_config.as_mut() {
        inner.id.clear();
        inner.authentication =
            Some(pb::AuthenticationInfo { schemes: vec!["Basic".into(), "Bearer".into()], credentials: "c".into() });
    }
    let config = t::TaskPushNotificationConfig::try_from(wire).unwrap();
    assert_eq!((config.task_id.as_str(), config.id.as_str()), ("t-1", "cfg"));
    assert_eq!(config.authentication.map(|a| a.scheme), Some("Basic".to_owned()));

    let page = t::ListTaskPushNotificationConfigsResponse { configs: vec![push_config()], next_page_token: "n".into() };
    assert_eq!(round_trip::<_, pb::ListTaskPushNotificationConfigResponse>(page.clone()), page);
}

#[test]
fn requests_read_back_as_written() {
    let send = pb::SendMessageRequest {
        request: Some(pb::Message::from(message())),
        configuration: Some(pb::SendMessageConfiguration {
            accepted_output_modes: vec!["text/plain".into()],
            push_notification: Some(pb::PushNotificationConfig {
                id: "p".into(),
                url: "https://hooks.example.com".into(),
                token: "tok".into(),
                authentication: Some(pb::AuthenticationInfo {
                    schemes: vec!["Bearer".into()],
                    credentials: "c".into(),
                }),
            }),
            history_length: 4,
            blocking: true,
        }),
        metadata: Some(super::json_to_struct(object(json!({"a": [1, 2]})))),
    };
    assert_eq!(read_and_write::<_, t::SendMessageRequest>(send.clone()), send);
    let get = pb::GetTaskRequest { name: "tasks/t-1".into(), history_length: 2 };
    assert_eq!(read_and_write::<_, t::GetTaskRequest>(get.clone()), get);
    let cancel = pb::CancelTaskRequest { name: "tasks/t-1".into() };
    assert_eq!(read_and_write::<_, t::CancelTaskRequest>(cancel.clone()), cancel);
    let subscribe = pb::TaskSubscriptionRequest { name: "tasks/t-1".into() };
    assert_eq!(read_and_write::<_, t::SubscribeToTaskRequest>(subscribe.clone()), subscribe);
    let create = pb::CreateTaskPushNotificationConfigRequest {
        parent: "tasks/t-1".into(),
        config_id: "cfg".into(),
        config: Some(pb::TaskPushNotificationConfig::from(push_config())),
    };
    assert_eq!(read_and_write::<_, t::TaskPushNotificationConfig>(create.clone()), create);
    let name = "tasks/t-1/pushNotificationConfigs/cfg".to_owned();
    let get = pb::GetTaskPushNotificationConfigRequest { name: name.clone() };
    assert_eq!(read_and_write::<_, t::TaskPushNotificationConfigRef>(get.clone()), get);
    let delete = pb::DeleteTaskPushNotificationConfigRequest { name };
    assert_eq!(read_and_write::<_, t::TaskPushNotificationConfigRef>(delete.clone()), delete);
    let list =
        pb::ListTaskPushNotificationConfigRequest { parent: "tasks/t-1".into(), page_size: 5, page_token: "p".into() };
    assert_eq!(read_and_write::<_, t::ListTaskPushNotificationConfigsRequest>(list.clone()), list);
}

#[test]
fn requests_read_into_the_model() {
    let get = t::GetTaskRequest::try_from(pb::GetTaskRequest { name: "tasks/t-1".into(), history_length: 3 }).unwrap();
    assert_eq!(
        get,
        t::GetTaskRequest {
            current_generation: None,
            tenant: String::new(),
            id: "t-1".into(),
            history_length: Some(3)
        }
    );
    // 0 is unset on this wire, which v0.3 reads as "the whole history".
    let get = t::GetTaskRequest::try_from(pb::GetTaskRequest { name: "tasks/t-1".into(), history_length: 0 }).unwrap();
    assert_eq!(get.history_length, None);

    let config = t::TaskPushNotificationConfigRef::try_from(pb::DeleteTaskPushNotificationConfigRequest {
        name: "tasks/t-1/pushNotificationConfigs/cfg".into(),
    })
    .unwrap();
    assert_eq!((config.task_id.as_str(), config.id.as_str()), ("t-1", "cfg"));

    let list = pb::ListTaskPushNotificationConfigRequest { parent: "tasks/t-1".into(), ..Default::default() };
    let list = t::ListTaskPushNotificationConfigsRequest::try_from(list).unwrap();
    assert_eq!((list.task_id.as_str(), list.page_size), ("t-1", None));

    // The parent names the task and config_id the config; the config's own name is not read.
    let mut inner = pb::TaskPushNotificationConfig::from(push_config());
    inner.name = "tasks/t-1/pushNotificationConfigs/None".into();
    if let Some(c) = inner.push_notification_config.as_mut() {
        c.id.clear();
    }
    let create = pb::CreateTaskPushNotificationConfigRequest {
        parent: "tasks/t-9".into(),
        config_id: "c-2".into(),
        config: Some(inner),
    };
    let config = t::TaskPushNotificationConfig::try_from(create).unwrap();
    assert_eq!(
        (config.task_id.as_str(), config.id.as_str(), config.url.as_str()),
        ("t-9", "c-2", "https://hooks.example.com/a2a")
    );
    // An id in the config itself wins over config_id, as on the v0.3 HTTP+JSON route.
    let create = pb::CreateTaskPushNotificationConfigRequest {
        parent: "tasks/t-9".into(),
        config_id: "other".into(),
        config: Some(pb::TaskPushNotificationConfig::from(push_config())),
    };
    assert_eq!(t::TaskPushNotificationConfig::try_from(create).unwrap().id, "cfg");
}

#[test]
fn v03_waits_without_a_configuration_and_otherwise_as_asked() {
    let send = |configuration| pb::SendMessageRequest {
        request: Some(pb::Message::from(t::Message::user("m-1", "hi"))),
        configuration,
        metadata: None,
    };
    let read = |wire| t::SendMessageRequest::try_from(wire).unwrap().configuration.expect("always explicit");
    assert!(!read(send(None)).return_immediately);
    assert!(read(send(Some(pb::SendMessageConfiguration::default()))).return_immediately);
    let blocking = pb::SendMessageConfiguration { blocking: true, history_length: 0, ..Default::default() };
    let config = read(send(Some(blocking)));
    assert!(!config.return_immediately);
    assert_eq!(config.history_length, None);

    // Written from the model: no configuration is v1.0's default, which waits.
    let wire = pb::SendMessageRequest::from(t::SendMessageRequest::new(t::Message::user("m-1", "hi")));
    assert!(wire.configuration.expect("written").blocking);

    let no_message = pb::SendMessageRequest { request: None, ..send(None) };
    let error = t::SendMessageRequest::try_from(no_message).unwrap_err();
    assert!(error.message().contains("message"), "{}", error.message());
}

#[test]
fn malformed_resource_names_are_invalid_params() {
    for name in ["", "t-1", "task/t-1", "tasks/", "tasks/t-1/", "tasks/a/b", "TASKS/t-1"] {
        let error =
            t::GetTaskRequest::try_from(pb::GetTaskRequest { name: name.into(), history_length: 0 }).expect_err(name);
        assert_eq!(error.kind(), t::ErrorKind::InvalidParams, "{name}");
        assert!(error.message().contains("name must be tasks/{task_id}"), "{}", error.message());
        assert!(error.message().contains(&format!("{name:?}")), "{}", error.message());
        assert!(t::CancelTaskRequest::try_from(pb::CancelTaskRequest { name: name.into() }).is_err(), "{name}");
        assert!(t::SubscribeToTaskRequest::try_from(pb::TaskSubscriptionRequest { name: name.into() }).is_err());
    }
    for name in [
        "",
        "tasks/t-1",
        "tasks/t-1/pushNotificationConfigs/",
        "tasks//pushNotificationConfigs/cfg",
        "tasks/t-1/pushNotificationConfigs/cfg/x",
        "tasks/t-1/configs/cfg",
    ] {
        let error =
            t::TaskPushNotificationConfigRef::try_from(pb::GetTaskPushNotificationConfigRequest { name: name.into() })
                .expect_err(name);
        assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
        assert!(
            error.message().contains("name must be tasks/{task_id}/pushNotificationConfigs/{config_id}"),
            "{}",
            error.message()
        );
        let delete = pb::DeleteTaskPushNotificationConfigRequest { name: name.into() };
        assert!(t::TaskPushNotificationConfigRef::try_from(delete).is_err(), "{name}");
        let config =
            pb::TaskPushNotificationConfig { name: name.into(), ..pb::TaskPushNotificationConfig::from(push_config()) };
        assert!(t::TaskPushNotificationConfig::try_from(config).is_err(), "{name}");
    }
    let list = pb::ListTaskPushNotificationConfigRequest {
        parent: "tasks/t-1/pushNotificationConfigs".into(),
        ..Default::default()
    };
    let error = t::ListTaskPushNotificationConfigsRequest::try_from(list).unwrap_err();
    assert!(error.message().starts_with("parent must be tasks/{task_id}"), "{}", error.message());
    let create = pb::CreateTaskPushNotificationConfigRequest {
        parent: String::new(),
        config_id: "c".into(),
        config: Some(pb::TaskPushNotificationConfig::from(push_config())),
    };
    assert_eq!(t::TaskPushNotificationConfig::try_from(create).unwrap_err().kind(), t::ErrorKind::InvalidParams);
}

#[test]
fn a_push_config_id_with_a_slash_is_refused_as_its_name_would_be() {
    let mut config = pb::TaskPushNotificationConfig::from(push_config());
    if let Some(inner) = config.push_notification_config.as_mut() {
        inner.id = "ho/k".into();
    }
    let create = pb::CreateTaskPushNotificationConfigRequest {
        parent: "tasks/t-1".into(),
        config_id: "cfg".into(),
        config: Some(config.clone()),
    };
    let error = t::TaskPushNotificationConfig::try_from(config).unwrap_err();
    assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
    assert!(error.message().contains("\"ho/k\""), "{}", error.message());
    assert!(t::TaskPushNotificationConfig::try_from(create.clone()).is_err());
    // Without an inner id, the request's config_id names the config: the same rule holds.
    let unnamed = pb::PushNotificationConfig { id: String::new(), ..Default::default() };
    let by_config_id = pb::CreateTaskPushNotificationConfigRequest {
        config_id: "a/b".into(),
        config: Some(pb::TaskPushNotificationConfig { name: String::new(), push_notification_config: Some(unnamed) }),
        ..create
    };
    assert!(t::TaskPushNotificationConfig::try_from(by_config_id).is_err());
}

#[test]
fn what_the_model_cannot_hold_is_invalid_params() {
    let cases: Vec<(t::A2AError, &str)> = vec![
        (t::Part::try_from(pb::Part::default()).unwrap_err(), "part"),
        (
            t::Part::try_from(pb::Part { part: Some(pb::part::Part::File(pb::FilePart::default())) }).unwrap_err(),
            "file_with_uri",
        ),
        (t::StreamResponse::try_from(pb::StreamResponse::default()).unwrap_err(), "payload"),
        (t::SendMessageResponse::try_from(pb::SendMessageResponse::default()).unwrap_err(), "task or a message"),
        (
            t::TaskPushNotificationConfig::try_from(pb::CreateTaskPushNotificationConfigRequest {
                parent: "tasks/t-1".into(),
                ..Default::default()
            })
            .unwrap_err(),
            "push_notification_config",
        ),
    ];
    for (error, mentions) in cases {
        assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
        assert!(error.message().contains(mentions), "{}", error.message());
    }
    // A data part without its Struct is an empty object.
    let empty = pb::Part { part: Some(pb::part::Part::Data(pb::DataPart { data: None })) };
    assert_eq!(t::Part::try_from(empty).unwrap().content, t::PartContent::Data(json!({})));
}

fn card() -> t::AgentCard {
    serde_json::from_value(json!({
        "name": "Echo",
        "description": "echoes",
        "version": "1.2.3",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:8080/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:8080", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "127.0.0.1:8080", "protocolBinding": "GRPC", "protocolVersion": "0.3", "tenant": "t"}
        ],
        "provider": {"url": "https://example.com", "organization": "Example"},
        "documentationUrl": "https://example.com/docs",
        "iconUrl": "https://example.com/icon.png",
        "capabilities": {
            "streaming": true,
            "extendedAgentCard": true,
            "extensions": [{"uri": "urn:ext", "description": "d", "required": true, "params": {"x": 1}}]
        },
        "securitySchemes": {
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "code": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
                "authorizationUrl": "https://a", "tokenUrl": "https://t", "scopes": {"read": "r", "a": "b"}}}}},
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
    .unwrap_or_else(|e| panic!("the fixture is a card: {e}"))
}

#[test]
fn the_card_takes_the_v03_shape() {
    let card = card();
    assert_eq!(card.security_schemes.len(), 5, "the fixture's schemes all parse");
    let wire = through_the_wire(pb::AgentCard::from(card.clone()));
    assert_eq!(wire.protocol_version, "0.3.0");
    assert_eq!((wire.url.as_str(), wire.preferred_transport.as_str()), ("http://127.0.0.1:8080", "JSONRPC"));
    let interfaces: Vec<(&str, &str)> =
        wire.additional_interfaces.iter().map(|i| (i.url.as_str(), i.transport.as_str())).collect();
    assert_eq!(interfaces, [("http://127.0.0.1:8080", "JSONRPC"), ("127.0.0.1:8080", "GRPC")]);
    assert!(wire.supports_authenticated_extended_card);
    assert_eq!(wire.security.len(), 1);
    assert_eq!(wire.security[0].schemes["bearer"].list, ["read"]);
    assert_eq!(wire.skills[0].security[0].schemes["key"].list, Vec::<String>::new());
    let capabilities = wire.capabilities.clone().expect("capabilities");
    assert!(capabilities.streaming && !capabilities.push_notifications);
    let Some(pb::security_scheme::Scheme::Oauth2SecurityScheme(oauth)) = wire.security_schemes["code"].scheme.clone()
    else {
        panic!("an OAuth 2.0 scheme")
    };
    let Some(pb::o_auth_flows::Flow::AuthorizationCode(flow)) = oauth.flows.and_then(|f| f.flow) else {
        panic!("the authorization code flow")
    };
    assert_eq!((flow.token_url.as_str(), flow.scopes["read"].as_str()), ("https://t", "r"));

    // Read back: the v0.3 interfaces at 0.3; what v0.3 has no place for is gone.
    let back = t::AgentCard::from(wire.clone());
    let expected = t::AgentCard {
        supported_interfaces: card.supported_interfaces[1..]
            .iter()
            .map(|i| t::AgentInterface { tenant: String::new(), ..i.clone() })
            .collect(),
        icon_url: None,
        ..card
    };
    assert_eq!(back, expected);
    // And the v0.3 card survives proto → model → proto.
    assert_eq!(pb::AgentCard::from(back), wire);
}

#[test]
fn a_card_without_credentials_offers_no_authenticated_card() {
    let mut card = card();
    card.security_requirements.clear();
    card.supported_interfaces.truncate(1);
    let wire = pb::AgentCard::from(card);
    assert!(!wire.supports_authenticated_extended_card);
    // No 0.3 interface: the first one is the preferred endpoint, and there are no others.
    assert_eq!(wire.url, "http://127.0.0.1:8080/v1");
    assert!(wire.additional_interfaces.is_empty());
    // An empty preferred transport is JSONRPC.
    let read = t::AgentCard::from(pb::AgentCard { url: "http://x".into(), ..Default::default() });
    assert_eq!(read.supported_interfaces[0].protocol_binding, "JSONRPC");
    assert_eq!(read.supported_interfaces[0].protocol_version, "0.3");
}
