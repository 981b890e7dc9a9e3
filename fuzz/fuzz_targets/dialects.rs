//! Fuzz target: The dialect codecs: answers in every wire form, cards, push bodies, v0.3 and legacy params.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentwire_fuzz::dialects(data));
