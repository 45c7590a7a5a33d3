//! `macroscope capture`: runs a program under the capture layer and says what the
//! trace holds when it ends.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use trace_format::container::ContainerReader;
use trace_format::Content;

use super::{BadInput, FrameRange};

mod system_layer;

/// Arguments of `macroscope capture`.
#[derive(clap::Args)]
pub struct Args {
    /// Where the trace goes (default: ./PROGRAM-PID.mscope).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Only these frames' commands, e.g. 10-20 (objects they use are always recorded).
    #[arg(long)]
    frames: Option<FrameRange>,
    /// zstd level, -7 (fastest) to 19.
    #[arg(long)]
    level: Option<i32>,
    /// The layer's log: off, error, info or debug.
    #[arg(long, default_value = "error")]
    log: String,
    /// Which presented frames are read back and checksummed for `replay --device
    /// --check-frames`: `auto` (every frame of the first 100, then four a second at
    /// most), `all`, every `N`th, or `none`.
    #[arg(long, value_name = "WHICH", value_parser = frame_checksums)]
    frame_checksums: Option<String>,
    /// End the program once the last frame of --frames is in the trace: SIGTERM, then
    /// SIGKILL if it still runs 10 s later (for programs that run until closed).
    #[arg(long, requires = "frames")]
    quit_after_frames: bool,
    /// Only write the layer's manifest into this folder and print how to enable the
    /// layer by hand (for programs started some other way, such as a game launcher).
    #[arg(long, value_name = "DIR")]
    write_manifest: Option<PathBuf>,
    /// Only install the layer's manifest where the Vulkan loader looks for a program
    /// that runs set-user-ID or set-group-ID (such as a game keeping shared high
    /// scores), which takes no layer from the environment: by default
    /// /usr/local/share/vulkan/explicit_layer.d (as root). The layer stays off in every
    /// program that does not ask for it.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = system_layer::INSTALL_DIR)]
    install_layer: Option<PathBuf>,
    /// The program and its arguments.
    #[arg(last = true)]
    program: Vec<String>,
}

/// `--frame-checksums`: a choice the layer reads (`FrameChecksums::parse`).
fn frame_checksums(text: &str) -> Result<String, String> {
    macroscope_capture::frame_checksums::FrameChecksums::parse(text)
        .map(|_| text.to_string())
        .ok_or_else(|| "expected auto, all, none or a frame period N (every Nth frame)".into())
}

/// Runs the program under the layer; the program's failure is reported, not hidden.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let library = find_library()?;
    if let Some(dir) = &args.write_manifest {
        let manifest = write_manifest(dir, &library)?;
        println!("wrote {}", manifest.display());
        println!("to capture a program started some other way, set in its environment:");
        println!("  VK_ADD_LAYER_PATH={}", dir.display());
        println!(
            "  VK_INSTANCE_LAYERS={}",
            macroscope_capture::LAYER_NAME.to_string_lossy()
        );
        println!("  MACROSCOPE_CAPTURE_FILE=/path/to/trace.mscope   (optional)");
        if let Some(signals) = signals_library(&library) {
            println!(
                "  LD_PRELOAD={}   (keeps the layer's fault handler when the program installs its own)",
                signals.display()
            );
        }
        return Ok(());
    }
    if let Some(dir) = &args.install_layer {
        let manifest = write_manifest(dir, &library)?;
        println!("installed {}", manifest.display());
        println!(
            "`macroscope capture` now records set-user-ID and set-group-ID programs too, which the Vulkan loader gives only the layers of the system's folders"
        );
        return Ok(());
    }
    let Some((program, program_args)) = args.program.split_first() else {
        return Err(BadInput(
            "name a program to capture: macroscope capture -- PROGRAM ARGS...".into(),
        )
        .into());
    };
    // A set-ID program takes the layer only from the system's folders.
    let set_id = system_layer::set_id_programs(program, program_args);
    let set_id_advice = system_layer::advice(&set_id, &library);
    if let Some(advice) = &set_id_advice {
        eprintln!("macroscope: {advice}");
    }
    let dir = std::env::temp_dir().join(format!("macroscope-layer-{}", std::process::id()));
    write_manifest(&dir, &library)?;
    let started = SystemTime::now();
    let mut command = Command::new(program);
    command.args(program_args);
    command.env("VK_ADD_LAYER_PATH", prepend_path("VK_ADD_LAYER_PATH", &dir));
    let layer = macroscope_capture::LAYER_NAME
        .to_string_lossy()
        .into_owned();
    let layers = match std::env::var("VK_INSTANCE_LAYERS") {
        Ok(existing) if !existing.is_empty() => format!("{existing}:{layer}"),
        _ => layer,
    };
    command.env("VK_INSTANCE_LAYERS", layers);
    command.env("MACROSCOPE_LOG", &args.log);
    match signals_library(&library) {
        Some(signals) => {
            command.env("LD_PRELOAD", preload_with(&signals));
        }
        None => eprintln!(
            "macroscope: {} is not beside {}: a program that installs its own SIGSEGV handler after the layer could be handed the layer's faults (build it with `cargo build --release -p capture-signals`)",
            macroscope_capture::fault_chain::SIGNALS_LIBRARY_FILE,
            library.display()
        ),
    }
    if let Some(out) = &args.output {
        // A process of the program that captures while another holds the file writes
        // beside it (`macroscope_capture::trace_file`). A trace left from before goes
        // first, so that one this run did not write is not reported as its own.
        match std::fs::remove_file(out) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing the old {}", out.display()));
            }
            _ => {}
        }
        command.env("MACROSCOPE_CAPTURE_FILE", absolute(out)?);
    }
    if let Some(f) = args.frames {
        let last = if f.last == u64::MAX {
            String::new()
        } else {
            f.last.to_string()
        };
        command.env("MACROSCOPE_CAPTURE_FRAMES", format!("{}-{last}", f.first));
        if args.quit_after_frames {
            if f.last == u64::MAX {
                return Err(BadInput(format!(
                    "--quit-after-frames needs a last frame to quit after: --frames {}-{last} has none (e.g. --frames {}-{})",
                    f.first,
                    f.first,
                    f.first.saturating_add(29)
                ))
                .into());
            }
            command.env("MACROSCOPE_CAPTURE_QUIT", "1");
        }
    }
    if let Some(level) = args.level {
        command.env("MACROSCOPE_CAPTURE_LEVEL", level.to_string());
    }
    if let Some(which) = &args.frame_checksums {
        command.env("MACROSCOPE_CAPTURE_FRAME_CHECKSUMS", which);
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let pid = child.id();
    let status = wait_through_interrupts(&mut child).context("waiting for the program")?;
    let _ = std::fs::remove_dir_all(&dir);
    let traces = match &args.output {
        Some(out) => [vec![out.clone()], traces_beside(out, started)].concat(),
        None => traces_of(pid, started),
    };
    if traces.iter().all(|t| !t.exists()) {
        let why = match set_id.first().filter(|_| set_id_advice.is_some()) {
            Some(first) => format!(
                "{} runs set-ID: `sudo macroscope capture --install-layer`, then capture again",
                first.path.display()
            ),
            None => "did it use Vulkan?".to_string(),
        };
        eprintln!("{program} {}; it wrote no trace ({why})", describe(status));
    }
    let mut all_finished = traces.iter().any(|t| t.exists());
    let writers_deadline = Instant::now() + WRITERS_WAIT;
    for trace in traces.iter().filter(|t| t.exists()) {
        if !wait_until_written(trace, writers_deadline) {
            eprintln!(
                "macroscope: a process of {program} still writes {} {}s after {program} ended (a launcher that left its program running?): the trace as it stands now",
                trace.display(),
                WRITERS_WAIT.as_secs()
            );
        }
        all_finished &= summarize(trace)?;
    }
    if let Some(report) = quit_report(program, status, args.quit_after_frames && all_finished) {
        eprintln!("{report}");
        return Ok(());
    }
    if let Some(how) = ended_as_the_user_asked(program, status).filter(|_| all_finished) {
        eprintln!("{program} {how}; its trace is finished");
        return Ok(());
    }
    if !status.success() {
        anyhow::bail!("{program} {}", describe(status));
    }
    Ok(())
}

/// What to say of a program that did not end well after `--quit-after-frames` had its
/// last frame captured and its trace `finished`: the capture succeeded either way. A
/// program may crash as it handles the layer's SIGTERM (Neverball through Zink dies of
/// SIGSEGV on any SIGTERM, without the layer too); its trace is whole all the same.
/// `None` where the program ended well or the capture is not done.
fn quit_report(program: &str, status: ExitStatus, finished: bool) -> Option<String> {
    if status.success() || !finished {
        return None;
    }
    let ended = describe(status);
    Some(match ended_as_asked(status) {
        true => {
            format!("{program} {ended} after its last frame was captured (--quit-after-frames)")
        }
        false => format!(
            "{program} {ended} after its last frame was captured, as it was asked to quit \
             (--quit-after-frames): the trace is complete"
        ),
    })
}

/// Waits for the program, not ending of a Ctrl-C meanwhile: the terminal sends SIGINT to
/// the program too, whose layer finishes its trace before it ends, and the trace is
/// then summed up as any other. (Set once the program has started: it must not inherit
/// an ignored SIGINT.)
fn wait_through_interrupts(child: &mut std::process::Child) -> std::io::Result<ExitStatus> {
    // SAFETY: setting a signal's disposition; it is put back below.
    let before = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let status = child.wait();
    // SAFETY: as above.
    unsafe { libc::signal(libc::SIGINT, before) };
    status
}

/// How the program ended where it ended the way a user ends a capture: Ctrl-C
/// (SIGINT), `kill` (SIGTERM), its terminal closed (SIGHUP), or `timeout` in front of
/// it running out (its status 124). The layer finishes the trace before the program
/// ends of any of these signals, so the capture succeeds. `None` otherwise.
fn ended_as_the_user_asked(program: &str, status: ExitStatus) -> Option<&'static str> {
    let timed_out = Path::new(program)
        .file_name()
        .is_some_and(|n| n == "timeout")
        && status.code() == Some(124);
    if timed_out {
        return Some("ran out of time (status 124)");
    }
    [
        (libc::SIGINT, "was interrupted (SIGINT)"),
        (libc::SIGTERM, "was ended by SIGTERM"),
        (libc::SIGHUP, "was ended by SIGHUP (its terminal closed)"),
    ]
    .into_iter()
    .find(|(signal, _)| ended_by(status, *signal))
    .map(|(_, how)| how)
}

/// Whether the program ended of `signal`, itself or as a shell in between reports it
/// (128 + the signal).
fn ended_by(status: ExitStatus, signal: i32) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(signal) || status.code() == Some(128 + signal)
}

/// Whether the program ended the way `--quit-after-frames` ends it: by the layer's
/// SIGTERM or SIGKILL, or as a shell or `timeout` in between reports that (128 + the
/// signal).
fn ended_as_asked(status: ExitStatus) -> bool {
    [libc::SIGTERM, libc::SIGKILL]
        .into_iter()
        .any(|signal| ended_by(status, signal))
}

/// The layer library: `MACROSCOPE_LAYER_LIBRARY`, or beside this executable.
fn find_library() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("MACROSCOPE_LAYER_LIBRARY") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().context("finding macroscope's own path")?;
    let beside = exe.with_file_name(macroscope_capture::LIBRARY_FILE);
    if beside.is_file() {
        return Ok(beside);
    }
    Err(BadInput(format!(
        "the capture layer {} is not beside {}: build it with `cargo build --release -p capture-layer` (or set MACROSCOPE_LAYER_LIBRARY)",
        macroscope_capture::LIBRARY_FILE,
        exe.display()
    ))
    .into())
}

/// `libmacroscope_signals.so` beside the layer's library (or where
/// `MACROSCOPE_SIGNALS_LIBRARY` says), absolute, when it is there.
fn signals_library(layer: &Path) -> Option<PathBuf> {
    let path = match std::env::var_os("MACROSCOPE_SIGNALS_LIBRARY") {
        Some(path) => PathBuf::from(path),
        None => layer.with_file_name(macroscope_capture::fault_chain::SIGNALS_LIBRARY_FILE),
    };
    path.is_file().then(|| path.canonicalize().unwrap_or(path))
}

/// `LD_PRELOAD` with `library` first and what the environment preloads after it.
fn preload_with(library: &Path) -> std::ffi::OsString {
    let mut preload = library.as_os_str().to_owned();
    if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|p| !p.is_empty()) {
        preload.push(":");
        preload.push(existing);
    }
    preload
}

fn write_manifest(dir: &Path, library: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("VkLayer_macroscope_capture.json");
    let library = library
        .canonicalize()
        .unwrap_or_else(|_| library.to_path_buf());
    std::fs::write(&path, macroscope_capture::manifest(&library))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

fn prepend_path(var: &str, dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(existing) = std::env::var_os(var) {
        paths.extend(std::env::split_paths(&existing));
    }
    std::env::join_paths(paths).unwrap_or_else(|_| dir.as_os_str().to_owned())
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    Ok(if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    })
}

/// Traces the layer named by default for process `pid` (`*-PID.mscope` here), or
/// failing that any trace here written since `started` (by processes it started).
fn traces_of(pid: u32, started: SystemTime) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(".") else {
        return Vec::new();
    };
    let mut found: Vec<(bool, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let fresh = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= started);
            (name.ends_with(".mscope") && fresh)
                .then(|| (name.ends_with(&format!("-{pid}.mscope")), e.path()))
        })
        .collect();
    if found.iter().any(|(own, _)| *own) {
        found.retain(|(own, _)| *own);
    }
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// How long `capture` waits, once the program has ended, for processes it left behind
/// to finish the traces they write (all of them together).
const WRITERS_WAIT: Duration = Duration::from_secs(30);

/// Waits, until `deadline` at most, until no process writes `trace`: the layer holds a
/// lock on the file it writes until it has finished it (`macroscope_capture::trace_file`),
/// and a program's launcher may end before the program it started does. Whether the
/// trace is no longer written.
fn wait_until_written(trace: &Path, deadline: Instant) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = std::fs::File::open(trace) else {
        return true;
    };
    loop {
        // SAFETY: flock on a descriptor this function owns; it touches no memory.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0 {
            return true;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::WouldBlock {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Traces that processes of the program wrote beside `out` since `started`, because
/// another process held it (`<stem>-<pid>.<extension>`), in order of their names.
fn traces_beside(out: &Path, started: SystemTime) -> Vec<PathBuf> {
    let folder = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let fresh = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= started);
            let name = e.file_name();
            fresh
                && name
                    .to_str()
                    .and_then(|n| macroscope_capture::trace_file::beside_whose(out, n))
                    .is_some()
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Where the trace went, its size, frames and calls; whether it was finished (it has
/// its index).
fn summarize(trace: &Path) -> anyhow::Result<bool> {
    let mut reader = ContainerReader::open(trace, Content::Trace)?;
    let index = reader.scan_index()?;
    let calls: u64 = index.iter().map(|e| u64::from(e.record_count)).sum();
    let frames = match reader.footer_frame_count() {
        Some(frames) => frames,
        None => trace_format::TraceReader::open(trace)?.frames_begun()?,
    };
    let finished = if reader.index().is_some() {
        ""
    } else {
        " (not finished: the program was killed; every whole chunk reads)"
    };
    println!(
        "trace: {} · {} · {} frames · {} records{finished}",
        trace.display(),
        size(reader.file_len()),
        frames,
        calls
    );
    Ok(reader.index().is_some())
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => "ended".to_string(),
    }
}

/// Bytes in the largest unit that keeps a whole number in front.
fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn a_program_that_dies_as_it_is_asked_to_quit_leaves_a_successful_capture() {
        // Wait statuses: killed by a signal is the signal's number.
        let term = ExitStatus::from_raw(libc::SIGTERM);
        let segv = ExitStatus::from_raw(libc::SIGSEGV);
        let report = quit_report("vkcube", term, true).expect("a report");
        assert_eq!(
            report,
            "vkcube was killed by signal 15 after its last frame was captured (--quit-after-frames)"
        );
        let report = quit_report("neverball", segv, true).expect("a report");
        assert!(report.starts_with("neverball was killed by signal 11 after its last frame"));
        assert!(report.ends_with("the trace is complete"), "{report}");
        // A trace left unfinished, or a program that ended well, is not this case.
        assert_eq!(quit_report("neverball", segv, false), None);
        assert_eq!(quit_report("vkcube", ExitStatus::from_raw(0), true), None);
    }

    #[test]
    fn a_program_ended_as_a_user_ends_a_capture_is_told_apart() {
        let killed = |signal| ExitStatus::from_raw(signal);
        let exited = |code: i32| ExitStatus::from_raw(code << 8);
        let how = |program, status| ended_as_the_user_asked(program, status);
        assert_eq!(
            how("vkcube", killed(libc::SIGINT)),
            Some("was interrupted (SIGINT)")
        );
        // A shell or xvfb-run in between reports the signal as 128 + its number.
        assert_eq!(
            how("xvfb-run", exited(128 + libc::SIGTERM)),
            Some("was ended by SIGTERM")
        );
        assert_eq!(
            how("/usr/bin/timeout", exited(124)),
            Some("ran out of time (status 124)")
        );
        // A crash, a failure, or 124 from another program is not.
        assert_eq!(how("vkcube", killed(libc::SIGSEGV)), None);
        assert_eq!(how("vkcube", exited(1)), None);
        assert_eq!(how("vkcube", exited(124)), None);
    }
}
