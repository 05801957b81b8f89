//! The confinement rules of fs.rs, tried the way a hostile repository or
//! agent would: symlinks planted in the tree, FIFOs, huge files.

use super::*;
use std::os::unix::fs::symlink;

fn root() -> (tempfile::TempDir, FsRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = FsRoot::new(dir.path(), MissingFile::Empty);
    (dir, root)
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn inside_paths_resolve_and_outside_are_refused() {
    let (dir, root) = root();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let inside = dir.path().join("a.txt");
    assert_eq!(
        root.read(inside.to_str().unwrap(), None, None).unwrap(),
        "one\ntwo\nthree\n"
    );
    assert_eq!(root.read("a.txt", Some(2), Some(1)).unwrap(), "two\n");
    assert_eq!(root.read("a.txt", Some(3), None).unwrap(), "three\n");
    assert_eq!(root.read("a.txt", Some(9), Some(1)).unwrap(), "");
    let escape = format!("{}/../etc/passwd", dir.path().display());
    assert!(matches!(
        root.read(&escape, None, None),
        Err(FsError::Outside { .. })
    ));
    assert!(matches!(
        root.write("/etc/hive-test", "x"),
        Err(FsError::Outside { .. })
    ));
}

#[test]
fn symlink_out_of_the_root_is_refused() {
    let (dir, root) = root();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    symlink(outside.path(), dir.path().join("link")).unwrap();
    let err = root.read("link/secret", None, None).unwrap_err();
    assert_eq!(err.code(), -32602);
    assert!(root.write("link/new.txt", "x").is_err());
    assert!(!outside.path().join("new.txt").exists());
}

#[test]
fn write_through_a_dangling_symlink_is_refused() {
    let (dir, root) = root();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted");
    symlink(&target, dir.path().join("link")).unwrap();
    let err = root.write("link", "pwned").unwrap_err();
    assert!(matches!(err, FsError::Symlink(_)), "{err}");
    assert!(err.is_refusal());
    assert!(!target.exists());
    // A link whose target is inside is refused too: the final component is
    // never followed.
    std::fs::write(dir.path().join("real.txt"), "r").unwrap();
    symlink(dir.path().join("real.txt"), dir.path().join("alias")).unwrap();
    assert!(matches!(
        root.read("alias", None, None),
        Err(FsError::Symlink(_))
    ));
}

#[test]
fn a_symlinked_directory_inside_the_root_is_followed() {
    let (dir, root) = root();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(dir.path().join("real/f.txt"), "inside").unwrap();
    symlink(dir.path().join("real"), dir.path().join("alias")).unwrap();
    assert_eq!(root.read("alias/f.txt", None, None).unwrap(), "inside");
    root.write("alias/g.txt", "new").unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("real/g.txt")).unwrap(),
        "new"
    );
}

#[test]
fn fifos_and_directories_are_refused_without_blocking() {
    let (dir, root) = root();
    mkfifo(&dir.path().join("pipe"));
    // Without O_NONBLOCK both would block forever (no writer, no reader).
    let err = root.read("pipe", None, None).unwrap_err();
    assert!(
        matches!(err, FsError::NotRegular { kind: "fifo", .. }),
        "{err}"
    );
    let err = root.write("pipe", "x").unwrap_err();
    assert!(matches!(err, FsError::NotRegular { .. }), "{err}");
    std::fs::create_dir(dir.path().join("d")).unwrap();
    assert!(matches!(
        root.read("d", None, None),
        Err(FsError::NotRegular {
            kind: "directory",
            ..
        })
    ));
}

#[test]
fn reads_stream_the_range_and_cap_what_they_return() {
    let (dir, root) = root();
    // 1 GiB, sparse: one short line, then zeros without a newline.
    let big = dir.path().join("big.bin");
    {
        let mut f = File::create(&big).unwrap();
        f.write_all(b"first line\n").unwrap();
        f.set_len(1 << 30).unwrap();
    }
    assert_eq!(
        root.read("big.bin", Some(1), Some(1)).unwrap(),
        "first line\n"
    );
    let err = root.read("big.bin", None, None).unwrap_err();
    assert!(matches!(err, FsError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("`line` and `limit`"));
    assert_eq!(err.code(), -32602);
    // A short range after a long skip.
    let many = dir.path().join("many.txt");
    let text: String = (1..=10_000).map(|i| format!("l{i}\n")).collect();
    std::fs::write(&many, &text).unwrap();
    assert_eq!(
        root.read("many.txt", Some(9_999), Some(5)).unwrap(),
        "l9999\nl10000\n"
    );
}

#[test]
fn read_range_refuses_past_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, "aaaa\nbbbb\ncccc\n").unwrap();
    let open = || File::open(&p).unwrap();
    assert_eq!(read_range(open(), None, None, 15).unwrap().len(), 15);
    assert!(matches!(
        read_range(open(), None, None, 14),
        Err(RangeError::TooLarge)
    ));
    assert_eq!(read_range(open(), Some(2), Some(1), 5).unwrap(), "bbbb\n");
}

#[test]
fn missing_files_follow_the_configured_answer() {
    let (dir, root) = root();
    assert_eq!(root.read("nope.txt", None, None).unwrap(), "");
    let strict = FsRoot::new(dir.path(), MissingFile::Error);
    assert_eq!(
        strict.read("nope.txt", None, None).unwrap_err().code(),
        -32002
    );
    root.write("sub/dir/new.txt", "hello").unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/dir/new.txt")).unwrap(),
        "hello"
    );
    // Overwrite truncates.
    root.write("sub/dir/new.txt", "hi").unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/dir/new.txt")).unwrap(),
        "hi"
    );
}

#[test]
fn jobs_answer_in_json_rpc_and_flag_refusals() {
    let (dir, root) = root();
    std::fs::write(dir.path().join("a.txt"), "x").unwrap();
    let ok = FsJob::new(
        json!(7),
        root.clone(),
        FsOp::Read {
            path: "a.txt".into(),
            line: None,
            limit: None,
        },
    )
    .run();
    let v: Value = serde_json::from_str(&ok.line).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["content"], "x");
    assert!(ok.refusal.is_none());
    let bad = FsJob::new(
        json!(8),
        root,
        FsOp::Write {
            path: "/etc/passwd".into(),
            content: String::new(),
        },
    )
    .run();
    let v: Value = serde_json::from_str(&bad.line).unwrap();
    assert_eq!(v["error"]["code"], -32602);
    assert!(bad.refusal.unwrap().contains("refused agent file access"));
}
