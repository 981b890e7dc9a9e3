//! The gateway's hop count: each call it relays to an agent carries `A2A-Gateway-Hops`, one more
//! than the request it relays, and a request that arrives past the limit is refused before it is
//! relayed. An agent that calls back into a gateway (registered at the gateway's own URL under
//! another name, or at another gateway that relays to this one) thus ends in an error after a
//! few hops instead of holding connections round the loop.

use agentwire_types::A2AError;
use http::{HeaderMap, HeaderName, HeaderValue};

/// The header that counts the gateways a request went through.
pub const HOPS_HEADER: &str = "a2a-gateway-hops";

/// How many gateways a request may have gone through before one relays it again, by default.
pub const DEFAULT_MAX_HOPS: u32 = 8;

/// The hops `metadata` (a request's headers) says it made: none without the header.
fn hops_of(metadata: &HeaderMap) -> Result<u32, A2AError> {
    let Some(value) = metadata.get(HOPS_HEADER) else { return Ok(0) };
    value.to_str().ok().and_then(|text| text.trim().parse().ok()).ok_or_else(|| {
        A2AError::invalid_request(format!("{HOPS_HEADER} is the number of gateways a request went through"))
    })
}

/// The headers a call relaying the request of `metadata` carries: its hop count plus one; or
/// the refusal of a request that went through more than `max` gateways already.
pub(crate) fn relayed(metadata: &HeaderMap, max: u32) -> Result<HeaderMap, A2AError> {
    let hops = hops_of(metadata)?;
    if hops > max {
        return Err(A2AError::invalid_request(format!(
            "this request went through {hops} gateways ({HOPS_HEADER}), more than the {max} allowed: \
             an agent registered here probably calls a gateway that calls it back"
        )));
    }
    let mut headers = HeaderMap::new();
    headers.insert(HeaderName::from_static(HOPS_HEADER), HeaderValue::from(hops.saturating_add(1)));
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_hops(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOPS_HEADER, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn each_relay_counts_one_more_hop_up_to_the_limit() {
        assert_eq!(relayed(&HeaderMap::new(), 8).unwrap()[HOPS_HEADER], "1");
        assert_eq!(relayed(&with_hops("8"), 8).unwrap()[HOPS_HEADER], "9");
        let refused = relayed(&with_hops("9"), 8).unwrap_err();
        assert!(refused.message().contains("more than the 8 allowed"), "{}", refused.message());
        assert!(relayed(&with_hops("many"), 8).is_err());
        assert!(relayed(&with_hops("-1"), 8).is_err());
    }
}
