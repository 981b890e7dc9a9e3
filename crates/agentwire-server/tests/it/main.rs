//! The server's integration tests, one module per subject, linked as one binary: servers on
//! loopback ports, talked to over the wire.

mod agent_card;
mod auth_scoping;
mod blocking_send;
mod byte_budgets;
mod cancel;
mod cors;
mod dialects;
mod error_responses;
mod expiry;
mod generation;
mod grpc;
mod grpc_v03;
mod idempotency;
mod identity;
mod jsonrpc_operations;
mod limits;
mod push_delivery;
mod rest_operations;
mod sse_streams;
mod timeouts;
mod transport;
