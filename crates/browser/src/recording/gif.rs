//! Frames of a recording → an animated GIF: each screencast JPEG decoded
//! (`zune-jpeg`), scaled to the recording's width, given its caption bar, and
//! written (`gif`) as only the rectangle that changed since the frame before,
//! with its own quantised palette. Frames that change nothing lengthen the one
//! before instead. Also a small still preview of the last frame.

use std::time::Duration;

use super::caption::{self, BAR_HEIGHT};

/// Widest recording, in pixels (the screencast is asked for this width already).
pub(crate) const MAX_WIDTH: usize = 800;
/// Tallest page area kept (the rest is cut).
const MAX_PAGE_HEIGHT: usize = 1000;
/// Widest preview.
const PREVIEW_WIDTH: usize = 320;
/// Shortest and longest time one frame is shown when played back.
const MIN_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_secs(3);
/// The last frame of a step stays at least this long, so its caption can be read.
const STEP_DELAY: Duration = Duration::from_millis(900);
/// How long the very last frame stays.
const LAST_DELAY: Duration = Duration::from_secs(2);
/// A pixel counts as changed when a channel moves more than this (JPEG noise).
const TOLERANCE: u8 = 10;
/// NeuQuant speed (1 best … 30 fastest).
const QUANT_SPEED: i32 = 10;

/// One captured frame.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    /// Since the recording started.
    pub(crate) at: Duration,
    /// The screencast's JPEG.
    pub(crate) jpeg: std::sync::Arc<Vec<u8>>,
    /// What the bar under it says.
    pub(crate) caption: String,
}

/// An encoded recording.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub(crate) gif: Vec<u8>,
    pub(crate) preview: Vec<u8>,
    /// Frames written (changes that showed).
    pub(crate) frames: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// How long it plays.
    pub(crate) duration: Duration,
}

/// Why frames could not become a GIF.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EncodeError {
    #[error("no frame was captured (the tab showed nothing while recording)")]
    Empty,
    #[error("a screencast frame is not a JPEG lumo can read: {0}")]
    Decode(String),
    #[error("cannot write the GIF: {0}")]
    Gif(#[from] ::gif::EncodingError),
}

/// An RGB picture.
#[derive(Clone)]
struct Rgb {
    width: usize,
    height: usize,
    data: Vec<u8>,
}

fn decode(jpeg: &[u8]) -> Result<Rgb, EncodeError> {
    let mut decoder = zune_jpeg::JpegDecoder::new(std::io::Cursor::new(jpeg));
    let pixels = decoder.decode().map_err(|e| EncodeError::Decode(format!("{e:?}")))?;
    let info = decoder.info().ok_or_else(|| EncodeError::Decode("no image header".into()))?;
    let (width, height) = (usize::from(info.width), usize::from(info.height));
    let channels = pixels.len().checked_div(width * height).unwrap_or(0);
    let data = match channels {
        3 => pixels,
        4 => pixels.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect(),
        1 => pixels.iter().flat_map(|&g| [g, g, g]).collect(),
        n => return Err(EncodeError::Decode(format!("{n} channels"))),
    };
    Ok(Rgb { width, height, data })
}

/// `image` scaled to `width` (area average when shrinking, nearest when growing).
fn scale(image: &Rgb, width: usize) -> Rgb {
    if image.width == width || image.width == 0 {
        return image.clone();
    }
    let height = (image.height * width).div_ceil(image.width).max(1);
    let mut data = vec![0u8; width * height * 3];
    for y in 0..height {
        let (sy0, sy1) =
            (y * image.height / height, ((y + 1) * image.height / height).max(y * image.height / height + 1));
        for x in 0..width {
            let (sx0, sx1) =
                (x * image.width / width, ((x + 1) * image.width / width).max(x * image.width / width + 1));
            let mut sum = [0u32; 3];
            let mut n = 0u32;
            for sy in sy0..sy1.min(image.height) {
                for sx in sx0..sx1.min(image.width) {
                    let at = (sy * image.width + sx) * 3;
                    for (total, value) in sum.iter_mut().zip(&image.data[at..at + 3]) {
                        *total += u32::from(*value);
                    }
                    n += 1;
                }
            }
            let at = (y * width + x) * 3;
            for (out, total) in data[at..at + 3].iter_mut().zip(sum) {
                *out = u8::try_from(total / n.max(1)).unwrap_or(u8::MAX);
            }
        }
    }
    Rgb { width, height, data }
}

/// The frame as shown: the page scaled into the canvas, the caption bar under it.
fn compose(page: &Rgb, width: usize, page_height: usize, caption: &str) -> Rgb {
    let page = scale(page, width);
    let height = page_height + BAR_HEIGHT;
    let mut data = vec![0xffu8; width * height * 3];
    for y in 0..page.height.min(page_height) {
        let row = y * width * 3;
        data[row..row + width * 3].copy_from_slice(&page.data[row..row + width * 3]);
    }
    caption::draw_bar(&mut data, width, page_height, caption);
    Rgb { width, height, data }
}

/// The smallest rectangle (x, y, w, h) holding every pixel that differs.
fn changed(before: &Rgb, after: &Rgb) -> Option<(usize, usize, usize, usize)> {
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for y in 0..after.height {
        for x in 0..after.width {
            let at = (y * after.width + x) * 3;
            let differs = (0..3).any(|c| before.data[at + c].abs_diff(after.data[at + c]) > TOLERANCE);
            if differs {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
        }
    }
    (x0 != usize::MAX).then(|| (x0, y0, x1 - x0 + 1, y1 - y0 + 1))
}

fn crop(image: &Rgb, (x, y, w, h): (usize, usize, usize, usize)) -> Vec<u8> {
    let mut out = Vec::with_capacity(w * h * 3);
    for row in y..y + h {
        let at = (row * image.width + x) * 3;
        out.extend_from_slice(&image.data[at..at + w * 3]);
    }
    out
}

fn u16_of(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// GIF delays count hundredths of a second.
fn centis(d: Duration) -> u16 {
    u16::try_from(d.as_millis().div_ceil(10)).unwrap_or(u16::MAX)
}

/// Encodes `frames` (in time order; the recording ended at `end`).
pub(crate) fn encode(frames: &[Frame], end: Duration) -> Result<Encoded, EncodeError> {
    let first = frames.first().ok_or(EncodeError::Empty)?;
    let first_page = decode(&first.jpeg)?;
    let width = first_page.width.clamp(1, MAX_WIDTH);
    let page_height = scale(&first_page, width).height.clamp(1, MAX_PAGE_HEIGHT);
    let height = page_height + BAR_HEIGHT;
    let mut out = Vec::new();
    let mut encoder = ::gif::Encoder::new(&mut out, u16_of(width), u16_of(height), &[])?;
    encoder.set_repeat(::gif::Repeat::Infinite)?;

    // How long each frame shows: until the next one, within bounds.
    let delays: Vec<Duration> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| match frames.get(i + 1) {
            Some(next) => {
                let gap = next.at.saturating_sub(f.at).clamp(MIN_DELAY, MAX_DELAY);
                if next.caption != f.caption { gap.max(STEP_DELAY) } else { gap }
            }
            None => end.saturating_sub(f.at).clamp(LAST_DELAY, MAX_DELAY),
        })
        .collect();

    let mut shown: Option<Rgb> = None;
    let mut pending: Option<(::gif::Frame<'static>, Duration)> = None;
    let mut written = 0;
    let mut duration = Duration::ZERO;
    for (frame, delay) in frames.iter().zip(delays) {
        duration += delay;
        let page = if std::ptr::eq(frame, first) { first_page.clone() } else { decode(&frame.jpeg)? };
        let canvas = compose(&page, width, page_height, &frame.caption);
        let rect = match &shown {
            None => Some((0, 0, width, height)),
            Some(before) => changed(before, &canvas),
        };
        let Some(rect) = rect else {
            // Nothing new on screen: the frame before stays up longer.
            if let Some((_, d)) = pending.as_mut() {
                *d += delay;
            }
            continue;
        };
        if let Some((mut gif_frame, d)) = pending.take() {
            gif_frame.delay = centis(d);
            encoder.write_frame(&gif_frame)?;
            written += 1;
        }
        let pixels = crop(&canvas, rect);
        let mut gif_frame = ::gif::Frame::from_rgb_speed(u16_of(rect.2), u16_of(rect.3), &pixels, QUANT_SPEED);
        gif_frame.left = u16_of(rect.0);
        gif_frame.top = u16_of(rect.1);
        gif_frame.dispose = ::gif::DisposalMethod::Keep;
        pending = Some((gif_frame, delay));
        shown = Some(canvas);
    }
    if let Some((mut gif_frame, d)) = pending.take() {
        gif_frame.delay = centis(d);
        encoder.write_frame(&gif_frame)?;
        written += 1;
    }
    drop(encoder);
    let last = shown.ok_or(EncodeError::Empty)?;
    Ok(Encoded { gif: out, preview: preview(&last)?, frames: written, width, height, duration })
}

/// The last frame, small, as a one-frame GIF.
fn preview(last: &Rgb) -> Result<Vec<u8>, EncodeError> {
    let small = scale(last, last.width.min(PREVIEW_WIDTH));
    let mut out = Vec::new();
    {
        let mut encoder = ::gif::Encoder::new(&mut out, u16_of(small.width), u16_of(small.height), &[])?;
        let frame = ::gif::Frame::from_rgb_speed(u16_of(small.width), u16_of(small.height), &small.data, QUANT_SPEED);
        encoder.write_frame(&frame)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(width: usize, height: usize, fill: u8) -> Rgb {
        Rgb { width, height, data: vec![fill; width * height * 3] }
    }

    #[test]
    fn only_the_changed_rectangle_is_found() {
        let before = picture(10, 10, 200);
        let mut after = before.clone();
        for (x, y) in [(2, 3), (5, 7)] {
            let at = (y * 10 + x) * 3;
            after.data[at] = 0;
        }
        assert_eq!(changed(&before, &after), Some((2, 3, 4, 5)));
        let mut noisy = before.clone();
        noisy.data[0] = 205;
        assert_eq!(changed(&before, &noisy), None, "JPEG noise is not a change");
    }

    #[test]
    fn scaling_keeps_the_aspect_and_averages() {
        let mut image = picture(4, 2, 0);
        image.data[..6].fill(255);
        let half = scale(&image, 2);
        assert_eq!((half.width, half.height), (2, 1));
        assert_eq!(half.data[0], 127);
    }

    #[test]
    fn no_frames_is_an_error() {
        assert!(matches!(encode(&[], Duration::ZERO), Err(EncodeError::Empty)));
    }
}
