//! Recognising a vendor's rate-limit and quota errors, and when they end.
//!
//! A turn that failed on a limit is worth sending again once the limit
//! resets, instead of dying overnight. Every agent says so in its own words
//! (Claude's `usage limit reached|<epoch>` and "resets 3pm", Codex's "try
//! again in 2 days 4 hours", Gemini's `RESOURCE_EXHAUSTED … retry in
//! 38.5s`, an OpenAI-compatible server's HTTP 429 with `Retry-After`); this
//! module is the one place that reads them, from a failed turn's error
//! code and message, so the runner knows no vendor's phrasing. I/O-free.

use std::sync::OnceLock;
use std::time::Duration;

use chrono::{DateTime, Local, NaiveTime, TimeZone, Utc};
use regex::Regex;
use serde::{Deserialize, Serialize};

/// What kind of limit stopped the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// Too many requests for now (HTTP 429): seconds to minutes.
    RateLimit,
    /// A usage cap or quota (5-hour, weekly, billing): hours to days.
    Quota,
}

/// A limit recognised in a turn's error.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub kind: LimitKind,
    /// When the vendor says it resets, where it says.
    pub resets_at: Option<DateTime<Utc>>,
}

/// The error codes that are a limit whatever their message says.
const CODES: &[(&str, LimitKind)] = &[
    ("http_429", LimitKind::RateLimit),
    ("rate_limit", LimitKind::RateLimit),
    ("rate_limit_error", LimitKind::RateLimit),
    ("rate_limit_exceeded", LimitKind::RateLimit),
    ("429", LimitKind::RateLimit),
    ("usage_limit_exceeded", LimitKind::Quota),
    ("usage_limit_reached", LimitKind::Quota),
    ("insufficient_quota", LimitKind::Quota),
    ("resource_exhausted", LimitKind::Quota),
];

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    #[expect(
        clippy::expect_used,
        reason = "the patterns are constants covered by tests"
    )]
    cell.get_or_init(|| Regex::new(pattern).expect("limit pattern"))
}

/// The kind of limit a message speaks of, if any.
fn kind_in(message: &str) -> Option<LimitKind> {
    static QUOTA: OnceLock<Regex> = OnceLock::new();
    static RATE: OnceLock<Regex> = OnceLock::new();
    let quota = regex(
        &QUOTA,
        r"(?i)usage limit|quota|resource_exhausted|hit your (usage )?limit|limit reached|weekly limit|credit balance",
    );
    let rate = regex(
        &RATE,
        r"(?i)\b429\b|rate[ _-]?limit|too many requests|overloaded_error",
    );
    if quota.is_match(message) {
        Some(LimitKind::Quota)
    } else if rate.is_match(message) {
        Some(LimitKind::RateLimit)
    } else {
        None
    }
}

/// Recognises a limit in a failed turn's error `code` and `message`;
/// `now` is the wall clock the message's relative times count from.
pub fn recognize(code: &str, message: &str, now: DateTime<Utc>) -> Option<Limit> {
    let by_code = CODES
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(code))
        .map(|(_, k)| *k);
    let kind = match (by_code, kind_in(message)) {
        (_, Some(LimitKind::Quota)) | (Some(LimitKind::Quota), _) => LimitKind::Quota,
        (Some(k), _) | (None, Some(k)) => k,
        (None, None) => return None,
    };
    Some(Limit {
        kind,
        resets_at: reset_in(message, now),
    })
}

/// When the message says the limit resets: an epoch after `|` (Claude),
/// an RFC 3339 time, "retry after N s" / "retry in 38.5s" / "try again in
/// 2 days 4 hours", or a clock time ("resets 3pm", "try again at 3:05
/// PM", local time, the next such time).
pub fn reset_in(message: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    epoch(message)
        .or_else(|| rfc3339(message))
        .or_else(|| {
            relative(message).and_then(|d| chrono::Duration::from_std(d).ok().map(|d| now + d))
        })
        .or_else(|| clock(message, now))
}

fn epoch(message: &str) -> Option<DateTime<Utc>> {
    static EPOCH: OnceLock<Regex> = OnceLock::new();
    let re = regex(&EPOCH, r"(?i)(?:\||resets?(?:_at)?[\x22:= ]+)(\d{10})\b");
    let secs: i64 = re.captures(message)?.get(1)?.as_str().parse().ok()?;
    Utc.timestamp_opt(secs, 0).single()
}

fn rfc3339(message: &str) -> Option<DateTime<Utc>> {
    static ISO: OnceLock<Regex> = OnceLock::new();
    let re = regex(
        &ISO,
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})",
    );
    let m = re.find(message)?;
    DateTime::parse_from_rfc3339(m.as_str())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// "retry after 30 s", "retry in 38.5s", "retryDelay": "38s", "try again
/// in 4 days 11 hours 43 minutes", "resets in 5h 10m", "Retry-After: 120".
fn relative(message: &str) -> Option<Duration> {
    static LEAD: OnceLock<Regex> = OnceLock::new();
    static PART: OnceLock<Regex> = OnceLock::new();
    let lead = regex(
        &LEAD,
        r#"(?i)(?:retry[ _-]?after|retry(?:ing)? in|try again in|resets? in|retryDelay|resets_in_seconds)[\x22:= ]*((?:\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s|ms)?[\s,and]*)+)"#,
    );
    let part = regex(
        &PART,
        r"(?i)(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s|ms)?",
    );
    let span = lead.captures(message)?.get(1)?.as_str();
    let mut total = 0.0;
    let mut any = false;
    for c in part.captures_iter(span) {
        let n: f64 = c.get(1)?.as_str().parse().ok()?;
        let unit = c.get(2).map_or("s", |u| u.as_str()).to_ascii_lowercase();
        let secs = match unit.as_str() {
            "ms" => n / 1000.0,
            u if u.starts_with('d') => n * 86_400.0,
            u if u.starts_with('h') => n * 3_600.0,
            u if u.starts_with("mi") || u == "m" => n * 60.0,
            _ => n,
        };
        total += secs;
        any = true;
    }
    (any && (0.0..400.0 * 86_400.0).contains(&total)).then(|| Duration::from_secs_f64(total))
}

/// "resets 3pm", "resets at 3:05 PM", "try again at 15:05": the next
/// such local time after `now`.
fn clock(message: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    static CLOCK: OnceLock<Regex> = OnceLock::new();
    let re = regex(
        &CLOCK,
        r"(?i)(?:resets?|try again|available)(?: at)? (\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b",
    );
    let c = re.captures(message)?;
    let mut hour: u32 = c.get(1)?.as_str().parse().ok()?;
    let minute: u32 = c.get(2).map_or(Some(0), |m| m.as_str().parse().ok())?;
    match c.get(3).map(|m| m.as_str().to_ascii_lowercase()).as_deref() {
        Some("pm") if hour < 12 => hour += 12,
        Some("am") if hour == 12 => hour = 0,
        None if c.get(2).is_none() => return None,
        _ => {}
    }
    let time = NaiveTime::from_hms_opt(hour, minute, 0)?;
    let local_now = now.with_timezone(&Local);
    let today = local_now.date_naive().and_time(time);
    let at = Local.from_local_datetime(&today).earliest()?;
    let at = if at <= local_now {
        Local
            .from_local_datetime(&(today + chrono::Duration::days(1)))
            .earliest()?
    } else {
        at
    };
    Some(at.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-27T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn after(limit: &Limit) -> Option<i64> {
        limit.resets_at.map(|t| (t - now()).num_seconds())
    }

    #[test]
    fn each_vendors_words_are_a_limit_with_its_reset() {
        let cases: &[(&str, &str, LimitKind, Option<i64>)] = &[
            // openai provider: HTTP 429 with Retry-After.
            (
                "http_429",
                "HTTP 429 Too Many Requests: rate limited (retry after 3600 s)",
                LimitKind::RateLimit,
                Some(3600),
            ),
            // Claude Code's usage cap with its reset epoch.
            (
                "api_error",
                "Claude AI usage limit reached|1795867200",
                LimitKind::Quota,
                Some(1795867200 - 1795780800),
            ),
            // Claude Code after its own retries: the API's 429.
            (
                "api_error",
                "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}",
                LimitKind::RateLimit,
                None,
            ),
            // Codex's usage cap.
            (
                "error",
                "You've hit your usage limit. Upgrade to Pro or try again in 4 days 11 hours 43 minutes.",
                LimitKind::Quota,
                Some(4 * 86400 + 11 * 3600 + 43 * 60),
            ),
            // Codex exec after its retries.
            (
                "error",
                "exceeded retry limit, last status: 429 Too Many Requests",
                LimitKind::RateLimit,
                None,
            ),
            // Gemini CLI.
            (
                "error",
                "[API Error: {\"error\":{\"code\":429,\"message\":\"Resource has been exhausted (e.g. check quota). Please retry in 38.5s.\",\"status\":\"RESOURCE_EXHAUSTED\"}}]",
                LimitKind::Quota,
                Some(38),
            ),
            // pi: the SDK's error text.
            (
                "error",
                "429 status code (no body)",
                LimitKind::RateLimit,
                None,
            ),
            // An ACP agent's JSON-RPC error.
            (
                "acp_error",
                "Rate limit exceeded: retry after 20 seconds",
                LimitKind::RateLimit,
                Some(20),
            ),
            ("rate_limit", "slow down", LimitKind::RateLimit, None),
            (
                "error",
                "usage limit hit, resets_at: 2026-11-27T15:30:00Z",
                LimitKind::Quota,
                Some(3 * 3600 + 1800),
            ),
        ];
        for (code, message, kind, secs) in cases {
            let l = recognize(code, message, now()).unwrap_or_else(|| panic!("{message}"));
            assert_eq!(l.kind, *kind, "{message}");
            assert_eq!(after(&l), *secs, "{message}");
        }
    }

    #[test]
    fn other_failures_are_no_limit() {
        for (code, message) in [
            ("http_500", "HTTP 500: boom"),
            ("http_400", "HTTP 400: model `nope` does not exist"),
            ("agent_exited", "exit status 1: segfault at line 4290"),
            ("error", "We're currently experiencing high demand"),
        ] {
            assert_eq!(recognize(code, message, now()), None, "{message}");
        }
    }

    #[test]
    fn a_clock_time_is_the_next_one() {
        let at = reset_in("5-hour limit reached ∙ resets 3pm", now()).unwrap();
        let local = at.with_timezone(&Local);
        assert_eq!(local.format("%H:%M").to_string(), "15:00");
        assert!(at > now() && at - now() <= chrono::Duration::days(1));
        let at = reset_in("try again at 9:05 AM", now()).unwrap();
        assert_eq!(
            at.with_timezone(&Local).format("%H:%M").to_string(),
            "09:05"
        );
        assert!(at > now());
        // A bare number is no clock time.
        assert_eq!(reset_in("resets 3", now()), None);
    }
}
