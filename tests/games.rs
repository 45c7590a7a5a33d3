//! Real games, short runs: each captured through the layer on lavapipe under Xvfb
//! (`scripts/games`), replayed strictly through the driver model on both MME
//! generations, verified against NVK where the oracle is set up (as CI sets it up), and
//! replayed on the capturing driver with every frame compared with its
//! captured checksum. Skipped where the games are not installed (`scripts/games
//! install`), unless `MACROSCOPE_REQUIRE_GAMES` is set, as CI sets it.

use std::path::Path;
use std::process::Command;

/// The games, each of whose frames replays as captured: two with native Vulkan
/// renderers and two through Zink.
const GAMES: [(&str, &str, u32); 4] = [
    ("warzone2100", "/usr/games/warzone2100", 60),
    ("ddnet", "/usr/games/DDNet", 60),
    ("etr", "/usr/games/etr", 30),
    ("neverball", "/usr/games/neverball", 30),
];

#[test]
fn games_replay_strictly_and_every_frame_matches_on_the_capturing_driver() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (game, binary, frames) in GAMES {
        if !Path::new(binary).exists() {
            assert!(
                std::env::var_os("MACROSCOPE_REQUIRE_GAMES").is_none(),
                "{game} is not installed (scripts/games install)"
            );
            continue;
        }
        let out = Command::new(root.join("scripts/games"))
            .args(["run", game, &frames.to_string()])
            .env("MACROSCOPE", env!("CARGO_BIN_EXE_macroscope"))
            .current_dir(root)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Both strict replays ran (the script stops at the first that fails).
        for arch in ["turing", "fermi"] {
            assert!(
                stdout.contains(&format!("{game}.{arch}.msr")),
                "{game}: no strict replay on {arch}\n{stdout}\n{stderr}"
            );
        }
        // The model pushes what NVK pushes, every difference explained (Warzone 2100's
        // dynamic uniform buffers once went unexplained in every draw).
        if std::env::var_os("MACROSCOPE_REQUIRE_NVK").is_some() {
            assert!(
                stdout.contains("(TU102 Turing)") && stdout.contains("; unexplained 0"),
                "{game}: verify found unexplained differences\n{stdout}\n{stderr}"
            );
        }
        let verdict = format!("{game}: frames checked: {frames} of {frames} match the capture");
        assert!(
            out.status.success() && stdout.contains(&verdict),
            "{game}: expected `{verdict}`\n{stdout}\n{stderr}"
        );
        // The costs report gives each frame's cost and the draws that repeat.
        assert!(stdout.contains("per frame ("), "{stdout}");
        assert!(
            stdout.contains("draws that repeat the draw before them"),
            "{stdout}"
        );
    }
}
