//! The capture layer installed where the Vulkan loader looks when a program runs
//! set-user-ID or set-group-ID.
//!
//! In such a program (Debian's games that keep a shared high-score file run set-group-ID
//! `games`: Emilia Pinball, …) the loader reads no layer folder from the environment
//! (`VK_ADD_LAYER_PATH`, `VK_LAYER_PATH`, `XDG_DATA_HOME`), as the dynamic linker ignores
//! `LD_PRELOAD`: only the system's folders. It still reads `VK_INSTANCE_LAYERS`, which
//! `capture` sets, so the layer runs once its manifest is in one of those folders
//! (`capture --install-layer`). An explicit layer, it stays off in every program that
//! does not name it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where `capture --install-layer` puts the layer's manifest by default.
pub const INSTALL_DIR: &str = "/usr/local/share/vulkan/explicit_layer.d";

/// The folders the loader reads explicit layers from in a set-ID program: its defaults
/// for `XDG_CONFIG_DIRS`, `SYSCONFDIR` and `XDG_DATA_DIRS`.
const SYSTEM_DIRS: [&str; 4] = [
    "/etc/xdg/vulkan/explicit_layer.d",
    "/etc/vulkan/explicit_layer.d",
    "/usr/local/share/vulkan/explicit_layer.d",
    "/usr/share/vulkan/explicit_layer.d",
];

/// An executable the command line runs with another user or group than ours.
#[derive(Debug, PartialEq, Eq)]
pub struct SetId {
    /// The executable.
    pub path: PathBuf,
    /// "set-user-ID" or "set-group-ID".
    pub kind: &'static str,
}

/// The executables of a command line that would run set-user-ID or set-group-ID: the
/// program (found in `PATH` as the system finds it), and each argument that names one
/// (a launcher's program: `timeout 60 pinball`, `sh -c …` aside). Only those whose
/// owner or group differs from ours: for them the system runs the program in secure
/// mode.
pub fn set_id_programs(program: &str, args: &[String]) -> Vec<SetId> {
    let mut found: Vec<SetId> = std::iter::once(program)
        .chain(
            args.iter()
                .map(String::as_str)
                .filter(|a| !a.starts_with('-')),
        )
        .filter_map(executable)
        .filter_map(|path| set_id(&path).map(|kind| SetId { path, kind }))
        .collect();
    found.dedup();
    found
}

/// The file `name` runs: itself where it holds a `/`, else the first in `PATH`.
fn executable(name: &str) -> Option<PathBuf> {
    if name.is_empty() {
        return None;
    }
    if name.contains('/') {
        return Path::new(name).is_file().then(|| PathBuf::from(name));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// How `path` would change our user or group when run: "set-user-ID" where it is
/// set-user-ID and owned by another user, "set-group-ID" where it is set-group-ID and
/// of another group; `None` where it runs as we do.
fn set_id(path: &Path) -> Option<&'static str> {
    let meta = std::fs::metadata(path).ok()?;
    let mode = meta.mode();
    // SAFETY: getuid and getgid cannot fail and touch no memory of ours.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if mode & libc::S_ISUID != 0 && meta.uid() != uid {
        return Some("set-user-ID");
    }
    if mode & libc::S_ISGID != 0 && mode & 0o010 != 0 && meta.gid() != gid {
        return Some("set-group-ID");
    }
    None
}

/// The layer's manifest as the loader finds it in a system folder.
#[derive(Debug, PartialEq, Eq)]
pub enum Installed {
    /// In no system folder.
    Nowhere,
    /// This manifest names `library`, the one given.
    This(PathBuf),
    /// This manifest names another library (another build's).
    Other {
        /// The manifest.
        manifest: PathBuf,
        /// The library it names.
        library: PathBuf,
    },
    /// This manifest names a library that is not there (a build since removed): the
    /// loader fails to load it, and nothing is recorded.
    Missing {
        /// The manifest.
        manifest: PathBuf,
        /// The library it names.
        library: PathBuf,
    },
}

/// Where the system's folders hold a manifest of this layer, and whether it names
/// `library`; the first found, in the loader's order.
pub fn installed(library: &Path) -> Installed {
    installed_in(&SYSTEM_DIRS.map(Path::new), library)
}

/// [`installed`], looking in `dirs`.
fn installed_in(dirs: &[&Path], library: &Path) -> Installed {
    let ours = library.canonicalize().unwrap_or_else(|_| library.into());
    let name = macroscope_capture::LAYER_NAME.to_string_lossy();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut manifests: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        manifests.sort();
        for manifest in manifests {
            let Some(named) = layer_library(&manifest, &name) else {
                continue;
            };
            let Ok(named) = named.canonicalize() else {
                return Installed::Missing {
                    manifest,
                    library: named,
                };
            };
            return match named == ours {
                true => Installed::This(manifest),
                false => Installed::Other {
                    manifest,
                    library: named,
                },
            };
        }
    }
    Installed::Nowhere
}

/// The library a layer manifest names for layer `name`; `None` where it is not a
/// manifest of that layer.
fn layer_library(manifest: &Path, name: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let layer = &json["layer"];
    (layer["name"].as_str()? == name).then_some(())?;
    let path = PathBuf::from(layer["library_path"].as_str()?);
    Some(match path.is_relative() {
        // Relative to the manifest's folder, as the loader reads it.
        true => manifest.parent().unwrap_or(Path::new("/")).join(path),
        false => path,
    })
}

/// What to tell a user about to capture `set_id` programs with the layer `library`,
/// where the system's folders do not give them this layer; `None` where they do.
pub fn advice(set_id: &[SetId], library: &Path) -> Option<String> {
    let first = set_id.first()?;
    let why = format!(
        "{} runs {}: the Vulkan loader reads no layer folder from the environment for it, so `capture` cannot add its layer there",
        first.path.display(),
        first.kind
    );
    match installed(library) {
        Installed::This(_) => None,
        Installed::Nowhere => Some(format!(
            "{why}; install the layer once where the loader looks (`sudo macroscope capture --install-layer`, into {INSTALL_DIR}: an explicit layer, off in every program that does not ask for it), or its calls go unrecorded"
        )),
        Installed::Other { manifest, library: other } => Some(format!(
            "{why}, and the layer installed there ({}) is another build's ({}): `sudo macroscope capture --install-layer` installs this one",
            manifest.display(),
            other.display()
        )),
        Installed::Missing { manifest, library: gone } => Some(format!(
            "{why}, and the layer installed there ({}) names a library that is not there ({}), so its calls go unrecorded: `sudo macroscope capture --install-layer` installs this one",
            manifest.display(),
            gone.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_manifest_of_this_layer_is_found_and_told_apart_from_another_builds() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        let library = dir.path().join("libmacroscope_capture.so");
        std::fs::write(&library, b"").unwrap();
        let other = dir.path().join("old.so");
        std::fs::write(&other, b"").unwrap();
        // Another layer's manifest, and garbage, are passed over.
        std::fs::write(
            first.join("VkLayer_other.json"),
            r#"{"layer": {"name": "VK_LAYER_other", "library_path": "/x.so"}}"#,
        )
        .unwrap();
        std::fs::write(first.join("broken.json"), "{").unwrap();
        let dirs = [first.as_path(), second.as_path()];
        assert_eq!(installed_in(&dirs, &library), Installed::Nowhere);
        let manifest = second.join("VkLayer_macroscope_capture.json");
        std::fs::write(&manifest, macroscope_capture::manifest(&other)).unwrap();
        assert_eq!(
            installed_in(&dirs, &library),
            Installed::Other {
                manifest: manifest.clone(),
                library: other.canonicalize().unwrap(),
            }
        );
        std::fs::write(&manifest, macroscope_capture::manifest(&library)).unwrap();
        assert_eq!(
            installed_in(&dirs, &library),
            Installed::This(manifest.clone())
        );
        // A build since removed: its manifest names a library that is gone.
        let gone = dir.path().join("gone.so");
        std::fs::write(&manifest, macroscope_capture::manifest(&gone)).unwrap();
        assert_eq!(
            installed_in(&dirs, &library),
            Installed::Missing {
                manifest,
                library: gone,
            }
        );
    }

    #[test]
    fn only_executables_that_change_our_ids_are_set_id() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, owner: Option<(u32, u32)>, mode: u32| {
            let path = dir.path().join(name);
            std::fs::write(&path, b"#!/bin/sh\n").unwrap();
            if let Some((uid, gid)) = owner {
                std::os::unix::fs::chown(&path, Some(uid), Some(gid)).unwrap();
            }
            // After the owner: a change of owner clears the set-ID bits.
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            path.display().to_string()
        };
        let plain = make("plain", None, 0o755);
        // Set-group-ID to our own group: it runs as we do.
        let own_group = make("own-group", None, 0o2755);
        let args = ["-k", "5", "10", &own_group].map(String::from).to_vec();
        assert!(set_id_programs(&plain, &args).is_empty());
        // Of another user and group (only root may give a file away): as a game of group
        // `games`, or a tool owned by root run by a user.
        // SAFETY: getuid cannot fail.
        if unsafe { libc::getuid() } == 0 {
            let game = make("game", Some((0, 60)), 0o2755);
            let tool = make("tool", Some((1, 0)), 0o4755);
            let args = ["-s", "INT", "60", &game, "--level", &tool].map(String::from);
            assert_eq!(
                set_id_programs("timeout", &args),
                [
                    SetId {
                        path: game.into(),
                        kind: "set-group-ID"
                    },
                    SetId {
                        path: tool.into(),
                        kind: "set-user-ID"
                    }
                ]
            );
        }
    }
}
