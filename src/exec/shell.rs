//! POSIX shell lines for the kinds whose far side takes one string (ssh)
//! or has no working-directory option (kubectl): `cd DIR && exec env
//! K=V program args…`, every word quoted, so an argument is never read
//! as shell.

use std::collections::BTreeMap;

use crate::remote::target::quote;

/// `exec [env K=V…] program args…`, quoted.
pub fn exec_line(program: &str, args: &[String], env: &BTreeMap<String, String>) -> String {
    let mut words = vec!["exec".to_owned()];
    if !env.is_empty() {
        words.push("env".to_owned());
        words.extend(env.iter().map(|(k, v)| quote(&format!("{k}={v}"))));
    }
    words.push(quote(program));
    words.extend(args.iter().map(|a| quote(a)));
    words.join(" ")
}

/// `cd` then `exec_line`: `cd` is a shell line of its own (`Target::cd_command`
/// writes `~/` as `$HOME`).
pub fn in_dir(cd: &str, exec: &str) -> String {
    format!("{cd} && {exec}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_is_quoted_and_env_comes_through_env() {
        let env = BTreeMap::from([("A".to_owned(), "x y".to_owned())]);
        let line = exec_line("claude", &["-p".into(), "$(rm -rf ~)".into()], &env);
        assert_eq!(line, "exec env 'A=x y' 'claude' '-p' '$(rm -rf ~)'");
        assert_eq!(
            exec_line("pi", &[], &BTreeMap::new()),
            "exec 'pi'",
            "no env, no `env`"
        );
    }

    #[test]
    fn the_line_runs_as_written() {
        // A real shell reads the words back unchanged.
        let args = ["it's".to_owned(), "a b".to_owned(), "$HOME".to_owned()];
        let line = in_dir(
            "cd /",
            &exec_line("printf", &["%s|".into()], &BTreeMap::new()),
        );
        let line = format!(
            "{line} {}",
            args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
        );
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&line)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "it's|a b|$HOME|");
    }
}
