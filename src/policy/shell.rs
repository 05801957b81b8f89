//! Splits a shell command line into the simple commands it runs, so a rule
//! such as `allow Bash(git status*)` is matched against each of them and
//! never against the whole line (`git status; rm -rf ~` is two commands).
//!
//! The reader is deliberately small and conservative: anything it cannot
//! read with certainty (command substitution, backticks, process
//! substitution, here-documents, redirections, subshells, unbalanced quotes,
//! control characters) makes the line [`Parsed::Opaque`], and an opaque line
//! is never allowed by a rule — only asked.

/// What the reader made of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Every simple command of the line, each as its words with the
    /// quotes removed, in order.
    Commands(Vec<Vec<String>>),
    /// A line the reader cannot vouch for, with why.
    Opaque(&'static str),
}

/// Reads `line` into its simple commands (see the module doc).
pub fn parse(line: &str) -> Parsed {
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                if let Err(why) = quoted(c, &mut chars, &mut word) {
                    return Parsed::Opaque(why);
                }
            }
            '\\' => match chars.next() {
                Some(ch) if !ch.is_control() => {
                    in_word = true;
                    word.push(ch);
                }
                _ => return Parsed::Opaque("escaped line end"),
            },
            ' ' | '\t' => end_word(&mut words, &mut word, &mut in_word),
            ';' | '\n' => {
                end_word(&mut words, &mut word, &mut in_word);
                end_command(&mut commands, &mut words);
            }
            '&' | '|' => {
                end_word(&mut words, &mut word, &mut in_word);
                if chars.peek() == Some(&c) {
                    chars.next();
                } else if c == '&' && chars.peek() == Some(&'>') {
                    return Parsed::Opaque("redirection");
                }
                if words.is_empty() && c == '|' {
                    // `| x` or `&& && x`: not a line a person would send.
                    return Parsed::Opaque("empty command");
                }
                end_command(&mut commands, &mut words);
            }
            '$' if matches!(chars.peek(), Some('(' | '{')) => {
                return Parsed::Opaque("substitution");
            }
            '$' => {
                // `$VAR` expands to anything, even in the command's place.
                return Parsed::Opaque("variable");
            }
            '`' => return Parsed::Opaque("backticks"),
            '<' | '>' => return Parsed::Opaque("redirection"),
            '(' | ')' | '{' | '}' => return Parsed::Opaque("group"),
            // Globs and `~` expand to paths the rule never saw.
            '*' | '?' | '[' | '~' => return Parsed::Opaque("expansion"),
            '#' if !in_word => break,
            ch if ch.is_control() || ch == '\u{2028}' || ch == '\u{2029}' => {
                return Parsed::Opaque("control character");
            }
            ch => {
                in_word = true;
                word.push(ch);
            }
        }
    }
    end_word(&mut words, &mut word, &mut in_word);
    end_command(&mut commands, &mut words);
    if commands.is_empty() {
        return Parsed::Opaque("empty line");
    }
    Parsed::Commands(commands)
}

/// Reads a quoted part up to its closing `quote` into `word`. Inside
/// double quotes `$`, backticks and escapes expand: the reader does not
/// follow them.
fn quoted(
    quote: char,
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    word: &mut String,
) -> Result<(), &'static str> {
    loop {
        match chars.next() {
            Some(ch) if ch == quote => return Ok(()),
            Some('$' | '`' | '\\') if quote == '"' => return Err("expansion in quotes"),
            Some(ch) if ch.is_control() => return Err("control character"),
            Some(ch) => word.push(ch),
            None => return Err("unbalanced quote"),
        }
    }
}

fn end_word(words: &mut Vec<String>, word: &mut String, in_word: &mut bool) {
    if *in_word {
        words.push(std::mem::take(word));
        *in_word = false;
    }
}

fn end_command(commands: &mut Vec<Vec<String>>, words: &mut Vec<String>) {
    if !words.is_empty() {
        commands.push(std::mem::take(words));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(line: &str) -> Vec<Vec<String>> {
        match parse(line) {
            Parsed::Commands(c) => c,
            Parsed::Opaque(why) => panic!("{line:?} was opaque: {why}"),
        }
    }

    #[test]
    fn splits_compound_lines() {
        assert_eq!(
            cmds("a x && b; c | d || e & f"),
            vec![
                vec!["a", "x"],
                vec!["b"],
                vec!["c"],
                vec!["d"],
                vec!["e"],
                vec!["f"]
            ]
        );
    }

    #[test]
    fn removes_quotes_and_keeps_their_spaces() {
        assert_eq!(
            cmds(r#"git commit -m "a b" 'c;d' e\ f"#),
            vec![vec!["git", "commit", "-m", "a b", "c;d", "e f"]]
        );
    }

    #[test]
    fn lines_it_cannot_read_are_opaque() {
        for line in [
            "echo $(id)",
            "echo `id`",
            "echo \"$(id)\"",
            "cat < /etc/passwd",
            "echo x > f",
            "ls 'open",
            "(rm x)",
            "$CMD",
            "ls ~",
            "rm *",
            "",
            "| ls",
        ] {
            assert!(matches!(parse(line), Parsed::Opaque(_)), "{line:?}");
        }
    }
}
