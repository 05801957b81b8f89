//! `hive kill` after a crash: the pid file a dead server left may name
//! another process by now. It is signalled only if it is the hive server
//! that wrote that file (#53 item 9).

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

use super::hive;

/// A server that crashed an hour ago left `ghost.pid`; its pid now belongs
/// to an unrelated `sleep`. `hive kill ghost` says the server is gone and
/// leaves the sleep alone. Failed before: it waited 5 s and SIGKILLed it.
#[test]
fn a_stale_pid_of_another_process_is_never_signalled() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("state/run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut bystander = std::process::Command::new("sleep")
        .arg("300")
        .spawn()
        .unwrap();
    let pid_file = run.join("ghost.pid");
    std::fs::write(&pid_file, bystander.id().to_string()).unwrap();
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&pid_file)
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let out = hive(tmp.path()).args(["kill", "ghost"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("not that server any more"), "{stderr}");
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "hive kill signalled a process that is not its server"
    );
    assert!(!pid_file.exists(), "the stale pid file stays");
    let _ = bystander.kill();
    let _ = bystander.wait();
}
