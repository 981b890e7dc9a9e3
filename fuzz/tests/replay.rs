//! Replays the checked-in corpus of every target through its harness: the seeds, and every input
//! that once crashed a target. A plain `cargo test` on the stable toolchain, no fuzzer needed.

use std::path::{Path, PathBuf};

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target)
}

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let entries = std::fs::read_dir(corpus(target)).unwrap_or_else(|e| panic!("corpus/{target}: {e}"));
    let mut inputs: Vec<_> = entries
        .map(|entry| entry.expect("a corpus entry").path())
        .map(|path| {
            let data = std::fs::read(&path).expect("a corpus file");
            (path, data)
        })
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn every_input_of_every_corpus_replays_without_a_panic() {
    for (target, harness) in agentwire_fuzz::TARGETS {
        let inputs = inputs(target);
        assert!(!inputs.is_empty(), "corpus/{target} is empty");
        for (path, data) in inputs {
            let replay = std::panic::catch_unwind(|| harness(&data));
            assert!(replay.is_ok(), "{} fails its target", path.display());
        }
    }
}

#[test]
fn the_corpus_holds_every_seed_as_generated() {
    for seed in agentwire_fuzz::seeds() {
        let path = corpus(seed.target).join(&seed.name);
        let stored = std::fs::read(&path).unwrap_or_default();
        assert!(stored == seed.data, "{} is missing or stale: run the seed_corpus example", path.display());
    }
}

#[test]
fn the_dictionary_is_as_generated() {
    let stored = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("a2a.dict")).unwrap_or_default();
    assert!(stored == agentwire_fuzz::dictionary(), "a2a.dict is missing or stale: run the seed_corpus example");
}
