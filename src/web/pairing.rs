//! Pairing codes: `hive web pair` asks the server for one; it is good for
//! one use within ten minutes. Every code tried that is not a live one
//! counts against the server, and five such tries lock pairing for fifteen
//! minutes (a right code included), so a code cannot be guessed by
//! trying. Kept in memory only: a restarted server has no code out.
//!
//! Time comes in as an argument, so the tests move the clock instead of
//! waiting.

use std::time::{Duration, Instant};

use crate::protocol::verb::Role;

/// How long a code is good for.
pub(crate) const CODE_TTL: Duration = Duration::from_secs(10 * 60);
/// Wrong codes before pairing locks.
pub(crate) const MAX_WRONG: u32 = 5;
/// How long it stays locked.
pub(crate) const LOCKOUT: Duration = Duration::from_secs(15 * 60);
/// A code's length: 10 characters of 32, 50 bits, over five tries.
const CODE_LEN: usize = 10;
/// No 0/O or 1/I to misread from a screen; 32 letters, so a random byte
/// picks each evenly.
const ALPHABET: &[u8] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ";

struct Code {
    sha256: String,
    role: Role,
    expires: Instant,
}

#[derive(Default)]
pub(crate) struct Pairing {
    codes: Vec<Code>,
    wrong: u32,
    locked_until: Option<Instant>,
}

/// Why a code did not pair.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("that pairing code is wrong, used or expired (`hive web pair` prints a new one)")]
    Wrong,
    #[error("pairing is locked for {0} more minutes after too many wrong codes")]
    Locked(u64),
}

impl Pairing {
    /// A new code for a device of `role`, good until `now + CODE_TTL`.
    pub(crate) fn issue(&mut self, role: Role, now: Instant) -> std::io::Result<String> {
        let mut bytes = [0u8; CODE_LEN];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        let code: String = bytes
            .iter()
            .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
            .collect();
        self.codes.retain(|c| c.expires > now);
        self.codes.push(Code {
            sha256: super::devices::sha256_hex(&code),
            role,
            expires: now + CODE_TTL,
        });
        Ok(code)
    }

    /// Spends `code`: the role it was issued for, once; a wrong one
    /// counts toward the lock.
    pub(crate) fn redeem(&mut self, code: &str, now: Instant) -> Result<Role, Refusal> {
        if let Some(until) = self.locked_until {
            if until > now {
                let left = until.duration_since(now).as_secs().div_ceil(60);
                return Err(Refusal::Locked(left));
            }
            self.locked_until = None;
            self.wrong = 0;
        }
        self.codes.retain(|c| c.expires > now);
        let hash = super::devices::sha256_hex(code.trim());
        if let Some(i) = self.codes.iter().position(|c| c.sha256 == hash) {
            self.wrong = 0;
            return Ok(self.codes.remove(i).role);
        }
        self.wrong += 1;
        if self.wrong >= MAX_WRONG {
            self.locked_until = Some(now + LOCKOUT);
            // The codes out are spent too: whoever guessed may have seen one.
            self.codes.clear();
        }
        Err(Refusal::Wrong)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_pairs_once_and_not_after_ten_minutes() {
        let mut p = Pairing::default();
        let t0 = Instant::now();
        let code = p.issue(Role::ReadOnly, t0).unwrap();
        assert_eq!(code.len(), CODE_LEN);
        assert_eq!(p.redeem(&code, t0), Ok(Role::ReadOnly));
        assert_eq!(p.redeem(&code, t0), Err(Refusal::Wrong), "single use");
        let late = p.issue(Role::Full, t0).unwrap();
        let after = t0 + CODE_TTL + Duration::from_secs(1);
        assert_eq!(p.redeem(&late, after), Err(Refusal::Wrong), "expired");
    }

    #[test]
    fn five_wrong_codes_lock_pairing_for_fifteen_minutes() {
        let mut p = Pairing::default();
        let t0 = Instant::now();
        let good = p.issue(Role::Full, t0).unwrap();
        for i in 0..MAX_WRONG {
            assert_eq!(p.redeem(&format!("WRONG{i}"), t0), Err(Refusal::Wrong));
        }
        // Locked: even the right code is refused, and it is spent.
        assert_eq!(p.redeem(&good, t0), Err(Refusal::Locked(15)));
        let later = t0 + LOCKOUT - Duration::from_secs(30);
        assert_eq!(p.redeem(&good, later), Err(Refusal::Locked(1)));
        let open = t0 + LOCKOUT + Duration::from_secs(1);
        assert_eq!(p.redeem(&good, open), Err(Refusal::Wrong));
        let fresh = p.issue(Role::Full, open).unwrap();
        assert_eq!(p.redeem(&fresh, open), Ok(Role::Full));
    }

    #[test]
    fn a_right_code_clears_the_count() {
        let mut p = Pairing::default();
        let t0 = Instant::now();
        for _ in 0..MAX_WRONG - 1 {
            let _ = p.redeem("nope", t0);
        }
        let code = p.issue(Role::Full, t0).unwrap();
        assert_eq!(p.redeem(&code, t0), Ok(Role::Full));
        let next = p.issue(Role::Full, t0).unwrap();
        assert_eq!(p.redeem("nope", t0), Err(Refusal::Wrong));
        assert_eq!(p.redeem(&next, t0), Ok(Role::Full), "not locked");
    }
}
