//! Storage providers: duroxide's bundled SQLite provider and steadfast-pg.
//!
//! One native class, `NativeProvider`, holds either backend; the JS classes
//! `SqliteProvider` / `PostgresProvider` wrap it. A PostgreSQL provider keeps the
//! `ProviderOptions` it was connected with, so a `Runtime` can open its own provider on the
//! same database and schema with the runtime's claim options merged in (see `runtime.rs`).

use std::sync::Arc;
use std::time::Duration;

use duroxide::providers::Provider;
use duroxide::providers::sqlite::SqliteProvider;
use napi_derive::napi;
use steadfast_pg::{PollingMode, ProviderOptions, RotatingPassword};

use crate::errors::{Code, error, guard};

#[derive(Clone)]
pub(crate) enum Backend {
    Sqlite(Arc<SqliteProvider>),
    Postgres {
        provider: Arc<steadfast_pg::PostgresProvider>,
        options: Box<ProviderOptions>,
        /// Set when connected with a password that changes (`setPassword`); runtimes
        /// built on this provider follow it too.
        password: Option<RotatingPassword>,
    },
}

/// A connected storage provider (SQLite or PostgreSQL).
#[napi]
pub struct NativeProvider {
    pub(crate) backend: Backend,
}

impl NativeProvider {
    /// The provider as duroxide sees it.
    pub(crate) fn store(&self) -> Arc<dyn Provider> {
        match &self.backend {
            Backend::Sqlite(p) => p.clone(),
            Backend::Postgres { provider, .. } => provider.clone(),
        }
    }

    /// The steadfast-pg provider, for what only it offers (dead letters); None for SQLite.
    pub(crate) fn postgres(&self) -> Option<Arc<steadfast_pg::PostgresProvider>> {
        self.backend.postgres()
    }
}

impl Backend {
    pub(crate) fn postgres(&self) -> Option<Arc<steadfast_pg::PostgresProvider>> {
        match self {
            Backend::Sqlite(_) => None,
            Backend::Postgres { provider, .. } => Some(provider.clone()),
        }
    }
}

#[napi]
impl NativeProvider {
    /// `"sqlite"` or `"postgres"`.
    #[napi]
    pub fn kind(&self) -> String {
        match &self.backend {
            Backend::Sqlite(_) => "sqlite".into(),
            Backend::Postgres { .. } => "postgres".into(),
        }
    }

    /// The PostgreSQL schema, or null for SQLite.
    #[napi]
    pub fn schema(&self) -> Option<String> {
        match &self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres { provider, .. } => Some(provider.schema().to_string()),
        }
    }

    /// Hand a new password (e.g. a refreshed access token) to this provider and to every
    /// runtime built on it, for the connections they open from now on. Only for a
    /// provider connected with `password`.
    #[napi]
    pub fn set_password(&self, password: String) -> napi::Result<()> {
        let Backend::Postgres {
            password: Some(rotating),
            ..
        } = &self.backend
        else {
            return Err(error(
                Code::InvalidState,
                "setPassword: this provider was not connected with a rotating password",
            ));
        };
        if password.is_empty() {
            return Err(error(
                Code::InvalidArgument,
                "setPassword: password must not be empty",
            ));
        }
        rotating.set(password);
        Ok(())
    }

    /// Close the PostgreSQL pool (no-op for SQLite). Runtimes built on this provider use
    /// their own pool and are not affected.
    #[napi]
    pub async fn close(&self) -> napi::Result<()> {
        let backend = self.backend.clone();
        guard(async move {
            if let Backend::Postgres { provider, .. } = backend {
                provider.close().await;
            }
            Ok(())
        })
        .await
    }
}

/// Open (creating if needed) a SQLite database file. Accepts `sqlite:<path>` or a bare path.
#[napi]
pub async fn open_sqlite(path: String) -> napi::Result<NativeProvider> {
    guard(async move {
        let (url, file) = match path.strip_prefix("sqlite:") {
            Some(rest) => (path.clone(), rest.to_string()),
            None => (format!("sqlite:{path}"), path.clone()),
        };
        let file = file.split('?').next().unwrap_or_default().to_string();
        if file.trim().is_empty() {
            return Err(error(
                Code::InvalidArgument,
                "SQLite path must not be empty",
            ));
        }
        if !url.contains(":memory:") && !url.contains("mode=memory") {
            let file_path = std::path::Path::new(&file);
            if let Some(parent) = file_path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| {
                    error(
                        Code::ProviderOpen,
                        format!("failed to create directory {}: {e}", parent.display()),
                    )
                })?;
            }
            // sqlx does not create a missing file from a plain `sqlite:` URL.
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file_path)
                .map_err(|e| {
                    error(
                        Code::ProviderOpen,
                        format!("failed to create SQLite file {file}: {e}"),
                    )
                })?;
        }
        let provider = SqliteProvider::new(&url, None)
            .await
            .map_err(|e| error(Code::ProviderOpen, format!("failed to open SQLite: {e}")))?;
        Ok(NativeProvider {
            backend: Backend::Sqlite(Arc::new(provider)),
        })
    })
    .await
}

/// A fresh private in-memory SQLite database.
#[napi]
pub async fn open_sqlite_in_memory() -> napi::Result<NativeProvider> {
    guard(async move {
        let provider = SqliteProvider::new_in_memory()
            .await
            .map_err(|e| error(Code::ProviderOpen, format!("failed to open SQLite: {e}")))?;
        Ok(NativeProvider {
            backend: Backend::Sqlite(Arc::new(provider)),
        })
    })
    .await
}

/// Connection options for PostgreSQL (validated by the JS layer; steadfast-pg validates
/// again and names the field on error).
#[napi(object)]
pub struct PostgresConnectOptions {
    pub url: String,
    pub schema: Option<String>,
    pub max_connections: Option<u32>,
    pub acquire_timeout_ms: Option<u32>,
    pub statement_lock_timeout_ms: Option<u32>,
    pub statement_timeout_ms: Option<u32>,
    /// `"listen"` (default) or `"sessionFree"`.
    pub polling: Option<String>,
    pub run_migrations: Option<bool>,
    /// In place of the URL's password, and changeable later with `setPassword`.
    pub password: Option<String>,
}

pub(crate) fn provider_options(o: &PostgresConnectOptions) -> napi::Result<ProviderOptions> {
    let mut p = ProviderOptions::new(o.url.clone());
    if let Some(s) = &o.schema {
        p.schema = s.clone();
    }
    if let Some(n) = o.max_connections {
        p.max_connections = n;
    }
    if let Some(ms) = o.acquire_timeout_ms {
        p.acquire_timeout = Duration::from_millis(ms.into());
    }
    if let Some(ms) = o.statement_lock_timeout_ms {
        p.statement_lock_timeout = Duration::from_millis(ms.into());
    }
    if let Some(ms) = o.statement_timeout_ms {
        p.statement_timeout = Some(Duration::from_millis(ms.into()));
    }
    match o.polling.as_deref() {
        None | Some("listen") => p.polling = PollingMode::Listen,
        Some("sessionFree") => p.polling = PollingMode::SessionFree,
        Some(other) => {
            return Err(error(
                Code::InvalidOptions,
                format!("polling must be \"listen\" or \"sessionFree\" (got {other:?})"),
            ));
        }
    }
    if let Some(r) = o.run_migrations {
        p.run_migrations = r;
    }
    Ok(p)
}

/// Connect to PostgreSQL through steadfast-pg (migrations applied unless disabled).
#[napi]
pub async fn connect_postgres(options: PostgresConnectOptions) -> napi::Result<NativeProvider> {
    guard(async move {
        let password = options.password.clone().map(RotatingPassword::new);
        let mut options = provider_options(&options)?;
        options.password = password.as_ref().map(RotatingPassword::feed);
        let provider = connect(options.clone()).await?;
        Ok(NativeProvider {
            backend: Backend::Postgres {
                provider: Arc::new(provider),
                options: Box::new(options),
                password,
            },
        })
    })
    .await
}

pub(crate) async fn connect(
    options: ProviderOptions,
) -> napi::Result<steadfast_pg::PostgresProvider> {
    steadfast_pg::PostgresProvider::connect_with_options(options)
        .await
        .map_err(|e| {
            let code = match e {
                steadfast_pg::SetupError::InvalidOptions(_) => Code::InvalidOptions,
                _ => Code::ProviderOpen,
            };
            error(code, e)
        })
}
