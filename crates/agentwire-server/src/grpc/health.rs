//! The gRPC health service (`grpc.health.v1.Health`), reporting the server's [`Readiness`] for
//! the whole server (the empty service name) and for each A2A service.

use std::time::Duration;

use futures_util::StreamExt;
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::Health;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use super::EventStream;
use crate::health::Readiness;

/// How often a watch looks at readiness again.
const WATCH_EVERY: Duration = Duration::from_secs(1);

pub(super) struct ReadinessHealth {
    pub(super) readiness: Readiness,
    /// The services reported on; any other is unknown.
    pub(super) services: [&'static str; 2],
}

impl ReadinessHealth {
    fn knows(&self, service: &str) -> bool {
        service.is_empty() || self.services.contains(&service)
    }
}

async fn status(readiness: &Readiness) -> ServingStatus {
    match readiness.check().await {
        Ok(()) => ServingStatus::Serving,
        Err(_) => ServingStatus::NotServing,
    }
}

fn response(status: ServingStatus) -> HealthCheckResponse {
    HealthCheckResponse { status: status.into() }
}

#[tonic::async_trait]
impl Health for ReadinessHealth {
    async fn check(&self, request: Request<HealthCheckRequest>) -> Result<Response<HealthCheckResponse>, Status> {
        if !self.knows(&request.get_ref().service) {
            return Err(Status::not_found("unknown service"));
        }
        Ok(Response::new(response(status(&self.readiness).await)))
    }

    type WatchStream = EventStream<HealthCheckResponse>;

    /// The status now, then each change, looked at every second; an unknown service is
    /// SERVICE_UNKNOWN, once.
    async fn watch(&self, request: Request<HealthCheckRequest>) -> Result<Response<Self::WatchStream>, Status> {
        if !self.knows(&request.get_ref().service) {
            let unknown = futures_util::stream::iter([Ok(response(ServingStatus::ServiceUnknown))]);
            return Ok(Response::new(Box::pin(unknown.chain(futures_util::stream::pending()))));
        }
        let readiness = self.readiness.clone();
        let changes = futures_util::stream::unfold((readiness, None), |(readiness, last)| async move {
            loop {
                if last.is_some() {
                    tokio::time::sleep(WATCH_EVERY).await;
                }
                let now = status(&readiness).await;
                if last != Some(now) {
                    return Some((Ok(response(now)), (readiness, Some(now))));
                }
            }
        });
        Ok(Response::new(Box::pin(changes)))
    }
}
