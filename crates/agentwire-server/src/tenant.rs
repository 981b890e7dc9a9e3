//! The names clients give tenants: bounded and plain, checked where every binding hands its
//! request to the operation service.
//!
//! A tenant is chosen by the caller (a path segment, a gRPC field, a JSON-RPC param) and ends up
//! as a key of every task it scopes, in URLs a gateway builds for an agent behind it, in spans
//! and in a metric label. Unchecked, a megabyte tenant per task outgrew every byte budget, and
//! `..` walked a gateway's upstream URL out of its agent's path.

use std::task::{Context, Poll};

use agentwire_types::{A2AError, A2aRequest, A2aResponse, Result};
use futures_util::future::{Either, Ready};
use tower::Service;

use crate::RequestContext;

/// Refuses a tenant name longer than `max_bytes`, or holding anything but letters, digits and
/// `-`, `.`, `_`, `~` (the characters a URL path segment holds as they are), or made of dots
/// alone. The empty name (no tenant) passes.
pub(crate) fn check(tenant: &str, max_bytes: usize) -> Result<()> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
    let refused = if tenant.len() > max_bytes {
        Some(format!("at most {max_bytes} bytes (got {})", tenant.len()))
    } else if !tenant.bytes().all(plain) {
        Some("letters, digits and - . _ ~ only".to_owned())
    } else if !tenant.is_empty() && tenant.bytes().all(|b| b == b'.') {
        Some("not dots alone".to_owned())
    } else {
        None
    };
    match refused {
        None => Ok(()),
        Some(rule) => Err(A2AError::invalid_params(format!("a tenant name is {rule}"))
            .with_metadata("limitBytes", max_bytes.to_string())),
    }
}

/// The operation service behind the bindings, refusing requests whose tenant (the context's or
/// the one the parameters name) [`check`] refuses, before anything else sees them.
#[derive(Clone)]
pub(crate) struct TenantCheck<S> {
    inner: S,
    max_bytes: usize,
}

impl<S> TenantCheck<S> {
    pub(crate) fn new(inner: S, max_bytes: usize) -> Self {
        Self { inner, max_bytes }
    }
}

impl<S> Service<(RequestContext, A2aRequest)> for TenantCheck<S>
where
    S: Service<(RequestContext, A2aRequest), Response = A2aResponse, Error = A2AError>,
{
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = Either<Ready<Result<A2aResponse>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        match check(&ctx.tenant, self.max_bytes).and_then(|()| check(request.tenant(), self.max_bytes)) {
            Ok(()) => Either::Right(self.inner.call((ctx, request))),
            Err(error) => Either::Left(futures_util::future::ready(Err(error))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn tenant_names_are_short_and_plain() {
        for tenant in ["", "acme", "team-1.eu_west~2", &"a".repeat(128)] {
            assert!(check(tenant, 128).is_ok(), "{tenant:?}");
        }
        for tenant in [&"a".repeat(129), "..", ".", "a/b", "a b", "ten%2Fant", "é", "a\nb", "a?b"] {
            assert!(check(tenant, 128).is_err(), "{tenant:?}");
        }
        assert!(check("a..b", 128).is_ok(), "dots inside a name are no path step");
    }
}
