//! The per-pane process sampler (issue 33 item 6) on a real process tree:
//! a shell that started two children and a grandchild, one of them holding
//! 64 MiB and one spinning, read from /proc as the runner reads its agent.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use hive::procstat::{Sampler, read_tree};

/// A parent (python) with a child that holds 64 MiB, a child that spins,
/// and a grandchild under a shell; its pid once every process is up.
fn tree() -> std::process::Child {
    let script = r#"
import subprocess, sys, time
hold = subprocess.Popen([sys.executable, "-c", "b = bytearray(64 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nimport time; print('ok', flush=True); time.sleep(60)"], stdout=subprocess.PIPE)
spin = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 60\nwhile time.time() < end: pass"])
shell = subprocess.Popen(["sh", "-c", "sleep 60 & wait"])
hold.stdout.readline()
time.sleep(0.3)
print("up", flush=True)
time.sleep(60)
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "up");
    child
}

fn end(child: &mut std::process::Child) {
    // SAFETY: signalling the test's own process group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
}

#[test]
fn a_real_tree_is_read_whole_with_its_memory_and_cpu() {
    let mut child = tree();
    let pid = child.id();
    let (page, _) = hive::procstat::machine();
    let r = read_tree(std::path::Path::new("/proc"), pid, page).expect("the tree");
    // python, hold, spin, sh, sleep.
    assert_eq!(r.processes, 5, "{r:?}");
    assert!(r.rss_bytes >= 64 << 20, "{r:?}");
    let mut s = Sampler::new(pid);
    let first = s.sample().unwrap();
    assert_eq!(first.cpu_percent, 0.0, "nothing to compare with yet");
    std::thread::sleep(Duration::from_millis(500));
    let second = s.sample().unwrap();
    // The spinning child keeps a core busy; the sampler sees it (it cannot
    // see more than the machine's cores).
    assert!(second.cpu_percent > 10.0, "{second:?}");
    assert!(
        second.cpu_percent
            <= 100.0 * std::thread::available_parallelism().unwrap().get() as f64 + 5.0,
        "{second:?}"
    );
    assert_eq!(second.processes, 5);
    end(&mut child);
    // Gone: no sample, no error.
    assert_eq!(s.sample(), None);
}
