//! Web Push end to end (issue 47): `hive serve` with its web client and
//! the demo agent, two devices paired over HTTP that subscribe with
//! endpoints of a push service of the test's own (an HTTP server on
//! 127.0.0.1 that keeps what it receives), each with a key pair and
//! secret made here as a browser makes them. A new approval card reaches
//! both; each message decrypts with its own subscription's keys only
//! (RFC 8291) and carries a VAPID JWT for the push service's origin signed
//! by the key the page was given (RFC 8292); it names the pane and the
//! tool, nothing of the request. A revoked device's subscription goes
//! with it, and one the push service says is gone (410) is forgotten.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Verifier;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use serde_json::{Value, json};

use super::web::{Served, code_of, cookie_of, pair_with};

/// One message the push service got: its path, headers, body.
type Got = (String, axum::http::HeaderMap, Vec<u8>);

/// The test's push service: `POST /push/{id}` is kept and accepted
/// (201), but `/push/gone`, which answers 410 as a service does for an
/// expired subscription.
async fn push_service() -> (u16, Arc<Mutex<Vec<Got>>>) {
    use axum::extract::{Path, State};
    let got: Arc<Mutex<Vec<Got>>> = Arc::default();
    let keep = |State(got): State<Arc<Mutex<Vec<Got>>>>,
                Path(id): Path<String>,
                headers: axum::http::HeaderMap,
                body: axum::body::Bytes| async move {
        got.lock()
            .unwrap()
            .push((id.clone(), headers, body.to_vec()));
        if id == "gone" {
            axum::http::StatusCode::GONE
        } else {
            axum::http::StatusCode::CREATED
        }
    };
    let app = axum::Router::new()
        .route("/push/{id}", axum::routing::post(keep))
        .with_state(got.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, got)
}

/// A browser's side of a subscription: its P-256 key pair and secret.
struct Browser {
    secret: p256::SecretKey,
    auth: web_push_native::Auth,
}

impl Browser {
    fn new() -> Self {
        let secret = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).unwrap();
            if let Ok(k) = p256::SecretKey::from_slice(&bytes) {
                break k;
            }
        };
        let mut auth = [0u8; 16];
        getrandom::fill(&mut auth).unwrap();
        Self {
            secret,
            auth: web_push_native::Auth::clone_from_slice(&auth),
        }
    }

    /// `PushSubscription.toJSON()` for `endpoint`.
    fn subscription(&self, endpoint: &str) -> Value {
        let public = self.secret.public_key().to_encoded_point(false);
        json!({
            "endpoint": endpoint,
            "expirationTime": null,
            "keys": {
                "p256dh": URL_SAFE_NO_PAD.encode(public.as_bytes()),
                "auth": URL_SAFE_NO_PAD.encode(self.auth),
            },
        })
    }

    fn decrypt(&self, body: &[u8]) -> Option<Value> {
        let plain = web_push_native::decrypt(body.to_vec(), &self.secret, &self.auth).ok()?;
        serde_json::from_slice(&plain).ok()
    }
}

struct Device {
    cookie: String,
    id: String,
    browser: Browser,
}

async fn paired(http: &reqwest::Client, s: &Served) -> Device {
    let res = pair_with(http, s, &code_of(&s.pair_url(&[]))).await;
    assert_eq!(res.status(), 200);
    let cookie = cookie_of(&res);
    let me: Value = get(http, s, &cookie, "/api/me").await;
    Device {
        cookie,
        id: me["id"].as_str().unwrap().to_owned(),
        browser: Browser::new(),
    }
}

async fn get(http: &reqwest::Client, s: &Served, cookie: &str, path: &str) -> Value {
    let res = http
        .get(format!("{}{path}", s.origin()))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{path}");
    res.json().await.unwrap()
}

async fn subscribe(http: &reqwest::Client, s: &Served, d: &Device, endpoint: &str) -> u16 {
    http.post(format!("{}/api/push", s.origin()))
        .header("Cookie", &d.cookie)
        .header("Origin", s.origin())
        .json(&d.browser.subscription(endpoint))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn until(what: &str, mut pred: impl FnMut() -> bool) {
    let start = Instant::now();
    while !pred() {
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn count(got: &Mutex<Vec<Got>>, id: &str) -> usize {
    got.lock().unwrap().iter().filter(|g| g.0 == id).count()
}

/// The demo's approval card, asked for and answered over `hive ctl`.
fn card(s: &Served) -> Value {
    s.hive(&["ctl", "send", "demo", "approve it"]).unwrap();
    let start = Instant::now();
    loop {
        let status: Value =
            serde_json::from_str(&s.hive(&["ctl", "status", "demo", "--json"]).unwrap()).unwrap();
        if let Some(a) = status["approvals"].get(0) {
            return a.clone();
        }
        assert!(start.elapsed() < Duration::from_secs(40), "no card");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The VAPID header of `headers`: its JWT's claims, checked against the
/// key `key` the page was given.
fn vapid_claims(headers: &axum::http::HeaderMap, key: &str) -> Value {
    let auth = headers["authorization"].to_str().unwrap();
    let (t, k) = auth
        .strip_prefix("vapid t=")
        .and_then(|r| r.split_once(", k="))
        .unwrap_or_else(|| panic!("{auth}"));
    assert_eq!(k, key, "signed with the key the page subscribed with");
    let (signed, sig) = t.rsplit_once('.').unwrap();
    let public = URL_SAFE_NO_PAD.decode(k).unwrap();
    let verifier = p256::ecdsa::VerifyingKey::from_sec1_bytes(&public).unwrap();
    let sig = p256::ecdsa::Signature::from_slice(&URL_SAFE_NO_PAD.decode(sig).unwrap()).unwrap();
    verifier
        .verify(signed.as_bytes(), &sig)
        .expect("a valid ES256 signature");
    let claims = signed.split_once('.').unwrap().1;
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap()
}

#[test]
fn an_approval_card_is_pushed_encrypted_to_each_subscribed_device() {
    let Some(bin) = super::hive_bin() else { return };
    let s = Served::start(&bin);
    // Several threads: the push service answers while a step waits on
    // `hive ctl` (`block_in_place`).
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (port, got) = push_service().await;
        let http = reqwest::Client::new();
        let endpoint = |id: &str| format!("http://127.0.0.1:{port}/push/{id}");
        let a = paired(&http, &s).await;
        let b = paired(&http, &s).await;
        let state = get(&http, &s, &a.cookie, "/api/push").await;
        assert_eq!(state["subscribed"], false);
        let key = state["key"].as_str().unwrap().to_owned();
        assert_eq!(URL_SAFE_NO_PAD.decode(&key).unwrap().len(), 65);
        // Plain http off this machine, or keys that are not keys: refused.
        let mut bad = Device {
            browser: Browser::new(),
            ..paired(&http, &s).await
        };
        assert_eq!(
            subscribe(&http, &s, &bad, "http://push.example.net/x").await,
            400
        );
        bad.browser.auth = web_push_native::Auth::clone_from_slice(&[0u8; 16]);
        let mut sub = bad.browser.subscription(&endpoint("bad"));
        sub["keys"]["p256dh"] = json!("AAAA");
        let res = http
            .post(format!("{}/api/push", s.origin()))
            .header("Cookie", &bad.cookie)
            .header("Origin", s.origin())
            .json(&sub)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400);

        assert_eq!(subscribe(&http, &s, &a, &endpoint("a")).await, 200);
        assert_eq!(subscribe(&http, &s, &b, &endpoint("b")).await, 200);
        assert_eq!(
            get(&http, &s, &a.cookie, "/api/push").await["subscribed"],
            true
        );

        let asked = tokio::task::block_in_place(|| card(&s));
        until("a push to each device", || {
            count(&got, "a") == 1 && count(&got, "b") == 1
        })
        .await;
        let messages = got.lock().unwrap().clone();
        for (id, headers, body) in &messages {
            let (mine, other) = if id == "a" { (&a, &b) } else { (&b, &a) };
            assert_eq!(headers["content-encoding"], "aes128gcm");
            assert!(headers["ttl"].to_str().unwrap().parse::<u64>().unwrap() > 0);
            let claims = vapid_claims(headers, &key);
            assert_eq!(claims["aud"], format!("http://127.0.0.1:{port}"));
            assert!(claims["exp"].as_i64().unwrap() > chrono::Utc::now().timestamp());
            let msg = mine
                .browser
                .decrypt(body)
                .expect("decrypts with its own keys");
            assert_eq!(
                msg,
                json!({"kind": "approval", "pane": "demo", "tool": asked["tool"]})
            );
            assert!(other.browser.decrypt(body).is_none(), "not with another's");
            // Nothing of the request crosses the push service.
            let args = asked["arguments"].to_string();
            assert!(!String::from_utf8_lossy(body).contains(&args));
        }
        s.hive(&["ctl", "approve", "demo"]).unwrap();

        // Revoked: its subscription goes with it; b still hears.
        s.hive(&["web", "revoke", &a.id]).unwrap();
        tokio::task::block_in_place(|| card(&s));
        until("b's second push", || count(&got, "b") == 2).await;
        assert_eq!(count(&got, "a"), 1, "a revoked device hears nothing");
        s.hive(&["ctl", "approve", "demo"]).unwrap();

        // An endpoint the service says is gone is forgotten.
        assert_eq!(subscribe(&http, &s, &b, &endpoint("gone")).await, 200);
        tokio::task::block_in_place(|| card(&s));
        until("the push to the gone endpoint", || count(&got, "gone") == 1).await;
        let start = Instant::now();
        while get(&http, &s, &b.cookie, "/api/push").await["subscribed"] != false {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the gone subscription stayed"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        s.hive(&["ctl", "approve", "demo"]).unwrap();
        let devices = std::fs::read_to_string(
            std::fs::read_dir(s.state_dir().join("web"))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().ends_with(".devices.json"))
                .unwrap(),
        )
        .unwrap();
        assert!(!devices.contains("/push/"), "no endpoint kept: {devices}");
    });
}
