//! The web client (issue 47) against the real binary: `hive serve` with
//! `[web] listen` on a free loopback port and the demo's scripted agent,
//! a console attached in tmux, and a real headless Chromium driven over
//! WebDriver (Debian's `chromium` and `chromium-driver`, fantoccini).
//! Pairs with a printed code, watches the demo pane stream, answers the
//! demo's approval card from the page and sees it leave the console,
//! refuses a second use of the code, keeps a hostile transcript inert, and
//! drops a revoked device's live socket. The attacks on the HTTP side
//! (no cookie, a foreign Origin or Host, a flood of wrong codes, a
//! read-only device acting) go through reqwest.
//!
//! Where Chromium is missing the browser test skips with a message, and
//! fails under CI (`CI` set): `.ci/run` installs it there.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::support::tmux::Tmux;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `hive serve` with its web client, and a console attached in tmux.
pub(super) struct Served {
    t: Tmux,
    bin: PathBuf,
    vars: Vec<String>,
    port: u16,
    server: Child,
}

impl Served {
    pub(super) fn start(bin: &Path) -> Self {
        Self::start_with(bin, "")
    }

    /// `start`, with more of the config (`[[agent]]` tables) after the
    /// demo pane.
    pub(super) fn start_with(bin: &Path, more: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let vars = super::private_env(dir.path());
        let port = free_port();
        let config = dir.path().join("hive.toml");
        std::fs::write(
            &config,
            format!(
                "[web]\nlisten = \"127.0.0.1:{port}\"\n\n[[agent]]\nid = \"demo\"\n\
                 name = \"Architect (demo)\"\nprovider = \"script\"\nscript = \"demo:tour\"\n\n{more}"
            ),
        )
        .unwrap();
        let mut cmd = Command::new(bin);
        cmd.arg("serve")
            .current_dir(dir.path())
            .stdin(Stdio::null());
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        for v in &vars {
            let (k, val) = v.split_once('=').unwrap();
            cmd.env(k, val);
        }
        let server = cmd.spawn().expect("hive serve");
        // Up once it answers (the console would otherwise find no server).
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "hive serve did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let script = format!("'{}' attach ; sleep 600", bin.display());
        let t = Tmux::start("c", dir, (120, 40), &vars, &["sh", "-c", &script]);
        let s = Self {
            t,
            bin: bin.to_owned(),
            vars,
            port,
            server,
        };
        s.wait_console("the console", |c| c.contains("Message Architect"));
        s
    }

    /// hive's state dir in the test's environment.
    pub(super) fn state_dir(&self) -> PathBuf {
        self.t.dir().join("hive_state_dir")
    }

    pub(super) fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `hive ARGS` in the test's environment: its stdout, or its error.
    pub(super) fn hive(&self, args: &[&str]) -> Result<String, String> {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args).current_dir(self.t.dir());
        for v in &self.vars {
            let (k, val) = v.split_once('=').unwrap();
            cmd.env(k, val);
        }
        let out = cmd.output().expect("run hive");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// `hive web pair`'s link, from its line of its own.
    pub(super) fn pair_url(&self, args: &[&str]) -> String {
        let mut all = vec!["web", "pair"];
        all.extend_from_slice(args);
        let out = self.hive(&all).expect("hive web pair");
        let url = out
            .lines()
            .find(|l| l.starts_with("http://"))
            .unwrap_or_else(|| panic!("no link in:\n{out}"));
        assert!(out.contains('█') || out.contains('▀'), "a QR code:\n{out}");
        url.to_owned()
    }

    fn wait_console(&self, what: &str, pred: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let s = self.t.cmd(&["capture-pane", "-p", "-t", "c"]);
            if pred(&s) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(40),
                "timed out waiting for {what} in the console:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.hive(&["kill"]);
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Whether the browser tests can run here; under CI they must.
fn browser_available() -> bool {
    let there = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    if !there {
        assert!(
            std::env::var_os("CI").is_none(),
            "{CHROMIUM} or {CHROMEDRIVER} is missing under CI: .ci/run installs chromium and chromium-driver"
        );
        eprintln!(
            "SKIP: {CHROMIUM} / {CHROMEDRIVER} not installed (apt-get install chromium chromium-driver)"
        );
    }
    there
}

/// chromedriver on a free port, ended when dropped.
struct Driver(Child, u16);

impl Driver {
    fn start() -> Self {
        let port = free_port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromedriver did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self(child, port)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn browser(driver: &Driver) -> fantoccini::Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": CHROMIUM,
            // Root in a container has no user namespaces for the sandbox.
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=420,900"],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    fantoccini::ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.1))
        .await
        .expect("a WebDriver session")
}

/// Evaluates `js` (a function body) in the page until it returns true.
async fn until(c: &fantoccini::Client, what: &str, js: &str) {
    let start = Instant::now();
    loop {
        let v = c.execute(js, vec![]).await.expect("script");
        if v == serde_json::Value::Bool(true) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "timed out waiting for {what}; page: {}",
            c.source().await.unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn js(c: &fantoccini::Client, js: &str) -> serde_json::Value {
    c.execute(js, vec![]).await.expect("script")
}

async fn send_from_page(c: &fantoccini::Client, text: &str) {
    let arg = serde_json::Value::String(text.into());
    c.execute(
        "document.getElementById('text').value = arguments[0]; \
         document.getElementById('send').click(); return true;",
        vec![arg],
    )
    .await
    .expect("send");
}

#[test]
fn a_paired_browser_watches_answers_and_is_revoked() {
    let Some(bin) = super::hive_bin() else { return };
    if !browser_available() {
        return;
    }
    let served = Served::start(&bin);
    let driver = Driver::start();
    runtime().block_on(async {
        let c = browser(&driver).await;
        let url = served.pair_url(&[]);
        c.goto(&url).await.unwrap();
        until(&c, "the live page", "return document.getElementById('conn')?.dataset.state === 'live'").await;
        until(&c, "the demo pane", "return !!document.querySelector('#panes li[data-pane=demo]')").await;

        streams(&c).await;
        service_worker(&c).await;

        // The demo's approval card: on the page and in the console; the
        // page's answer takes it from both.
        send_from_page(&c, "approve it").await;
        until(&c, "the approval card", "return !!document.querySelector('.card[data-pane=demo] button.allow')").await;
        served.wait_console("the card in the console", |s| s.contains("approval needed"));
        c.execute("document.querySelector('.card button.allow').click(); return true;", vec![]).await.unwrap();
        until(&c, "the card gone from the page", "return !document.querySelector('.card')").await;
        served.wait_console("the card gone from the console", |s| !s.contains("approval needed"));

        // A transcript holding markup shows it as text and runs nothing.
        let hostile = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">";
        send_from_page(&c, hostile).await;
        until(&c, "the hostile message", "return [...document.querySelectorAll('#transcript .msg.user')].some(m => m.textContent.includes('<img src=x onerror'))").await;
        let inert = js(&c, "return [typeof window.__pwned, document.querySelectorAll('#transcript img, #transcript script').length]").await;
        assert_eq!(inert, serde_json::json!(["undefined", 0]));

        // The code was spent: opening the link again is refused.
        c.goto(&url).await.unwrap();
        until(&c, "the refusal", "return document.getElementById('outcome')?.dataset.refused === '403'").await;
        c.goto(&served.origin()).await.unwrap();
        until(&c, "the page again", "return document.getElementById('conn')?.dataset.state === 'live'").await;

        // Revoked: the live socket ends at once, and the API says 401.
        let devices = served.hive(&["web", "devices"]).unwrap();
        let id = devices.lines().nth(1).and_then(|l| l.split_whitespace().next()).unwrap().to_owned();
        served.hive(&["web", "revoke", &id]).unwrap();
        until(&c, "the socket ended", "return document.getElementById('conn')?.dataset.state === 'revoked'").await;
        let status = c
            .execute_async("fetch('/api/panes').then(r => arguments[0](r.status))", vec![])
            .await
            .unwrap();
        assert_eq!(status, serde_json::json!(401));
        let _ = c.close().await;
    });
}

/// The page's service worker registers (its route is open, the CSP lets
/// it run, the file is whole JavaScript) and the page offers
/// notifications. What subscribing does here is said, not asserted:
/// headless Chromium has no push service to reach offline
/// (tests/e2e_tmux/web_push.rs plays the browser's part instead).
async fn service_worker(c: &fantoccini::Client) {
    let reg = c
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             navigator.serviceWorker.register('/sw.js') \
               .then(() => navigator.serviceWorker.ready) \
               .then(r => done(r.active ? r.active.scriptURL : 'no worker'), e => done('error: ' + e.message));",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        reg.as_str().is_some_and(|u| u.ends_with("/sw.js")),
        "the service worker did not start: {reg}"
    );
    until(
        c,
        "the notify button",
        "return document.getElementById('notify').hidden === false",
    )
    .await;
    let sub = c
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             fetch('/api/push').then(r => r.json()).then(st => { \
               const s = st.key.replace(/-/g, '+').replace(/_/g, '/'); \
               const raw = atob(s + '='.repeat((4 - s.length % 4) % 4)); \
               const key = Uint8Array.from(raw, ch => ch.charCodeAt(0)); \
               return navigator.serviceWorker.ready.then(r => \
                 r.pushManager.subscribe({userVisibleOnly: true, applicationServerKey: key})); \
             }).then(sub => done('subscribed: ' + sub.endpoint), e => done('no push service: ' + e.name + ': ' + e.message));",
            vec![],
        )
        .await
        .unwrap();
    eprintln!("headless Chromium's pushManager.subscribe: {sub}");
}

/// The code in a pairing link.
pub(super) fn code_of(url: &str) -> String {
    url.rsplit_once('#').unwrap().1.to_owned()
}

pub(super) async fn pair_with(http: &reqwest::Client, s: &Served, code: &str) -> reqwest::Response {
    http.post(format!("{}/api/pair", s.origin()))
        .header("Origin", s.origin())
        .json(&serde_json::json!({ "code": code }))
        .send()
        .await
        .unwrap()
}

/// The device cookie a pairing set.
pub(super) fn cookie_of(res: &reqwest::Response) -> String {
    let set = res.headers()["set-cookie"].to_str().unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    set.split(';').next().unwrap().to_owned()
}

/// A terminal pane on the page is a text view of its screen (issue 47):
/// what its shell prints in the console shows on the page as it changes,
/// markup in it is text, and a conversation pane's transcript comes back
/// when one is picked again.
#[test]
fn a_terminal_pane_shows_on_the_page_as_text() {
    let Some(bin) = super::hive_bin() else { return };
    if !browser_available() {
        return;
    }
    let served = Served::start_with(
        &bin,
        "[[agent]]\nid = \"sh\"\nname = \"Shell\"\nprovider = \"pty\"\ncommand = [\"sh\"]\n",
    );
    // The shell, zoomed: its lines are the console's whole width.
    served.t.cmd(&["send-keys", "-t", "c", "M-2"]);
    served.t.cmd(&["send-keys", "-t", "c", "M-z"]);
    served
        .t
        .cmd(&["send-keys", "-t", "c", "-l", "PS1='$ '; echo web-$((6*7))"]);
    served.t.cmd(&["send-keys", "-t", "c", "Enter"]);
    served.wait_console("the shell's output", |s| s.contains("web-42"));
    let driver = Driver::start();
    runtime().block_on(async {
        let c = browser(&driver).await;
        c.goto(&served.pair_url(&[])).await.unwrap();
        until(&c, "the live page", "return document.getElementById('conn')?.dataset.state === 'live'").await;
        until(&c, "the shell pane", "return !!document.querySelector('#panes li[data-pane=sh]')").await;
        c.execute("document.querySelector('#panes li[data-pane=sh]').click(); return true;", vec![]).await.unwrap();
        until(&c, "the shell's screen as text", "const s = document.getElementById('screen'); \
            return !s.hidden && s.textContent.split('\\n').includes('web-42') \
              && document.getElementById('transcript').hidden && document.getElementById('composer').hidden").await;
        // It follows the screen; markup the program prints is text.
        served.t.cmd(&["send-keys", "-t", "c", "-l", "printf '<b>bold</b><img src=x onerror=\"window.__pwned=1\">\\n'"]);
        served.t.cmd(&["send-keys", "-t", "c", "Enter"]);
        until(&c, "the new output", "return document.getElementById('screen').textContent.split('\\n').includes('<b>bold</b><img src=x onerror=\"window.__pwned=1\">')").await;
        let inert = js(&c, "return [typeof window.__pwned, document.querySelectorAll('#screen *').length]").await;
        assert_eq!(inert, serde_json::json!(["undefined", 0]));
        // Back to the conversation pane: its transcript, not a screen.
        c.execute("document.querySelector('#panes li[data-pane=demo]').click(); return true;", vec![]).await.unwrap();
        until(&c, "the transcript again", "return document.getElementById('screen').hidden && !document.getElementById('transcript').hidden").await;
        let _ = c.close().await;
    });
}

/// The built-in agent's `bash` card (issue 47), answered from the page: the
/// scripted model asks to run a command, the card shows on the page and in
/// the console, the page's allow takes it from both, and the model's next
/// request holds what the command printed.
#[test]
fn the_built_in_agents_bash_card_is_answered_from_the_page() {
    use crate::openai_server::{Reply, Server, answer_text, finish, tool_call};
    let Some(bin) = super::hive_bin() else { return };
    if !browser_available() {
        return;
    }
    let args = serde_json::json!({ "command": "echo from-the-page" }).to_string();
    let model = Server::start(vec![
        Reply::Chunks(vec![
            tool_call(0, "b1", "bash", &args),
            finish("tool_calls"),
        ]),
        answer_text("the command ran", 1, 1),
    ]);
    let served = Served::start_with(
        &bin,
        &format!(
            "[[agent]]\nid = \"llm\"\nname = \"Builtin\"\nprovider = \"openai\"\n\
             model = \"test-model\"\nbase_url = \"{}\"\n",
            model.base_url
        ),
    );
    let driver = Driver::start();
    runtime().block_on(async {
        let c = browser(&driver).await;
        c.goto(&served.pair_url(&[])).await.unwrap();
        until(&c, "the live page", "return document.getElementById('conn')?.dataset.state === 'live'").await;
        until(&c, "the built-in pane", "return !!document.querySelector('#panes li[data-pane=llm]')").await;
        c.execute("document.querySelector('#panes li[data-pane=llm]').click(); return true;", vec![]).await.unwrap();
        until(&c, "its pane shown", "return document.getElementById('pane-title').textContent === 'Builtin'").await;
        send_from_page(&c, "run the command").await;
        until(&c, "the bash card", "const c = document.querySelector('.card[data-pane=llm]'); \
            return !!c && c.textContent.includes('echo from-the-page') && !!c.querySelector('button.allow')").await;
        served.wait_console("the card in the console", |s| s.contains("echo from-the-page"));
        c.execute("document.querySelector('.card[data-pane=llm] button.allow').click(); return true;", vec![]).await.unwrap();
        until(&c, "the card gone from the page", "return !document.querySelector('.card')").await;
        served.wait_console("the card gone from the console", |s| !s.contains("approval needed"));
        until(&c, "the model's answer", "return [...document.querySelectorAll('#transcript .msg.agent')].some(m => m.textContent.includes('the command ran'))").await;
        let _ = c.close().await;
    });
    let told = model
        .messages(1)
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "b1")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(told, "from-the-page\n");
}

#[test]
fn the_web_client_refuses_what_it_should() {
    let Some(bin) = super::hive_bin() else { return };
    let s = Served::start(&bin);
    runtime().block_on(async {
        let http = reqwest::Client::new();
        let o = s.origin();
        unpaired_refused(&http, &o).await;

        let paired = pair_with(&http, &s, &code_of(&s.pair_url(&[]))).await;
        assert_eq!(paired.status(), 200);
        let cookie = cookie_of(&paired);
        let ok = http
            .get(format!("{o}/api/panes"))
            .header("Cookie", &cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(ok.status(), 200);
        foreign_origin_refused(&http, &o, &cookie).await;

        // A page under another host name (DNS rebinding): 403.
        let rebound = http
            .get(format!("{o}/api/panes"))
            .header("Cookie", &cookie)
            .header("Host", "evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(rebound.status(), 403);

        // A read-only device looks and may not act.
        let viewer = pair_with(&http, &s, &code_of(&s.pair_url(&["--read-only"]))).await;
        let viewer = cookie_of(&viewer);
        let me: serde_json::Value = http
            .get(format!("{o}/api/me"))
            .header("Cookie", &viewer)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(me["role"], "read_only");
        let acted = http
            .post(format!("{o}/api/panes/demo/send"))
            .header("Cookie", &viewer)
            .header("Origin", &o)
            .json(&serde_json::json!({"text": "not mine to send"}))
            .send()
            .await
            .unwrap();
        assert_eq!(acted.status(), 403);
        assert!(acted.text().await.unwrap().contains("read-only"));

        flood_locks(&http, &s).await;
        // Revoked: its cookie no longer opens anything.
        let devices = s.hive(&["web", "devices"]).unwrap();
        for line in devices.lines().skip(1) {
            let id = line.split_whitespace().next().unwrap();
            s.hive(&["web", "revoke", id]).unwrap();
        }
        let gone = http
            .get(format!("{o}/api/panes"))
            .header("Cookie", &cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(gone.status(), 401);
        assert!(
            s.hive(&["web", "revoke", "dnope"])
                .unwrap_err()
                .contains("no paired device")
        );
    });
}

/// The page's answer streams: its text is seen growing.
async fn streams(c: &fantoccini::Client) {
    send_from_page(c, "hello from the phone").await;
    let start = Instant::now();
    let mut lengths = std::collections::BTreeSet::new();
    loop {
        let v = js(c, "const a = document.querySelectorAll('#transcript .msg.agent'); \
                        const last = a[a.length - 1]; \
                        return last ? [last.textContent.length, last.dataset.status || ''] : [0, ''];").await;
        let len = v[0].as_u64().unwrap();
        if len > 0 {
            lengths.insert(len);
        }
        if v[1] == "complete" && len > 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "no answer streamed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        lengths.len() >= 2,
        "the answer arrived whole, not streamed: {lengths:?}"
    );
}

/// No cookie (or a made-up one): 401 on every route; what is open holds
/// nothing of the hive's.
async fn unpaired_refused(http: &reqwest::Client, o: &str) {
    let routes = [
        ("GET", "/"),
        ("GET", "/assets/app.js"),
        ("GET", "/assets/render.js"),
        ("GET", "/api/me"),
        ("GET", "/api/panes"),
        ("GET", "/api/panes/demo/transcript"),
        ("GET", "/api/panes/demo/screen"),
        ("POST", "/api/panes/demo/send"),
        ("POST", "/api/panes/demo/interrupt"),
        ("POST", "/api/panes/demo/approve"),
        ("POST", "/api/panes/demo/deny"),
        ("GET", "/api/live"),
        ("GET", "/api/push"),
        ("POST", "/api/push"),
        ("POST", "/api/push/off"),
        ("GET", "/no/such/route"),
    ];
    for cookie in [None, Some("hive_device=forged")] {
        for (method, path) in routes {
            let mut req = http
                .request(method.parse().unwrap(), format!("{o}{path}"))
                .header("Origin", o);
            if let Some(c) = cookie {
                req = req.header("Cookie", c);
            }
            if method == "POST" {
                req = req.json(&serde_json::json!({"text": "x", "request_id": "r"}));
            }
            let status = req.send().await.unwrap().status();
            assert_eq!(status, 401, "{method} {path} with {cookie:?}");
        }
    }
    // What is open holds nothing of the hive's.
    for path in ["/pair", "/assets/pair.js", "/assets/style.css", "/sw.js"] {
        let res = http.get(format!("{o}{path}")).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        let csp = res.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
            "{csp}"
        );
        assert!(!res.text().await.unwrap().contains("Architect"));
    }
}

/// A state change or socket upgrade from another origin, or none: 403.
async fn foreign_origin_refused(http: &reqwest::Client, o: &str, cookie: &str) {
    let cookie = cookie.to_owned();
    for origin in [Some("http://evil.example"), Some("null"), None] {
        let mut req = http
            .post(format!("{o}/api/panes/demo/send"))
            .header("Cookie", &cookie)
            .json(&serde_json::json!({"text": "from elsewhere"}));
        if let Some(origin) = origin {
            req = req.header("Origin", origin);
        }
        assert_eq!(
            req.send().await.unwrap().status(),
            403,
            "send from {origin:?}"
        );
        let mut up = http
            .get(format!("{o}/api/live"))
            .header("Cookie", &cookie)
            .header("Connection", "Upgrade")
            .header("Upgrade", "websocket")
            .header("Sec-WebSocket-Version", "13")
            .header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==");
        if let Some(origin) = origin {
            up = up.header("Origin", origin);
        }
        assert_eq!(
            up.send().await.unwrap().status(),
            403,
            "upgrade from {origin:?}"
        );
    }
}

/// A flood of wrong codes locks pairing, a good code included.
async fn flood_locks(http: &reqwest::Client, s: &Served) {
    let good = code_of(&s.pair_url(&[]));
    for i in 0..5 {
        let res = pair_with(http, s, &format!("GUESS{i:05}")).await;
        assert_eq!(res.status(), 403);
    }
    let locked = pair_with(http, s, &good).await;
    assert_eq!(locked.status(), 429);
    assert!(locked.text().await.unwrap().contains("locked"));
}
