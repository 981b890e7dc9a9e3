//! The conversions of the messages that `lf.a2a.v1` and `a2a.v1` define alike: the same fields
//! under the same names, so one body serves both packages.

/// Implements, for the generated package `$pb`, the conversions of Artifact, Task, the two
/// update events, AgentExtension, AgentCardSignature and SecurityScheme.
///
/// The bodies name only the helpers of [`crate::convert`], the package's own TaskStatus
/// conversion, which is where the packages differ (v0.3 calls the status message `update`), and
/// `flows_to_proto` and `flows_from_proto` of the module `$flows` (v1.0's OAuth flows have more
/// members). `$generation` names the field of the dev-1.1 draft's generation, in a package that
/// has it (v0.3's has not).
macro_rules! conversions_alike_in_both_packages {
    ($pb:ident, $flows:ident $(, $generation:ident)?) => {
        const _: () = {
            use ::agentwire_types as t;
            use ::agentwire_types::A2AError;
            use $crate::convert::{each, each_into, known_generation, metadata, metadata_to_proto, Result};

            fn status(s: Option<$pb::TaskStatus>) -> Result<t::TaskStatus> {
                s.map(t::TaskStatus::try_from).transpose().map(Option::unwrap_or_default)
            }

            impl From<t::Artifact> for $pb::Artifact {
                fn from(a: t::Artifact) -> Self {
                    $pb::Artifact {
                        artifact_id: a.artifact_id,
                        name: a.name,
                        description: a.description,
                        parts: each_into(a.parts),
                        metadata: metadata_to_proto(a.metadata),
                        extensions: a.extensions,
                    }
                }
            }

            impl TryFrom<$pb::Artifact> for t::Artifact {
                type Error = A2AError;

                fn try_from(a: $pb::Artifact) -> Result<Self> {
                    Ok(t::Artifact {
                        artifact_id: a.artifact_id,
                        name: a.name,
                        description: a.description,
                        parts: each(a.parts)?,
                        metadata: metadata(a.metadata),
                        extensions: a.extensions,
                    })
                }
            }

            impl From<t::Task> for $pb::Task {
                fn from(task: t::Task) -> Self {
                    $pb::Task {
                        id: task.id,
                        context_id: task.context_id,
                        status: Some(task.status.into()),
                        artifacts: each_into(task.artifacts),
                        history: each_into(task.history),
                        metadata: metadata_to_proto(task.metadata),
                        $($generation: task.$generation.unwrap_or_default(),)?
                    }
                }
            }

            impl TryFrom<$pb::Task> for t::Task {
                type Error = A2AError;

                fn try_from(task: $pb::Task) -> Result<Self> {
                    Ok(t::Task {
                        id: task.id,
                        context_id: task.context_id,
                        status: status(task.status)?,
                        artifacts: each(task.artifacts)?,
                        history: each(task.history)?,
                        metadata: metadata(task.metadata),
                        generation: known_generation(&[$(task.$generation)?]),
                    })
                }
            }

            impl TryFrom<$pb::TaskStatusUpdateEvent> for t::TaskStatusUpdateEvent {
                type Error = A2AError;

                fn try_from(e: $pb::TaskStatusUpdateEvent) -> Result<Self> {
                    Ok(t::TaskStatusUpdateEvent {
                        task_id: e.task_id,
                        context_id: e.context_id,
                        status: status(e.status)?,
                        metadata: metadata(e.metadata),
                        generation: known_generation(&[$(e.$generation)?]),
                    })
                }
            }

            impl From<t::TaskArtifactUpdateEvent> for $pb::TaskArtifactUpdateEvent {
                fn from(e: t::TaskArtifactUpdateEvent) -> Self {
                    $pb::TaskArtifactUpdateEvent {
                        task_id: e.task_id,
                        context_id: e.context_id,
                        artifact: Some(e.artifact.into()),
                        append: e.append,
                        last_chunk: e.last_chunk,
                        metadata: metadata_to_proto(e.metadata),
                        $($generation: e.$generation.unwrap_or_default(),)?
                    }
                }
            }

            impl TryFrom<$pb::TaskArtifactUpdateEvent> for t::TaskArtifactUpdateEvent {
                type Error = A2AError;

                fn try_from(e: $pb::TaskArtifactUpdateEvent) -> Result<Self> {
                    Ok(t::TaskArtifactUpdateEvent {
                        task_id: e.task_id,
                        context_id: e.context_id,
                        artifact: e.artifact.map(t::Artifact::try_from).transpose()?.unwrap_or_default(),
                        append: e.append,
                        last_chunk: e.last_chunk,
                        metadata: metadata(e.metadata),
                        generation: known_generation(&[$(e.$generation)?]),
                    })
                }
            }

            impl From<t::AgentExtension> for $pb::AgentExtension {
                fn from(e: t::AgentExtension) -> Self {
                    $pb::AgentExtension {
                        uri: e.uri,
                        description: e.description,
                        required: e.required,
                        params: metadata_to_proto(e.params),
                    }
                }
            }

            impl From<$pb::AgentExtension> for t::AgentExtension {
                fn from(e: $pb::AgentExtension) -> Self {
                    t::AgentExtension {
                        uri: e.uri,
                        description: e.description,
                        required: e.required,
                        params: metadata(e.params),
                    }
                }
            }

            impl From<t::AgentCardSignature> for $pb::AgentCardSignature {
                fn from(s: t::AgentCardSignature) -> Self {
                    $pb::AgentCardSignature {
                        protected: s.protected,
                        signature: s.signature,
                        header: metadata_to_proto(s.header),
                    }
                }
            }

            impl From<$pb::AgentCardSignature> for t::AgentCardSignature {
                fn from(s: $pb::AgentCardSignature) -> Self {
                    t::AgentCardSignature { protected: s.protected, signature: s.signature, header: metadata(s.header) }
                }
            }

            impl From<t::SecurityScheme> for $pb::SecurityScheme {
                fn from(s: t::SecurityScheme) -> Self {
                    use $pb::security_scheme::Scheme;
                    let scheme = match s {
                        t::SecurityScheme::ApiKey(s) => Scheme::ApiKeySecurityScheme($pb::ApiKeySecurityScheme {
                            description: s.description,
                            location: s.location,
                            name: s.name,
                        }),
                        t::SecurityScheme::HttpAuth(s) => Scheme::HttpAuthSecurityScheme($pb::HttpAuthSecurityScheme {
                            description: s.description,
                            scheme: s.scheme,
                            bearer_format: s.bearer_format,
                        }),
                        t::SecurityScheme::OAuth2(s) => Scheme::Oauth2SecurityScheme($pb::OAuth2SecurityScheme {
                            description: s.description,
                            flows: $flows::flows_to_proto(&s.flows),
                            oauth2_metadata_url: s.oauth2_metadata_url,
                        }),
                        t::SecurityScheme::OpenIdConnect(s) => {
                            Scheme::OpenIdConnectSecurityScheme($pb::OpenIdConnectSecurityScheme {
                                description: s.description,
                                open_id_connect_url: s.open_id_connect_url,
                            })
                        }
                        t::SecurityScheme::MutualTls(s) => {
                            Scheme::MtlsSecurityScheme($pb::MutualTlsSecurityScheme { description: s.description })
                        }
                    };
                    $pb::SecurityScheme { scheme: Some(scheme) }
                }
            }

            /// A scheme with no member set is no scheme: the card drops it.
            impl TryFrom<$pb::SecurityScheme> for t::SecurityScheme {
                type Error = ();

                fn try_from(s: $pb::SecurityScheme) -> std::result::Result<Self, ()> {
                    use $pb::security_scheme::Scheme;
                    Ok(match s.scheme.ok_or(())? {
                        Scheme::ApiKeySecurityScheme(s) => t::SecurityScheme::ApiKey(t::ApiKeySecurityScheme {
                            description: s.description,
                            location: s.location,
                            name: s.name,
                        }),
                        Scheme::HttpAuthSecurityScheme(s) => t::SecurityScheme::HttpAuth(t::HttpAuthSecurityScheme {
                            description: s.description,
                            scheme: s.scheme,
                            bearer_format: s.bearer_format,
                        }),
                        Scheme::Oauth2SecurityScheme(s) => t::SecurityScheme::OAuth2(t::OAuth2SecurityScheme {
                            description: s.description,
                            flows: s.flows.map_or(::serde_json::Value::Null, $flows::flows_from_proto),
                            oauth2_metadata_url: s.oauth2_metadata_url,
                        }),
                        Scheme::OpenIdConnectSecurityScheme(s) => {
                            t::SecurityScheme::OpenIdConnect(t::OpenIdConnectSecurityScheme {
                                description: s.description,
                                open_id_connect_url: s.open_id_connect_url,
                            })
                        }
                        Scheme::MtlsSecurityScheme(s) => {
                            t::SecurityScheme::MutualTls(t::MutualTlsSecurityScheme { description: s.description })
                        }
                    })
                }
            }
        };
    };
}

pub(super) use conversions_alike_in_both_packages;
