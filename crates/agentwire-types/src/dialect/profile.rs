//! The protocol generations, and every rule that differs between them, answered by name.
//!
//! The core, the encoders and the client ask a generation's [`Profile`] instead of testing which
//! generation a request is in: a rule then has one home, and a new generation is one more
//! profile.

use crate::{StreamResponse, TaskState};

/// A generation of the protocol, as a request's method name or route tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// v1.0: `SendMessage`, ProtoJSON shapes.
    #[default]
    V1,
    /// v0.3: `message/send`, `kind`-tagged shapes.
    V03,
    /// The `tasks/send` family (with v0.1 shapes).
    Legacy,
}

impl Dialect {
    /// Every generation.
    pub const ALL: [Dialect; 3] = [Dialect::V1, Dialect::V03, Dialect::Legacy];

    /// The rules of this generation.
    pub const fn profile(self) -> &'static Profile {
        match self {
            Self::V1 => &V1,
            Self::V03 => &V03,
            Self::Legacy => &LEGACY,
        }
    }

    /// A short name (`v1`, `v03`, `legacy`), for logs and storage.
    pub const fn name(self) -> &'static str {
        match self {
            Self::V1 => "v1",
            Self::V03 => "v03",
            Self::Legacy => "legacy",
        }
    }

    /// The version the generation is known by: `1.0`, `0.3`, or `legacy` for the `tasks/send`
    /// family, which names none (metrics label operations with it).
    ///
    /// ```
    /// assert_eq!(agentwire_types::Dialect::V03.version(), "0.3");
    /// ```
    pub const fn version(self) -> &'static str {
        match self {
            Self::V1 => "1.0",
            Self::V03 => "0.3",
            Self::Legacy => "legacy",
        }
    }

    /// The generation [`Dialect::name`] names.
    ///
    /// ```
    /// use agentwire_types::Dialect;
    ///
    /// assert_eq!(Dialect::from_name("v03"), Some(Dialect::V03));
    /// assert_eq!(Dialect::from_name("v2"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|dialect| dialect.name() == name)
    }
}

/// What a subscription to a task that has ended gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndedSubscription {
    /// UnsupportedOperation.
    Refused,
    /// The task as it ended, then the stream closes.
    Snapshot,
}

/// What a webhook of a push config made in the generation receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushPayload {
    /// Each event, as a `StreamResponse`.
    Event,
    /// The whole task, as it is when the delivery is made.
    Task,
}

/// How an error found before a stream starts reaches a streaming JSON-RPC call's client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamErrors {
    /// As a plain JSON-RPC error response.
    Plain,
    /// As the one event of an event stream: the generation's clients read every answer to a
    /// streaming method as events.
    AsEvent,
}

/// Which agent card a client of the generation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardForm {
    /// v1.0 members only.
    V1,
    /// v1.0 members and v0.3's (`url`, `preferredTransport`, `additionalInterfaces`, …), so that
    /// every client generation can read it.
    Combined,
}

/// The rules of one protocol generation. Get one with [`Dialect::profile`].
///
/// ```
/// use agentwire_types::dialect::EndedSubscription;
/// use agentwire_types::Dialect;
///
/// assert_eq!(Dialect::V1.profile().subscribe_to_ended(), EndedSubscription::Refused);
/// assert_eq!(Dialect::V03.profile().subscribe_to_ended(), EndedSubscription::Snapshot);
/// assert!(Dialect::Legacy.profile().client_names_new_tasks());
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct Profile {
    dialect: Dialect,
    reply_as_task: bool,
    client_names_new_tasks: bool,
    ended_subscription: EndedSubscription,
    push_payload: PushPayload,
    unknown_config_id_is_first: bool,
    stream_errors: StreamErrors,
    deletion_is_empty_object: bool,
    card_form: CardForm,
    card_call_falls_back_to_public: bool,
    extended_by_draft_1_1: bool,
}

const V1: Profile = Profile {
    dialect: Dialect::V1,
    reply_as_task: false,
    client_names_new_tasks: false,
    ended_subscription: EndedSubscription::Refused,
    push_payload: PushPayload::Event,
    unknown_config_id_is_first: false,
    stream_errors: StreamErrors::Plain,
    deletion_is_empty_object: true,
    card_form: CardForm::V1,
    card_call_falls_back_to_public: false,
    extended_by_draft_1_1: true,
};

const V03: Profile = Profile {
    dialect: Dialect::V03,
    reply_as_task: false,
    client_names_new_tasks: false,
    ended_subscription: EndedSubscription::Snapshot,
    push_payload: PushPayload::Task,
    unknown_config_id_is_first: true,
    stream_errors: StreamErrors::AsEvent,
    deletion_is_empty_object: false,
    card_form: CardForm::Combined,
    card_call_falls_back_to_public: true,
    extended_by_draft_1_1: false,
};

const LEGACY: Profile = Profile {
    dialect: Dialect::Legacy,
    reply_as_task: true,
    client_names_new_tasks: true,
    ended_subscription: EndedSubscription::Snapshot,
    push_payload: PushPayload::Task,
    unknown_config_id_is_first: true,
    stream_errors: StreamErrors::AsEvent,
    deletion_is_empty_object: false,
    card_form: CardForm::Combined,
    card_call_falls_back_to_public: true,
    extended_by_draft_1_1: false,
};

impl Profile {
    /// The generation these rules are for.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether a stream (a streaming send or a subscription) ends after `event`: after a direct
    /// message reply (a message that belongs to no task), a terminal state, or INPUT_REQUIRED
    /// (the client must speak). AUTH_REQUIRED keeps the stream open, since credentials may arrive
    /// out of band; a task's messages do not close it. Where a generation marks the closing event
    /// `final`, this is the one event it marks.
    ///
    /// ```
    /// use agentwire_types::{Dialect, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
    ///
    /// let update = |state| {
    ///     let status = TaskStatus { state, ..TaskStatus::default() };
    ///     StreamResponse::StatusUpdate(TaskStatusUpdateEvent { status, ..Default::default() })
    /// };
    /// let v03 = Dialect::V03.profile();
    /// assert!(v03.closes_stream(&update(TaskState::InputRequired)));
    /// assert!(!v03.closes_stream(&update(TaskState::AuthRequired)));
    /// assert!(v03.closes_stream(&update(TaskState::Completed)));
    /// ```
    pub fn closes_stream(&self, event: &StreamResponse) -> bool {
        match event {
            StreamResponse::Message(message) => message.task_id.is_empty(),
            _ => event.task_state().is_some_and(|state| self.closes_stream_at(state)),
        }
    }

    /// Whether a stream ends after an event that leaves its task in `state` (see
    /// [`Profile::closes_stream`]).
    pub fn closes_stream_at(&self, state: TaskState) -> bool {
        state.is_terminal() || state == TaskState::InputRequired
    }

    /// Whether a send answers with a task even when the agent replies with a message (which
    /// then goes into the task's status and history), rather than with the message itself.
    pub fn reply_as_task(&self) -> bool {
        self.reply_as_task
    }

    /// Whether a message naming a task that does not exist creates it under that id (and a
    /// message without an id gets one), rather than being TaskNotFound.
    pub fn client_names_new_tasks(&self) -> bool {
        self.client_names_new_tasks
    }

    /// What subscribing to a task that has ended gives.
    pub fn subscribe_to_ended(&self) -> EndedSubscription {
        self.ended_subscription
    }

    /// What the webhooks of push configs made in this generation receive.
    pub fn push_payload(&self) -> PushPayload {
        self.push_payload
    }

    /// Whether a push config asked for by an id the task has no config of is the task's first
    /// config, rather than not found: clients of the generation ask for "the" config of a task by
    /// a name of their own (such as `default`). A config asked for without an id is the first in
    /// every generation.
    pub fn unknown_config_id_is_first(&self) -> bool {
        self.unknown_config_id_is_first
    }

    /// How a streaming JSON-RPC call reports an error found before its stream starts.
    pub fn stream_errors_before_start(&self) -> StreamErrors {
        self.stream_errors
    }

    /// Whether a JSON-RPC deletion answers with `{}` (else `null`).
    pub fn deletion_is_empty_object(&self) -> bool {
        self.deletion_is_empty_object
    }

    /// Which card the generation's clients read.
    pub fn card_form(&self) -> CardForm {
        self.card_form
    }

    /// Whether the generation's card call gives the public card where the agent has no extended
    /// one (v0.3's `GetAgentCard`), rather than an error.
    pub fn card_call_falls_back_to_public(&self) -> bool {
        self.card_call_falls_back_to_public
    }

    /// Whether the dev-1.1 draft (`A2A-Version: 1.1`) extends this generation's operations:
    /// v1.0's alone; a method of an older generation keeps its own rules whatever version is
    /// asked for.
    pub fn extended_by_draft_1_1(&self) -> bool {
        self.extended_by_draft_1_1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for dialect in Dialect::ALL {
            assert_eq!(Dialect::from_name(dialect.name()), Some(dialect));
            assert_eq!(dialect.profile().dialect(), dialect);
        }
    }
}
