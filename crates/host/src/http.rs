//! Streamable HTTP: loopback by default, Origin validated, a bearer token
//! required whenever lumo listens beyond loopback.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::front::LumoServer;
use crate::gate::Gate;

/// How to serve over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Bearer token clients must send; required when `addr` is not loopback.
    pub token: Option<String>,
    /// Browser origins allowed to call (e.g. `http://localhost:5173`); none by default.
    pub allowed_origins: Vec<String>,
}

/// Why HTTP serving refused to start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// Listening beyond loopback without a token.
    #[error("listening on {0} (not loopback) needs a bearer token: pass --token or set LUMO_TOKEN")]
    TokenRequired(SocketAddr),
    /// The socket could not be bound or served.
    #[error("HTTP server: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves MCP over Streamable HTTP at `/mcp` until the process ends.
pub async fn serve_http(gate: Arc<Gate>, options: HttpOptions) -> Result<(), HttpError> {
    let loopback = options.addr.ip().is_loopback();
    if !loopback && options.token.is_none() {
        return Err(HttpError::TokenRequired(options.addr));
    }
    let mut config = StreamableHttpServerConfig::default();
    // rmcp lets every Origin through when the allowlist is empty: enforce it.
    config = if options.allowed_origins.is_empty() {
        config.enforce_origin_validation()
    } else {
        config.with_allowed_origins(options.allowed_origins.clone())
    };
    if !loopback {
        let ip = options.addr.ip().to_string();
        config = config.with_allowed_hosts(["localhost".to_string(), "127.0.0.1".into(), "::1".into(), ip]);
    }
    let service = StreamableHttpService::new(
        move || Ok(LumoServer::new(gate.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token = options.token.map(Arc::new);
    let app =
        axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(move |request, next| {
            let token = token.clone();
            check_token(token, request, next)
        }));
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    tracing::info!(addr = %listener.local_addr()?, "serving MCP over HTTP at /mcp");
    axum::serve(listener, app).await?;
    Ok(())
}

async fn check_token(token: Option<Arc<String>>, request: Request, next: Next) -> Response {
    if let Some(token) = token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        // Compare in constant time so the token cannot be guessed byte by byte.
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), token.as_bytes())) {
            return (StatusCode::UNAUTHORIZED, "missing or wrong bearer token").into_response();
        }
    }
    next.run(request).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
