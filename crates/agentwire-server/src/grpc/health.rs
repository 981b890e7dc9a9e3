//! The gRPC health service (`grpc.health.v1.Health`), reporting the server's [`Readiness`] for
//! the whole server (the empty service name) and for each A2A service.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::watch;
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::Health;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use super::EventStream;
use crate::health::Readiness;

/// How often a watch looks at readiness again.
const WATCH_EVERY: Duration = Duration::from_secs(1);

pub(super) struct ReadinessHealth {
    readiness: Readiness,
    /// The services reported on; any other is unknown.
    services: [&'static str; 2],
    /// The status every watch follows, looked at by one task for as long as anyone watches (the
    /// task owns the sender): a thousand watchers cost one check a second, not a thousand.
    watched: Arc<Mutex<Weak<watch::Sender<ServingStatus>>>>,
}

impl ReadinessHealth {
    pub(super) fn new(readiness: Readiness, services: [&'static str; 2]) -> Self {
        Self { readiness, services, watched: Arc::default() }
    }

    fn knows(&self, service: &str) -> bool {
        service.is_empty() || self.services.contains(&service)
    }

    /// Follows the status: joins the task that looks at it, or starts one.
    fn follow(&self) -> watch::Receiver<ServingStatus> {
        let mut watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = watched.upgrade() {
            return sender.subscribe();
        }
        // Unknown until the first check: a watch reports nothing before it.
        let (sender, receiver) = watch::channel(ServingStatus::Unknown);
        let sender = Arc::new(sender);
        *watched = Arc::downgrade(&sender);
        tokio::spawn(look_while_watched(self.readiness.clone(), sender, Arc::clone(&self.watched)));
        receiver
    }
}

/// Looks at readiness every [`WATCH_EVERY`] and tells the watchers of each change, until none is
/// left.
async fn look_while_watched(
    readiness: Readiness,
    sender: Arc<watch::Sender<ServingStatus>>,
    watched: Arc<Mutex<Weak<watch::Sender<ServingStatus>>>>,
) {
    loop {
        let now = status(&readiness).await;
        sender.send_if_modified(|status| std::mem::replace(status, now) != now);
        tokio::select! {
            () = tokio::time::sleep(WATCH_EVERY) => {}
            () = sender.closed() => {
                // A watch that joined in the meantime keeps the task going; none can join once
                // the task is forgotten.
                let mut watched = watched.lock().unwrap_or_else(PoisonError::into_inner);
                if sender.receiver_count() == 0 {
                    *watched = Weak::new();
                    return;
                }
            }
        }
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

    /// The status now, then each change, looked at every second (by one task for every watch);
    /// an unknown service is SERVICE_UNKNOWN, once.
    async fn watch(&self, request: Request<HealthCheckRequest>) -> Result<Response<Self::WatchStream>, Status> {
        if !self.knows(&request.get_ref().service) {
            let unknown = futures_util::stream::iter([Ok(response(ServingStatus::ServiceUnknown))]);
            return Ok(Response::new(Box::pin(unknown.chain(futures_util::stream::pending()))));
        }
        let receiver = self.follow();
        let changes = futures_util::stream::unfold((receiver, true), |(mut receiver, first)| async move {
            loop {
                if !first || *receiver.borrow() == ServingStatus::Unknown {
                    // The task ends only when no watch is left, this one included.
                    receiver.changed().await.ok()?;
                }
                let now = *receiver.borrow_and_update();
                if now != ServingStatus::Unknown {
                    return Some((Ok(response(now)), (receiver, false)));
                }
            }
        });
        Ok(Response::new(Box::pin(changes)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn every_watch_follows_one_look_a_second_and_each_is_told_every_change() {
        let checks = Arc::new(AtomicUsize::new(0));
        let ready = Arc::new(AtomicBool::new(true));
        let readiness = {
            let (checks, ready) = (Arc::clone(&checks), Arc::clone(&ready));
            Readiness::new(move || {
                checks.fetch_add(1, Ordering::SeqCst);
                let ready = ready.load(Ordering::SeqCst);
                async move {
                    if ready {
                        Ok(())
                    } else {
                        Err("down".to_owned())
                    }
                }
            })
        };
        let health = ReadinessHealth::new(readiness, ["a", "b"]);
        let request = || Request::new(HealthCheckRequest { service: String::new() });
        let mut watches = Vec::new();
        for _ in 0..3 {
            watches.push(health.watch(request()).await.unwrap().into_inner());
        }
        for watch in &mut watches {
            assert_eq!(watch.next().await.unwrap().unwrap().status, ServingStatus::Serving as i32);
        }
        ready.store(false, Ordering::SeqCst);
        tokio::time::sleep(WATCH_EVERY * 3).await;
        for watch in &mut watches {
            assert_eq!(watch.next().await.unwrap().unwrap().status, ServingStatus::NotServing as i32);
        }
        let looked = checks.load(Ordering::SeqCst);
        assert!(looked <= 5, "three watches over three seconds looked {looked} times, not once a second");

        // Once every watch is gone the looking stops; a new watch starts it again.
        drop(watches);
        tokio::time::sleep(WATCH_EVERY * 3).await;
        let stopped_at = checks.load(Ordering::SeqCst);
        tokio::time::sleep(WATCH_EVERY * 3).await;
        assert_eq!(checks.load(Ordering::SeqCst), stopped_at, "nobody watches");
        let mut watch = health.watch(request()).await.unwrap().into_inner();
        assert_eq!(watch.next().await.unwrap().unwrap().status, ServingStatus::NotServing as i32);
    }
}
