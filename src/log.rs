//! hive's log file: `hive.log` in the state directory, for the console,
//! the server and a server's stderr. Never the terminal (a console draws
//! there).

/// `hive.log` in the state directory, opened for appending (0600, never
/// through a planted link), and its path: the console's and the server's
/// logs, and a server's stderr.
pub(crate) fn open_log() -> Option<(std::fs::File, std::path::PathBuf)> {
    let dir = crate::paths::state_dir();
    crate::private::create_dir(&dir).ok()?;
    let path = dir.join("hive.log");
    let mut options = crate::private::file_options();
    options.create(true).append(true);
    let file = crate::private::open_own_file(&mut options, &path).ok()?;
    Some((file, path))
}

/// Log lines queued for the writer thread at most.
const LOG_QUEUE_LINES: usize = 8_192;

/// Logs go to `hive.log` in the state directory, never to the terminal.
pub(crate) fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    crate::private::tighten_tree(&crate::paths::state_dir());
    let (file, _) = open_log()?;
    // The default queue of 128,000 lines is allocated up front (4 MB in
    // every hive process); at `info` a few thousand lines are plenty, and
    // past them lines are dropped, never waited for.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .finish(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("HIVE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("hive=info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}
