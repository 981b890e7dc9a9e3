//! The HTTP tower layers every binding (JSON-RPC, HTTP+JSON, gRPC) sits behind. Those that judge
//! a request (negotiation) refuse nothing themselves: each records what it found in the request's
//! extensions, and the binding that serves the request reads it with [`context_from`] and
//! reports a refusal in its own error format. Authentication is no HTTP layer: it runs on the
//! operation service, where the operation is known.

mod cors;
mod limit;
mod negotiate;
mod trace;

pub(crate) use cors::BrowserCorsLayer;
pub use cors::CorsOrigins;
pub(crate) use limit::body_limit;
pub(crate) use negotiate::{negotiate, Negotiated};
pub(crate) use trace::{request_span, REQUEST_ID};

use agentwire_types::{A2AError, Binding, Dialect, Peer, Result};
use http::{Extensions, HeaderMap};

use crate::RequestContext;

/// The context of a request made in `dialect` over `binding` for `tenant`, from its headers (or
/// gRPC metadata) and what the listener and the layers left in its extensions: the peer, the
/// version and extensions asked for. An unsupported version is the error to report.
pub(crate) fn context_from(
    extensions: &mut Extensions,
    metadata: HeaderMap,
    tenant: &str,
    dialect: Dialect,
    binding: Binding,
) -> Result<RequestContext> {
    let missing = || A2AError::internal("the request was not prepared by the server's layers");
    let negotiated = extensions.remove::<Negotiated>().ok_or_else(missing)?;
    let version = negotiated.version?;
    let mut context = RequestContext::new(dialect, binding);
    context.task_generations =
        version == Some(crate::ProtocolVersion::V1_1) && dialect.profile().extended_by_draft_1_1();
    tenant.clone_into(&mut context.tenant);
    context.extensions = negotiated.extensions;
    context.metadata = metadata;
    context.peer = extensions.get::<Peer>().cloned();
    Ok(context)
}
