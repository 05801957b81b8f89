//! Cron schedules for `[[trigger]]` tables (issue 48, docs/forge.md): the
//! five fields of crontab(5) (minute, hour, day of month, month, day of
//! week), or six with seconds first as many schedulers take them. Each
//! field is `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a
//! list of those; day of week 0-7 (0 and 7 are Sunday); as in cron, when
//! both day fields are restricted either one matching is enough. Times are
//! local.

use chrono::{DateTime, Datelike, Duration, Local, TimeZone, Timelike};

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    seconds: Vec<bool>,
    minutes: Vec<bool>,
    hours: Vec<bool>,
    days: Vec<bool>,
    months: Vec<bool>,
    weekdays: Vec<bool>,
    /// Day of month and of week both restricted: either matches.
    either_day: bool,
}

impl Cron {
    /// `expr`, or what is wrong with it.
    pub fn parse(expr: &str) -> Result<Self, String> {
        let fields: Vec<&str> = expr.split_whitespace().collect();
        let (sec, rest) = match fields.len() {
            5 => ("0", &fields[..]),
            6 => (fields[0], &fields[1..]),
            n => {
                return Err(format!(
                    "schedule `{expr}`: 5 fields (minute hour day month weekday) or 6 \
                     (seconds first), not {n}"
                ));
            }
        };
        let field = |s: &str, name: &str, lo: u32, hi: u32| {
            set(s, lo, hi).map_err(|e| format!("schedule `{expr}`, {name}: {e}"))
        };
        let mut weekdays = field(rest[4], "weekday", 0, 7)?;
        if weekdays[7] {
            weekdays[0] = true;
        }
        Ok(Self {
            seconds: field(sec, "seconds", 0, 59)?,
            minutes: field(rest[0], "minute", 0, 59)?,
            hours: field(rest[1], "hour", 0, 23)?,
            days: field(rest[2], "day of month", 1, 31)?,
            months: field(rest[3], "month", 1, 12)?,
            weekdays,
            either_day: rest[2] != "*" && rest[4] != "*",
        })
    }

    fn day_matches(&self, t: &DateTime<Local>) -> bool {
        let dom = self.days[t.day() as usize];
        let dow = self.weekdays[t.weekday().num_days_from_sunday() as usize];
        if self.either_day {
            dom || dow
        } else {
            dom && dow
        }
    }

    /// The first time after `after` that it fires (`None`: not within
    /// eight years, as `0 0 30 2 *`).
    pub fn next_after(&self, after: DateTime<Local>) -> Option<DateTime<Local>> {
        let mut t = after.with_nanosecond(0)? + Duration::seconds(1);
        let end = after + Duration::days(366 * 8);
        while t < end {
            if !self.months[t.month() as usize] {
                let (y, m) = if t.month() == 12 {
                    (t.year() + 1, 1)
                } else {
                    (t.year(), t.month() + 1)
                };
                t = local(y, m, 1, 0)?;
                continue;
            }
            if !self.day_matches(&t) {
                t = local(t.year(), t.month(), t.day(), 0)? + Duration::days(1);
                t = local(t.year(), t.month(), t.day(), 0)?;
                continue;
            }
            if !self.hours[t.hour() as usize] {
                t = t.with_minute(0)?.with_second(0)? + Duration::hours(1);
                continue;
            }
            if !self.minutes[t.minute() as usize] {
                t = t.with_second(0)? + Duration::minutes(1);
                continue;
            }
            if !self.seconds[t.second() as usize] {
                t += Duration::seconds(1);
                continue;
            }
            return Some(t);
        }
        None
    }
}

/// Midnight (or `hour`) of a local date; the earliest of an ambiguous one.
fn local(y: i32, m: u32, d: u32, hour: u32) -> Option<DateTime<Local>> {
    Local.with_ymd_and_hms(y, m, d, hour, 0, 0).earliest()
}

/// The values of one field, as flags indexed by value.
fn set(field: &str, lo: u32, hi: u32) -> Result<Vec<bool>, String> {
    let mut out = vec![false; hi as usize + 1];
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step: u32 = s.parse().map_err(|_| format!("`{s}` is no step"))?;
                if step == 0 {
                    return Err("a step of 0".into());
                }
                (r, step)
            }
            None => (part, 1),
        };
        let num = |s: &str| -> Result<u32, String> {
            let n: u32 = s.parse().map_err(|_| format!("`{s}` is no number"))?;
            if n < lo || n > hi {
                return Err(format!("{n} is not within {lo}-{hi}"));
            }
            Ok(n)
        };
        let (a, b) = match range {
            "*" => (lo, hi),
            r => match r.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None if step > 1 => (num(r)?, hi),
                None => (num(r)?, num(r)?),
            },
        };
        if a > b {
            return Err(format!("the range {a}-{b} runs backwards"));
        }
        for v in (a..=b).step_by(step as usize) {
            out[v as usize] = true;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, m: u32, d: u32, h: u32, min: u32, s: u32) -> DateTime<Local> {
        Local
            .with_ymd_and_hms(y, m, d, h, min, s)
            .earliest()
            .unwrap()
    }

    #[test]
    fn schedules_fire_when_crontab_says() {
        let every15 = Cron::parse("*/15 * * * *").unwrap();
        assert_eq!(
            every15.next_after(at(2026, 12, 2, 10, 7, 30)),
            Some(at(2026, 12, 2, 10, 15, 0))
        );
        let weekday9 = Cron::parse("0 9 * * 1-5").unwrap();
        // 2026-12-05 is a Saturday: the next is Monday the 7th.
        assert_eq!(
            weekday9.next_after(at(2026, 12, 4, 9, 0, 0)),
            Some(at(2026, 12, 7, 9, 0, 0))
        );
        let secs = Cron::parse("*/2 * * * * *").unwrap();
        assert_eq!(
            secs.next_after(at(2026, 12, 2, 10, 0, 1)),
            Some(at(2026, 12, 2, 10, 0, 2))
        );
        let new_year = Cron::parse("0 0 1 1 *").unwrap();
        assert_eq!(
            new_year.next_after(at(2026, 12, 2, 10, 0, 0)),
            Some(at(2027, 1, 1, 0, 0, 0))
        );
        // Either day field, as cron has it: the 1st, or any Sunday.
        let either = Cron::parse("0 12 1 * 0").unwrap();
        assert_eq!(
            either.next_after(at(2026, 12, 2, 0, 0, 0)),
            Some(at(2026, 12, 6, 12, 0, 0))
        );
        assert_eq!(
            Cron::parse("0 0 30 2 *")
                .unwrap()
                .next_after(at(2026, 1, 1, 0, 0, 0)),
            None
        );
    }

    #[test]
    fn a_bad_schedule_says_which_field() {
        for (expr, says) in [
            ("* * *", "5 fields"),
            ("61 * * * *", "minute: 61 is not within 0-59"),
            ("* * * * 8", "weekday"),
            ("*/0 * * * *", "a step of 0"),
            ("5-1 * * * *", "backwards"),
            ("x * * * *", "`x` is no number"),
        ] {
            let err = Cron::parse(expr).unwrap_err();
            assert!(err.contains(says), "{expr}: {err}");
        }
    }
}
