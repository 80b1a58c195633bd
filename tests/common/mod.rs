//! What the CLI test binaries share: running the built `schedplay` binary.

/// Runs `schedplay` with `args`: (exit code, stdout, stderr).
pub fn schedplay(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedplay"))
        .args(args)
        .output()
        .expect("run schedplay");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}
