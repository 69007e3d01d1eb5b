//! Streamable HTTP sessions: lumo's own rmcp `SessionManager`.
//!
//! It runs rmcp's local session workers (`create_local_session`) and adds what
//! rmcp's `LocalSessionManager` lacks:
//! - session ids of 256 bits from the operating system's CSPRNG (rmcp's are
//!   UUIDv4: 122 random bits);
//! - a cap on open sessions (the next `initialize` is refused) and expiry of
//!   sessions no client request touched for the idle time;
//! - the SSE priming event (an event with an id and empty data, SEP-1699) only
//!   for clients on protocol 2025-11-25 or later: older clients (TypeScript SDK
//!   1.12) try to parse the empty data as JSON and fail;
//! - which request streams of a session are still running, so that a client
//!   polling a finished stream with `Last-Event-ID` is told to stop (see
//!   [`Sessions::stream_is_live`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionHandle, LocalSessionWorker, SessionConfig, SessionError, create_local_session,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId, SessionManager};

/// How many sessions may be open at once, and how long one may sit unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Open sessions at most; the next `initialize` gets HTTP 503.
    pub max_sessions: usize,
    /// A session no client request touched for this long is closed.
    pub idle_timeout: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self { max_sessions: 64, idle_timeout: Duration::from_secs(30 * 60) }
    }
}

/// The first protocol revision whose clients expect SSE priming events.
const PRIMING_SINCE: &str = "2025-11-25";

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionsError {
    /// The cap is reached.
    #[error(
        "too many open MCP sessions ({0} of {0}): close one (HTTP DELETE with its Mcp-Session-Id), wait for idle ones to expire, or start lumo with a higher --max-sessions"
    )]
    Full(usize),
    /// No such session (closed, expired, or never opened).
    #[error("no MCP session {0:?}: it was closed or expired; initialize a new one")]
    NotFound(String),
    /// The operating system gave no random bytes.
    #[error("no random bytes for a session id: {0}")]
    Random(String),
    /// rmcp's session worker failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A `Last-Event-ID` lumo never issued.
    #[error("Last-Event-ID {0:?} is not one lumo sent")]
    BadEventId(String),
}

struct Entry {
    handle: LocalSessionHandle,
    /// Last time a client request reached this session.
    last_seen: Instant,
    /// Whether this session's client wants priming events (protocol ≥ 2025-11-25).
    primes: bool,
    /// Request streams (rmcp's HTTP request ids) that have not ended yet.
    live: HashSet<u64>,
}

#[derive(Default)]
struct Table {
    entries: HashMap<SessionId, Entry>,
}

/// lumo's session manager (see the module docs).
pub struct Sessions {
    limits: SessionLimits,
    config: SessionConfig,
    table: Arc<Mutex<Table>>,
}

impl Sessions {
    /// A manager with these limits.
    pub fn new(limits: SessionLimits) -> Self {
        let mut config = SessionConfig::default();
        // rmcp's worker closes itself after this long without any event: the same idle time.
        config.keep_alive = Some(limits.idle_timeout);
        Self { limits, config, table: Arc::default() }
    }

    /// The limits in force.
    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes sessions idle for longer than the limit; returns how many are open after.
    pub fn sweep(&self) -> usize {
        let expired: Vec<LocalSessionHandle> = {
            let mut table = self.table();
            let idle = self.limits.idle_timeout;
            let ids: Vec<SessionId> =
                table.entries.iter().filter(|(_, e)| e.last_seen.elapsed() > idle).map(|(id, _)| id.clone()).collect();
            ids.iter().filter_map(|id| table.entries.remove(id)).map(|e| e.handle).collect()
        };
        for handle in expired {
            tracing::info!(session = %short(handle.id()), "closing an idle MCP session");
            tokio::spawn(async move {
                let _ = handle.close().await;
            });
        }
        self.table().entries.len()
    }

    /// Whether a new session may open now (after closing idle ones).
    pub fn has_room(&self) -> bool {
        self.sweep() < self.limits.max_sessions
    }

    /// How many sessions are open.
    pub fn open(&self) -> usize {
        self.table().entries.len()
    }

    /// Whether `Last-Event-ID` names a request stream of session `id` that may still deliver
    /// something. `None` when the answer is rmcp's to give (unknown session, or the
    /// session's standalone stream); `Some(false)` for a stream that has ended (its
    /// request answered or cancelled) or never existed: there is nothing to resume.
    pub fn stream_is_live(&self, id: &str, last_event_id: &str) -> Option<bool> {
        let (_, request) = last_event_id.split_once('/')?;
        let table = self.table();
        let entry = table.entries.get(id)?;
        Some(request.parse::<u64>().is_ok_and(|n| entry.live.contains(&n)))
    }

    fn touch(&self, id: &SessionId) -> Result<(LocalSessionHandle, bool), SessionsError> {
        let mut table = self.table();
        let entry = table.entries.get_mut(id).ok_or_else(|| SessionsError::NotFound(short(id)))?;
        entry.last_seen = Instant::now();
        Ok((entry.handle.clone(), entry.primes))
    }

    /// Follows a request stream: live until it ends; without priming events for old clients.
    fn follow(
        &self,
        id: &SessionId,
        request: Option<u64>,
        primes: bool,
        mut rx: tokio::sync::mpsc::Receiver<ServerSseMessage>,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
        if let Some(n) = request
            && let Some(entry) = self.table().entries.get_mut(id)
        {
            entry.live.insert(n);
        }
        let table: Weak<Mutex<Table>> = Arc::downgrade(&self.table);
        let id = id.clone();
        let mut ended = false;
        futures_util::stream::poll_fn(move |cx| {
            if ended {
                return Poll::Ready(None);
            }
            loop {
                match rx.poll_recv(cx) {
                    Poll::Ready(Some(message)) if !primes && message.message.is_none() => continue,
                    Poll::Ready(Some(message)) => return Poll::Ready(Some(message)),
                    Poll::Ready(None) => {
                        // The request is answered or cancelled: nothing more will come.
                        ended = true;
                        if let (Some(n), Some(table)) = (request, table.upgrade())
                            && let Some(entry) =
                                table.lock().unwrap_or_else(PoisonError::into_inner).entries.get_mut(&id)
                        {
                            entry.live.remove(&n);
                        }
                        return Poll::Ready(None);
                    }
                    Poll::Pending => return Poll::Pending,
                }
            }
        })
    }
}

/// The first characters of a session id, enough for logs (the id is a secret).
fn short(id: &str) -> String {
    id.chars().take(8).collect::<String>() + "…"
}

/// 256 random bits from the OS, as 64 hex digits.
fn new_session_id() -> Result<SessionId, SessionsError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| SessionsError::Random(e.to_string()))?;
    let mut id = String::with_capacity(64);
    for b in bytes {
        id.push_str(&format!("{b:02x}"));
    }
    Ok(id.into())
}

/// The protocol version an `initialize` answer settled on.
fn negotiated_version(response: &ServerJsonRpcMessage) -> Option<String> {
    let value = serde_json::to_value(response).ok()?;
    value.pointer("/result/protocolVersion").and_then(|v| v.as_str()).map(str::to_string)
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // The HTTP layer refuses an initialize beyond the cap with a clear 503 before it
        // gets here; this check holds the cap under a race.
        if !self.has_room() {
            return Err(SessionsError::Full(self.limits.max_sessions));
        }
        let id = new_session_id()?;
        let (handle, worker) = create_local_session(id.clone(), self.config.clone());
        let entry = Entry { handle, last_seen: Instant::now(), primes: false, live: HashSet::new() };
        self.table().entries.insert(id.clone(), entry);
        tracing::info!(session = %short(&id), open = self.open(), "new MCP session");
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let (handle, _) = self.touch(id)?;
        let response = handle.initialize(message).await?;
        let primes = negotiated_version(&response).is_some_and(|v| v.as_str() >= PRIMING_SINCE);
        if let Some(entry) = self.table().entries.get_mut(id) {
            entry.primes = primes;
        }
        Ok(response)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.table().entries.contains_key(id))
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let removed = self.table().entries.remove(id);
        if let Some(entry) = removed {
            match entry.handle.close().await {
                Ok(()) | Err(SessionError::SessionServiceTerminated) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let (handle, primes) = self.touch(id)?;
        let receiver = handle.establish_request_wise_channel().await?;
        let request = receiver.http_request_id;
        let stream = self.follow(id, request, primes, receiver.inner);
        handle.push_message(message, request).await?;
        Ok(stream)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        let (handle, _) = self.touch(id)?;
        handle.push_message(message, None).await?;
        Ok(())
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let (handle, primes) = self.touch(id)?;
        let receiver = handle.establish_common_channel().await?;
        Ok(self.follow(id, None, primes, receiver.inner))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let (handle, primes) = self.touch(id)?;
        let parsed = last_event_id.parse().map_err(|_| SessionsError::BadEventId(last_event_id.clone()))?;
        let receiver = handle.resume(parsed).await?;
        let request = receiver.http_request_id;
        Ok(self.follow(id, request, primes, receiver.inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_carry_256_random_bits() {
        let a = new_session_id().expect("random bytes");
        let b = new_session_id().expect("random bytes");
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn priming_starts_with_2025_11_25() {
        assert!("2025-11-25" >= PRIMING_SINCE && "2026-07-28" >= PRIMING_SINCE);
        assert!("2025-06-18" < PRIMING_SINCE && "2025-03-26" < PRIMING_SINCE);
    }
}
