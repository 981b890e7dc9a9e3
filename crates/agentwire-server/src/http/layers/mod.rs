//! The HTTP tower layers every binding sits behind. Those that judge a request (negotiation)
//! refuse nothing themselves: each records what it found in the request's extensions, and the
//! binding that serves the request reports a refusal in its own error format (see
//! [`super::request`]). Authentication is no HTTP layer: it runs on the operation service, where
//! the operation is known.

mod cors;
mod limit;
mod negotiate;
mod trace;

pub(crate) use cors::BrowserCorsLayer;
pub use cors::CorsOrigins;
pub(crate) use limit::body_limit;
pub(crate) use negotiate::{negotiate, Negotiated};
pub(crate) use trace::{request_span, REQUEST_ID};
