//! Web Push (issue 47, docs/web.md): a phone hears of a new approval card
//! with no page open. The page's service worker subscribes with the
//! browser's push service (`pushManager.subscribe`, this server's VAPID
//! public key); the subscription is kept with its device (so revoking the
//! device ends it), and each notice is a message encrypted for that
//! subscription alone (RFC 8291, `aes128gcm`, through `web-push-native`)
//! and signed as this server (RFC 8292 VAPID: an ES256 JWT for the push
//! service's origin). The message names the pane and the tool, nothing
//! else: the page fetches the card over its own connection, so the push
//! service learns no command, path or text.
//!
//! The VAPID key is made once per server and kept in hive's state dir
//! (0600, never through a symlink).

use std::path::Path;

use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, URL_SAFE_NO_PAD};
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde::{Deserialize, Serialize};

/// How long a push service keeps a message for a phone that is off.
const TTL: std::time::Duration = std::time::Duration::from_secs(6 * 60 * 60);
/// How long a VAPID signature is good for (RFC 8292: at most 24 hours).
const VAPID_VALID_SECS: i64 = 12 * 60 * 60;
/// The longest endpoint kept (the push services' are ~200 characters).
const MAX_ENDPOINT: usize = 2048;

/// base64url as browsers write it: without padding, or with.
const B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

#[derive(Debug, thiserror::Error)]
pub(crate) enum PushError {
    #[error("cannot keep the web push key ({path}): {source}")]
    Key {
        path: String,
        source: std::io::Error,
    },
    #[error("the web push key file {0} is damaged: remove it (devices subscribe again)")]
    BadKey(String),
    #[error("{0}")]
    Subscription(String),
    #[error("cannot encrypt the push message: {0}")]
    Encrypt(String),
}

/// This server's VAPID key pair.
pub(crate) struct Vapid {
    key: SigningKey,
    /// The public key, uncompressed, base64url: what `subscribe` takes.
    public: String,
}

#[derive(Serialize, Deserialize)]
struct KeyFile {
    /// The P-256 private scalar, base64url.
    private: String,
}

impl Vapid {
    /// The key kept at `path`, made (and kept) the first time.
    pub(crate) fn load_or_create(path: &Path) -> Result<Self, PushError> {
        let shown = || path.display().to_string();
        let io = |source| PushError::Key {
            path: shown(),
            source,
        };
        match crate::private::read_own_string(path, 4096) {
            Ok(text) => {
                let file: KeyFile =
                    serde_json::from_str(&text).map_err(|_| PushError::BadKey(shown()))?;
                let bytes = B64
                    .decode(file.private.trim())
                    .map_err(|_| PushError::BadKey(shown()))?;
                let key = SigningKey::from_slice(&bytes).map_err(|_| PushError::BadKey(shown()))?;
                Ok(Self::of(key))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = random_key().map_err(io)?;
                let file = KeyFile {
                    private: URL_SAFE_NO_PAD.encode(key.to_bytes()),
                };
                let json = serde_json::to_vec(&file).map_err(|e| io(std::io::Error::other(e)))?;
                if let Some(dir) = path.parent() {
                    crate::private::create_dir(dir).map_err(io)?;
                }
                crate::private::write_own(path, &json).map_err(io)?;
                Ok(Self::of(key))
            }
            Err(e) => Err(io(e)),
        }
    }

    fn of(key: SigningKey) -> Self {
        let point = key.verifying_key().to_encoded_point(false);
        Self {
            public: URL_SAFE_NO_PAD.encode(point.as_bytes()),
            key,
        }
    }

    pub(crate) fn public_key(&self) -> &str {
        &self.public
    }

    /// The `Authorization` header for a message to `endpoint` (RFC 8292
    /// §3: `vapid t=JWT, k=KEY`), its JWT for the endpoint's origin,
    /// signed now, from `contact`.
    fn authorization(&self, endpoint: &url::Url, contact: &str, now: i64) -> String {
        let aud = endpoint.origin().ascii_serialization();
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({
            "aud": aud,
            "exp": now + VAPID_VALID_SECS,
            "sub": contact,
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signed = format!("{header}.{claims}");
        let sig: Signature = self.key.sign(signed.as_bytes());
        let sig = URL_SAFE_NO_PAD.encode(sig.to_bytes());
        format!("vapid t={signed}.{sig}, k={}", self.public)
    }
}

/// A fresh P-256 private key from the OS's randomness.
fn random_key() -> std::io::Result<SigningKey> {
    loop {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        // A scalar of zero or past the group order (about 2^-128): again.
        if let Ok(key) = SigningKey::from_slice(&bytes) {
            return Ok(key);
        }
    }
}

/// A browser's push subscription, as its `toJSON()` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Subscription {
    pub(crate) endpoint: String,
    pub(crate) keys: Keys,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Keys {
    /// The browser's P-256 public key, uncompressed, base64url.
    pub(crate) p256dh: String,
    /// Its 16-byte authentication secret, base64url.
    pub(crate) auth: String,
}

impl Subscription {
    /// Checks what a page sent: an `https` endpoint (`http` only to this
    /// machine: a relay of the user's own, the tests' endpoint), a public
    /// key on the curve, a 16-byte secret.
    pub(crate) fn checked(self) -> Result<Self, PushError> {
        let bad = |why: &str| PushError::Subscription(why.to_owned());
        if self.endpoint.len() > MAX_ENDPOINT {
            return Err(bad("the push endpoint is too long"));
        }
        let url =
            url::Url::parse(&self.endpoint).map_err(|_| bad("the push endpoint is not a URL"))?;
        let loopback = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            _ => return Err(bad("the push endpoint must be https")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("the push endpoint holds credentials"));
        }
        self.public_key()?;
        self.auth()?;
        Ok(self)
    }

    fn public_key(&self) -> Result<p256::PublicKey, PushError> {
        let bad = || PushError::Subscription("the subscription's p256dh is not a P-256 key".into());
        let bytes = B64.decode(self.keys.p256dh.trim()).map_err(|_| bad())?;
        p256::PublicKey::from_sec1_bytes(&bytes).map_err(|_| bad())
    }

    fn auth(&self) -> Result<web_push_native::Auth, PushError> {
        let bytes = B64
            .decode(self.keys.auth.trim())
            .ok()
            .filter(|b| b.len() == 16);
        let bytes = bytes.ok_or_else(|| {
            PushError::Subscription("the subscription's auth is not 16 bytes".into())
        })?;
        Ok(web_push_native::Auth::clone_from_slice(&bytes))
    }
}

/// The request that delivers `message` to `sub`: encrypted for it,
/// signed by `vapid` as `contact`.
pub(crate) fn request(
    vapid: &Vapid,
    sub: &Subscription,
    message: &[u8],
    contact: &str,
) -> Result<reqwest::Request, PushError> {
    let url = url::Url::parse(&sub.endpoint)
        .map_err(|_| PushError::Subscription("the push endpoint is not a URL".into()))?;
    let uri = sub
        .endpoint
        .parse()
        .map_err(|_| PushError::Subscription("the push endpoint is not a URI".into()))?;
    let built = web_push_native::WebPushBuilder::new(uri, sub.public_key()?, sub.auth()?)
        .with_valid_duration(TTL)
        .build(message.to_vec())
        .map_err(|e| PushError::Encrypt(e.to_string()))?;
    let (mut parts, body) = built.into_parts();
    let auth = vapid.authorization(&url, contact, chrono::Utc::now().timestamp());
    let value =
        axum::http::HeaderValue::from_str(&auth).map_err(|e| PushError::Encrypt(e.to_string()))?;
    parts
        .headers
        .insert(axum::http::header::AUTHORIZATION, value);
    // Shown at once, not batched for later (RFC 8030 §5.3).
    parts
        .headers
        .insert("Urgency", axum::http::HeaderValue::from_static("high"));
    reqwest::Request::try_from(axum::http::Request::from_parts(parts, body))
        .map_err(|e| PushError::Encrypt(e.to_string()))
}

/// The push for runner event `event` of pane `pane` (a helper of
/// `parent`, if spawned), if it is one: an approval card always (the
/// pane and the tool's name); a failed or finished turn, an agent that
/// exited or stalled only while no console is attached (someone at a
/// terminal sees it there). Never the request's arguments or any text of
/// the agent's.
pub(crate) fn message(
    event: &crate::protocol::pane::PaneEvent,
    pane: &str,
    parent: Option<&str>,
    consoles: bool,
) -> Option<serde_json::Value> {
    use crate::notify::Reason;
    let clip = |s: &str| s.chars().take(80).collect::<String>();
    let (kind, what) = match Reason::of(event, parent)? {
        Reason::Permission { tool, .. } => {
            return Some(serde_json::json!({
                "kind": "approval", "pane": clip(pane), "tool": clip(&tool),
            }));
        }
        _ if consoles => return None,
        Reason::TurnFailed(_) => ("failed", "turn failed"),
        Reason::TurnFinished => ("finished", "turn finished"),
        Reason::HelperFinished { .. } => ("finished", "helper finished a turn"),
        Reason::Exited => ("exited", "agent exited"),
        Reason::Stalled => ("stalled", "stalled: no progress"),
        Reason::Bell | Reason::Idle | Reason::Posted { .. } => return None,
    };
    Some(serde_json::json!({ "kind": kind, "pane": clip(pane), "what": what }))
}

/// What a push service said to one message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    Accepted,
    /// The subscription is gone (404/410): forget it.
    Gone,
    Failed(String),
}

pub(crate) async fn deliver(http: &reqwest::Client, req: reqwest::Request) -> Delivery {
    match http.execute(req).await {
        Ok(res) if res.status().is_success() => Delivery::Accepted,
        Ok(res) if matches!(res.status().as_u16(), 404 | 410) => Delivery::Gone,
        Ok(res) => Delivery::Failed(format!("the push service answered {}", res.status())),
        Err(e) => Delivery::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use p256::ecdsa::VerifyingKey;
    use p256::ecdsa::signature::Verifier;
    use p256::elliptic_curve::sec1::ToEncodedPoint;

    use super::*;

    /// A browser's side: its key pair and secret, and its subscription.
    fn browser(endpoint: &str) -> (p256::SecretKey, web_push_native::Auth, Subscription) {
        let secret = p256::SecretKey::from_slice(&random_key().unwrap().to_bytes()).unwrap();
        let auth = web_push_native::Auth::clone_from_slice(&[7u8; 16]);
        let public = secret.public_key().to_encoded_point(false);
        let sub = Subscription {
            endpoint: endpoint.into(),
            keys: Keys {
                p256dh: URL_SAFE_NO_PAD.encode(public.as_bytes()),
                auth: URL_SAFE_NO_PAD.encode(auth),
            },
        };
        (secret, auth, sub)
    }

    #[test]
    fn the_key_is_made_once_and_kept_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web/s.vapid.json");
        let a = Vapid::load_or_create(&path).unwrap();
        let b = Vapid::load_or_create(&path).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        assert_eq!(B64.decode(a.public_key()).unwrap().len(), 65);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::write(&path, "{\"private\":\"AAAA\"}").unwrap();
        assert!(matches!(
            Vapid::load_or_create(&path),
            Err(PushError::BadKey(_))
        ));
    }

    /// The message decrypts with the browser's key alone, and the VAPID
    /// header is a JWT for the endpoint's origin signed by the key the
    /// browser subscribed with.
    #[test]
    fn a_message_is_encrypted_for_the_subscription_and_signed() {
        let dir = tempfile::tempdir().unwrap();
        let vapid = Vapid::load_or_create(&dir.path().join("k.json")).unwrap();
        let (secret, auth, sub) = browser("https://push.example.net/send/abc?x=1");
        let req = request(&vapid, &sub, br#"{"pane":"demo"}"#, "mailto:a@b.c").unwrap();
        assert_eq!(req.headers()["content-encoding"], "aes128gcm");
        assert_eq!(req.headers()["ttl"], TTL.as_secs().to_string().as_str());
        let body = req.body().and_then(|b| b.as_bytes()).unwrap().to_vec();
        assert!(!String::from_utf8_lossy(&body).contains("demo"));
        let plain = web_push_native::decrypt(body.clone(), &secret, &auth).unwrap();
        assert_eq!(plain, br#"{"pane":"demo"}"#);
        let (other, _, _) = browser("https://x/");
        assert!(web_push_native::decrypt(body, &other, &auth).is_err());

        let header = req.headers()["authorization"].to_str().unwrap();
        let (t, k) = header
            .strip_prefix("vapid t=")
            .and_then(|r| r.split_once(", k="))
            .unwrap();
        assert_eq!(k, vapid.public_key());
        let (signed, sig) = t.rsplit_once('.').unwrap();
        let key = VerifyingKey::from_sec1_bytes(&B64.decode(k).unwrap()).unwrap();
        let sig = Signature::from_slice(&B64.decode(sig).unwrap()).unwrap();
        key.verify(signed.as_bytes(), &sig).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&B64.decode(signed.split_once('.').unwrap().1).unwrap())
                .unwrap();
        assert_eq!(claims["aud"], "https://push.example.net");
        assert_eq!(claims["sub"], "mailto:a@b.c");
    }

    #[test]
    fn a_subscription_is_checked_before_it_is_kept() {
        let ok = |e: &str| browser(e).2.checked().is_ok();
        assert!(ok("https://fcm.googleapis.com/fcm/send/x"));
        assert!(ok("http://127.0.0.1:9999/push"));
        assert!(ok("http://localhost:9999/push"));
        assert!(
            !ok("http://push.example.net/x"),
            "plain http off this machine"
        );
        assert!(!ok("file:///etc/passwd"));
        assert!(!ok("https://user:pw@push.example.net/x"));
        assert!(!ok("not a url"));
        let mut sub = browser("https://p/").2;
        sub.keys.auth = URL_SAFE_NO_PAD.encode([1u8; 8]);
        assert!(sub.clone().checked().is_err());
        sub.keys.auth = URL_SAFE_NO_PAD.encode([1u8; 16]);
        sub.keys.p256dh = URL_SAFE_NO_PAD.encode([4u8; 65]);
        assert!(sub.checked().is_err(), "not a point on the curve");
    }
}
