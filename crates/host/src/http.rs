//! Streamable HTTP: loopback by default, Origin validated, a bearer token
//! required whenever lumo listens beyond loopback.
//!
//! rmcp's `StreamableHttpService` speaks the protocol; lumo wraps it in three
//! layers, outermost first:
//! - CORS for the origins allowed with `--allow-origin` (exactly those): the
//!   preflight `OPTIONS` is answered (rmcp answers 405), and answers carry
//!   `Access-Control-Allow-Origin` and expose `Mcp-Session-Id`;
//! - the bearer token;
//! - sessions ([`crate::sessions`]): an `initialize` beyond the cap gets 503,
//!   and a `GET` with a `Last-Event-ID` of a request stream that has ended gets
//!   204 No Content, which tells SSE clients to stop reconnecting (the
//!   TypeScript SDK otherwise polls every 3 s forever after a cancelled call).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::front::LumoServer;
use crate::gate::Gate;
use crate::sessions::{SessionLimits, Sessions};

/// Largest request body lumo reads (rmcp's own limit).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// What a browser app may send and read across origins.
const CORS_ALLOW_HEADERS: &str =
    "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name";
const CORS_ALLOW_METHODS: &str = "GET, POST, DELETE, OPTIONS";
const CORS_EXPOSE_HEADERS: &str = "mcp-session-id, mcp-protocol-version";

/// How to serve over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Bearer token clients must send; required when `addr` is not loopback.
    pub token: Option<String>,
    /// Browser origins allowed to call (e.g. `http://localhost:5173`); none by default.
    pub allowed_origins: Vec<String>,
    /// Session cap and idle expiry.
    pub limits: SessionLimits,
}

/// Why HTTP serving refused to start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// Listening beyond loopback without a token.
    #[error("listening on {0} (not loopback) needs a bearer token: pass --token or set LUMO_TOKEN")]
    TokenRequired(SocketAddr),
    /// A limit that cannot work.
    #[error("--max-sessions must be at least 1")]
    NoSessions,
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
    if options.limits.max_sessions == 0 {
        return Err(HttpError::NoSessions);
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
    // rmcp would prime every initialize answer and GET stream whatever the client's
    // protocol; lumo's session manager primes request streams for clients that expect it.
    config = config.with_sse_retry(None);
    let sessions = Arc::new(Sessions::new(options.limits));
    let service = StreamableHttpService::new(move || Ok(LumoServer::isolated(gate.clone())), sessions.clone(), config);
    let token = options.token.map(Arc::new);
    let origins = Arc::new(options.allowed_origins);
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(move |request, next| session_rules(sessions.clone(), request, next)))
        .layer(axum::middleware::from_fn(move |request, next| check_token(token.clone(), request, next)))
        .layer(axum::middleware::from_fn(move |request, next| cors(origins.clone(), request, next)));
    tracing::info!(addr = %listener.local_addr()?, max_sessions = options.limits.max_sessions, idle = ?options.limits.idle_timeout, "serving MCP over HTTP at /mcp");
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

/// The request's `Origin`, when it is one of `allowed` (compared exactly, ignoring ASCII case
/// and a trailing slash).
fn allowed_origin<'a>(request: &'a Request, allowed: &[String]) -> Option<&'a HeaderValue> {
    let origin = request.headers().get(header::ORIGIN)?;
    let text = origin.to_str().ok()?.trim_end_matches('/');
    allowed.iter().any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(text)).then_some(origin)
}

async fn cors(allowed: Arc<Vec<String>>, request: Request, next: Next) -> Response {
    let origin = allowed_origin(&request, &allowed).cloned();
    if request.method() == Method::OPTIONS && request.headers().contains_key(header::ORIGIN) {
        let Some(origin) = origin else {
            return (StatusCode::FORBIDDEN, "Forbidden: this Origin is not allowed (lumo serve --allow-origin ORIGIN)")
                .into_response();
        };
        // A preflight carries no credentials: answer it here, before the token check.
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(CORS_ALLOW_METHODS));
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(CORS_ALLOW_HEADERS));
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        headers.insert(header::VARY, HeaderValue::from_static("Origin"));
        return response;
    }
    let mut response = next.run(request).await;
    if let Some(origin) = origin {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(CORS_EXPOSE_HEADERS));
        headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    }
    response
}

async fn session_rules(sessions: Arc<Sessions>, request: Request, next: Next) -> Response {
    let session = request.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    match (request.method().clone(), session) {
        (Method::GET, Some(session)) => {
            let last = request.headers().get("last-event-id").and_then(|v| v.to_str().ok());
            if let Some(last) = last
                && sessions.stream_is_live(&session, last) == Some(false)
            {
                // The stream was answered or cancelled: 204 tells an SSE client not to reconnect.
                return StatusCode::NO_CONTENT.into_response();
            }
            next.run(request).await
        }
        (Method::POST, None) => {
            let (parts, body) = request.into_parts();
            let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
                return (StatusCode::PAYLOAD_TOO_LARGE, format!("the request body is over {MAX_BODY} bytes"))
                    .into_response();
            };
            let initialize = serde_json::from_slice::<serde_json::Value>(&bytes)
                .is_ok_and(|v| v.get("method").and_then(|m| m.as_str()) == Some("initialize"));
            if initialize && !sessions.has_room() {
                let limits = sessions.limits();
                let message = format!(
                    "Service Unavailable: too many open MCP sessions ({max} of {max}). Close one (HTTP DELETE /mcp with its Mcp-Session-Id), wait until an idle one expires (after {idle} s unused), or start lumo with a higher --max-sessions.",
                    max = limits.max_sessions,
                    idle = limits.idle_timeout.as_secs()
                );
                tracing::warn!(max = limits.max_sessions, "refused a new MCP session: the cap is reached");
                let mut response = (StatusCode::SERVICE_UNAVAILABLE, message).into_response();
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
                return response;
            }
            next.run(Request::from_parts(parts, Body::from(bytes))).await
        }
        _ => next.run(request).await,
    }
}
