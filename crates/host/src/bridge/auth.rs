//! Pairing codes and bridge tokens.
//!
//! `lumo pair` writes a one-time code (stored hashed, valid ten minutes) to
//! the bridge state file; the extension sends it once and gets back a
//! short-lived access token and a long-lived refresh token. Tokens are
//! `v1.<kind>.<expiry ms>.<extension id>.<HMAC-SHA256 hex>` signed with a
//! secret that never leaves the state file (mode 0600).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::options::BridgeError;

/// How long a code from `lumo pair` stays valid.
pub const PAIR_CODE_TTL: Duration = Duration::from_secs(600);
/// How long a refresh token stays valid.
pub const REFRESH_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

#[derive(Serialize, Deserialize, Default)]
struct StateFile {
    secret: String,
    #[serde(default)]
    pair: Option<PendingCode>,
}

#[derive(Serialize, Deserialize)]
struct PendingCode {
    code_sha256: String,
    expires_at_ms: u64,
}

/// Which kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Opens a bridge connection.
    Access,
    /// Gets a new access token.
    Refresh,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Access => "access",
            Kind::Refresh => "refresh",
        }
    }
}

/// The bridge's secrets on disk.
#[derive(Debug, Clone)]
pub struct Store {
    path: PathBuf,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

fn random_hex(bytes: usize) -> Result<String, BridgeError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| BridgeError::State(format!("no randomness: {e}")))?;
    Ok(hex::encode(buf))
}

impl Store {
    /// The state file in `dir` (created with a new secret on first use).
    pub fn open(dir: &Path) -> Result<Self, BridgeError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| BridgeError::State(format!("cannot create the bridge folder {}: {e}", dir.display())))?;
        let store = Self { path: dir.join("bridge.json") };
        if !store.path.exists() {
            store.write(&StateFile { secret: random_hex(32)?, pair: None })?;
        }
        Ok(store)
    }

    fn read(&self) -> Result<StateFile, BridgeError> {
        let text = std::fs::read_to_string(&self.path)
            .map_err(|e| BridgeError::State(format!("cannot read {}: {e}", self.path.display())))?;
        serde_json::from_str(&text).map_err(|e| {
            BridgeError::State(format!("{} is damaged ({e}); delete it and pair again", self.path.display()))
        })
    }

    fn write(&self, state: &StateFile) -> Result<(), BridgeError> {
        let text = serde_json::to_string_pretty(state).map_err(|e| BridgeError::State(e.to_string()))?;
        let tmp = self.path.with_extension("json.tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let fail = |e: std::io::Error| BridgeError::State(format!("cannot write {}: {e}", self.path.display()));
        std::io::Write::write_all(&mut options.open(&tmp).map_err(fail)?, text.as_bytes()).map_err(fail)?;
        std::fs::rename(&tmp, &self.path).map_err(fail)
    }

    /// Makes a new one-time pairing code (replacing any earlier one).
    pub fn new_pair_code(&self) -> Result<String, BridgeError> {
        let mut state = self.read()?;
        let code = random_hex(5)?;
        state.pair = Some(PendingCode {
            code_sha256: hex::encode(Sha256::digest(code.as_bytes())),
            expires_at_ms: now_ms() + PAIR_CODE_TTL.as_millis() as u64,
        });
        self.write(&state)?;
        Ok(code)
    }

    /// Uses up a pairing code; true when it was the current, unexpired one.
    pub fn redeem(&self, code: &str) -> Result<bool, BridgeError> {
        let mut state = self.read()?;
        let Some(pending) = &state.pair else { return Ok(false) };
        let hash = hex::encode(Sha256::digest(code.trim().as_bytes()));
        let ok = pending.expires_at_ms > now_ms() && subtle_eq(hash.as_bytes(), pending.code_sha256.as_bytes());
        if ok {
            state.pair = None;
            self.write(&state)?;
        }
        Ok(ok)
    }

    fn mac(&self, payload: &str) -> Result<Hmac<Sha256>, BridgeError> {
        let secret = hex::decode(self.read()?.secret).map_err(|e| BridgeError::State(e.to_string()))?;
        let mut mac = Hmac::<Sha256>::new_from_slice(&secret).map_err(|e| BridgeError::State(e.to_string()))?;
        mac.update(payload.as_bytes());
        Ok(mac)
    }

    /// Signs a token of `kind` for `extension`, valid for `ttl`.
    pub fn issue(&self, kind: Kind, extension: &str, ttl: Duration) -> Result<String, BridgeError> {
        let payload = format!("v1.{}.{}.{extension}", kind.as_str(), now_ms() + ttl.as_millis() as u64);
        let tag = hex::encode(self.mac(&payload)?.finalize().into_bytes());
        Ok(format!("{payload}.{tag}"))
    }

    /// Checks a token: its signature, kind, extension and expiry. The error says which failed.
    pub fn verify(&self, token: &str, kind: Kind, extension: &str) -> Result<Expiry, String> {
        let (payload, tag) = token.rsplit_once('.').ok_or("the token is malformed")?;
        let tag = hex::decode(tag).map_err(|_| "the token is malformed")?;
        let mac = self.mac(payload).map_err(|e| e.to_string())?;
        mac.verify_slice(&tag).map_err(|_| "the token's signature is wrong (another lumo, or the secret changed)")?;
        let parts: Vec<&str> = payload.split('.').collect();
        let [_, k, exp, ext] = parts[..] else { return Err("the token is malformed".into()) };
        if k != kind.as_str() {
            return Err(format!("a {k} token was sent where a {} token is needed", kind.as_str()));
        }
        if ext != extension {
            return Err("the token was issued to another extension".into());
        }
        let exp: u64 = exp.parse().map_err(|_| "the token is malformed")?;
        if exp <= now_ms() {
            return Err("the token has expired".into());
        }
        Ok(Expiry(exp))
    }
}

impl Store {
    /// Proof of holding the secret, for `nonce` under `label`: how two lumo
    /// processes sharing this state show each other they are lumo (see `role`).
    pub fn proof(&self, label: &str, nonce: &str) -> Result<String, BridgeError> {
        Ok(hex::encode(self.mac(&format!("lumo-{label}.{nonce}"))?.finalize().into_bytes()))
    }

    /// Checks a [`Store::proof`].
    pub fn check_proof(&self, label: &str, nonce: &str, proof: &str) -> bool {
        self.proof(label, nonce).is_ok_and(|want| subtle_eq(want.as_bytes(), proof.as_bytes()))
    }

    /// A fresh random nonce.
    pub fn nonce() -> Result<String, BridgeError> {
        random_hex(16)
    }
}

/// When a token expires (ms since the Unix epoch).
#[derive(Debug, Clone, Copy)]
pub struct Expiry(pub u64);

impl Expiry {
    /// True once it has passed.
    pub fn passed(self) -> bool {
        self.0 <= now_ms()
    }
}

/// Constant-time comparison, so a code cannot be guessed byte by byte.
fn subtle_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_check_kind_extension_signature_and_expiry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        let t = store.issue(Kind::Access, "abc", Duration::from_secs(60)).expect("issue");
        assert!(store.verify(&t, Kind::Access, "abc").is_ok());
        assert!(store.verify(&t, Kind::Refresh, "abc").is_err());
        assert!(store.verify(&t, Kind::Access, "xyz").is_err());
        let forged = t.replace("access", "refresh");
        assert!(store.verify(&forged, Kind::Refresh, "abc").is_err());
        let old = store.issue(Kind::Access, "abc", Duration::ZERO).expect("issue");
        assert_eq!(store.verify(&old, Kind::Access, "abc").expect_err("expired"), "the token has expired");
    }

    #[test]
    fn proofs_need_the_same_secret_and_label() {
        let (a, b) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
        let (mine, other) = (Store::open(a.path()).expect("store"), Store::open(b.path()).expect("store"));
        let proof = mine.proof("client", "n1").expect("proof");
        assert!(mine.check_proof("client", "n1", &proof));
        assert!(!mine.check_proof("owner", "n1", &proof));
        assert!(!mine.check_proof("client", "n2", &proof));
        assert!(!other.check_proof("client", "n1", &proof));
    }

    #[test]
    fn a_pair_code_works_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("store");
        let code = store.new_pair_code().expect("code");
        assert!(!store.redeem("nope").expect("redeem"));
        assert!(store.redeem(&code).expect("redeem"));
        assert!(!store.redeem(&code).expect("redeem"));
    }
}
