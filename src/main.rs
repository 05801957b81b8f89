//! The `hive` binary: argument parsing lives in `hive::cli`.

fn main() -> std::process::ExitCode {
    hive::cli::main()
}
