//! `agentwire serve` with options it cannot serve with says so before it opens its store: the
//! directory it runs in is left as it was, with no `agentwire.db` and no side files.

use std::process::Command;

use crate::common::{binary, TempDir};

/// Runs `agentwire serve ARGS…` in `dir`; returns its exit status and what it printed.
fn serve(dir: &TempDir, args: &[&str]) -> (i32, String) {
    let output = Command::new(binary())
        .arg("serve")
        .args(["--http", "127.0.0.1:0"])
        .args(args)
        .current_dir(&dir.0)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("AGENTWIRE_STORE")
        .output()
        .expect("agentwire runs");
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().expect("an exit status"), printed)
}

fn files(dir: &TempDir) -> Vec<String> {
    let entries = std::fs::read_dir(&dir.0).unwrap();
    entries.map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn the_model_agent_without_its_server_and_model_is_a_usage_error() {
    let dir = TempDir::new("serve-usage-model");
    let (code, printed) = serve(&dir, &["--agent", "openai"]);
    assert_eq!(code, 2, "{printed}");
    assert!(printed.contains("--base-url") && printed.contains("--model"), "{printed}");
    assert!(printed.contains("Usage: agentwire serve"), "{printed}");
    assert_eq!(files(&dir), Vec::<String>::new(), "{printed}");
}

#[test]
fn options_found_wrong_after_parsing_leave_no_store_behind() {
    let dir = TempDir::new("serve-usage-checked");
    let missing = dir.0.join("missing-card.json").display().to_string();
    for args in [&["--card", missing.as_str()][..], &["--auth", "bogus:x"]] {
        let (code, printed) = serve(&dir, args);
        assert_ne!(code, 0, "{args:?}: {printed}");
        assert!(printed.contains("error:"), "{args:?}: {printed}");
        assert_eq!(files(&dir), Vec::<String>::new(), "{args:?}: {printed}");
    }
}
