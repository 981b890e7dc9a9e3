//! The `agentwire` binary's integration tests, one module per subject, linked as one binary
//! (`traces.rs`, which installs the process's global tracer, is a binary of its own).

mod common;

mod bounded_store;
mod browser_origins;
mod budgets;
mod caller_tokens;
mod client_commands;
mod connection_errors;
mod durability;
mod early_end;
mod exit_codes;
mod gateway_start;
mod grpc_port;
mod help;
mod hostile;
mod lifecycle;
mod mcp;
mod model;
mod model_callers;
mod observability;
mod open_files;
mod plain_logs;
mod push_outbox;
mod registry;
mod scale_out;
mod serve_usage;
mod shared_state;
mod shutdown;
mod stream_text;
mod terminal;
mod text_output;
mod usage;
mod waiting_send;
