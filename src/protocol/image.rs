//! Images attached to a message (issue 14 item 8): a path typed or pasted
//! into a composer that names an image file becomes an attachment the next
//! message carries to agents that take images. This holds what every
//! provider needs — the bytes, their media type, base64 and data URLs —
//! so no provider reads files of its own for it.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde::{Deserialize, Serialize};

/// The largest image hive attaches (agents' APIs refuse far larger ones).
pub const MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;

/// File name endings taken for images.
const EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImageError {
    #[error("{path}: {size} bytes is more than the {max} MB an attachment may have")]
    TooLarge { path: String, size: u64, max: u64 },
    #[error("{path}: not a PNG, JPEG, GIF or WebP image")]
    NotImage { path: String },
    #[error("{path}: {message}")]
    Read { path: String, message: String },
}

/// One attached image, read when it was attached. It crosses the runner
/// boundary (`RunnerCommand::Attach`) as its path and base64 bytes; the
/// media type is sniffed again on the other side.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(into = "ImageWire")]
pub struct Image {
    pub path: PathBuf,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`, from the bytes.
    pub media_type: &'static str,
    pub data: Vec<u8>,
}

/// An `Image` as serialised: the media type is not sent (it is a
/// `&'static str`, found again from the bytes).
#[derive(Serialize, Deserialize)]
struct ImageWire {
    path: PathBuf,
    base64: String,
}

impl From<Image> for ImageWire {
    fn from(i: Image) -> Self {
        Self {
            base64: i.base64(),
            path: i.path,
        }
    }
}

impl<'de> Deserialize<'de> for Image {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Image::try_from(ImageWire::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<ImageWire> for Image {
    type Error = String;

    fn try_from(w: ImageWire) -> Result<Self, String> {
        let data = base64::engine::general_purpose::STANDARD
            .decode(w.base64)
            .map_err(|e| e.to_string())?;
        let media_type = sniff(&data).ok_or("not a PNG, JPEG, GIF or WebP image")?;
        Ok(Self {
            path: w.path,
            media_type,
            data,
        })
    }
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image")
            .field("path", &self.path)
            .field("media_type", &self.media_type)
            .field("bytes", &self.data.len())
            .finish()
    }
}

impl Image {
    /// Reads `path`, refusing files over `MAX_IMAGE_BYTES` and files whose
    /// bytes are not one of the image formats agents take.
    pub fn load(path: &Path) -> Result<Self, ImageError> {
        let shown = path.display().to_string();
        let read_err = |e: std::io::Error| ImageError::Read {
            path: shown.clone(),
            message: e.to_string(),
        };
        let size = std::fs::metadata(path).map_err(read_err)?.len();
        if size > MAX_IMAGE_BYTES {
            return Err(ImageError::TooLarge {
                path: shown,
                size,
                max: MAX_IMAGE_BYTES / (1024 * 1024),
            });
        }
        let data = std::fs::read(path).map_err(read_err)?;
        let media_type = sniff(&data).ok_or(ImageError::NotImage {
            path: shown.clone(),
        })?;
        Ok(Self {
            // Absolute, so an agent that reads the file itself finds it.
            path: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()),
            media_type,
            data,
        })
    }

    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.data)
    }

    /// `data:image/png;base64,…`
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64())
    }

    /// The file name, for chips and the transcript.
    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// "shot.png · 120 KB"
    pub fn label(&self) -> String {
        let kb = (self.data.len() as u64).div_ceil(1024);
        if kb >= 1024 {
            format!("{} · {:.1} MB", self.name(), kb as f64 / 1024.0)
        } else {
            format!("{} · {kb} KB", self.name())
        }
    }
}

/// The image format of `data` by its magic bytes.
fn sniff(data: &[u8]) -> Option<&'static str> {
    if data.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if data.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if data.len() >= 12 && &data[..4] == b"RIFF" && &data[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Whether `path` ends like an image file name.
pub(crate) fn has_image_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The image file a pasted or typed word names, if it is one that exists:
/// terminals paste dropped files quoted, `file://`-prefixed or with
/// backslash-escaped spaces; `~/` is the home directory; relative paths
/// are taken from `cwd`.
pub(crate) fn image_path(word: &str, cwd: &Path) -> Option<PathBuf> {
    let w = word.trim();
    let w = w
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| w.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .unwrap_or(w);
    let w = w.strip_prefix("file://").unwrap_or(w);
    if w.is_empty() || w.contains('\n') {
        return None;
    }
    let unescaped = w.replace("\\ ", " ");
    let path = match unescaped.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(rest))?,
        None => cwd.join(&unescaped),
    };
    (has_image_extension(&path) && path.is_file()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn loads_sniffs_and_caps_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("shot one.png");
        std::fs::write(&png, PNG).unwrap();
        let img = Image::load(&png).unwrap();
        assert_eq!(img.media_type, "image/png");
        assert!(
            img.data_url()
                .starts_with("data:image/png;base64,iVBORw0KGgo")
        );
        let fake = dir.path().join("fake.jpg");
        std::fs::write(&fake, "not really").unwrap();
        assert!(matches!(
            Image::load(&fake),
            Err(ImageError::NotImage { .. })
        ));
        let big = dir.path().join("big.png");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_IMAGE_BYTES + 1).unwrap();
        let err = Image::load(&big).unwrap_err();
        assert!(err.to_string().contains("more than the 10 MB"), "{err}");
    }

    #[test]
    fn pasted_paths_in_the_forms_terminals_use() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("shot one.png");
        std::fs::write(&png, PNG).unwrap();
        let cwd = dir.path();
        let abs = png.display().to_string();
        for pasted in [
            abs.clone(),
            format!("'{abs}'"),
            format!("\"{abs}\"  "),
            format!("file://{abs}"),
            abs.replace(' ', "\\ "),
            "shot one.png".to_owned(),
        ] {
            assert_eq!(image_path(&pasted, cwd), Some(png.clone()), "{pasted}");
        }
        assert_eq!(image_path("missing.png", cwd), None);
        assert_eq!(image_path("notes.txt", cwd), None);
        assert_eq!(image_path(&format!("{abs}\nmore"), cwd), None);
    }
}
