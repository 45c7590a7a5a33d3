//! The layer's settings, read once from the environment.

use std::path::PathBuf;

use crate::frame_checksums::FrameChecksums;
use crate::memory::Tracking;

/// The zstd level a trace is compressed at unless `MACROSCOPE_CAPTURE_LEVEL` says
/// otherwise: the fastest, for compression that keeps up with the program (on the
/// scenes' traces level 3 compressed no better: storm 4.4 MiB at 3, 4.2 at 1).
pub const DEFAULT_LEVEL: i32 = 1;

/// How loudly the layer logs to standard error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Nothing.
    Off,
    /// Only why capture stopped.
    Error,
    /// Also where the trace goes and what it holds at the end.
    Info,
    /// Also every device and extension decision.
    Debug,
}

/// What `MACROSCOPE_*` variables ask for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `MACROSCOPE_CAPTURE_FILE`: where the trace goes (beside it where another
    /// process writes it: [`crate::trace_file`]).
    pub file: PathBuf,
    /// `MACROSCOPE_CAPTURE_FRAMES`: the frames whose commands are recorded (inclusive).
    pub frames: Option<(u64, u64)>,
    /// `MACROSCOPE_CAPTURE_LEVEL`: the zstd level.
    pub compression_level: i32,
    /// `MACROSCOPE_LOG`.
    pub log: LogLevel,
    /// `MACROSCOPE_CAPTURE_MEMORY`: `protect` (the default) or `compare`, how host
    /// writes to mapped memory are found. Unset under valgrind, `compare`: valgrind's
    /// own code touches the protected pages and stops on the fault.
    pub memory: Tracking,
    /// Whether the program runs under valgrind (`LD_PRELOAD` names valgrind's
    /// preloaded library, as every valgrind tool sets it).
    pub under_valgrind: bool,
    /// `MACROSCOPE_CAPTURE_FRAME_CHECKSUMS`: which frames' presented images are read
    /// back and checksummed: `auto` (the default), `all` or `1`, every `N`th, `0`.
    pub frame_checksums: FrameChecksums,
    /// `MACROSCOPE_CAPTURE_QUIT`: `1` ends the program once the last frame of
    /// `MACROSCOPE_CAPTURE_FRAMES` is in the trace ([`crate::quit`]); `0` (the default)
    /// lets it run on.
    pub quit: bool,
}

impl Settings {
    /// Reads the environment; a malformed value is reported in the `Err` and the
    /// default taken.
    pub fn from_env() -> (Settings, Vec<String>) {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads settings through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> (Settings, Vec<String>) {
        let mut problems = Vec::new();
        let file = lookup("MACROSCOPE_CAPTURE_FILE")
            .filter(|f| !f.is_empty())
            .map_or_else(default_file, PathBuf::from);
        let frames = lookup("MACROSCOPE_CAPTURE_FRAMES").and_then(|f| match parse_frames(&f) {
            Some(range) => Some(range),
            None => {
                problems.push(format!(
                    "MACROSCOPE_CAPTURE_FRAMES=`{f}` is not like 10-20: capturing every frame"
                ));
                None
            }
        });
        let compression_level = match lookup("MACROSCOPE_CAPTURE_LEVEL") {
            None => DEFAULT_LEVEL,
            Some(l) => match l.parse::<i32>() {
                Ok(level) if (-7..=19).contains(&level) => level,
                _ => {
                    problems.push(format!("MACROSCOPE_CAPTURE_LEVEL=`{l}` is not a zstd level from -7 to 19: using {DEFAULT_LEVEL}"));
                    DEFAULT_LEVEL
                }
            },
        };
        let log = match lookup("MACROSCOPE_LOG").as_deref() {
            None => LogLevel::Error,
            Some("off") => LogLevel::Off,
            Some("error") => LogLevel::Error,
            Some("info") => LogLevel::Info,
            Some("debug") => LogLevel::Debug,
            Some(other) => {
                problems.push(format!(
                    "MACROSCOPE_LOG=`{other}` is not off, error, info or debug"
                ));
                LogLevel::Error
            }
        };
        let under_valgrind = lookup("LD_PRELOAD").is_some_and(|p| names_valgrind_preload(&p));
        let memory = match lookup("MACROSCOPE_CAPTURE_MEMORY").as_deref() {
            None if under_valgrind => Tracking::Compare,
            None | Some("protect") => Tracking::Protect,
            Some("compare") => Tracking::Compare,
            Some(other) => {
                problems.push(format!(
                    "MACROSCOPE_CAPTURE_MEMORY=`{other}` is not protect or compare: protecting"
                ));
                Tracking::Protect
            }
        };
        let frame_checksums = match lookup("MACROSCOPE_CAPTURE_FRAME_CHECKSUMS") {
            None => FrameChecksums::Auto,
            Some(text) => FrameChecksums::parse(&text).unwrap_or_else(|| {
                problems.push(format!(
                    "MACROSCOPE_CAPTURE_FRAME_CHECKSUMS=`{text}` is not auto, all, 0 or a frame period: auto"
                ));
                FrameChecksums::Auto
            }),
        };
        let quit = match lookup("MACROSCOPE_CAPTURE_QUIT").as_deref() {
            None | Some("0") => false,
            Some("1") => match frames {
                Some((_, last)) if last != u64::MAX => true,
                _ => {
                    problems.push(
                        "MACROSCOPE_CAPTURE_QUIT=1 needs a last frame in MACROSCOPE_CAPTURE_FRAMES (like 0-29): the program runs on"
                            .to_string(),
                    );
                    false
                }
            },
            Some(other) => {
                problems.push(format!(
                    "MACROSCOPE_CAPTURE_QUIT=`{other}` is not 1 or 0: the program runs on"
                ));
                false
            }
        };
        let settings = Settings {
            file,
            frames,
            compression_level,
            log,
            memory,
            under_valgrind,
            frame_checksums,
            quit,
        };
        (settings, problems)
    }
}

/// Whether `preload` (`LD_PRELOAD`'s value: paths split by spaces or colons) names
/// valgrind's core preload library (`vgpreload_core-<arch>.so`).
fn names_valgrind_preload(preload: &str) -> bool {
    preload
        .split([' ', ':'])
        .filter_map(|path| path.rsplit('/').next())
        .any(|file| file.starts_with("vgpreload_core"))
}

/// `./<program>-<pid>.mscope`.
fn default_file() -> PathBuf {
    let program = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "capture".to_string());
    PathBuf::from(format!("{program}-{}.mscope", std::process::id()))
}

/// `A-B`, `A-` or `A`.
fn parse_frames(text: &str) -> Option<(u64, u64)> {
    let number = |t: &str| t.trim().parse::<u64>().ok();
    let (first, last) = match text.split_once('-') {
        Some((a, "")) => (number(a)?, u64::MAX),
        Some((a, b)) => (number(a)?, number(b)?),
        None => (number(text)?, number(text)?),
    };
    (first <= last).then_some((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> (Settings, Vec<String>) {
        Settings::from_lookup(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn variables_are_read_and_mistakes_reported() {
        let (s, problems) = settings(&[
            ("MACROSCOPE_CAPTURE_FILE", "/tmp/x.mscope"),
            ("MACROSCOPE_CAPTURE_FRAMES", "10-20"),
            ("MACROSCOPE_CAPTURE_LEVEL", "5"),
            ("MACROSCOPE_LOG", "info"),
        ]);
        assert!(problems.is_empty());
        assert_eq!(s.file, PathBuf::from("/tmp/x.mscope"));
        assert_eq!(s.frames, Some((10, 20)));
        assert_eq!(s.compression_level, 5);
        assert_eq!(s.log, LogLevel::Info);
        assert_eq!(s.frame_checksums, FrameChecksums::Auto);

        let (s, problems) = settings(&[
            ("MACROSCOPE_CAPTURE_FRAMES", "20-10"),
            ("MACROSCOPE_CAPTURE_LEVEL", "99"),
            ("MACROSCOPE_LOG", "loud"),
            ("MACROSCOPE_CAPTURE_FRAME_CHECKSUMS", "often"),
        ]);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[3].contains("`often`"), "{problems:?}");
        assert_eq!(s.frames, None);
        assert_eq!(s.compression_level, DEFAULT_LEVEL);
        assert!(s
            .file
            .to_string_lossy()
            .ends_with(&format!("-{}.mscope", std::process::id())));
        assert_eq!(
            settings(&[("MACROSCOPE_CAPTURE_FRAMES", "5-")]).0.frames,
            Some((5, u64::MAX))
        );
        assert_eq!(
            settings(&[("MACROSCOPE_CAPTURE_FRAME_CHECKSUMS", "30")])
                .0
                .frame_checksums,
            FrameChecksums::Every(30)
        );
    }

    #[test]
    fn quitting_needs_a_last_frame_to_quit_after() {
        let quit = |frames: &str, value: &str| {
            let (s, problems) = settings(&[
                ("MACROSCOPE_CAPTURE_FRAMES", frames),
                ("MACROSCOPE_CAPTURE_QUIT", value),
            ]);
            (s.quit, problems.len())
        };
        assert_eq!(quit("0-29", "1"), (true, 0));
        assert_eq!(quit("0-29", "0"), (false, 0));
        assert_eq!(quit("5-", "1"), (false, 1));
        assert_eq!(quit("0-29", "yes please"), (false, 1));
        assert!(!settings(&[("MACROSCOPE_CAPTURE_QUIT", "1")]).0.quit);
        assert!(!settings(&[]).0.quit);
    }

    #[test]
    fn mapped_memory_is_compared_under_valgrind_unless_asked_otherwise() {
        let memcheck = "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so:/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so";
        let plain = settings(&[]).0;
        assert_eq!(
            (plain.memory, plain.under_valgrind),
            (Tracking::Protect, false)
        );
        let other_preload = settings(&[("LD_PRELOAD", "/usr/lib/libfaketime.so.1")]).0;
        assert_eq!(other_preload.memory, Tracking::Protect);
        let valgrind = settings(&[("LD_PRELOAD", memcheck)]).0;
        assert_eq!(
            (valgrind.memory, valgrind.under_valgrind),
            (Tracking::Compare, true)
        );
        let spaced = settings(&[("LD_PRELOAD", "libx.so vgpreload_core-arm64-linux.so")]).0;
        assert_eq!(spaced.memory, Tracking::Compare);
        let asked = settings(&[
            ("LD_PRELOAD", memcheck),
            ("MACROSCOPE_CAPTURE_MEMORY", "protect"),
        ])
        .0;
        assert_eq!(asked.memory, Tracking::Protect);
    }
}
