//! Where callers' tokens are exchanged (RFC 8693) for the parties a server calls as them: the
//! agents of `gateway --upstream-auth exchange`, the MCP servers of `--mcp-auth exchange`.

use agentwire_client::TokenExchange;
use anyhow::Context as _;

/// The token endpoint, and this server's client there.
#[derive(Debug, clap::Args)]
pub(crate) struct TokenExchangeOpt {
    /// The token endpoint that exchanges callers' tokens (--upstream-auth exchange, registrations
    /// with `"callerAuth": "exchange"`, --mcp-auth exchange). Default: the `token_endpoint` of the
    /// --auth jwt: issuer's OpenID configuration (with one jwt: issuer only).
    #[arg(long, value_name = "URL", hide_short_help = true)]
    pub(crate) token_exchange_url: Option<String>,

    /// This server's client id at the token endpoint.
    #[arg(long, value_name = "ID", hide_short_help = true)]
    pub(crate) token_exchange_client: Option<String>,

    /// This server's client secret at the token endpoint. Prefer the environment variable.
    #[arg(
        long,
        value_name = "SECRET",
        env = "AGENTWIRE_TOKEN_EXCHANGE_SECRET",
        hide_env_values = true,
        hide_short_help = true
    )]
    pub(crate) token_exchange_secret: Option<String>,

    /// The scopes (space-separated) asked for in every exchange.
    #[arg(long, value_name = "SCOPE", hide_short_help = true)]
    pub(crate) token_exchange_scope: Option<String>,
}

impl TokenExchangeOpt {
    /// Whether any of the exchange's own options is given (the secret may come from the
    /// environment of a server that exchanges nothing).
    pub(crate) fn given(&self) -> bool {
        self.token_exchange_url.is_some() || self.token_exchange_client.is_some() || self.token_exchange_scope.is_some()
    }

    /// The exchange the options describe, for `mode` (the option that asks for it, named in
    /// errors), at `discovered` when --token-exchange-url is not given.
    pub(crate) fn exchange(&self, mode: &str, discovered: Option<&str>) -> anyhow::Result<TokenExchange> {
        let url = self.token_exchange_url.as_deref().or(discovered).with_context(|| {
            format!("{mode} needs --token-exchange-url (or an --auth jwt: issuer whose configuration names its token_endpoint)")
        })?;
        let client = self
            .token_exchange_client
            .as_deref()
            .with_context(|| format!("{mode} needs --token-exchange-client (and its secret)"))?;
        let secret = self.token_exchange_secret.as_deref().with_context(|| {
            format!("{mode} needs the client's secret: AGENTWIRE_TOKEN_EXCHANGE_SECRET or --token-exchange-secret")
        })?;
        let exchange = TokenExchange::new(url, client, secret);
        Ok(match &self.token_exchange_scope {
            Some(scope) => exchange.scope(scope),
            None => exchange,
        })
    }
}
