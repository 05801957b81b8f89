//! What differs between two answers of a fan-out, word by word (issue 31):
//! the compare view marks, in each answer, the words the selected answer
//! does not have. Pure: text in, lines of (segment, differs) out.

use similar::{ChangeTag, TextDiff};

/// `text` split into lines of segments, each flagged when it is not in
/// `reference` (a word diff; whitespace is never flagged).
pub fn marks(reference: &str, text: &str) -> Vec<Vec<(String, bool)>> {
    let diff = TextDiff::from_words(reference, text);
    let mut lines: Vec<Vec<(String, bool)>> = vec![Vec::new()];
    for change in diff.iter_all_changes() {
        let differs = match change.tag() {
            ChangeTag::Delete => continue,
            ChangeTag::Insert => true,
            ChangeTag::Equal => false,
        };
        let value = change.value();
        for (i, part) in value.split('\n').enumerate() {
            if i > 0 {
                lines.push(Vec::new());
            }
            if part.is_empty() {
                continue;
            }
            let flag = differs && !part.trim().is_empty();
            let Some(line) = lines.last_mut() else {
                continue;
            };
            match line.last_mut() {
                Some((s, f)) if *f == flag => s.push_str(part),
                _ => line.push((part.to_owned(), flag)),
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_the_reference_lacks_are_flagged() {
        let got = marks(
            "use thiserror for libraries\nand anyhow",
            "use anyhow for everything\nand anyhow",
        );
        assert_eq!(
            got,
            [
                vec![
                    ("use ".to_owned(), false),
                    ("anyhow".to_owned(), true),
                    (" for ".to_owned(), false),
                    ("everything".to_owned(), true),
                ],
                vec![("and anyhow".to_owned(), false)],
            ]
        );
    }

    #[test]
    fn the_same_text_has_no_marks() {
        let got = marks("a b\nc", "a b\nc");
        assert!(got.iter().flatten().all(|(_, f)| !f));
        assert_eq!(got.len(), 2);
    }
}
