//! Where a remote hive lives: `ssh://[user@]host[:port]/path/to/project`,
//! or a `[[host]]` of the config. Parsing is I/O-free; the path is the
//! project directory on the far side (its `hive.toml` picks the config, as
//! `hive` there would).

use std::fmt;

/// A remote hive's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// What the panes are titled with (`[[host]]`'s name, else the host).
    pub name: String,
    /// `user@host` or `host`, as ssh takes it.
    pub destination: String,
    pub port: Option<u16>,
    /// The project directory on the host; `~/` is the remote user's home.
    pub path: String,
    /// The ssh command line, when the `[[host]]` names one.
    pub ssh_command: Option<String>,
}

/// Why an address is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("`{0}` is not an ssh:// address (ssh://[user@]host[:port]/path/to/project)")]
    NotSsh(String),
    #[error("`{0}` names no host")]
    NoHost(String),
    #[error("`{0}` has a port that is not a number from 1 to 65535")]
    Port(String),
    #[error("`{0}` has characters ssh would read as options or a shell would expand")]
    Unsafe(String),
}

impl Target {
    /// Parses `ssh://[user@]host[:port][/path]`; no path is the remote
    /// user's home directory.
    pub fn parse(addr: &str) -> Result<Self, TargetError> {
        let rest = addr
            .strip_prefix("ssh://")
            .ok_or_else(|| TargetError::NotSsh(addr.to_owned()))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (destination, port) = split_port(authority, addr)?;
        if destination.is_empty() || destination.ends_with('@') {
            return Err(TargetError::NoHost(addr.to_owned()));
        }
        check_destination(destination, addr)?;
        let host = destination.rsplit('@').next().unwrap_or(destination);
        Ok(Self {
            name: host.to_owned(),
            destination: destination.to_owned(),
            port,
            path: remote_path(path),
            ssh_command: None,
        })
    }

    /// A `[[host]]` of the config: `ssh` is `[user@]host[:port]` or an
    /// `ssh://` address; `path` the project on it.
    pub fn from_host(
        name: &str,
        ssh: &str,
        path: &str,
        ssh_command: Option<&str>,
    ) -> Result<Self, TargetError> {
        let addr = if ssh.starts_with("ssh://") {
            ssh.to_owned()
        } else {
            format!("ssh://{ssh}")
        };
        let mut t = Self::parse(&addr)?;
        t.name = name.to_owned();
        if !path.is_empty() {
            t.path = path.to_owned();
        }
        t.ssh_command = ssh_command.map(str::to_owned);
        Ok(t)
    }

    /// `cd` into the project on the far side, in POSIX shell: `~/x` is the
    /// home directory, the rest quoted.
    pub fn cd_command(&self) -> String {
        let path = self.path.as_str();
        if path.is_empty() || path == "~" {
            return "cd".to_owned();
        }
        match path.strip_prefix("~/") {
            Some(rest) => format!("cd \"$HOME\"/{}", quote(rest)),
            None => format!("cd {}", quote(path)),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ssh://{}", self.destination)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        if !self.path.is_empty() {
            if !self.path.starts_with('/') {
                f.write_str("/")?;
            }
            f.write_str(&self.path)?;
        }
        Ok(())
    }
}

/// Quotes a word for a POSIX shell.
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

fn split_port<'a>(authority: &'a str, addr: &str) -> Result<(&'a str, Option<u16>), TargetError> {
    // `[::1]:22` and bare hosts: the port is after the last `:` outside
    // brackets.
    let Some(i) = authority.rfind(':') else {
        return Ok((authority, None));
    };
    if authority[i..].contains(']') {
        return Ok((authority, None));
    }
    let port = authority[i + 1..]
        .parse::<u16>()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| TargetError::Port(addr.to_owned()))?;
    Ok((&authority[..i], Some(port)))
}

/// A destination that starts with `-` would be an ssh option; whitespace
/// or shell characters have no place in a host name.
fn check_destination(dest: &str, addr: &str) -> Result<(), TargetError> {
    let ok = !dest.starts_with('-')
        && dest.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@' | '[' | ']' | ':' | '%')
        });
    if ok {
        Ok(())
    } else {
        Err(TargetError::Unsafe(addr.to_owned()))
    }
}

/// `/~/x` and `/~` are the home directory; an empty path too.
fn remote_path(path: &str) -> String {
    match path {
        "" | "/" | "/~" | "/~/" => String::new(),
        p => match p.strip_prefix("/~/") {
            Some(rest) => format!("~/{rest}"),
            None => p.to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_user_host_port_and_path() {
        let t = Target::parse("ssh://ann@box.lan:2222/srv/proj").unwrap();
        assert_eq!(t.destination, "ann@box.lan");
        assert_eq!(t.name, "box.lan");
        assert_eq!(t.port, Some(2222));
        assert_eq!(t.path, "/srv/proj");
        assert_eq!(t.to_string(), "ssh://ann@box.lan:2222/srv/proj");
    }

    #[test]
    fn home_relative_paths_and_no_path() {
        assert_eq!(Target::parse("ssh://box/~/p").unwrap().path, "~/p");
        assert_eq!(Target::parse("ssh://box").unwrap().path, "");
        assert_eq!(
            Target::parse("ssh://box/~/my proj").unwrap().cd_command(),
            "cd \"$HOME\"/'my proj'"
        );
        assert_eq!(Target::parse("ssh://box").unwrap().cd_command(), "cd");
    }

    #[test]
    fn quoting_survives_quotes_and_dollars() {
        let t = Target::parse("ssh://box/tmp/a'b$(x)").unwrap();
        assert_eq!(t.cd_command(), r"cd '/tmp/a'\''b$(x)'");
    }

    #[test]
    fn refuses_what_is_not_an_address() {
        assert!(matches!(
            Target::parse("box:/x"),
            Err(TargetError::NotSsh(_))
        ));
        assert!(matches!(
            Target::parse("ssh:///x"),
            Err(TargetError::NoHost(_))
        ));
        assert!(matches!(
            Target::parse("ssh://ann@/x"),
            Err(TargetError::NoHost(_))
        ));
        assert!(matches!(
            Target::parse("ssh://box:0/x"),
            Err(TargetError::Port(_))
        ));
        assert!(matches!(
            Target::parse("ssh://box:ssh/x"),
            Err(TargetError::Port(_))
        ));
        // An option smuggled in as a host.
        assert!(matches!(
            Target::parse("ssh://-oProxyCommand=x/p"),
            Err(TargetError::Unsafe(_))
        ));
        assert!(matches!(
            Target::parse("ssh://a;b/p"),
            Err(TargetError::Unsafe(_))
        ));
    }

    #[test]
    fn a_config_host_keeps_its_name_path_and_command() {
        let t = Target::from_host("gpu", "ann@10.0.0.2:22", "~/work", Some("ssh -i k")).unwrap();
        assert_eq!(t.name, "gpu");
        assert_eq!(t.destination, "ann@10.0.0.2");
        assert_eq!(t.port, Some(22));
        assert_eq!(t.path, "~/work");
        assert_eq!(t.ssh_command.as_deref(), Some("ssh -i k"));
    }
}
