//! One webhook POST, with its retries, under the global limit on attempts in flight.

use std::sync::Arc;
use std::time::Duration;

use agentwire_types::{Dialect, TaskPushNotificationConfig};
use bytes::Bytes;
use http::StatusCode;
use tokio::sync::Semaphore;

use super::guard::PrivateAddress;
use super::PushSettings;
use crate::causes::causes;
use crate::metrics::GaugeGuard;

/// Where one config's notifications go, and in which generation's shape; its deliveries of one
/// job share it.
pub(super) struct Target {
    pub(super) url: reqwest::Url,
    pub(super) config: TaskPushNotificationConfig,
    pub(super) dialect: Dialect,
}

/// The agent's key and name, with which each delivery is signed
/// ([`sign_notification`](agentwire_jose::sign_notification)).
pub(crate) struct DeliverySigner {
    pub(crate) key: Arc<agentwire_jose::SigningKey>,
    /// The agent's base URL.
    pub(crate) issuer: String,
    /// Where the agent's key set is published.
    pub(crate) jku: String,
}

/// One POST to a webhook. The body is shared with the other configs' deliveries of the event.
pub(super) struct Delivery {
    pub(super) target: Arc<Target>,
    pub(super) body: Bytes,
    /// The trace context of the commit it delivers, which its attempts continue.
    pub(super) trace: Option<Arc<agentwire_store::TraceContext>>,
}

/// Why a notification was not delivered.
#[derive(Debug, thiserror::Error)]
pub(super) enum Undelivered {
    /// The guard refused the address; final.
    #[error("{0}, and private webhook addresses are refused")]
    PrivateAddress(#[from] PrivateAddress),
    /// A 3xx; final, since the new location was never checked.
    #[error("the webhook answered {0}, and redirects are not followed")]
    Redirected(StatusCode),
    /// A 4xx other than 408 and 429; final.
    #[error("the webhook answered {0}")]
    Refused(StatusCode),
    /// A 5xx, 408 or 429; retried.
    #[error("the webhook answered {0}")]
    Unavailable(StatusCode),
    /// No answer (connection, TLS or timeout); retried.
    #[error("the webhook is unreachable: {0}")]
    Unreachable(String),
    /// The HTTP client could not be built; final.
    #[error("no webhook client: {0}")]
    NoClient(String),
}

impl Undelivered {
    fn from_status(status: StatusCode) -> Self {
        match status {
            s if s.is_redirection() => Self::Redirected(s),
            s if s.is_server_error() || s == StatusCode::REQUEST_TIMEOUT || s == StatusCode::TOO_MANY_REQUESTS => {
                Self::Unavailable(s)
            }
            s => Self::Refused(s),
        }
    }

    /// What kind of failure it is, as a span's `error.type`.
    fn kind(&self) -> &'static str {
        match self {
            Self::PrivateAddress(_) => "private_address",
            Self::Redirected(_) => "redirected",
            Self::Refused(_) => "refused",
            Self::Unavailable(_) => "unavailable",
            Self::Unreachable(_) => "unreachable",
            Self::NoClient(_) => "no_client",
        }
    }

    /// Whether a later attempt may succeed.
    fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Unreachable(_))
    }
}

/// What every lane shares: the HTTP client, the retry policy and the limit on attempts in flight.
pub(super) struct Courier {
    /// `Err` holds why the client could not be built; every delivery then fails with it.
    client: std::result::Result<reqwest::Client, String>,
    settings: PushSettings,
    /// One permit per attempt in flight, across all lanes.
    permits: Semaphore,
    metrics: Option<Arc<crate::metrics::Instruments>>,
    signer: Option<DeliverySigner>,
}

/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

impl Courier {
    pub(super) fn new(
        settings: PushSettings,
        metrics: Option<Arc<crate::metrics::Instruments>>,
        signer: Option<DeliverySigner>,
    ) -> Self {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            // A redirect would carry the event and its token to an address nobody checked.
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve and connect on our behalf, past the guard's resolver.
            .no_proxy()
            .dns_resolver(Arc::new(settings.guard.resolver()))
            .build()
            .map_err(|error| {
                tracing::error!(%error, "cannot build the webhook client; push notifications will fail");
                error.to_string()
            });
        let permits = Semaphore::new(settings.max_concurrent_deliveries.max(1));
        Self { client, settings, permits, metrics, signer }
    }

    /// Posts one notification, retrying what may succeed later. Every attempt is logged, and
    /// the outcome: a delivery at the first attempt at debug level, one that needed retries at
    /// info, one given up on as a warning.
    pub(super) async fn deliver(&self, delivery: &Delivery) -> std::result::Result<(), Undelivered> {
        let (result, attempts) = self.attempts(delivery).await;
        if let Some(metrics) = &self.metrics {
            let result = if result.is_ok() { "delivered" } else { "given_up" };
            metrics.push_deliveries.get_or_create(&crate::metrics::ResultLabel { result }).inc();
        }
        let (config, url) = (&delivery.target.config, &delivery.target.url);
        match &result {
            Ok(()) if attempts == 1 => {
                tracing::debug!(task_id = %config.task_id, config_id = %config.id, %url, "push notification delivered");
            }
            Ok(()) => {
                tracing::info!(task_id = %config.task_id, config_id = %config.id, %url, attempts, "push notification delivered");
            }
            Err(reason) => {
                tracing::warn!(task_id = %config.task_id, config_id = %config.id, %url, attempts, %reason, "push notification not delivered; given up");
            }
        }
        result
    }

    /// The outcome, and how many attempts led to it.
    async fn attempts(&self, delivery: &Delivery) -> (std::result::Result<(), Undelivered>, u32) {
        // Names are checked by the client's resolver; literal addresses never reach it.
        if let Err(refused) = self.settings.guard.check_literal(&delivery.target.url) {
            return (Err(refused.into()), 0);
        }
        let client = match &self.client {
            Ok(client) => client,
            Err(error) => return (Err(Undelivered::NoClient(error.clone())), 0),
        };
        let max_attempts = self.settings.max_attempts.max(1);
        let mut backoff = self.settings.initial_backoff;
        let mut attempt = 1;
        loop {
            let traced = delivery.trace.as_deref().map(|made_by| {
                let target = &delivery.target;
                crate::spans::webhook_context(&target.url, &target.config.task_id, attempt - 1, made_by)
            });
            let failure = match self.attempt(client, delivery, traced.as_ref()).await {
                Ok(()) => {
                    self.count_attempt("ok");
                    return (Ok(()), attempt);
                }
                Err(failure) => failure,
            };
            let config = &delivery.target.config;
            if !failure.is_retryable() || attempt >= max_attempts {
                self.count_attempt("failed");
                return (Err(failure), attempt);
            }
            self.count_attempt("retried");
            // Within the attempt's span: the line carries its trace.
            let attached = traced.map(opentelemetry::Context::attach);
            tracing::info!(
                task_id = %config.task_id,
                config_id = %config.id,
                attempt,
                reason = %failure,
                retry_in = ?backoff,
                "push notification attempt failed"
            );
            drop(attached);
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
            attempt += 1;
        }
    }

    fn count_attempt(&self, result: &'static str) {
        if let Some(metrics) = &self.metrics {
            metrics.push_attempts.get_or_create(&crate::metrics::ResultLabel { result }).inc();
        }
    }

    /// One POST, in the span of `traced` if the delivery is traced, holding a permit of the
    /// global limit while it runs.
    async fn attempt(
        &self,
        client: &reqwest::Client,
        delivery: &Delivery,
        traced: Option<&opentelemetry::Context>,
    ) -> std::result::Result<(), Undelivered> {
        let gauges = self.metrics.as_ref().map(|m| (&m.push_waiting, &m.push_in_flight));
        let waiting = gauges.map(|(waiting, _)| GaugeGuard::raise(waiting));
        // The semaphore is never closed, so this waits for a permit and always gets one.
        let _permit = self.permits.acquire().await;
        drop(waiting);
        let _in_flight = gauges.map(|(_, in_flight)| GaugeGuard::raise(in_flight));
        let Delivery { target, body, .. } = delivery;
        let mut request =
            client.post(target.url.clone()).header(http::header::CONTENT_TYPE, "application/json").body(body.clone());
        if let Some(traced) = traced {
            request = request.headers(crate::spans::context_headers(traced));
        }
        let config = &target.config;
        if !config.token.is_empty() {
            // Every name a generation's receivers look for (docs/PROTOCOL.md rule 13): v0.1/v0.3's, v1.0's
            // registered one, and seed 000's.
            for name in ["X-A2A-Notification-Token", "A2A-Notification-Token", "X-OPVS-Notification-Token"] {
                request = request.header(name, &config.token);
            }
        }
        if let Some(signer) = &self.signer {
            // Made for each attempt: a receiver that refused one attempt may have noted its id.
            let token = agentwire_jose::sign_notification(
                &signer.key,
                &signer.issuer,
                Some(&signer.jku),
                &config.url,
                &config.task_id,
                body,
            );
            request = request.header(agentwire_jose::NOTIFICATION_SIGNATURE_HEADER, token);
        }
        if let Some(auth) = config.authentication.as_ref().filter(|a| !a.credentials.is_empty()) {
            let scheme = if auth.scheme.is_empty() { "Bearer" } else { auth.scheme.as_str() };
            request = request.header(http::header::AUTHORIZATION, format!("{scheme} {}", auth.credentials));
        }
        let sent = request.send().await;
        let status = sent.as_ref().ok().map(reqwest::Response::status);
        let outcome = match sent {
            Ok(response) if response.status().is_success() => Ok(()),
            Ok(response) => Err(Undelivered::from_status(response.status())),
            Err(error) => Err(match private_address_cause(&error) {
                Some(refused) => Undelivered::PrivateAddress(refused.clone()),
                None => Undelivered::Unreachable(with_causes(&error)),
            }),
        };
        if let Some(traced) = traced {
            let error_type = match (&outcome, &status) {
                (Ok(()), _) => None,
                (Err(_), Some(status)) => Some(status.as_str()),
                (Err(failure), None) => Some(failure.kind()),
            };
            crate::spans::record_http_outcome(traced, status, error_type);
        }
        outcome
    }
}

/// The guard's refusal among the causes of a request error (the resolver's error is wrapped by
/// the connector and the client).
fn private_address_cause(error: &reqwest::Error) -> Option<&PrivateAddress> {
    causes(error).find_map(|cause| cause.downcast_ref::<PrivateAddress>())
}

/// An error and its causes, which reqwest's message leaves out ("connection refused").
fn with_causes(error: &reqwest::Error) -> String {
    causes(error).map(ToString::to_string).collect::<Vec<_>>().join(": ")
}

#[cfg(test)]
mod tests;
