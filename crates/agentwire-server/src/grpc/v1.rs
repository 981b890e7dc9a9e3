//! `lf.a2a.v1.A2AService`: the v1.0 gRPC binding, each RPC one call of the operation service.

use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_server::A2aService;
use agentwire_types::{self as t, A2aRequest, Dialect};
use tonic::Request;

use super::{accept, streaming, unary, EventStream, Reply};
use crate::service::Operations;

/// The v1.0 service over the operation service.
pub(crate) struct V1 {
    pub(crate) operations: Operations,
}

#[tonic::async_trait]
impl A2aService for V1 {
    async fn send_message(&self, request: Request<pb::SendMessageRequest>) -> Reply<pb::SendMessageResponse> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        unary::<t::SendMessageResponse, _>(&self.operations, ctx, A2aRequest::SendMessage(req)).await
    }

    type SendStreamingMessageStream = EventStream<pb::StreamResponse>;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Reply<Self::SendStreamingMessageStream> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        streaming(&self.operations, ctx, A2aRequest::SendStreamingMessage(req), pb::StreamResponse::from).await
    }

    async fn get_task(&self, request: Request<pb::GetTaskRequest>) -> Reply<pb::Task> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        unary::<t::Task, _>(&self.operations, ctx, A2aRequest::GetTask(req)).await
    }

    async fn list_tasks(&self, request: Request<pb::ListTasksRequest>) -> Reply<pb::ListTasksResponse> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        unary::<t::ListTasksResponse, _>(&self.operations, ctx, A2aRequest::ListTasks(req)).await
    }

    async fn cancel_task(&self, request: Request<pb::CancelTaskRequest>) -> Reply<pb::Task> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        unary::<t::Task, _>(&self.operations, ctx, A2aRequest::CancelTask(req)).await
    }

    type SubscribeToTaskStream = EventStream<pb::StreamResponse>;

    async fn subscribe_to_task(
        &self,
        request: Request<pb::SubscribeToTaskRequest>,
    ) -> Reply<Self::SubscribeToTaskStream> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        streaming(&self.operations, ctx, A2aRequest::SubscribeToTask(req), pb::StreamResponse::from).await
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<pb::TaskPushNotificationConfig>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        unary::<t::TaskPushNotificationConfig, _>(&self.operations, ctx, A2aRequest::CreatePushConfig(req)).await
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfigRef>(request, |r| &r.tenant, Dialect::V1)?;
        unary::<t::TaskPushNotificationConfig, _>(&self.operations, ctx, A2aRequest::GetPushConfig(req)).await
    }

    async fn list_task_push_notification_configs(
        &self,
        request: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Reply<pb::ListTaskPushNotificationConfigsResponse> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        unary::<t::ListTaskPushNotificationConfigsResponse, _>(&self.operations, ctx, A2aRequest::ListPushConfigs(req))
            .await
    }

    async fn get_extended_agent_card(&self, request: Request<pb::GetExtendedAgentCardRequest>) -> Reply<pb::AgentCard> {
        let (ctx, req) = accept(request, |r| &r.tenant, Dialect::V1)?;
        unary::<t::AgentCard, _>(&self.operations, ctx, A2aRequest::GetExtendedAgentCard(req)).await
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Reply<()> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfigRef>(request, |r| &r.tenant, Dialect::V1)?;
        unary::<(), _>(&self.operations, ctx, A2aRequest::DeletePushConfig(req)).await
    }
}
