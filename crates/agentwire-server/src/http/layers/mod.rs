//! The tower layers every binding sits behind. They refuse nothing themselves: each records what
//! it found in the request's extensions, and the binding that serves the request reports a
//! refusal in its own error format (see [`super::request`]).

mod auth;
mod limit;
mod negotiate;

pub(crate) use auth::{AuthLayer, Caller};
pub(crate) use limit::BodyLimitLayer;
pub(crate) use negotiate::{NegotiateLayer, Negotiated};
