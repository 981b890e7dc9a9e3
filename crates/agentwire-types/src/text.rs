//! Text as every front shows it, each by one rule: clipped to a size ([`clip`]), made a name
//! ([`slug`]), and joined from a message's parts ([`text_of`]).

use crate::Part;

/// The mark a clipped text ends with.
pub const CLIPPED: char = '…';

/// `text` cut to at most `max_bytes` bytes at a character boundary, then [`CLIPPED`] when
/// anything was cut. Bytes rather than characters, because the limit bounds memory and what is
/// sent; a text within it is returned as it is.
///
/// ```
/// use agentwire_types::text::clip;
///
/// assert_eq!(clip("short".into(), 10), "short");
/// assert_eq!(clip("héllo".into(), 2), "h…", "never inside a character");
/// ```
pub fn clip(mut text: String, max_bytes: usize) -> String {
    if text.len() > max_bytes {
        let end = (0..=max_bytes).rev().find(|&end| text.is_char_boundary(end)).unwrap_or(0);
        text.truncate(end);
        text.push(CLIPPED);
    }
    text
}

/// The longest [`slug`].
pub const MAX_SLUG: usize = 64;

/// `text` as a name for a path segment, a tool or a registry entry: lower-case ASCII letters and
/// digits, each run of anything else one `-`, none at either end, at most [`MAX_SLUG`] bytes.
/// Empty when `text` has no ASCII letter or digit.
///
/// ```
/// use agentwire_types::text::slug;
///
/// assert_eq!(slug("Weather Bot (EU)"), "weather-bot-eu");
/// assert_eq!(slug("127.0.0.1:9001"), "127-0-0-1-9001");
/// assert_eq!(slug("日本"), "");
/// ```
pub fn slug(text: &str) -> String {
    let mut slug = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.truncate(MAX_SLUG);
    slug.trim_end_matches('-').to_owned()
}

/// The text parts of `parts`, one per line (as the official SDKs join a message's text).
///
/// ```
/// use agentwire_types::text::text_of;
/// use agentwire_types::Part;
///
/// assert_eq!(text_of(&[Part::text("a"), Part::data(serde_json::json!({})), Part::text("b")]), "a\nb");
/// ```
pub fn text_of(parts: &[Part]) -> String {
    let mut texts = parts.iter().filter_map(Part::as_text);
    let mut joined = texts.next().unwrap_or_default().to_owned();
    for text in texts {
        joined.push('\n');
        joined.push_str(text);
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clipped_text_is_at_most_its_limit_and_the_mark() {
        for max in 0..12 {
            let clipped = clip("añb€c".repeat(2), max);
            assert!(clipped.len() <= max + CLIPPED.len_utf8(), "{max}: {clipped}");
        }
        assert_eq!(clip(String::new(), 0), "");
    }

    #[test]
    fn slugs_are_names_of_their_own_characters_only() {
        assert_eq!(slug("  --Currency Desk--  "), "currency-desk");
        assert_eq!(slug(&"x".repeat(100)).len(), MAX_SLUG);
        assert_eq!(slug(&format!("{}!y", "x".repeat(63))), "x".repeat(63), "no `-` at the cut");
        assert_eq!(slug("<script>alert(1)</script>"), "script-alert-1-script");
    }
}
