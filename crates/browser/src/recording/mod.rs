//! Recordings people can watch (`page_record`): one tab captured with CDP
//! `Page.startScreencast` while tool calls run, each frame captioned with the
//! step it belongs to, written as an animated GIF into the data dir.
//!
//! Bounds: the browser sends frames only when the page changes, scaled to at
//! most [`gif::MAX_WIDTH`] pixels wide; lumo keeps at most one frame per
//! [`MIN_GAP`] (5 per second; a later frame replaces the kept one's picture)
//! and at most [`MAX_FRAMES`]. Frames stay in memory as the browser's JPEGs
//! until the recording ends, so nothing is written before then: the GIF is
//! encoded (off the async threads), written beside its final name and
//! renamed into place. A recording ends when it is stopped, when its tab
//! closes or the browser goes away, and when lumo shuts down
//! ([`crate::Session::shutdown`]): in each case the file is finished.
//!
//! Captions come from the gate: it tells the session about every call it is
//! about to run (`Session::note_call`, in `tools/record.rs`), whatever its source.

pub(crate) mod caption;
mod gif;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine;
use lumo_cdp::{Connection, Event};
use lumo_protocol::{ErrorCode, ToolFailure};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::{Notify, watch};

use crate::tool::fail;

use gif::Frame;

/// At most this many frames a second are kept.
const MIN_GAP: Duration = Duration::from_millis(200);
/// At most this many frames per recording (a minute at the full rate; idle pages send none).
pub(crate) const MAX_FRAMES: usize = 300;
/// See [`Recorder::settle`].
const QUIET: Duration = Duration::from_millis(80);
const PAINT: Duration = Duration::from_millis(150);
const SETTLE_MAX: Duration = Duration::from_millis(400);
/// JPEG quality asked of the screencast.
const JPEG_QUALITY: u8 = 70;

/// Where lumo keeps its data: `$LUMO_DATA_DIR`, else `$XDG_DATA_HOME/lumo`, else
/// `~/.local/share/lumo` (the audit log lives there too).
pub fn data_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    non_empty("LUMO_DATA_DIR")
        .or_else(|| non_empty("XDG_DATA_HOME").map(|d| d.join("lumo")))
        .or_else(|| non_empty("HOME").map(|h| h.join(".local/share/lumo")))
}

/// A finished recording.
#[derive(Debug, Clone)]
pub(crate) struct Saved {
    pub(crate) path: PathBuf,
    pub(crate) bytes: usize,
    pub(crate) frames: usize,
    pub(crate) steps: usize,
    /// Each step's caption.
    pub(crate) captions: Vec<String>,
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) duration: Duration,
    /// A small still of the last frame (GIF).
    pub(crate) preview: Vec<u8>,
    /// Why it ended: `stopped`, `its tab closed`, `the browser closed`.
    pub(crate) ended: &'static str,
    /// The frame cap was reached: later changes replaced the last frame.
    pub(crate) capped: bool,
}

/// Now, in seconds since the Unix epoch: the clock the browser stamps frames with.
fn epoch_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// What the capture task and the gate's step notes share. Pictures and steps
/// are placed by time (the browser's capture time, not arrival), so a picture
/// that arrives after the next call began still belongs to the step it shows.
#[derive(Debug)]
struct Capture {
    /// When the recording started ([`epoch_now`]).
    started: f64,
    /// Pictures as the browser took them, in time order.
    shots: Vec<(Duration, Arc<Vec<u8>>)>,
    /// When each step began, and its caption.
    steps: Vec<(Duration, String)>,
    capped: bool,
    /// When the last picture arrived (see [`Recorder::settle`]).
    arrived: Option<std::time::Instant>,
}

impl Capture {
    fn new(started: f64) -> Self {
        Self { started, shots: Vec::new(), steps: Vec::new(), capped: false, arrived: None }
    }

    /// How long ago the recording started.
    fn elapsed(&self) -> Duration {
        self.since_start(epoch_now())
    }

    fn since_start(&self, epoch: f64) -> Duration {
        Duration::try_from_secs_f64(epoch - self.started).unwrap_or(Duration::ZERO)
    }

    /// Keeps a picture taken at `at`: at most one per [`MIN_GAP`] (a newer one
    /// replaces the kept one's picture unless a step began in between) and
    /// [`MAX_FRAMES`] in all.
    fn push(&mut self, at: Duration, jpeg: Arc<Vec<u8>>) {
        let full = self.shots.len() >= MAX_FRAMES;
        let last_step = self.steps.last().map(|s| s.0);
        if let Some(last) = self.shots.last_mut()
            && at >= last.0
            && (at - last.0 < MIN_GAP || full)
            && last_step.is_none_or(|step| step <= last.0)
        {
            self.capped |= full;
            last.1 = jpeg;
            return;
        }
        if full {
            self.capped = true;
            return;
        }
        let i = self.shots.partition_point(|s| s.0 <= at);
        self.shots.insert(i, (at, jpeg));
    }

    /// A new step began now.
    fn step(&mut self, words: &str) {
        if self.steps.len() >= MAX_FRAMES {
            self.capped = true;
            return;
        }
        let at = self.elapsed();
        let caption = caption::cut(&format!("{} {words}", self.steps.len() + 1), 120);
        self.steps.push((at, caption));
    }

    fn captions(&self) -> Vec<String> {
        self.steps.iter().map(|s| s.1.clone()).collect()
    }

    /// The frames to encode: each picture under the caption of the step it was
    /// taken in, and at each step's start the picture on screen then under the
    /// new caption (so every step shows, changed page or not).
    fn frames(&self) -> Vec<Frame> {
        let caption_at = |t: Duration| {
            self.steps.iter().rev().find(|s| s.0 <= t).map_or_else(|| "recording".to_string(), |s| s.1.clone())
        };
        let mut out = Vec::new();
        let mut shots = self.shots.iter().peekable();
        let mut on_screen: Option<Arc<Vec<u8>>> = None;
        for (start, caption) in &self.steps {
            while let Some((at, jpeg)) = shots.next_if(|s| s.0 < *start) {
                out.push(Frame { at: *at, jpeg: jpeg.clone(), caption: caption_at(*at) });
                on_screen = Some(jpeg.clone());
            }
            if let Some(jpeg) = &on_screen {
                out.push(Frame { at: *start, jpeg: jpeg.clone(), caption: caption.clone() });
            }
        }
        out.extend(shots.map(|(at, jpeg)| Frame { at: *at, jpeg: jpeg.clone(), caption: caption_at(*at) }));
        out
    }
}

/// A recording in progress, or ended and holding its result.
#[derive(Debug)]
struct Active {
    capture: Arc<Mutex<Capture>>,
    stop: Notify,
    /// The saved file (or why not), once the capture task is done.
    done: watch::Receiver<Option<Result<Saved, String>>>,
}

impl Active {
    fn is_done(&self) -> bool {
        self.done.borrow().is_some()
    }

    /// Ends the capture and waits until the file is written.
    async fn finish(&self) -> Result<Saved, String> {
        self.stop.notify_one();
        let mut done = self.done.clone();
        let result = done.wait_for(Option::is_some).await.map(|r| r.clone());
        match result {
            Ok(Some(result)) => result,
            _ => Err("the recording task went away before saving".into()),
        }
    }
}

/// Every recording of one browser, so that shutting lumo down finishes them all
/// (a handle may be gone while its recording still runs).
#[derive(Debug, Default)]
pub(crate) struct Recordings {
    all: Mutex<Vec<Arc<Active>>>,
}

impl Recordings {
    fn all(&self) -> MutexGuard<'_, Vec<Arc<Active>>> {
        self.all.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends every recording still running and waits (at most 10 s) until their files are written.
    pub(crate) async fn finish_all(&self) {
        let running: Vec<Arc<Active>> = self.all().drain(..).filter(|a| !a.is_done()).collect();
        let all = futures_util::future::join_all(running.iter().map(|a| a.finish()));
        if tokio::time::timeout(Duration::from_secs(10), all).await.is_err() {
            tracing::warn!("a recording could not be saved within 10 s of shutting down");
        }
    }
}

/// A session handle's recording slot (one recording at a time per handle).
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    active: Mutex<Option<Arc<Active>>>,
}

impl Recorder {
    fn slot(&self) -> MutexGuard<'_, Option<Arc<Active>>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The recording capturing now, if any.
    fn running(&self) -> Option<Arc<Active>> {
        self.slot().as_ref().filter(|a| !a.is_done()).cloned()
    }

    /// Whether a recording is capturing now.
    pub(crate) fn is_recording(&self) -> bool {
        self.running().is_some()
    }

    /// Starts capturing the tab of CDP session `session` (target `target`); the
    /// GIF will be written to `path`.
    pub(crate) async fn start(
        &self,
        all: &Recordings,
        cdp: &Connection,
        target: &str,
        session: &str,
        path: PathBuf,
    ) -> Result<(), ToolFailure> {
        if self.is_recording() {
            return Err(fail(
                ErrorCode::InvalidState,
                "a recording is already running; stop it first with page_record {action: \"stop\"}",
            ));
        }
        let capture = Arc::new(Mutex::new(Capture::new(epoch_now())));
        let events = cdp.subscribe();
        let params = json!({"format": "jpeg", "quality": JPEG_QUALITY, "maxWidth": gif::MAX_WIDTH, "maxHeight": 1000, "everyNthFrame": 1});
        cdp.call("Page.startScreencast", params, Some(session))
            .await
            .map_err(|e| fail(ErrorCode::OperationFailed, format!("the browser would not capture the tab: {e}")))?;
        let (sender, done) = watch::channel(None);
        let active = Arc::new(Active { capture: capture.clone(), stop: Notify::new(), done });
        let task =
            CaptureTask { cdp: cdp.clone(), target: target.to_string(), session: session.to_string(), capture, path };
        let stopper = active.clone();
        tokio::spawn(async move {
            let result = task.run(events, &stopper.stop).await;
            let _ = sender.send(Some(result));
        });
        // One that ended with its tab was saved already: this one takes its place.
        *self.slot() = Some(active.clone());
        let mut all = all.all();
        all.retain(|a| !a.is_done());
        all.push(active);
        Ok(())
    }

    /// Waits a moment for the pictures of the step before to arrive: the
    /// browser paints after a call has answered, and calls that follow each other
    /// at once (a script, `lumo call`) would otherwise caption the last step's
    /// change with the next one. Waits until no picture came for [`QUIET`] and
    /// the step before ran [`PAINT`], at most [`SETTLE_MAX`].
    pub(crate) async fn settle(&self) {
        let Some(active) = self.running() else { return };
        let waited = std::time::Instant::now();
        loop {
            let ready = {
                let c = active.capture.lock().unwrap_or_else(|e| e.into_inner());
                let step_ran = c.steps.last().is_none_or(|s| c.elapsed().saturating_sub(s.0) >= PAINT);
                step_ran && c.arrived.is_none_or(|a| a.elapsed() >= QUIET)
            };
            if ready || waited.elapsed() >= SETTLE_MAX {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Captions the frames from now on with this step.
    pub(crate) fn step(&self, words: &str) {
        if let Some(active) = self.running() {
            active.capture.lock().unwrap_or_else(|e| e.into_inner()).step(words);
        }
    }

    /// Ends the recording and waits until its file is written. `None`: nothing was recorded.
    pub(crate) async fn finish(&self) -> Option<Result<Saved, String>> {
        let active = self.slot().take()?;
        Some(active.finish().await)
    }
}

/// What the capture task needs.
struct CaptureTask {
    cdp: Connection,
    target: String,
    session: String,
    capture: Arc<Mutex<Capture>>,
    path: PathBuf,
}

impl CaptureTask {
    async fn run(self, mut events: UnboundedReceiver<Arc<Event>>, stop: &Notify) -> Result<Saved, String> {
        let CaptureTask { cdp, target, session, capture, path } = self;
        let ended = loop {
            let event = tokio::select! {
                () = stop.notified() => break "stopped",
                event = events.recv() => event,
            };
            let Some(event) = event else { break "the browser closed" };
            let params = &event.params;
            match event.method.as_str() {
                "Page.screencastFrame" if event.session_id.as_deref() == Some(session.as_str()) => {
                    // The browser sends the next frame only once this one is acknowledged.
                    let ack = json!({"sessionId": params["sessionId"]});
                    let (cdp, s) = (cdp.clone(), session.clone());
                    tokio::spawn(async move {
                        if let Err(e) = cdp.call("Page.screencastFrameAck", ack, Some(&s)).await {
                            tracing::debug!(error = %e, "could not acknowledge a screencast frame");
                        }
                    });
                    let data = params["data"].as_str().unwrap_or_default();
                    match base64::engine::general_purpose::STANDARD.decode(data) {
                        Ok(jpeg) => {
                            let mut capture = capture.lock().unwrap_or_else(|e| e.into_inner());
                            let at = params["metadata"]["timestamp"]
                                .as_f64()
                                .map_or_else(|| capture.elapsed(), |t| capture.since_start(t));
                            capture.push(at, Arc::new(jpeg));
                            capture.arrived = Some(std::time::Instant::now());
                        }
                        Err(e) => tracing::debug!(error = %e, "a screencast frame that is not base64"),
                    }
                }
                "Target.targetDestroyed" if params["targetId"].as_str() == Some(target.as_str()) => {
                    break "its tab closed";
                }
                "Target.detachedFromTarget" if params["sessionId"].as_str() == Some(session.as_str()) => {
                    break "its tab closed";
                }
                _ => {}
            }
        };
        drop(events);
        if ended == "stopped" {
            // The tab may be gone already; then there is nothing to stop.
            let _ = cdp.call("Page.stopScreencast", json!({}), Some(&session)).await;
        }
        let (frames, steps, captions, capped, end) = {
            let c = capture.lock().unwrap_or_else(|e| e.into_inner());
            (c.frames(), c.steps.len(), c.captions(), c.capped, c.elapsed())
        };
        let target_path = path.clone();
        tokio::task::spawn_blocking(move || save(&frames, end, &target_path))
            .await
            .map_err(|e| format!("encoding the recording failed: {e}"))?
            .map(|(encoded, bytes)| Saved {
                path,
                bytes,
                frames: encoded.frames,
                steps,
                captions,
                width: encoded.width,
                height: encoded.height,
                duration: encoded.duration,
                preview: encoded.preview,
                ended,
                capped,
            })
    }
}

/// Encodes and writes the GIF: to a file beside `path` first, renamed into place,
/// so `path` is either absent or whole.
fn save(frames: &[Frame], end: Duration, path: &Path) -> Result<(gif::Encoded, usize), String> {
    let encoded = gif::encode(frames, end).map_err(|e| e.to_string())?;
    let partial = path.with_extension("gif.partial");
    let written = std::fs::write(&partial, &encoded.gif).and_then(|()| std::fs::rename(&partial, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    let bytes = encoded.gif.len();
    Ok((encoded, bytes))
}

/// A new recording's file in the data dir's `recordings/` folder (made if missing).
pub(crate) fn new_path() -> Result<PathBuf, String> {
    let dir =
        data_dir().ok_or("no place for recordings: set LUMO_DATA_DIR (or XDG_DATA_HOME or HOME)")?.join("recordings");
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot create {}: {e} (set LUMO_DATA_DIR to another folder)", dir.display()))?;
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let mut n = 0;
    loop {
        let name = if n == 0 { format!("lumo-{stamp}.gif") } else { format!("lumo-{stamp}-{n}.gif") };
        let path = dir.join(name);
        if !path.exists() {
            return Ok(path);
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn pictures_are_thinned_within_a_step_and_placed_by_capture_time() {
        let mut c = Capture::new(epoch_now());
        for i in 0..10u8 {
            c.push(ms(u64::from(i) * 10), Arc::new(vec![i]));
        }
        assert_eq!(c.shots.len(), 1, "a burst within 200 ms keeps one picture");
        assert_eq!(*c.shots[0].1, vec![9], "the newest one");
        c.steps.push((ms(150), "1 click e1".into()));
        c.push(ms(160), Arc::new(vec![20]));
        assert_eq!(c.shots.len(), 2, "a step began in between: a new picture");
        // Taken before step 2 began, arriving after: still step 1's.
        c.steps.push((ms(1000), "2 type e2".into()));
        c.push(ms(900), Arc::new(vec![30]));
        let frames = c.frames();
        let shown: Vec<(u64, &str, u8)> =
            frames.iter().map(|f| (f.at.as_millis() as u64, f.caption.as_str(), f.jpeg[0])).collect();
        assert_eq!(
            shown,
            [
                (0, "recording", 9),
                (150, "1 click e1", 9),
                (160, "1 click e1", 20),
                (900, "1 click e1", 30),
                (1000, "2 type e2", 30)
            ]
        );
    }

    #[test]
    fn the_frame_cap_holds() {
        let mut c = Capture::new(epoch_now());
        for i in 0..(MAX_FRAMES as u64 + 50) {
            c.push(ms(i * 1000), Arc::new(vec![1]));
        }
        assert_eq!(c.shots.len(), MAX_FRAMES);
        assert!(c.capped);
    }
}
