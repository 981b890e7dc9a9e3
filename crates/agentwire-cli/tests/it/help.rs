//! `-h` is a page of the options most runs need, `--help` all of them; an environment variable
//! that is not set is named as such, not as one set to nothing (`[env: NAME=]`).

use std::process::Command;

use crate::common::binary;

fn help(args: &[&str]) -> String {
    let output = Command::new(binary())
        .args(args)
        .env_remove("AGENTWIRE_HTTP")
        .env_remove("AGENTWIRE_STORE")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("agentwire runs");
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[test]
fn short_help_is_a_page_and_long_help_has_every_option() {
    for command in ["serve", "gateway"] {
        let short = help(&[command, "-h"]);
        let long = help(&[command, "--help"]);
        assert!(short.lines().count() <= 60, "{command} -h, {} lines:\n{short}", short.lines().count());
        for common in ["--http", "--store", "--auth", "--tls-cert"] {
            assert!(short.contains(common), "{command} -h lacks {common}:\n{short}");
        }
        for rare in
            ["--max-body-size", "--principal-key", "--mcp-session-idle", "--max-streams", "--jwks", "--budget-admin"]
        {
            assert!(!short.contains(rare), "{command} -h shows {rare}");
            assert!(long.contains(rare), "{command} --help lacks {rare}");
        }
        assert!(short.contains("--help"), "{command} -h says where the rest is:\n{short}");
    }
    assert!(help(&["gateway", "--help"]).contains("--upstream-allow-host"));
    assert!(help(&["serve", "--help"]).contains("--model-idle-timeout"));
}

#[test]
fn an_unset_variable_is_named_without_a_value() {
    for args in [["serve", "-h"], ["serve", "--help"], ["gateway", "--help"]] {
        let text = help(&args);
        assert!(text.contains("[env: AGENTWIRE_HTTP]"), "{args:?}:\n{text}");
        let named = text.split("[env: ").skip(1).map(|rest| rest.split(']').next().unwrap_or(rest));
        for variable in named {
            assert!(!variable.ends_with('='), "{args:?}: [env: {variable}]");
        }
    }
    let output = Command::new(binary()).args(["serve", "-h"]).env("AGENTWIRE_HTTP", "127.0.0.1:9999").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("[env: AGENTWIRE_HTTP=127.0.0.1:9999]"), "a variable that is set shows its value:\n{text}");
}
