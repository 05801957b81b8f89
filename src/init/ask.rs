//! Yes/no questions as plain lines on a terminal (they work anywhere a
//! shell does, tmux included), or the defaults with no questions, each
//! question still printed with the answer taken so the output says what
//! was chosen.

use std::io::{self, BufRead, Write};

pub struct Ask<'a> {
    /// `None`: take every default.
    input: Option<&'a mut dyn BufRead>,
    out: &'a mut dyn Write,
}

impl<'a> Ask<'a> {
    /// Questions read from `input`.
    pub fn lines(input: &'a mut dyn BufRead, out: &'a mut dyn Write) -> Self {
        Self {
            input: Some(input),
            out,
        }
    }

    /// No questions: the defaults.
    pub fn defaults(out: &'a mut dyn Write) -> Self {
        Self { input: None, out }
    }

    /// Questions are answered by someone (else the defaults are taken).
    pub fn interactive(&self) -> bool {
        self.input.is_some()
    }

    pub fn out(&mut self) -> &mut dyn Write {
        self.out
    }

    /// `question [Y/n]`; Enter (or end of input) takes `default`.
    pub(crate) fn yes_no(&mut self, question: &str, default: bool) -> io::Result<bool> {
        let hint = if default { "[Y/n]" } else { "[y/N]" };
        write!(self.out, "{question} {hint} ")?;
        self.out.flush()?;
        let Some(input) = self.input.as_mut() else {
            writeln!(self.out, "{}", if default { "y" } else { "n" })?;
            return Ok(default);
        };
        loop {
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                writeln!(self.out)?;
                return Ok(default);
            }
            match line.trim().to_ascii_lowercase().as_str() {
                "" => return Ok(default),
                "y" | "yes" => return Ok(true),
                "n" | "no" => return Ok(false),
                _ => {
                    write!(self.out, "please answer y or n {hint} ")?;
                    self.out.flush()?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_defaults_and_retries() {
        let mut input: &[u8] = b"\nn\nmaybe\nYES\n";
        let mut out = Vec::new();
        let mut ask = Ask::lines(&mut input, &mut out);
        assert!(ask.yes_no("a?", true).unwrap());
        assert!(!ask.yes_no("b?", true).unwrap());
        assert!(ask.yes_no("c?", false).unwrap());
        assert!(!ask.yes_no("d? (end of input)", false).unwrap());
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("c? [y/N] please answer y or n [y/N] "),
            "{text}"
        );

        let mut out = Vec::new();
        let mut ask = Ask::defaults(&mut out);
        assert!(ask.yes_no("e?", true).unwrap());
        assert_eq!(String::from_utf8(out).unwrap(), "e? [Y/n] y\n");
    }
}
