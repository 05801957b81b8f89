//! The `hive` binary: argument parsing lives in `hive::cli`.

fn main() -> std::process::ExitCode {
    hive::runtime::tune_allocator();
    if let Some(code) = hive::supervisor::start() {
        return code;
    }
    hive::cli::main()
}
