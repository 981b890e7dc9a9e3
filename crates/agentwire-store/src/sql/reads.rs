//! The reads of the SQL backends, written once: each backend runs the same statements
//! ([`queries`](super::queries), built with its own placeholders) on its own pool, and decodes
//! the rows alike.

/// Gives `$store` its reads on the pool in its field `$pool`, with the statements built for
/// `$db`. A macro rather than generic code: sqlx's executor bounds for an arbitrary database
/// would outweigh the few lines each read takes.
macro_rules! sql_reads {
    ($store:ty, $db:ty, $pool:ident) => {
        impl $store {
            /// The task's log, folded.
            async fn read_log(&self, scope: &Scope, task_id: &str) -> Result<Option<Folded>> {
                let rows: Vec<LogRow> = queries::log::<$db>(scope, task_id)
                    .build_query_as()
                    .fetch_all(&self.$pool)
                    .await
                    .map_err(backend)?;
                Ok(fold_logs(&rows)?.pop())
            }

            /// The task's events after `after`, at most `limit`.
            async fn read_events(
                &self,
                scope: &Scope,
                task_id: &str,
                after: u64,
                limit: usize,
            ) -> Result<Vec<StoredEvent>> {
                let rows: Vec<(i64, String)> = queries::events::<$db>(scope, task_id, as_sql(after), sql_limit(limit))
                    .build_query_as()
                    .fetch_all(&self.$pool)
                    .await
                    .map_err(backend)?;
                rows.iter().map(|(seq, body)| decode_event(*seq, body)).collect()
            }

            /// One page of the scope's tasks.
            async fn read_page(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage> {
                let total: i64 = queries::count::<$db>(scope, query)
                    .build_query_scalar()
                    .fetch_one(&self.$pool)
                    .await
                    .map_err(backend)?;
                let rows: Vec<PageRow> = queries::page::<$db>(scope, query)
                    .build_query_as()
                    .fetch_all(&self.$pool)
                    .await
                    .map_err(backend)?;
                crate::sql::read_page(&rows, total, query, |keys| async move {
                    queries::logs_of::<$db>(keys).build_query_as().fetch_all(&self.$pool).await.map_err(backend)
                })
                .await
            }

            /// Tasks in progress, at most `limit`.
            async fn read_in_progress(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
                let rows: Vec<(String, String, String)> = queries::in_progress::<$db>(sql_limit(limit))
                    .build_query_as()
                    .fetch_all(&self.$pool)
                    .await
                    .map_err(backend)?;
                Ok(rows.into_iter().map(scoped).collect())
            }

            /// Tasks in one of `states` unchanged since `before`, at most `limit`.
            async fn read_unchanged_since(
                &self,
                states: &[agentwire_types::TaskState],
                before: agentwire_types::Timestamp,
                limit: usize,
            ) -> Result<Vec<(Scope, String)>> {
                let rows: Vec<(String, String, String)> =
                    queries::unchanged_since::<$db>(states, before.as_millis(), sql_limit(limit))
                        .build_query_as()
                        .fetch_all(&self.$pool)
                        .await
                        .map_err(backend)?;
                Ok(rows.into_iter().map(scoped).collect())
            }

            /// The task's push configs, or the one named `config_id`.
            async fn read_configs(
                &self,
                scope: &Scope,
                task_id: &str,
                config_id: Option<&str>,
            ) -> Result<Vec<PushConfigRecord>> {
                let rows: Vec<ConfigRow> = queries::configs::<$db>(scope, task_id, config_id)
                    .build_query_as()
                    .fetch_all(&self.$pool)
                    .await
                    .map_err(backend)?;
                rows.iter().map(decode_config).collect()
            }

            /// Tasks with events still due to a webhook, at most `limit`.
            async fn read_undelivered(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
                let rows: Vec<(String, String, String)> = queries::undelivered::<$db>(sql_limit(limit))
                    .build_query_as()
                    .fetch_all(&self.$pool)
                    .await
                    .map_err(backend)?;
                Ok(rows.into_iter().map(scoped).collect())
            }
        }
    };
}

pub(crate) use sql_reads;
