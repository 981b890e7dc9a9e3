//! What a server runs on: a store, with the bus and cancel signal that reach every process serving
//! it, made together so that they cannot be paired wrongly.

use std::sync::Arc;

use crate::registry::{MemoryRegistry, RegistryStore};
use crate::{CancelSignal, EventBus, LocalBus, LocalCancel, PushConfigStore, SharedState, TaskStore};

/// A store's tasks and push configs, with the [`EventBus`] that announces their committed events
/// and the [`CancelSignal`] that stops their executions, wherever the store is served from.
///
/// Each store makes its own: [`MemoryStore::backend`](crate::MemoryStore::backend), `SqliteStore::backend` (served by one
/// process, with the buses of that process) and `PostgresStore::backend` (served by several, with
/// a bus and cancel signal that cross them). So a store shared by several processes never ends up
/// with a bus that reaches only one. A store written outside this crate comes with its own bus and
/// signal through [`Backend::from_parts`].
///
/// ```
/// use agentwire_store::{Backend, MemoryStore};
///
/// let backend: Backend = MemoryStore::default().backend();
/// # let _ = backend;
/// ```
#[derive(Clone)]
pub struct Backend {
    tasks: Arc<dyn TaskStore>,
    push_configs: Arc<dyn PushConfigStore>,
    bus: Arc<dyn EventBus>,
    cancel: Arc<dyn CancelSignal>,
    shared: Option<Arc<dyn SharedState>>,
    registry: Arc<dyn RegistryStore>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend").finish_non_exhaustive()
    }
}

impl Backend {
    /// A store with the bus and cancel signal that reach every process serving it: for a store
    /// written outside this crate. A store served by one process takes [`LocalBus`] and
    /// [`LocalCancel`].
    pub fn from_parts<S>(store: S, bus: impl EventBus, cancel: impl CancelSignal) -> Self
    where
        S: TaskStore + PushConfigStore + Clone,
    {
        Self {
            tasks: Arc::new(store.clone()),
            push_configs: Arc::new(store),
            bus: Arc::new(bus),
            cancel: Arc::new(cancel),
            shared: None,
            registry: Arc::new(MemoryRegistry::default()),
        }
    }

    /// The same backend, keeping a gateway's registry of agents in `registry` rather than in
    /// this process's memory.
    pub fn with_registry(mut self, registry: impl RegistryStore) -> Self {
        self.registry = Arc::new(registry);
        self
    }

    /// Where a gateway keeps its registry of agents: the store's own for SQLite and PostgreSQL
    /// (shared by every instance), this process's memory otherwise.
    pub fn registry(&self) -> &Arc<dyn RegistryStore> {
        &self.registry
    }

    /// The same backend, whose instances agree on `shared` through the store: for a store
    /// served by several processes at once.
    pub fn with_shared(mut self, shared: impl SharedState) -> Self {
        self.shared = Some(Arc::new(shared));
        self
    }

    /// What the instances serving the store agree on through it; `None` for a store served by
    /// one process.
    pub fn shared(&self) -> Option<&Arc<dyn SharedState>> {
        self.shared.as_ref()
    }

    /// Whether several processes may serve the store at once: then none may take the tasks in
    /// progress for its own leftovers, and what they must agree on is [`shared`](Self::shared).
    ///
    /// ```
    /// assert!(!agentwire_store::MemoryStore::default().backend().is_shared());
    /// ```
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// A store served by this process alone, with this process's bus and cancel signal.
    pub(crate) fn local<S>(store: S) -> Self
    where
        S: TaskStore + PushConfigStore + Clone,
    {
        Self::from_parts(store, LocalBus::default(), LocalCancel::default())
    }

    /// Whether the backend can serve now: the store answers and, for a store shared by several
    /// processes, the notices between them arrive. The error says what is wrong.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let backend = agentwire_store::MemoryStore::default().backend();
    /// assert!(backend.check().await.is_ok());
    /// # });
    /// ```
    pub async fn check(&self) -> Result<(), String> {
        readiness(&*self.tasks, &*self.bus).await
    }

    /// Where tasks and their event logs are kept.
    pub fn tasks(&self) -> &Arc<dyn TaskStore> {
        &self.tasks
    }

    /// Where push configs are kept: the same store as the tasks.
    pub fn push_configs(&self) -> &Arc<dyn PushConfigStore> {
        &self.push_configs
    }

    /// How committed events reach the readers of a task.
    pub fn bus(&self) -> &Arc<dyn EventBus> {
        &self.bus
    }

    /// How a cancel reaches the executions of a task.
    pub fn cancel(&self) -> &Arc<dyn CancelSignal> {
        &self.cancel
    }
}

/// Whether a store and its bus can serve now: [`Backend::check`], for a holder of the parts.
pub async fn readiness(tasks: &dyn TaskStore, bus: &dyn EventBus) -> Result<(), String> {
    if let Err(error) = tasks.check().await {
        return Err(format!("the store does not answer: {error}"));
    }
    if !bus.connected() {
        return Err("notices from the other instances do not arrive".to_owned());
    }
    Ok(())
}
