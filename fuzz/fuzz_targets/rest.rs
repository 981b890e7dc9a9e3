//! Fuzz target: Any HTTP request to the server, HTTP+JSON routes above all: path, query, headers, body.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentwire_fuzz::rest(data));
