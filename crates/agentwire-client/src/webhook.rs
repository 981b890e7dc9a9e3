//! A webhook for push notifications: an axum router that checks each delivery's credentials,
//! reads its body of any protocol generation as a canonical [`StreamResponse`], and hands it to
//! the application through a bounded channel.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use agentwire_jose::{NotificationVerifier, NOTIFICATION_SIGNATURE_HEADER};
use agentwire_types::dialect::push;
use agentwire_types::StreamResponse;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use futures_util::Stream;
use subtle::ConstantTimeEq;
use tokio::sync::mpsc;

/// The headers a notification token comes in: v0.1/v0.3's, v1.0's registered name, and the
/// name of the protocol's "OPVS" spelling. Senders set all three; any one is enough.
const TOKEN_HEADERS: [&str; 3] = ["X-A2A-Notification-Token", "A2A-Notification-Token", "X-OPVS-Notification-Token"];

/// The default limit on a delivery's body: 4 MiB.
const DEFAULT_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// The default number of notifications waiting to be read.
const DEFAULT_CAPACITY: usize = 64;

/// A webhook that receives an agent's push notifications, for a client that registered it with
/// [`Client::create_push_config`](crate::Client::create_push_config) (or an older generation's
/// push-config call).
///
/// [`into_router`](Self::into_router) gives an [`axum::Router`] and the [`Notifications`] it
/// feeds. The router answers `POST` at `/` and at every path below it, so it can be served alone
/// or [`nest`](axum::Router::nest)ed at the webhook's path in an application's router; it has a
/// route at `/` of its own, so merging it into a router that has one too panics.
///
/// Each delivery is answered:
/// - `401 Unauthorized` when a [`token`](Self::token) is set and none of the headers
///   `X-A2A-Notification-Token`, `A2A-Notification-Token`, `X-OPVS-Notification-Token` carries
///   it, when an [`authorization`](Self::authorization) is set and `Authorization` is not it,
///   or when [signatures are verified](Self::verify_signatures) and the delivery's is refused;
/// - `413 Payload Too Large` when the body exceeds the [`body_limit`](Self::body_limit);
/// - `400 Bad Request` with a short plain-text reason when the body is no push notification
///   (see [`dialect::push::read`](agentwire_types::dialect::push::read) for what every
///   generation sends);
/// - `200 OK` with an empty body once the notification is in the channel;
/// - `503 Service Unavailable` when the [`Notifications`] have been dropped.
///
/// When [`capacity`](Self::capacity) notifications wait unread, a further delivery waits for
/// room before it is answered: the sender's request stays open, which slows the sender down.
/// A sender that gives up waiting (agentwire's server after 10 seconds) retries the delivery, so
/// a reader that falls far behind can receive an event twice.
///
/// ```no_run
/// # async fn run(task_id: String) -> Result<(), Box<dyn std::error::Error>> {
/// use agentwire_client::{Client, WebhookReceiver};
/// use agentwire_types::TaskPushNotificationConfig;
///
/// let (webhook, mut notifications) = WebhookReceiver::new().token("secret").into_router();
/// let app = axum::Router::new().nest("/a2a/webhook", webhook);
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:8081").await?;
/// tokio::spawn(async move { axum::serve(listener, app).await });
///
/// let client = Client::connect("http://127.0.0.1:8080").await?;
/// let config = TaskPushNotificationConfig {
///     task_id,
///     url: "http://my-host.example:8081/a2a/webhook".into(),
///     token: "secret".into(),
///     ..TaskPushNotificationConfig::default()
/// };
/// client.create_push_config(config).await?;
///
/// while let Some(notification) = notifications.recv().await {
///     let event = notification.event;
///     println!("task {} is {:?}", event.task_id(), event.task_state());
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct WebhookReceiver {
    token: Option<String>,
    authorization: Option<String>,
    signatures: Option<Arc<NotificationVerifier>>,
    capacity: usize,
    body_limit: usize,
}

impl Default for WebhookReceiver {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for WebhookReceiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookReceiver")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("authorization", &self.authorization.as_ref().map(|_| "<redacted>"))
            .field("signatures", &self.signatures.is_some())
            .field("capacity", &self.capacity)
            .field("body_limit", &self.body_limit)
            .finish()
    }
}

impl WebhookReceiver {
    /// A receiver that accepts every delivery, with room for 64 unread notifications and bodies
    /// of up to 4 MiB.
    pub fn new() -> Self {
        Self {
            token: None,
            authorization: None,
            signatures: None,
            capacity: DEFAULT_CAPACITY,
            body_limit: DEFAULT_BODY_LIMIT,
        }
    }

    /// Accepts only deliveries that carry `token` (the push config's `token`) in one of the
    /// notification-token headers.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Accepts only deliveries whose `Authorization` header is `value` exactly, e.g.
    /// `"Bearer xyz"` for a push config with the scheme `Bearer` and the credentials `xyz`.
    pub fn authorization(mut self, value: impl Into<String>) -> Self {
        self.authorization = Some(value.into());
        self
    }

    /// Accepts only deliveries whose `A2A-Notification-Signature` token `verifier` accepts:
    /// signed by the agent's key for this webhook and this very body, unexpired, and not seen
    /// before. Such a delivery is answered `401` otherwise.
    ///
    /// ```
    /// use agentwire_client::jose::{NotificationVerifier, PublicKeys};
    /// use agentwire_client::WebhookReceiver;
    ///
    /// // The agent's keys, from its `/.well-known/jwks.json`.
    /// let keys = PublicKeys::from_jwks(br#"{"keys":[]}"#).unwrap();
    /// let verifier = NotificationVerifier::new(keys, "https://agent.example", "https://me.example/hook");
    /// let (webhook, notifications) = WebhookReceiver::new().verify_signatures(verifier).into_router();
    /// # let _ = (webhook, notifications);
    /// ```
    pub fn verify_signatures(mut self, verifier: NotificationVerifier) -> Self {
        self.signatures = Some(Arc::new(verifier));
        self
    }

    /// How many notifications may wait unread before deliveries wait for room (at least 1).
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// The largest body accepted, in bytes; larger ones are answered 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The router that receives deliveries, and the notifications it receives.
    ///
    /// The notifications end once the router and every clone of it have been dropped.
    pub fn into_router(self) -> (Router, Notifications) {
        let (sender, receiver) = mpsc::channel(self.capacity);
        let shared = Arc::new(Shared {
            token: self.token,
            authorization: self.authorization,
            signatures: self.signatures,
            sender,
        });
        let receive = post(receive);
        let router = Router::new()
            .route("/", receive.clone())
            .route("/{*path}", receive)
            .layer(DefaultBodyLimit::max(self.body_limit))
            .with_state(shared);
        (router, Notifications { receiver })
    }
}

/// What every delivery's handler shares.
struct Shared {
    token: Option<String>,
    authorization: Option<String>,
    signatures: Option<Arc<NotificationVerifier>>,
    sender: mpsc::Sender<Notification>,
}

impl Shared {
    /// The token the delivery carries, if any, when its credentials are the expected ones.
    fn check(&self, headers: &HeaderMap) -> Result<Option<String>, Unauthorized> {
        if let Some(expected) = &self.authorization {
            let given = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()).unwrap_or_default();
            if !same_secret(given, expected.as_bytes()) {
                return Err(Unauthorized);
            }
        }
        let mut tokens = TOKEN_HEADERS.iter().filter_map(|name| headers.get(*name)).map(|v| v.as_bytes());
        let token = match &self.token {
            Some(expected) => tokens.find(|given| same_secret(given, expected.as_bytes())).ok_or(Unauthorized)?,
            None => match tokens.next() {
                Some(given) => given,
                None => return Ok(None),
            },
        };
        Ok(std::str::from_utf8(token).ok().map(str::to_owned))
    }
}

/// A delivery without the expected credentials.
struct Unauthorized;

/// Compares secrets in constant time (a length mismatch answers at once: the length is no
/// secret worth hiding).
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.ct_eq(expected).into()
}

async fn receive(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    // Credentials first: a sender without them learns nothing from the body's fate.
    let Ok(token) = shared.check(request.headers()) else {
        tracing::debug!("webhook delivery refused: wrong or missing credentials");
        return (StatusCode::UNAUTHORIZED, "wrong or missing notification credentials").into_response();
    };
    let signature = request.headers().get(NOTIFICATION_SIGNATURE_HEADER).cloned();
    let body = match Bytes::from_request(request, &()).await {
        Ok(body) => body,
        Err(rejection) => return rejection.into_response(),
    };
    if let Some(verifier) = &shared.signatures {
        let token = signature.as_ref().and_then(|v| v.to_str().ok()).unwrap_or_default();
        if let Err(error) = verifier.verify(token, &body) {
            tracing::debug!(%error, "webhook delivery refused: its signature");
            return (StatusCode::UNAUTHORIZED, format!("the delivery's signature is refused: {error}")).into_response();
        }
    }
    let event = match serde_json::from_slice(&body).and_then(push::read) {
        Ok(event) => event,
        Err(error) => {
            tracing::debug!(%error, "webhook delivery refused: not a push notification");
            return (StatusCode::BAD_REQUEST, format!("not a push notification: {}", short(&error))).into_response();
        }
    };
    // Waits for room when the reader is behind: the sender waits with it.
    match shared.sender.send(Notification { event, token }).await {
        Ok(()) => StatusCode::OK.into_response(),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "this webhook's notifications are no longer read").into_response(),
    }
}

/// The start of an error's message: a parser's message quotes the input, which may be long.
fn short(error: &serde_json::Error) -> String {
    agentwire_types::text::clip(error.to_string(), 200)
}

/// One push notification, as received.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Notification {
    /// What happened: for a v1.0 sender, one event of the task; for a v0.3 or legacy sender, the
    /// whole task as it was after the change ([`StreamResponse::Task`]).
    pub event: StreamResponse,
    /// The notification token the delivery carried: the one the receiver checks, if it has one,
    /// else the first token header present. It tells apart the push configs a receiver with no
    /// token of its own serves.
    pub token: Option<String>,
}

impl fmt::Debug for Notification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notification")
            .field("event", &self.event)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// The notifications a [`WebhookReceiver`]'s router receives, in the order their deliveries were
/// accepted: a [`Stream`], or one at a time with [`recv`](Self::recv).
///
/// It ends once the router and every clone of it have been dropped and the notifications
/// already accepted have been read. Dropping it makes the router answer deliveries with 503.
#[derive(Debug)]
pub struct Notifications {
    receiver: mpsc::Receiver<Notification>,
}

impl Notifications {
    /// The next notification; `None` once the router is gone and every notification was read.
    pub async fn recv(&mut self) -> Option<Notification> {
        self.receiver.recv().await
    }
}

impl Stream for Notifications {
    type Item = Notification;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Notification>> {
        self.receiver.poll_recv(cx)
    }
}
