//! What a caller asks to do, as an authenticator sees it: an A2A operation, or a call that one of
//! the server's other fronts serves.

use crate::Operation;

/// What a caller asks to do, for an authenticator to allow or refuse: an A2A operation on any
/// binding (an MCP tool call is the send it makes), or a call that another front serves (MCP
/// itself, a gateway's directory and registry, budgets). A scope map names each by its
/// [`name`](Access::name), so that each can need a scope of its own.
///
/// ```
/// use agentwire_types::{Access, Operation};
///
/// assert_eq!(Access::from(Operation::SendMessage).name(), "SendMessage");
/// assert_eq!(Access::named("RegisterAgent"), Some(Access::RegisterAgent));
/// assert!(Access::RegisterAgent.changes_state());
/// assert!(!Access::UseMcp.changes_state());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// An A2A operation.
    Operation(Operation),
    /// Opening an MCP session (`initialize`).
    OpenMcpSession,
    /// Any other request to an MCP endpoint: listing tools, a session's notifications, a call.
    /// The calls are asked about again as the A2A operations they make.
    UseMcp,
    /// Reading a gateway's directory: its list and search of agents, and a mounted agent that
    /// is not public.
    ListAgents,
    /// Registering an agent with a gateway's registry.
    RegisterAgent,
    /// Removing an agent from a gateway's registry.
    UnregisterAgent,
    /// Reading budgets and what was spent of them (`GET /budgets`).
    ReadBudgets,
    /// Resetting what a holder spent of its budget (`DELETE /budgets/...`).
    ResetBudgets,
}

impl Access {
    /// The accesses that are not A2A operations.
    pub const BESIDE_OPERATIONS: [Access; 7] = [
        Self::OpenMcpSession,
        Self::UseMcp,
        Self::ListAgents,
        Self::RegisterAgent,
        Self::UnregisterAgent,
        Self::ReadBudgets,
        Self::ResetBudgets,
    ];

    /// Every access: the operations, then those beside them.
    pub fn all() -> impl Iterator<Item = Access> {
        Operation::ALL.into_iter().map(Self::Operation).chain(Self::BESIDE_OPERATIONS)
    }

    /// The access called `name`: an operation's v1.0 name or one of the names above.
    pub fn named(name: &str) -> Option<Access> {
        Self::all().find(|access| access.name() == name)
    }

    /// Its name: the operation's v1.0 name ([`Operation::name`]), or the variant's.
    pub fn name(self) -> &'static str {
        match self {
            Self::Operation(operation) => operation.name(),
            Self::OpenMcpSession => "OpenMcpSession",
            Self::UseMcp => "UseMcp",
            Self::ListAgents => "ListAgents",
            Self::RegisterAgent => "RegisterAgent",
            Self::UnregisterAgent => "UnregisterAgent",
            Self::ReadBudgets => "ReadBudgets",
            Self::ResetBudgets => "ResetBudgets",
        }
    }

    /// Whether anyone may make it, authenticated or not: the public card.
    pub fn is_public(self) -> bool {
        matches!(self, Self::Operation(operation) if operation.is_public())
    }

    /// Whether it changes what the server holds, rather than only reading: a token needs the
    /// write scope for it.
    pub fn changes_state(self) -> bool {
        match self {
            Self::Operation(operation) => operation.changes_state(),
            Self::RegisterAgent | Self::UnregisterAgent | Self::ResetBudgets => true,
            Self::OpenMcpSession | Self::UseMcp | Self::ListAgents | Self::ReadBudgets => false,
        }
    }
}

impl From<Operation> for Access {
    fn from(operation: Operation) -> Self {
        Self::Operation(operation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_access_is_found_by_its_name_and_the_names_differ() {
        let names: std::collections::BTreeSet<_> = Access::all().map(Access::name).collect();
        assert_eq!(names.len(), Access::all().count());
        assert!(Access::all().all(|access| Access::named(access.name()) == Some(access)));
        assert_eq!(Access::named("everything"), None);
    }
}
