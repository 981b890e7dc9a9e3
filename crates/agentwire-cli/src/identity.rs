//! Who may call the agent, and how it proves itself: the authenticators `--auth`,
//! `--tls-client-ca` and the JWT options make, the `--signing-key`, `agentwire keygen` and
//! `agentwire jwt`.

use std::path::Path;

use agentwire_server::auth::{AnyAuth, CertificateAuth, JwtAuth, ScopeMap, StaticAuth};
use agentwire_server::jose::{Algorithm, PublicKeys, SigningKey, Validation};
use anyhow::Context as _;

use crate::opt::{JwtOpt, KeygenOpt, ServeOpt};

/// Every authenticator the options configure, any of which accepts a caller; `None` when none
/// is configured.
pub(crate) async fn authenticator(opt: &ServeOpt) -> anyhow::Result<Option<AnyAuth>> {
    let (jwt, static_specs): (Vec<&String>, Vec<&String>) = opt.auth.iter().partition(|spec| spec.starts_with("jwt:"));
    let mut any = AnyAuth::default();
    let mut configured = false;
    if !static_specs.is_empty() {
        any = any.or(static_auth(opt, &static_specs)?);
        configured = true;
    }
    for spec in jwt {
        any = any.or(jwt_auth(opt, &spec["jwt:".len()..]).await?);
        configured = true;
    }
    if opt.tls_client_ca.is_some() {
        any = any.or(CertificateAuth::new());
        configured = true;
    }
    if !configured && (opt.audience.is_some() || opt.jwks.is_some() || !opt.scopes.is_empty()) {
        anyhow::bail!("--audience, --jwks and --scope apply to JWTs: add --auth jwt:ISSUER_URL");
    }
    Ok(configured.then_some(any))
}

/// Static tokens and API keys. Refused with a shared store when a credential's principal would be
/// derived from a key of this process alone: the same token would be another principal on every
/// other instance.
fn static_auth(opt: &ServeOpt, specs: &[&String]) -> anyhow::Result<StaticAuth> {
    let mut auth = specs.iter().try_fold(StaticAuth::default(), |auth, spec| auth.with_spec(spec));
    if let Some(key) = &opt.principal_key {
        auth = auth.and_then(|auth| auth.with_principal_key(key));
    }
    let auth = auth.map_err(anyhow::Error::msg)?;
    if opt.shares_store() && auth.has_principals_of_this_process() {
        anyhow::bail!(
            "--auth has a credential without NAME=, whose principal is derived from a key: with a shared \
             store every instance must derive the same one. Set AGENTWIRE_PRINCIPAL_KEY (or --principal-key) \
             to one secret of 16 characters or more on every instance, e.g. `openssl rand -hex 32`, or name \
             the principal of each credential: bearer:NAME=TOKEN"
        );
    }
    Ok(auth)
}

/// JWTs of `issuer`, with keys by discovery, from `--jwks`, and the `--scope` rules.
async fn jwt_auth(opt: &ServeOpt, issuer: &str) -> anyhow::Result<JwtAuth> {
    let audience = opt
        .audience
        .as_deref()
        .context("--auth jwt:ISSUER_URL needs --audience: the `aud` this agent's tokens carry")?;
    let validation = Validation::new(issuer, audience);
    let auth = match opt.jwks.as_deref() {
        None => JwtAuth::discover(validation).await.context("cannot find the issuer's keys by OpenID discovery")?,
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            JwtAuth::from_jwks_url(validation, url).await.context("cannot fetch --jwks")?
        }
        Some(path) => {
            let document = std::fs::read(path).with_context(|| format!("cannot read {path}"))?;
            let keys = PublicKeys::from_jwks(&document).with_context(|| format!("{path} is not a JWK Set"))?;
            anyhow::ensure!(!keys.is_empty(), "{path} holds no signature key spoken here (EC, OKP or RSA)");
            JwtAuth::with_keys(validation, keys)
        }
    };
    let scopes = opt.scopes.iter().try_fold(ScopeMap::default(), |map, spec| map.with_spec(spec));
    Ok(auth.with_scopes(scopes.map_err(anyhow::Error::msg)?))
}

/// Whether `--auth jwt:` verifies callers: what a server needs to call others as its callers.
pub(crate) fn verifies_jwts(opt: &ServeOpt) -> bool {
    opt.auth.iter().any(|spec| spec.starts_with("jwt:"))
}

/// The token exchange of `--token-exchange-*` for `mode` (the option that asks for it, named in
/// errors); without --token-exchange-url, at the token endpoint the `--auth jwt:` issuer's OpenID
/// configuration names.
pub(crate) async fn token_exchange(opt: &ServeOpt, mode: &str) -> anyhow::Result<agentwire_client::TokenExchange> {
    let mut discovered = None;
    let issuers: Vec<&str> = opt.auth.iter().filter_map(|spec| spec.strip_prefix("jwt:")).collect();
    if opt.token_exchange.token_exchange_url.is_none() && issuers.len() > 1 {
        // Each issuer's tokens are for its own endpoint: one found for the first would be sent
        // the tokens of the others.
        anyhow::bail!("{mode}: with several --auth jwt: issuers, name the token endpoint with --token-exchange-url");
    }
    if let (None, [issuer]) = (&opt.token_exchange.token_exchange_url, issuers.as_slice()) {
        discovered = agentwire_server::auth::token_endpoint(issuer).await.with_context(|| {
            format!("{mode}: cannot find the issuer's token endpoint (or give --token-exchange-url)")
        })?;
        if let Some(url) = &discovered {
            tracing::info!(%url, "exchanging callers' tokens at the issuer's token endpoint");
        }
    }
    opt.token_exchange.exchange(mode, discovered.as_deref())
}

/// The `--signing-key`.
pub(crate) fn signing_key(path: &Path) -> anyhow::Result<SigningKey> {
    let pem = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    SigningKey::from_pem(&pem).with_context(|| format!("--signing-key {}", path.display()))
}

/// `agentwire keygen`: a new key, written where no file is.
pub(crate) fn keygen(opt: &KeygenOpt) -> anyhow::Result<()> {
    let alg: Algorithm = opt.alg.parse().with_context(|| format!("--alg {}: use ES256 or EdDSA", opt.alg))?;
    let pem = SigningKey::generate_pem(alg)?;
    let key = SigningKey::from_pem(&pem)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&opt.file).with_context(|| format!("cannot create {}", opt.file.display()))?;
    std::io::Write::write_all(&mut file, pem.as_bytes())?;
    println!("{} key {} written to {}", key.algorithm(), key.kid(), opt.file.display());
    println!("{}", serde_json::to_string(&key.public_key().to_jwk())?);
    Ok(())
}

/// `agentwire jwt`: a token of the options' claims, signed by `--key`.
pub(crate) fn jwt(opt: &JwtOpt) -> anyhow::Result<String> {
    let key = signing_key(&opt.key)?;
    let now = agentwire_server::jose::unix_now();
    let mut claims = serde_json::json!({
        "iss": opt.issuer, "sub": opt.subject, "iat": now, "exp": now + opt.ttl,
    });
    claims["aud"] = match opt.audience.as_slice() {
        [one] => one.as_str().into(),
        many => many.into(),
    };
    if let Some(scope) = &opt.scope {
        claims["scope"] = scope.as_str().into();
    }
    // Nested from the last actor out: {"sub": first, "act": {"sub": second, …}}.
    let act = opt.actors.iter().rev().fold(None, |inner: Option<serde_json::Value>, actor| {
        let mut act = serde_json::json!({ "sub": actor });
        if let Some(inner) = inner {
            act["act"] = inner;
        }
        Some(act)
    });
    if let Some(act) = act {
        claims["act"] = act;
    }
    Ok(key.sign_jwt(claims.as_object().context("claims are an object")?))
}
