//! Whether the NVK oracle can run: the root `scripts/nvk-oracle --setup` makes, and the
//! tap library beside the binary that runs under it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The tap library's file name.
pub const TAP_LIBRARY: &str = "libmacroscope_nvk_tap.so";

/// `Ok` when `script` (scripts/nvk-oracle) reports a root it finished making and
/// `bin_dir` holds the tap library; otherwise what is missing and how to make it.
pub fn ready(script: &Path, bin_dir: &Path) -> Result<(), String> {
    let mut missing = Vec::new();
    let root = Command::new(script)
        .arg("--root")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    match root {
        Some(root) if root.join(".macroscope-oracle").is_file() => {}
        Some(root) => missing.push(format!(
            "no NVK root at {} (run `{} --setup` as root)",
            root.display(),
            script.display()
        )),
        None => missing.push(format!("no oracle script at {}", script.display())),
    }
    let tap = bin_dir.join(TAP_LIBRARY);
    if !tap.is_file() {
        missing.push(format!("no {} (cargo build -p nvk-tap)", tap.display()));
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join("; "))
    }
}
