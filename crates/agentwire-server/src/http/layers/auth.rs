//! Authentication: the [`Authenticator`] runs once per request, before any binding, and its
//! verdict travels with the request as a [`Caller`].

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use agentwire_types::{A2AError, ErrorKind};
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::{BoxFuture, Either};
use http::{header, HeaderValue, StatusCode};
use tower::{Layer, Service};

use crate::auth::Authenticator;
use crate::Principal;

/// Who is calling: a principal, an anonymous caller (no authenticator is configured), or a
/// refusal for the binding to report.
#[derive(Debug, Clone)]
pub(crate) struct Caller(pub(crate) Result<Option<Principal>, A2AError>);

/// Authenticates every request with the handler's [`Authenticator`], if it has one, and adds the
/// authenticator's `WWW-Authenticate` challenge to a 401 answer.
#[derive(Clone)]
pub(crate) struct AuthLayer {
    auth: Option<Arc<dyn Authenticator>>,
}

impl AuthLayer {
    pub(crate) fn new(auth: Option<Arc<dyn Authenticator>>) -> Self {
        Self { auth }
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Authenticate<S>;

    fn layer(&self, inner: S) -> Authenticate<S> {
        Authenticate { inner, auth: self.auth.clone() }
    }
}

#[derive(Clone)]
pub(crate) struct Authenticate<S> {
    inner: S,
    auth: Option<Arc<dyn Authenticator>>,
}

impl<S> Service<Request> for Authenticate<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let Some(auth) = &self.auth else {
            request.extensions_mut().insert(Caller(Ok(None)));
            return Either::Left(self.inner.call(request));
        };
        let verdict = auth.authenticate(request.headers());
        let challenge = match &verdict {
            Err(error) if error.kind() == ErrorKind::Unauthenticated => HeaderValue::from_str(&auth.challenge()).ok(),
            _ => None,
        };
        request.extensions_mut().insert(Caller(verdict.map(Some)));
        let response = self.inner.call(request);
        let Some(challenge) = challenge else { return Either::Left(response) };
        Either::Right(Box::pin(async move {
            let mut response = response.await?;
            // Only a refusal gets the challenge: the public card, served anyway, does not.
            if response.status() == StatusCode::UNAUTHORIZED {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
            }
            Ok(response)
        }))
    }
}
