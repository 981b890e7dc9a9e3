//! Liveness and readiness: `GET /healthz` (the process answers), `GET /readyz` (it can serve:
//! what [`Readiness`] checks), and the gRPC health service, which reports the same readiness.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;

/// The longest a readiness check may take; a slower one is an answer too: not ready.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether the server can serve now, as `/readyz` and the gRPC health service report it. A
/// [`RequestHandler`](crate::RequestHandler)'s ([`RequestHandler::readiness`]) is ready while its
/// store answers, notices between instances arrive, and it is not draining; the default is
/// always ready.
///
/// ```
/// use agentwire_server::health::Readiness;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let readiness = Readiness::new(|| async { Err("warming up".to_owned()) });
/// assert_eq!(readiness.check().await, Err("warming up".to_owned()));
/// assert_eq!(Readiness::default().check().await, Ok(()));
/// # });
/// ```
///
/// [`RequestHandler::readiness`]: crate::RequestHandler::readiness
#[derive(Clone)]
pub struct Readiness(Option<Arc<Check>>);

/// A readiness check: `Err` says why the server cannot serve.
type Check = dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync;

impl Readiness {
    /// Readiness as `check` finds it: `Err` says why the server cannot serve.
    pub fn new<F, Fut>(check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        Self(Some(Arc::new(move || Box::pin(check()))))
    }

    /// Checks now, within two seconds.
    pub async fn check(&self) -> Result<(), String> {
        let Some(check) = &self.0 else { return Ok(()) };
        match tokio::time::timeout(CHECK_TIMEOUT, check()).await {
            Ok(ready) => ready,
            Err(_) => Err(format!("the readiness check took more than {CHECK_TIMEOUT:?}")),
        }
    }
}

impl Default for Readiness {
    /// Always ready.
    fn default() -> Self {
        Self(None)
    }
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Readiness").field(&if self.0.is_some() { "checked" } else { "always" }).finish()
    }
}

/// `GET /healthz`: the process is up and answers.
pub(crate) async fn live() -> &'static str {
    "ok\n"
}

/// `GET /readyz`: 200 when ready, 503 with the reason when not.
pub(crate) async fn ready(readiness: &Readiness) -> Response {
    match readiness.check().await {
        Ok(()) => "ready\n".into_response(),
        Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {reason}\n")).into_response(),
    }
}
