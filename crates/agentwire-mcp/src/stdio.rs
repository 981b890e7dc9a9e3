//! MCP over stdio: for desktop clients that start a command and talk to it on its standard
//! input and output.

use rmcp::service::ServerInitializeError;
use rmcp::ServiceExt as _;

use crate::McpServer;

/// Serves `server` on this process's standard input and output until the client closes them.
/// Nothing else may write to standard output meanwhile (log to standard error).
pub async fn serve_stdio(server: McpServer) -> std::io::Result<()> {
    let running = match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => running,
        // A client that closes the pipe before it starts a session (one that only probed the
        // server) ends the serving as a closed session does.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(std::io::Error::other(error)),
    };
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
