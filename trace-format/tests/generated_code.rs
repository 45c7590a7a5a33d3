//! The committed generated code is what the pinned `flatc` makes of the schemas.

use std::path::Path;
use std::process::Command;

#[test]
fn generated_code_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let output = Command::new("bash")
        .arg(root.join("scripts/regen-flatbuffers"))
        .arg("--check")
        .current_dir(root)
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "the generated flatbuffers code differs from the schemas; run scripts/regen-flatbuffers\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
