//! MCP servers whose tools the model calls as the task's caller: a session per caller, opened
//! with the caller's own token (or one exchanged for it), so that the tool server sees who asked
//! and keeps one caller's work from another's.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use agentwire_client::CallerAuth;
use agentwire_mcp::McpTools;
use agentwire_types::{A2AError, RequestContext};
use tokio::time::Instant;

use crate::toolbox::Toolbox;

/// Callers whose sessions are kept open at once; past it, the one idle longest is closed.
const MAX_CALLERS: usize = 64;

/// How long a caller's sessions are kept without a task using them. Under the MCP servers' own
/// idle timeouts (agentwire's is 2 minutes), so that a kept session is one its server still has.
const KEPT_IDLE: Duration = Duration::from_secs(60);

/// How long opening a caller's session and listing its tools may take.
const OPEN_WITHIN: Duration = Duration::from_secs(30);

/// The MCP servers reached as each caller, and the sessions open for recent callers.
#[derive(Default)]
pub(crate) struct CallerTools {
    servers: Vec<CallerServer>,
    /// By the credentials the sessions were opened with: a caller's token, or its exchanged ones.
    open: Mutex<HashMap<Vec<u8>, Kept>>,
}

impl std::fmt::Debug for CallerTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.urls()).finish()
    }
}

struct CallerServer {
    url: String,
    auth: CallerAuth,
}

struct Kept {
    toolbox: Toolbox,
    used: Instant,
}

impl CallerTools {
    /// Adds the server at `url`, reached as each caller as `auth` says.
    pub(crate) fn add(&mut self, url: String, auth: CallerAuth) {
        self.servers.push(CallerServer { url, auth });
    }

    pub(crate) fn urls(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|server| server.url.as_str())
    }

    /// `shared` and the tools of these servers as the caller of `request` reaches them; or why the
    /// caller cannot reach them (no token, one not meant for a server, a refused exchange, a
    /// server that refuses the caller or does not answer).
    pub(crate) async fn toolbox(&self, shared: &Toolbox, request: &RequestContext) -> Result<Toolbox, A2AError> {
        if self.servers.is_empty() {
            return Ok(shared.clone());
        }
        let mut credentials = Vec::with_capacity(self.servers.len());
        for server in &self.servers {
            let party = format!("the MCP server {}", server.url);
            credentials.push(server.auth.authorization(&party, &request.metadata, request.principal.as_ref()).await?);
        }
        let key: Vec<u8> = credentials.iter().flat_map(|value| [value.as_bytes(), b"\n"].concat()).collect();
        if let Some(kept) = self.kept(&key) {
            return Ok(kept);
        }
        let opened = tokio::time::timeout(OPEN_WITHIN, self.open(shared, &credentials)).await.unwrap_or_else(|_| {
            Err(A2AError::internal(format!(
                "the MCP servers {:?} did not open a session for the caller within {} s",
                self.urls().collect::<Vec<_>>(),
                OPEN_WITHIN.as_secs()
            )))
        })?;
        self.keep(key, opened.clone());
        Ok(opened)
    }

    /// The caller's sessions, opened with `credentials` (one per server), their tools listed.
    async fn open(&self, shared: &Toolbox, credentials: &[http::HeaderValue]) -> Result<Toolbox, A2AError> {
        let mut sessions = Vec::with_capacity(self.servers.len());
        for (server, authorization) in self.servers.iter().zip(credentials) {
            // `Bearer TOKEN`, as the caller's authentication checked it or the exchange made it.
            let token = authorization.to_str().ok().and_then(|value| value.get(7..)).unwrap_or_default().trim();
            sessions.push(McpTools::connect(&server.url, Some(token)).await?);
        }
        shared.and(sessions).await
    }

    fn kept(&self, key: &[u8]) -> Option<Toolbox> {
        let mut open = self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        open.retain(|_, kept| now.duration_since(kept.used) < KEPT_IDLE);
        let kept = open.get_mut(key)?;
        kept.used = now;
        Some(kept.toolbox.clone())
    }

    fn keep(&self, key: Vec<u8>, toolbox: Toolbox) {
        let mut open = self.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if open.len() >= MAX_CALLERS && !open.contains_key(&key) {
            let oldest = open.iter().min_by_key(|(_, kept)| kept.used).map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                open.remove(&oldest);
            }
        }
        open.insert(key, Kept { toolbox, used: Instant::now() });
    }
}
