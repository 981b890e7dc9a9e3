//! `lf.a2a.v1.A2AService`: the v1.0 gRPC binding, each RPC a call of the [`RequestHandler`].

use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_server::A2aService;
use agentwire_types::{self as t, Dialect};
use tonic::{Request, Response};

use super::{accept, events, reply, status, EventStream, Reply};
use crate::RequestHandler;

/// The v1.0 service over a handler.
pub(crate) struct V1 {
    pub(crate) handler: RequestHandler,
}

#[tonic::async_trait]
impl A2aService for V1 {
    async fn send_message(&self, request: Request<pb::SendMessageRequest>) -> Reply<pb::SendMessageResponse> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.send_message(&ctx, req).await)
    }

    type SendStreamingMessageStream = EventStream<pb::StreamResponse>;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Reply<Self::SendStreamingMessageStream> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        let stream = self.handler.send_streaming_message(&ctx, req).await.map_err(status)?;
        Ok(Response::new(events(stream, pb::StreamResponse::from)))
    }

    async fn get_task(&self, request: Request<pb::GetTaskRequest>) -> Reply<pb::Task> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.get_task(&ctx, req).await)
    }

    async fn list_tasks(&self, request: Request<pb::ListTasksRequest>) -> Reply<pb::ListTasksResponse> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.list_tasks(&ctx, req).await)
    }

    async fn cancel_task(&self, request: Request<pb::CancelTaskRequest>) -> Reply<pb::Task> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.cancel_task(&ctx, req).await)
    }

    type SubscribeToTaskStream = EventStream<pb::StreamResponse>;

    async fn subscribe_to_task(
        &self,
        request: Request<pb::SubscribeToTaskRequest>,
    ) -> Reply<Self::SubscribeToTaskStream> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        let stream = self.handler.subscribe_to_task(&ctx, req).await.map_err(status)?;
        Ok(Response::new(events(stream, pb::StreamResponse::from)))
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<pb::TaskPushNotificationConfig>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.create_task_push_notification_config(&ctx, req).await)
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfigRef>(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.get_task_push_notification_config(&ctx, req).await)
    }

    async fn list_task_push_notification_configs(
        &self,
        request: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Reply<pb::ListTaskPushNotificationConfigsResponse> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.list_task_push_notification_configs(&ctx, req).await)
    }

    async fn get_extended_agent_card(&self, request: Request<pb::GetExtendedAgentCardRequest>) -> Reply<pb::AgentCard> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.get_extended_agent_card(&ctx, req).await)
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Reply<()> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfigRef>(request, |r| &r.tenant, Dialect::V1)?;
        reply(self.handler.delete_task_push_notification_config(&ctx, req).await)
    }
}
