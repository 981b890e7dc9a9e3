//! `a2a.v1.A2AService`: the v0.3 gRPC binding. Its RPCs run in the v0.3 dialect, so the core
//! applies v0.3's rules (a send waits only when `blocking`, subscribing to an ended task gives the
//! task, a push config is found without its id).

use agentwire_proto::a2a_v1 as pb;
use agentwire_proto::a2a_v1::a2a_service_server::A2aService;
use agentwire_types::{self as t, Dialect};
use tonic::{Request, Response};

use super::{accept, events, reply, status, EventStream, Reply};
use crate::RequestHandler;

/// The v0.3 service over a handler.
pub(crate) struct V03 {
    pub(crate) handler: RequestHandler,
}

/// v0.3's requests carry no tenant.
fn no_tenant<P>(_: &P) -> &str {
    ""
}

#[tonic::async_trait]
impl A2aService for V03 {
    async fn send_message(&self, request: Request<pb::SendMessageRequest>) -> Reply<pb::SendMessageResponse> {
        let (ctx, req) = accept::<_, t::SendMessageRequest>(request, no_tenant, Dialect::V03)?;
        reply(self.handler.send_message(&ctx, req).await)
    }

    type SendStreamingMessageStream = EventStream<pb::StreamResponse>;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Reply<Self::SendStreamingMessageStream> {
        let (ctx, req) = accept::<_, t::SendMessageRequest>(request, no_tenant, Dialect::V03)?;
        let stream = self.handler.send_streaming_message(&ctx, req).await.map_err(status)?;
        Ok(Response::new(events(stream, pb::StreamResponse::from)))
    }

    async fn get_task(&self, request: Request<pb::GetTaskRequest>) -> Reply<pb::Task> {
        let (ctx, req) = accept::<_, t::GetTaskRequest>(request, no_tenant, Dialect::V03)?;
        reply(self.handler.get_task(&ctx, req).await)
    }

    async fn cancel_task(&self, request: Request<pb::CancelTaskRequest>) -> Reply<pb::Task> {
        let (ctx, req) = accept::<_, t::CancelTaskRequest>(request, no_tenant, Dialect::V03)?;
        reply(self.handler.cancel_task(&ctx, req).await)
    }

    type TaskSubscriptionStream = EventStream<pb::StreamResponse>;

    async fn task_subscription(
        &self,
        request: Request<pb::TaskSubscriptionRequest>,
    ) -> Reply<Self::TaskSubscriptionStream> {
        let (ctx, req) = accept::<_, t::SubscribeToTaskRequest>(request, no_tenant, Dialect::V03)?;
        let stream = self.handler.subscribe_to_task(&ctx, req).await.map_err(status)?;
        Ok(Response::new(events(stream, pb::StreamResponse::from)))
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<pb::CreateTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfig>(request, no_tenant, Dialect::V03)?;
        reply(self.handler.create_task_push_notification_config(&ctx, req).await)
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfigRef>(request, no_tenant, Dialect::V03)?;
        reply(self.handler.get_task_push_notification_config(&ctx, req).await)
    }

    async fn list_task_push_notification_config(
        &self,
        request: Request<pb::ListTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::ListTaskPushNotificationConfigResponse> {
        let (ctx, req) = accept::<_, t::ListTaskPushNotificationConfigsRequest>(request, no_tenant, Dialect::V03)?;
        reply(self.handler.list_task_push_notification_configs(&ctx, req).await)
    }

    async fn get_agent_card(&self, request: Request<pb::GetAgentCardRequest>) -> Reply<pb::AgentCard> {
        let ctx = super::context(request.extensions(), "", Dialect::V03)?;
        reply(self.handler.v03_agent_card(&ctx).await)
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Reply<()> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfigRef>(request, no_tenant, Dialect::V03)?;
        reply(self.handler.delete_task_push_notification_config(&ctx, req).await)
    }
}
