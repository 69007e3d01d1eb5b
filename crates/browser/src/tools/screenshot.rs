//! `page_screenshot`: the viewport, the whole page or one element, as an
//! image within a byte budget (shrunk to JPEG and scaled down when over it).

use base64::Engine;
use lumo_protocol::ErrorCode;
use lumo_protocol::text::human_bytes;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::error::{BrowserError, refuse};
use crate::helper::{self, element};
use crate::page::check_ref;
use crate::session::Live;
use crate::tab::Tab;
use crate::tool::{Hints, Image, Outcome, Tool, ToolOutput, fail};

const DEFAULT_MAX_BYTES: usize = 1_000_000;
const MIN_MAX_BYTES: usize = 10_000;
const MAX_MAX_BYTES: usize = 20_000_000;
/// Chromium cannot capture taller than its largest texture.
const MAX_HEIGHT: f64 = 16_384.0;
const FALLBACK_QUALITY: u32 = 60;
const ATTEMPTS: usize = 6;

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "page_screenshot",
            "Capture the viewport, the full page or one element as an image.",
            Hints::READ,
            screenshot,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ScreenshotArgs {
    /// Only this element.
    #[serde(rename = "ref")]
    target: Option<String>,
    /// The whole scrollable page instead of the viewport.
    #[serde(default)]
    full_page: bool,
    /// Image format (default png).
    format: Option<Format>,
    /// JPEG quality 1–100 (default 80).
    #[schemars(range(min = 1, max = 100))]
    quality: Option<u32>,
    /// Byte budget of the base64 image (default 1000000); larger images are shrunk.
    #[schemars(range(min = 10_000, max = 20_000_000))]
    max_bytes: Option<usize>,
}

#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Format {
    Png,
    Jpeg,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpeg",
        }
    }
}

/// What to capture, in CSS pixels of the document.
struct Region {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    beyond_viewport: bool,
    label: String,
}

async fn screenshot(session: Ctx, args: ScreenshotArgs) -> Outcome {
    if let Some(r) = &args.target {
        check_ref(r)?;
        if args.full_page {
            return Err(refuse(ErrorCode::InvalidArguments, "full_page: not with ref; give one or the other"));
        }
    }
    let format = args.format.unwrap_or(Format::Png);
    if let Some(q) = args.quality {
        if format != Format::Jpeg {
            return Err(refuse(ErrorCode::InvalidArguments, "quality: only for format \"jpeg\""));
        }
        if !(1..=100).contains(&q) {
            return Err(refuse(ErrorCode::InvalidArguments, format!("quality: {q} is outside 1–100")));
        }
    }
    let max_bytes = args.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    if !(MIN_MAX_BYTES..=MAX_MAX_BYTES).contains(&max_bytes) {
        return Err(refuse(
            ErrorCode::InvalidArguments,
            format!("max_bytes: {max_bytes} is outside {MIN_MAX_BYTES}–{MAX_MAX_BYTES}"),
        ));
    }
    on_tab(&session, TabUse::SCRIPT, |OnTab { live, tab }| async move {
        let region = region(&live, &tab, &args).await?;

        let mut shot = Shot { format, quality: args.quality.unwrap_or(80), scale: 1.0 };
        let mut data = String::new();
        let mut shrunk = false;
        for attempt in 0..ATTEMPTS {
            data = capture(&live, &tab, &region, &shot).await?;
            if data.len() <= max_bytes || attempt + 1 == ATTEMPTS {
                break;
            }
            shrunk = true;
            // Over budget: JPEG first, then lower quality, then fewer pixels (bytes grow with the area).
            if shot.format == Format::Png {
                shot.format = Format::Jpeg;
                shot.quality = shot.quality.min(80);
            } else if shot.quality > FALLBACK_QUALITY {
                shot.quality = FALLBACK_QUALITY;
            } else {
                let ratio = (max_bytes as f64 / data.len() as f64).sqrt() * 0.9;
                shot.scale = (shot.scale * ratio).max(0.05);
            }
        }
        if data.len() > max_bytes {
            return Err(refuse(
                ErrorCode::OperationFailed,
                format!(
                    "the screenshot stays over max_bytes ({max_bytes}) even as JPEG at {:.0}% scale; raise max_bytes or capture less (ref, or not full_page)",
                    shot.scale * 100.0
                ),
            ));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&data)
            .map_err(|_| fail(ErrorCode::OperationFailed, "the browser sent an image that is not base64"))?;
        let size = image_size(&bytes).map(|(w, h)| format!("{w}×{h} ")).unwrap_or_default();
        let mut text = format!(
            "Screenshot of {}: {size}{}, {}",
            region.label,
            shot.format.name().to_uppercase(),
            human_bytes(data.len() as f64)
        );
        if shrunk {
            text.push_str(&format!(
                " (shrunk to fit max_bytes: JPEG quality {}{})",
                shot.quality,
                if shot.scale < 1.0 { format!(", {:.0}% scale", shot.scale * 100.0) } else { String::new() }
            ));
        }
        text.push('.');
        let mut output = ToolOutput::text(text);
        output.images.push(Image { mime: format!("image/{}", shot.format.name()), data });
        Ok(output)
    })
    .await
}

/// Works out the area to capture.
async fn region(live: &Live, tab: &Tab, args: &ScreenshotArgs) -> Result<Region, BrowserError> {
    let element_box = match &args.target {
        Some(r) => {
            let object = element(live, tab, r).await?;
            let Some(helper::Rect { x, y, width: w, height: h }) = helper::element_box(live, tab, &object).await?
            else {
                return Err(refuse(
                    ErrorCode::InvalidState,
                    format!("{r} is not visible (hidden, collapsed or zero size)."),
                ));
            };
            if w < 1.0 || h < 1.0 {
                return Err(refuse(ErrorCode::InvalidState, format!("{r} has no size to capture ({w:.0}×{h:.0}).")));
            }
            let (dx, dy) = helper::viewport_offset(live, tab, &object).await?;
            Some((r, x + dx, y + dy, w, h))
        }
        None => None,
    };
    let metrics = live.call(tab, "Page.getLayoutMetrics", json!({})).await?;
    let viewport = &metrics["cssVisualViewport"];
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let (page_x, page_y) = (num(&viewport["pageX"]), num(&viewport["pageY"]));
    let (view_w, view_h) = (num(&viewport["clientWidth"]), num(&viewport["clientHeight"]));
    let (content_w, content_h) = (num(&metrics["cssContentSize"]["width"]), num(&metrics["cssContentSize"]["height"]));
    Ok(match element_box {
        Some((r, x, y, w, h)) => {
            // Keep the box inside the document.
            let (left, top) = ((x + page_x).max(0.0), (y + page_y).max(0.0));
            let right = (x + page_x + w).min(content_w.max(view_w + page_x));
            let bottom = (y + page_y + h).min(content_h.max(view_h + page_y)).min(top + MAX_HEIGHT);
            Region {
                x: left,
                y: top,
                width: (right - left).max(1.0),
                height: (bottom - top).max(1.0),
                beyond_viewport: x < 0.0 || y < 0.0 || x + w > view_w || y + h > view_h,
                label: r.clone(),
            }
        }
        None if args.full_page => {
            let height = content_h.max(view_h);
            let label = if height > MAX_HEIGHT {
                format!("the full page (its first {MAX_HEIGHT:.0} of {height:.0} px)")
            } else {
                "the full page".to_string()
            };
            Region {
                x: 0.0,
                y: 0.0,
                width: content_w.max(view_w),
                height: height.min(MAX_HEIGHT),
                beyond_viewport: true,
                label,
            }
        }
        None => Region {
            x: page_x,
            y: page_y,
            width: view_w,
            height: view_h,
            beyond_viewport: false,
            label: "the viewport".to_string(),
        },
    })
}

struct Shot {
    format: Format,
    quality: u32,
    scale: f64,
}

async fn capture(live: &Live, tab: &Tab, region: &Region, shot: &Shot) -> Result<String, BrowserError> {
    let mut params = json!({
        "format": shot.format.name(),
        "clip": {"x": region.x, "y": region.y, "width": region.width, "height": region.height, "scale": shot.scale},
        "captureBeyondViewport": region.beyond_viewport,
        "fromSurface": true,
    });
    if shot.format == Format::Jpeg {
        params["quality"] = json!(shot.quality);
    }
    let result = live.call(tab, "Page.captureScreenshot", params).await?;
    result["data"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| refuse(ErrorCode::OperationFailed, "the browser returned no image"))
}

/// Width and height of a PNG or JPEG.
fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let be32 = |b: &[u8]| Some(u32::from_be_bytes(b.try_into().ok()?));
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(bytes.get(16..20)?)?, be32(bytes.get(20..24)?)?));
    }
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    // Walk the JPEG segments to the frame header (SOFn).
    let mut i = 2;
    while i + 9 < bytes.len() {
        if bytes[i] != 0xFF {
            return None;
        }
        let marker = bytes[i + 1];
        let len = usize::from(u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]));
        if (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker) {
            let h = u16::from_be_bytes([bytes[i + 5], bytes[i + 6]]);
            let w = u16::from_be_bytes([bytes[i + 7], bytes[i + 8]]);
            return Some((u32::from(w), u32::from(h)));
        }
        i += 2 + len;
    }
    None
}
