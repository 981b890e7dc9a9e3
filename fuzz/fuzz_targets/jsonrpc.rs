//! Fuzz target: JSON-RPC at `/`: the envelope and params of every method of every generation.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentwire_fuzz::jsonrpc(data));
