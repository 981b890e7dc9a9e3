//! The client's integration tests, one module per subject, linked as one binary: the client against
//! servers on loopback ports, agentwire's own and the official Python SDK's.

mod common;

mod auth_required;
mod delegation;
mod discovery;
mod early_end;
mod identity;
mod operations;
mod python_sdk;
mod resume;
mod retry;
#[cfg(feature = "webhook")]
mod webhook;
