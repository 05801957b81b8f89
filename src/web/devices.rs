//! The paired devices: each a random token the browser keeps in an
//! HttpOnly cookie and the server keeps only as its SHA-256 (a stolen
//! file pairs nothing), with its id, role, a label (the browser's
//! user agent, cut short) and when it was paired and last seen. Kept in
//! one JSON file per server in hive's state dir, 0600, written whole and
//! atomically on each change; revoking a device tells its open live
//! connections at once ([`Devices::revoked`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::broadcast;

use crate::protocol::verb::Role;

/// The longest label kept of a user agent.
const LABEL_MAX: usize = 80;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Device {
    pub(crate) id: String,
    pub(crate) role: Role,
    pub(crate) label: String,
    /// Hex SHA-256 of its token.
    token_sha256: String,
    pub(crate) paired: i64,
    #[serde(default)]
    pub(crate) last_seen: Option<i64>,
    /// Its browser's Web Push subscription, if it asked for notices
    /// (src/web/push.rs); it goes with the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) push: Option<super::push::Subscription>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum DevicesError {
    #[error("cannot read the paired devices ({path}): {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the paired devices file {path} cannot be read as JSON: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot save the paired devices ({path}): {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no paired device `{0}` (`hive web devices` lists them)")]
    Unknown(String),
}

pub(crate) struct Devices {
    path: PathBuf,
    list: Vec<Device>,
    /// The id of each device revoked, to its open connections.
    revoked: broadcast::Sender<String>,
}

/// A new random secret, URL-safe base64 of `bytes` random bytes.
pub(crate) fn random_token(bytes: usize) -> std::io::Result<String> {
    use base64::Engine;
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

pub(crate) fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Equal in time whatever the bytes (a token's hash against each stored one).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

impl Devices {
    /// The devices paired before, from `path` (none when it is absent).
    pub(crate) fn load(path: &Path) -> Result<Self, DevicesError> {
        let list = match crate::private::read_own_string(path, crate::private::MAX_STATE_BYTES) {
            Ok(text) => serde_json::from_str(&text).map_err(|source| DevicesError::Parse {
                path: path.to_owned(),
                source,
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(DevicesError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let (revoked, _) = broadcast::channel(16);
        Ok(Self {
            path: path.to_owned(),
            list,
            revoked,
        })
    }

    pub(crate) fn list(&self) -> &[Device] {
        &self.list
    }

    /// Pairs a new device; its token (the cookie's value) is returned once
    /// and kept only hashed.
    pub(crate) fn pair(
        &mut self,
        role: Role,
        user_agent: &str,
    ) -> Result<(Device, String), DevicesError> {
        let write = |source| DevicesError::Write {
            path: self.path.clone(),
            source,
        };
        let token = random_token(32).map_err(write)?;
        let id = loop {
            let id = format!("d{}", &sha256_hex(&random_token(8).map_err(write)?)[..6]);
            if !self.list.iter().any(|d| d.id == id) {
                break id;
            }
        };
        let label: String = crate::sanitize::neutralize(user_agent)
            .chars()
            .take(LABEL_MAX)
            .collect();
        let device = Device {
            id,
            role,
            label,
            token_sha256: sha256_hex(&token),
            paired: chrono::Utc::now().timestamp(),
            last_seen: None,
            push: None,
        };
        self.list.push(device.clone());
        self.save()?;
        Ok((device, token))
    }

    /// The device whose token this is.
    pub(crate) fn find(&self, token: &str) -> Option<&Device> {
        let hash = sha256_hex(token);
        self.list.iter().find(|d| same(&d.token_sha256, &hash))
    }

    /// Notes that device `id` was seen now (kept in memory; saved with the
    /// next change).
    pub(crate) fn seen(&mut self, id: &str) {
        if let Some(d) = self.list.iter_mut().find(|d| d.id == id) {
            d.last_seen = Some(chrono::Utc::now().timestamp());
        }
    }

    /// Unpairs device `id` and ends its open connections.
    pub(crate) fn revoke(&mut self, id: &str) -> Result<Device, DevicesError> {
        let i = self
            .list
            .iter()
            .position(|d| d.id == id)
            .ok_or_else(|| DevicesError::Unknown(id.to_owned()))?;
        let device = self.list.remove(i);
        self.save()?;
        // No connection listening is no one to tell.
        let _ = self.revoked.send(device.id.clone());
        Ok(device)
    }

    /// Device `id`'s push subscription is now `push` (none: it stops).
    pub(crate) fn set_push(
        &mut self,
        id: &str,
        push: Option<super::push::Subscription>,
    ) -> Result<(), DevicesError> {
        let d = self
            .list
            .iter_mut()
            .find(|d| d.id == id)
            .ok_or_else(|| DevicesError::Unknown(id.to_owned()))?;
        d.push = push;
        self.save()
    }

    /// The push service said subscription `endpoint` of device `id` is
    /// gone: it is forgotten (unless the device subscribed anew since).
    pub(crate) fn push_gone(&mut self, id: &str, endpoint: &str) {
        let Some(d) = self.list.iter_mut().find(|d| d.id == id) else {
            return;
        };
        if d.push.as_ref().is_some_and(|p| p.endpoint == endpoint) {
            d.push = None;
            if let Err(e) = self.save() {
                tracing::warn!("web push: {e}");
            }
        }
    }

    /// Every device's subscription.
    pub(crate) fn subscriptions(&self) -> Vec<(String, super::push::Subscription)> {
        self.list
            .iter()
            .filter_map(|d| d.push.clone().map(|p| (d.id.clone(), p)))
            .collect()
    }

    /// Hears each device revoked from now on.
    pub(crate) fn revoked(&self) -> broadcast::Receiver<String> {
        self.revoked.subscribe()
    }

    fn save(&self) -> Result<(), DevicesError> {
        let write = |source| DevicesError::Write {
            path: self.path.clone(),
            source,
        };
        let json = serde_json::to_vec_pretty(&self.list)
            .map_err(|e| write(std::io::Error::other(e.to_string())))?;
        crate::private::write_own(&self.path, &json).map_err(write)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_token_is_kept_hashed_in_a_private_file_and_revoked_for_good() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web/a.devices.json");
        let mut devices = Devices::load(&path).unwrap();
        let (phone, token) = devices.pair(Role::Full, "Phone\x1b[31m").unwrap();
        assert!(phone.label.starts_with("Phone") && !phone.label.contains('\x1b'));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&token), "the token itself is never written");
        assert!(text.contains(&sha256_hex(&token)));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Read back by the next server.
        let mut again = Devices::load(&path).unwrap();
        assert_eq!(
            again.find(&token).map(|d| d.id.clone()),
            Some(phone.id.clone())
        );
        assert!(again.find("not-a-token").is_none());
        let mut gone = again.revoked();
        again.revoke(&phone.id).unwrap();
        assert_eq!(gone.try_recv().unwrap(), phone.id);
        assert!(again.find(&token).is_none());
        assert!(Devices::load(&path).unwrap().find(&token).is_none());
        assert!(matches!(
            again.revoke(&phone.id),
            Err(DevicesError::Unknown(_))
        ));
    }

    #[test]
    fn a_damaged_file_is_an_error_not_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.json");
        crate::private::write_own(&path, b"{not json").unwrap();
        assert!(matches!(
            Devices::load(&path),
            Err(DevicesError::Parse { .. })
        ));
    }
}
