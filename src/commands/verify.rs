//! `macroscope verify`: the driver model against NVK itself. Replays the trace on real
//! NVK (through `scripts/nvk-oracle`: Mesa's NVK under its no-op nouveau kernel, with
//! the push-buffer tap), replays it through the model, and compares the two method
//! streams draw by draw.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use driver::chipset::Chipset;
use driver::mme::Arch;
use replayer::verify::allow::AllowList;
use replayer::verify::{self, tap, Verification};
use replayer::ReplayOptions;
use trace_format::ReadOptions;

use super::replay::{chosen_chipset, parse_chipset, Mme};
use super::BadInput;

/// Arguments of `macroscope verify`.
#[derive(clap::Args)]
pub struct Args {
    /// The trace (.mscope).
    trace: PathBuf,
    /// The GPU NVK and the model run as (NOUVEAU_CHIPSET), by chip or id: gk104
    /// (0xe4), gm107 (0x117), gm200 (0x120), gp104 (0x134), gv100 (0x140), tu102 (0x162,
    /// the default), ga102 (0x172), ad102 (0x192), or another chip of those generations.
    #[arg(long, value_parser = parse_chipset)]
    chipset: Option<Chipset>,
    /// Shorthand for a GPU of an MME generation: `turing` a TU102, `fermi` a GV100.
    #[arg(long, value_enum)]
    mme: Option<Mme>,
    /// The NVK the oracle runs: 25.0.7 (the default, the release the model follows) or
    /// 26 (Debian sid's 26.x). Against another release than the model's, the report
    /// says so: its differences are the releases' as much as the model's.
    #[arg(long, default_value = driver::nvk::MODELLED_NVK)]
    nvk: String,
    /// Your own known differences: `KIND METHOD -- REASON` lines (docs/verify.md).
    /// What no trace can carry (addresses, checked for consistency; register counts;
    /// NVK's queue) verify explains itself.
    #[arg(long)]
    allow: Option<PathBuf>,
    /// Compare with this NVK tap instead of running NVK (a file `--keep-tap` wrote).
    #[arg(long, conflicts_with = "keep_tap")]
    tap: Option<PathBuf>,
    /// Keep NVK's push buffers in this file.
    #[arg(long)]
    keep_tap: Option<PathBuf>,
    /// The oracle script (default: MACROSCOPE_NVK_ORACLE, else scripts/nvk-oracle of
    /// the repository this binary was built in).
    #[arg(long)]
    oracle: Option<PathBuf>,
    /// Show these draws (by position, from 0) whole, both sides lined up, instead of
    /// the first differences.
    #[arg(long, value_delimiter = ',')]
    draw: Vec<usize>,
    /// How many method differences to list.
    #[arg(long, default_value_t = 30)]
    top: usize,
    /// Show these macros' instructions (by name, e.g. `draw`), NVK's and the model's
    /// side by side, each line marked where they differ.
    #[arg(long = "macro", value_delimiter = ',')]
    macros: Vec<String>,
}

impl Args {
    /// The trace verified.
    pub fn trace(&self) -> &Path {
        &self.trace
    }
}

/// Runs `macroscope verify`; `Ok(true)` when every difference is explained.
pub fn run(args: &Args) -> anyhow::Result<bool> {
    let chipset = chosen_chipset(args.chipset, args.mme)?;
    let arch = chipset.arch();
    let allow = match &args.allow {
        Some(path) => AllowList::read(path).map_err(|e| BadInput(e.to_string()))?,
        None => AllowList::default(),
    };
    let trace = std::fs::canonicalize(&args.trace)
        .with_context(|| format!("{}: cannot open", args.trace.display()))?;
    let tap_path = match &args.tap {
        Some(path) => path.clone(),
        None => run_nvk(args, &trace, chipset)?,
    };
    let nvk_version = match &args.tap {
        Some(_) => None,
        None => oracle_version(args),
    };
    let tap = tap::read_tap(&tap_path).map_err(|e| BadInput(e.to_string()))?;
    if args.tap.is_none() && args.keep_tap.is_none() {
        let _ = std::fs::remove_file(&tap_path);
    }
    let options = ReplayOptions {
        chipset,
        frames: None,
        repeat: 1,
        read: ReadOptions::for_replay(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    let v = verify::verify(&trace, &tap, &options, &allow, &args.draw)?;
    print!(
        "{}",
        render(
            &v,
            &args.trace,
            chipset,
            nvk_version.as_deref(),
            &allow,
            args.top,
            !args.draw.is_empty()
        )
    );
    for name in &args.macros {
        print!("{}", render_macro(&v, name, arch)?);
    }
    Ok(v.unexplained() == 0)
}

/// Macro `name`'s instructions on both sides, lined up by position.
fn render_macro(v: &Verification, name: &str, arch: Arch) -> anyhow::Result<String> {
    let Some(m) = v.macros.iter().find(|m| m.name == name) else {
        let names: Vec<&str> = v.macros.iter().map(|m| m.name.as_str()).collect();
        return Err(BadInput(format!(
            "no macro `{name}` on either side; the macros are {}",
            names.join(", ")
        ))
        .into());
    };
    let nvk = verify::macros::listing(&m.nvk, arch);
    let model = verify::macros::listing(&m.model, arch);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "
macro {name}: NVK 25.0.7 {} instructions, the model {}",
        nvk.len(),
        model.len()
    );
    let width = nvk.iter().map(String::len).max().unwrap_or(0).max(24);
    for i in 0..nvk.len().max(model.len()) {
        let (a, b) = (nvk.get(i), model.get(i));
        let mark = if a == b { " " } else { "|" };
        let _ = writeln!(
            s,
            "  {i:>4}  {:<width$} {mark} {}",
            a.map_or("", String::as_str),
            b.map_or("", String::as_str)
        );
    }
    Ok(s)
}

/// Replays the trace on NVK under the oracle; returns the tap file.
fn run_nvk(args: &Args, trace: &Path, chipset: Chipset) -> anyhow::Result<PathBuf> {
    let oracle = match &args.oracle {
        Some(p) => p.clone(),
        None => default_oracle().ok_or_else(|| {
            BadInput(
                "no NVK oracle: pass --oracle PATH (scripts/nvk-oracle) or set \
                 MACROSCOPE_NVK_ORACLE, or give a tap with --tap"
                    .to_string(),
            )
        })?,
    };
    let tap = match &args.keep_tap {
        Some(p) => std::path::absolute(p)?,
        None => std::env::temp_dir().join(format!("macroscope-nvk-{}.tap", std::process::id())),
    };
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    if let Some(bin_dir) = exe.parent() {
        verify::oracle::ready(&oracle, bin_dir)
            .map_err(|why| anyhow::anyhow!("the NVK oracle is not ready: {why}"))?;
    }
    let output = Command::new(&oracle)
        .env("MACROSCOPE_ORACLE_BIND", oracle_binds(trace)?)
        .arg("--nvk")
        .arg(&args.nvk)
        .arg("--chipset")
        .arg(format!("{:#x}", chipset.id))
        .arg("--tap")
        .arg(&tap)
        .arg("--")
        .arg(&exe)
        .arg("replay")
        .arg(trace)
        .arg("--device")
        // NVK 25.0.7 lacks extensions and features captures elsewhere enable (Zink on
        // lavapipe enables all it finds; before Turing, drawIndirectCount): a trace
        // that does not use them replays without them.
        .arg("--switch-off-missing")
        .output()
        .with_context(|| format!("cannot run the NVK oracle {}", oracle.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        // Mesa's no-op kernel (drm-shim) serves every buffer object from one 4 GiB
        // file; past it an allocation gets no memory and its mapping fails.
        let limit = match stderr.contains("(vkAllocateMemory)") {
            true => {
                "\n(NVK runs on Mesa's no-op kernel, drm-shim, whose buffer objects share 4 GiB: \
                 the trace's memory, beside NVK's own, may not fit there)"
            }
            false => "",
        };
        anyhow::bail!(
            "replaying {} on NVK failed ({}):\n{}{limit}",
            trace.display(),
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    // The tap's file is made when NVK opens the device: a trace that makes no device
    // (one whose capture ended before the program made one) leaves none.
    if !tap.exists() {
        return Err(BadInput(format!(
            "{}: NVK opened no device replaying it: the trace makes no Vulkan device, \
             so there is nothing to compare",
            trace.display()
        ))
        .into());
    }
    Ok(tap)
}

/// The folders of the oracle's root that a folder of this machine must not cover: its
/// own system (NVK, the loader, the shell that runs the replay).
const ORACLE_SYSTEM_DIRS: [&str; 11] = [
    "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/etc", "/proc", "/sys", "/dev",
];

/// What the oracle's root must see beside what it binds itself (the working directory,
/// the repository, /tmp): the trace's folder, wherever it is, after any folders the
/// caller's `MACROSCOPE_ORACLE_BIND` names, one a line. A trace elsewhere was not found
/// in the root ("No such file or directory"). A trace in a system folder cannot be
/// shown there without hiding the root's own: that is refused, saying so.
fn oracle_binds(trace: &Path) -> anyhow::Result<std::ffi::OsString> {
    let mut binds = std::env::var_os("MACROSCOPE_ORACLE_BIND").unwrap_or_default();
    let Some(dir) = trace.parent() else {
        return Ok(binds);
    };
    if dir == Path::new("/") || ORACLE_SYSTEM_DIRS.iter().any(|s| dir.starts_with(s)) {
        return Err(BadInput(format!(
            "{}: NVK's root cannot see a trace in {} (a system folder of its own): \
             move or copy the trace elsewhere",
            trace.display(),
            dir.display()
        ))
        .into());
    }
    if !binds.is_empty() {
        binds.push("\n");
    }
    binds.push(dir);
    Ok(binds)
}

/// The NVK release the oracle ran (its root's Debian version, e.g. `26.2.6-1`).
fn oracle_version(args: &Args) -> Option<String> {
    let oracle = args.oracle.clone().or_else(default_oracle)?;
    let out = Command::new(oracle)
        .args(["--nvk", &args.nvk, "--version"])
        .output()
        .ok()?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !version.is_empty()).then_some(version)
}

/// `MACROSCOPE_NVK_ORACLE`, else `scripts/nvk-oracle` above the binary
/// (`target/release/macroscope`) or of the repository it was built from.
fn default_oracle() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MACROSCOPE_NVK_ORACLE") {
        return Some(PathBuf::from(p));
    }
    // Beside the binary in a repository's target directory, or the repository it was
    // built from (a target directory elsewhere: CARGO_TARGET_DIR).
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(4)
        .map(|dir| dir.join("scripts/nvk-oracle"))
        .chain(std::iter::once(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/nvk-oracle"),
        ))
        .find(|p| p.is_file())
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The report.
fn render(
    v: &Verification,
    trace: &Path,
    chipset: Chipset,
    nvk_version: Option<&str>,
    allow: &AllowList,
    top: usize,
    args_show_whole: bool,
) -> String {
    let mut s = String::new();
    let arch = chipset.arch();
    let mme = match arch {
        Arch::Turing => "Turing",
        Arch::Fermi => "pre-Turing",
    };
    let _ = writeln!(
        s,
        "verify {}: the model against NVK (chipset {}, {mme} MME)",
        trace.display(),
        chipset.describe()
    );
    let modelled = driver::nvk::MODELLED_NVK;
    let other_release = nvk_version.filter(|v| !v.starts_with(modelled));
    if let Some(version) = nvk_version {
        let _ = writeln!(
            s,
            "NVK:             {version} (the oracle's); the model follows NVK {modelled}"
        );
    }
    let equal_macros = v.macros.iter().filter(|m| m.equal).count();
    let _ = writeln!(
        s,
        "channel set-up:  NVK {} methods, model {}; macros equal: {equal_macros} of {}",
        v.setup_nvk_methods,
        v.setup_model_methods,
        v.macros.len()
    );
    if v.channels != (1, 1) {
        let _ = writeln!(
            s,
            "channels:        NVK {}, model {} (a queue's for each device the program submitted to)",
            v.channels.0, v.channels.1
        );
    }
    let (nvk_draws, model_draws) = v.draw_counts;
    let (nvk_alone, model_alone) = v.unpaired_draws();
    let _ = writeln!(
        s,
        "draws:           NVK {nvk_draws}, model {model_draws}; lined up by what they draw: {} pairs{}",
        v.paired_draws(),
        if nvk_alone + model_alone == 0 {
            String::new()
        } else {
            format!(", {nvk_alone} NVK's alone, {model_alone} the model's alone")
        }
    );
    let n = v.draws.len();
    let nvk_methods: usize = v.draws.iter().map(|d| d.nvk_methods).sum();
    let equal_methods: usize = v
        .draws
        .iter()
        .filter(|d| d.equal)
        .map(|d| d.nvk_methods)
        .sum();
    let _ = writeln!(
        s,
        "exactly equal:   {} of {n} draws ({:.1}%), {equal_methods} of {nvk_methods} NVK data dwords in them ({:.1}%)",
        v.equal_draws(),
        percent(v.equal_draws(), n),
        percent(equal_methods, nvk_methods)
    );
    let _ = writeln!(
        s,
        "but for the trace: {} of {n} draws ({:.1}%) equal but for what the trace cannot carry (addresses that correspond, register counts, NVK's queue)",
        v.faithful_draws(),
        percent(v.faithful_draws(), n),
    );
    if !allow.is_empty() {
        let _ = writeln!(
            s,
            "explained:       {} of {n} draws ({:.1}%) equal but for that and {} rules of the allow file",
            v.explained_draws(),
            percent(v.explained_draws(), n),
            allow.len()
        );
    }
    let (nvk_mme, model_mme): (u64, u64) = v
        .draws
        .iter()
        .fold((0, 0), |(a, b), d| (a + d.nvk_mme, b + d.model_mme));
    let same_mme = v.draws.iter().filter(|d| d.nvk_mme == d.model_mme).count();
    let _ = writeln!(
        s,
        "MME instructions: NVK's macros {nvk_mme}, the model's {model_mme}; equal in {same_mme} of {n} draws"
    );
    if v.mme_failures.0 + v.mme_failures.1 > 0 {
        let _ = writeln!(
            s,
            "  macro runs that failed: NVK's {}, the model's {}; first: {}",
            v.mme_failures.0,
            v.mme_failures.1,
            v.mme_failures.2.as_deref().unwrap_or("")
        );
    }

    let _ = writeln!(
        s,
        "\nby part (methods: NVK, model, alike; draws in which it is exactly NVK's)"
    );
    for (part, t) in &v.parts {
        let _ = writeln!(
            s,
            "  {:<16} {:>8} {:>8} {:>8}   {:>7} of {:<7} ({:.1}%)",
            part.name(),
            t.nvk,
            t.model,
            t.same,
            t.exact_draws,
            t.draws,
            percent(t.exact_draws as usize, t.draws as usize)
        );
    }

    match (nvk_version, other_release) {
        (Some(release), None) => {
            let _ = writeln!(s, "\nmacros (NVK {release} words / model words)");
        }
        (None, _) => {
            let _ = writeln!(
                s,
                "\nmacros by id (the tap's NVK words / model words; named as NVK {modelled} numbers them)"
            );
        }
        (_, Some(release)) => {
            let _ = writeln!(
                s,
                "\nmacros by id (NVK {release} words / model words; named as NVK {modelled} numbers them, which NVK {release} need not)"
            );
        }
    }
    for m in &v.macros {
        let words = |w: Option<usize>| w.map_or("-".to_string(), |w| w.to_string());
        let verdict = if m.equal {
            "equal".to_string()
        } else if let Some(at) = m.first_difference {
            format!("differ from word {at}")
        } else {
            "one side only".to_string()
        };
        let _ = writeln!(
            s,
            "  {:<32} {:>5} {:>5}  {verdict}",
            m.name,
            words(m.nvk_words),
            words(m.model_words)
        );
    }

    if !v.differences.is_empty() {
        let _ = writeln!(
            s,
            "\ndifferences (kind, method, times, draws, first at draw [record]: NVK / model)"
        );
        let hex = |d: Option<u32>| d.map_or("-".to_string(), |d| format!("{d:#x}"));
        let mut listed: Vec<_> = v.differences.iter().collect();
        // Unexplained first.
        listed.sort_by_key(|d| d.reason.is_some());
        for d in listed.iter().take(top) {
            let (draw, seq, nvk, model) = d.first;
            let seq = seq.map_or(String::new(), |q| format!(" [#{q}]"));
            let _ = writeln!(
                s,
                "  {:<10} {:<44} {:>7} {:>6}  draw {draw}{seq}: {} / {}{}",
                d.kind.name(),
                d.method,
                d.count,
                d.draws,
                hex(nvk),
                hex(model),
                d.reason.as_deref().map_or(String::new(), |r| if d.known {
                    format!("  (known: {r})")
                } else {
                    format!("  (allowed: {r})")
                })
            );
        }
        if v.differences.len() > top {
            let _ = writeln!(s, "  … {} more (--top)", v.differences.len() - top);
        }
    }
    if v.address_conflicts.0 > 0 {
        let _ = writeln!(
            s,
            "\naddresses that do not correspond ({} in all; an object addressed as another)",
            v.address_conflicts.0
        );
        for c in &v.address_conflicts.1 {
            let _ = writeln!(s, "  draw {}: {}", c.draws.0, c.what);
        }
    }
    let alone: Vec<String> = v
        .draws
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.is_paired())
        .take(8)
        .map(|(i, d)| {
            let side = if d.places.0.is_some() { "NVK" } else { "model" };
            let seq = d.seq.map_or(String::new(), |q| format!(" [#{q}]"));
            format!("{i} ({side}, {}{seq})", d.draw_macro.unwrap_or("?"))
        })
        .collect();
    if !alone.is_empty() {
        let _ = writeln!(
            s,
            "\ndraws one side made alone (first {}): {}",
            alone.len(),
            alone.join(", ")
        );
    }
    for e in &v.excerpts {
        let seq = e.seq.map_or(String::new(), |q| format!(" (record #{q})"));
        let what = if args_show_whole {
            "draw"
        } else {
            "first unexplained difference in draw"
        };
        let _ = writeln!(s, "\n{what} {}{seq}:", e.draw);
        let _ = writeln!(s, "  {:<52} {:<52}", "NVK", "model");
        for (nvk, model, what) in &e.lines {
            let side = |m: &Option<(String, u32)>| {
                m.as_ref()
                    .map_or(String::new(), |(name, data)| format!("{name} = {data:#x}"))
            };
            let _ = writeln!(s, "  {:<52} {:<52} {what}", side(nvk), side(model));
        }
    }
    if !v.unused_rules.is_empty() && !allow.is_empty() {
        let lines: Vec<String> = v.unused_rules.iter().map(usize::to_string).collect();
        let _ = writeln!(
            s,
            "\nallow rules that explained nothing here (lines): {}",
            lines.join(", ")
        );
    }
    let unexplained = v.unexplained();
    let _ = writeln!(
        s,
        "\nsummary: {} chipset {:#x} ({} {}): draws NVK {nvk_draws} / model {model_draws}, {} paired; equal but for the trace {:.2}%; MME instructions NVK {nvk_mme} / model {model_mme}; unexplained {unexplained}",
        trace.display(),
        chipset.id,
        chipset.name,
        chipset.generation(),
        v.paired_draws(),
        percent(v.faithful_draws(), n),
    );
    let _ = writeln!(
        s,
        "{}",
        if unexplained == 0 {
            "verdict: the model pushes what NVK pushes (every difference explained)".to_string()
        } else {
            format!("verdict: {unexplained} unexplained differences")
        }
    );
    if let Some(version) = other_release {
        let _ = writeln!(
            s,
            "note: NVK {version} is not the release the model follows ({modelled}): what differs here is the two releases' as much as the model's"
        );
    }
    s
}
