//! The hostile-peer kit: each surface against what an outside party controls (a model server, an
//! upstream agent or registrant, an MCP client, a web page, a caller), one module per peer.
//!
//! Every case runs the real `agentwire` binary on loopback (or the build `AGENTWIRE_BIN` names,
//! such as a release build), is bounded in time, and reads memory from the server's own
//! `/proc/PID/status`. A new surface lands with its row here.

mod auth;
mod budgets;
mod console;
mod long_poll;
mod mcp;
pub(crate) mod model;
mod rebinding;
mod registry;
pub(crate) mod usage;
