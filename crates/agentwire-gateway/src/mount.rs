//! The operation services of a gateway: one per agent, and the directory that routes a request
//! naming an agent as its tenant (gRPC at the gateway's root) to it.

use agentwire_server::Operations;
use agentwire_store::registry::Visibility;
use agentwire_types::{A2aRequest, A2aResponse, AgentCard, RequestContext};
use tower::util::BoxCloneSyncService;
use tower::ServiceExt;

use crate::directory::{no_such_agent, Caller, Directory};
use crate::upstream::Upstream;

/// One agent behind the gateway: its cards are the agent's, which the gateway rewrites; every
/// other operation is `operations`' (the agent's own through its client, or the gateway's
/// mirror of its tasks). A caller the agent's `visibility` leaves out is told there is no such
/// agent (its HTTP routes are refused before, by the directory; gRPC reaches here).
///
/// Every call relayed to the agent carries the gateway's hop count ([`crate::hops`]), and
/// the caller's credentials when the agent is called as its callers ([`CallerAuth`](crate::CallerAuth));
/// a request that went through more than `max_hops` gateways already, or whose token is not meant
/// for the agent, is refused here.
pub(crate) fn mounted(upstream: Upstream, visibility: Visibility, operations: Operations, max_hops: u32) -> Operations {
    let service = tower::service_fn(move |(ctx, request): (RequestContext, A2aRequest)| {
        let (upstream, operations) = (upstream.clone(), operations.clone());
        let hidden = !visibility.is_public()
            && !request.operation().is_public()
            && !Caller::of(ctx.principal.as_ref()).sees(&visibility);
        async move {
            if hidden {
                return Err(no_such_agent(upstream.name()));
            }
            if let A2aRequest::GetAgentCard = request {
                return upstream.card().map(|card| A2aResponse::Card(Box::new(AgentCard::clone(&card))));
            }
            let hops = crate::hops::relayed(&ctx.metadata, max_hops)?;
            let headers = upstream.credentials(hops, &ctx.metadata, ctx.principal.as_ref()).await?;
            let relayed = async move {
                match request {
                    request @ A2aRequest::GetExtendedAgentCard(_) => {
                        match upstream.client()?.oneshot((ctx, request)).await.map_err(|e| upstream.failed(e))? {
                            A2aResponse::Card(card) => Ok(A2aResponse::Card(Box::new(upstream.rewrite().apply(*card)))),
                            other => Ok(other),
                        }
                    }
                    request => operations.oneshot((ctx, request)).await,
                }
            };
            agentwire_client::with_call_headers(headers, relayed).await
        }
    });
    BoxCloneSyncService::new(service)
}

/// The agents by name, for requests that name theirs as the tenant (gRPC at the gateway's root,
/// whose paths are the same for every agent), and the agent at the root for the others. The
/// tenant that chose the agent is not passed on: the agent gets the request as it gets one sent
/// to its path, so a task is the same task over every binding.
pub(crate) fn directory(agents: Directory, root: Option<Operations>) -> Operations {
    let service = tower::service_fn(move |(mut ctx, request): (RequestContext, A2aRequest)| {
        let routed = match agents.get(&ctx.tenant) {
            Some(agent) => {
                ctx.tenant.clear();
                Ok((agent.operations.clone(), request.without_tenant()))
            }
            None => root.clone().map(|root| (root, request)).ok_or_else(|| unknown_agent(&ctx.tenant, &agents)),
        };
        async move {
            let (agent, request) = routed?;
            agent.oneshot((ctx, request)).await
        }
    });
    BoxCloneSyncService::new(service)
}

/// The refusal of a request whose tenant names no agent here: it names the agents everyone may
/// see, and no other.
fn unknown_agent(tenant: &str, agents: &Directory) -> agentwire_types::A2AError {
    let names = agents.public_names().join(", ");
    if tenant.is_empty() {
        agentwire_types::A2AError::invalid_params(format!(
            "this gateway serves several agents ({names}): name one as the tenant, or call it at /agents/NAME"
        ))
    } else {
        no_such_agent(tenant)
    }
}
