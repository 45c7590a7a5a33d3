//! Checking the driver model against NVK itself.
//!
//! The oracle (`scripts/nvk-oracle`) replays a trace on real NVK through `replay
//! --device`, under Mesa's no-op nouveau kernel, with `libmacroscope_nvk_tap.so`
//! recording every push buffer NVK submits ([`tap`]). [`verify`] replays the same trace
//! through the model with a [`Tape`] of every word it pushes, decodes both streams
//! into methods (macro calls renumbered by name: [`segment::canonical`]), cuts both
//! after every draw macro's call, and lines each NVK draw up with the model's
//! ([`diff`]): which methods both push alike, which differ in data, which only one
//! side pushes, by state group. It compares the macros each side uploads at channel
//! set-up ([`macros`]), and runs each side's draws on the MME simulator with that
//! side's own macros, so that NVK's real macro binaries are costed the same way as the
//! model's. Differences an allow file explains ([`allow`]) are counted apart.

pub mod allow;
pub mod diff;
pub mod macros;
pub mod nvk;
pub mod oracle;
pub mod segment;
pub mod tap;

use std::collections::BTreeMap;
use std::path::Path;

use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::{Device, Macro};
use driver::push::{HeaderKind, MethodHeader, ParseError};

use crate::replay::{Discard, Pass, Tape};
use crate::{ReplayError, ReplayOptions};
use allow::{AllowList, Kind};
use diff::Step;
use segment::{Field, Method, Numbering, Part, Segment};
use tap::Tap;

/// Why a verification could not be made.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The model's replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The tap holds no 3D channel: NVK never set a queue up.
    #[error("the NVK tap holds no channel with the 3D class bound: NVK submitted nothing")]
    NoChannel,
    /// A push buffer did not decode.
    #[error("{side}'s push buffer does not decode: {reason}")]
    Decode {
        /// `NVK` or `the model`.
        side: &'static str,
        /// Why.
        reason: ParseError,
    },
    /// NVK submitted a push buffer the tap could not read.
    #[error("the tap could not read NVK's push buffer at GPU address {va:#x}")]
    Unreadable {
        /// Its address.
        va: u64,
    },
}

/// How one method differs, summed over the run.
#[derive(Clone, Debug)]
pub struct Difference {
    /// How.
    pub kind: Kind,
    /// The method's label.
    pub method: String,
    /// The part it belongs to (the model's, or the part NVK's method lines up in).
    pub part: Part,
    /// Times it differed.
    pub count: u64,
    /// Draws it differed in.
    pub draws: u64,
    /// The first: the draw's index, its record where the model has a row for it, and
    /// each side's data.
    pub first: (usize, Option<u64>, Option<u32>, Option<u32>),
    /// The allow file's reason, when it explains this difference.
    pub reason: Option<String>,
}

/// Methods of one part on both sides.
#[derive(Clone, Copy, Debug, Default)]
pub struct PartTotals {
    /// NVK's methods.
    pub nvk: u64,
    /// The model's methods.
    pub model: u64,
    /// Methods alike on both sides.
    pub same: u64,
    /// Draws in which either side pushed methods of this part.
    pub draws: u64,
    /// Of those, the draws in which both pushed the same methods of this part.
    pub exact_draws: u64,
}

/// One draw on both sides.
#[derive(Clone, Debug)]
pub struct DrawResult {
    /// Its record, where the model has a row for it.
    pub seq: Option<u64>,
    /// The draw macro that ends it.
    pub draw_macro: Option<&'static str>,
    /// NVK's methods.
    pub nvk_methods: usize,
    /// The model's methods.
    pub model_methods: usize,
    /// Whether both pushed exactly the same methods and data.
    pub equal: bool,
    /// Whether every difference is explained.
    pub explained: bool,
    /// Whether every difference is explained by a reason outside the model (any class
    /// but `gap`: an address, a compile, NVK's queue, an NVK bug, a chosen version).
    pub faithful: bool,
    /// MME instructions NVK's macros ran for it on the simulator.
    pub nvk_mme: u64,
    /// MME instructions the model's macros ran for it.
    pub model_mme: u64,
}

/// A method in an excerpt: its label and data.
pub type Shown = Option<(String, u32)>;

/// The first unexplained difference of a draw, with the methods around it.
#[derive(Clone, Debug)]
pub struct Excerpt {
    /// The draw's index.
    pub draw: usize,
    /// Its record, where known.
    pub seq: Option<u64>,
    /// Lines: NVK's method, the model's, and what differs.
    pub lines: Vec<(Shown, Shown, &'static str)>,
}

/// The verdict of one verification.
#[derive(Clone, Debug, Default)]
pub struct Verification {
    /// Data dwords NVK's channel set-up pushed.
    pub setup_nvk_methods: usize,
    /// Data dwords the model's channel set-up pushed.
    pub setup_model_methods: usize,
    /// The macros uploaded at set-up, side by side.
    pub macros: Vec<macros::MacroComparison>,
    /// Draw segments NVK pushed (its draw macro calls) and the model pushed.
    pub draw_counts: (usize, usize),
    /// Each draw, paired by position.
    pub draws: Vec<DrawResult>,
    /// How methods differed, most frequent first.
    pub differences: Vec<Difference>,
    /// Methods by part.
    pub parts: BTreeMap<Part, PartTotals>,
    /// The first few draws with unexplained differences.
    pub excerpts: Vec<Excerpt>,
    /// Macro runs that failed on the simulator, per side (NVK, model), with the first.
    pub mme_failures: (u64, u64, Option<String>),
    /// The allow file's lines whose rule explained no difference here.
    pub unused_rules: Vec<usize>,
}

impl Verification {
    /// Draws alike on both sides.
    pub fn equal_draws(&self) -> usize {
        self.draws.iter().filter(|d| d.equal).count()
    }

    /// Draws alike once explained differences are set aside.
    pub fn explained_draws(&self) -> usize {
        self.draws.iter().filter(|d| d.explained).count()
    }

    /// Draws alike but for differences whose reasons lie outside the model (no `gap`).
    pub fn faithful_draws(&self) -> usize {
        self.draws.iter().filter(|d| d.faithful).count()
    }

    /// Differences no allow rule explains: methods, draws one side has and the other
    /// lacks, and macro runs that failed on the simulator.
    pub fn unexplained(&self) -> u64 {
        self.differences
            .iter()
            .filter(|d| d.reason.is_none())
            .map(|d| d.count)
            .sum::<u64>()
            + self.draw_counts.0.abs_diff(self.draw_counts.1) as u64
            + self.mme_failures.0
            + self.mme_failures.1
    }
}

/// A method's label in verification reports: [`crate::method_label`]'s, but macro calls
/// named by NVK's numbering (both sides' calls are renumbered to it) with the
/// parameter's position, and root-table loads by the member they land in.
pub fn label(m: Method, field: Field) -> String {
    match (segment::macro_id(m.subc, m.mthd), field) {
        (Some(id), _) => {
            let name = nvk::nvk_macro_name(id).map_or_else(
                || format!("model macro {}", id.wrapping_sub(200)),
                str::to_string,
            );
            match field {
                Field::Param(p) => format!("CALL_MME({name}) parameter {p}"),
                _ => format!("CALL_MME({name})"),
            }
        }
        (None, Field::Root(offset)) => {
            format!(
                "LOAD_CONSTANT_BUFFER(root.{})",
                segment::root_member(offset)
            )
        }
        _ => crate::method_label(m.subc, m.mthd),
    }
}

/// How many draws with unexplained differences [`Verification::excerpts`] keeps.
const EXCERPTS: usize = 3;
/// Methods shown before and after an excerpt's first difference.
const CONTEXT: usize = 4;

/// Compares NVK's push buffers for `trace` (from `tap`) with the model's replay of it;
/// `show` lists draws (by position) to show whole.
pub fn verify(
    trace: &Path,
    tap: &Tap,
    options: &ReplayOptions,
    allow: &AllowList,
    show: &[usize],
) -> Result<Verification, VerifyError> {
    let tape = model_tape(trace, options)?;
    compare(tap, &tape, options.arch, allow, show)
}

/// Every word the model pushes replaying `trace`, after its channel set-up.
pub fn model_tape(trace: &Path, options: &ReplayOptions) -> Result<Tape, VerifyError> {
    let mut pass = Pass::new(options, 0)?;
    pass.tape = Some(Tape::default());
    pass.run(trace, &mut Discard, &mut |_, _| {})?;
    Ok(pass.tape.take().unwrap_or_default())
}

/// Compares NVK's push buffers (`tap`) with the model's (`tape`, on `arch`'s MME).
pub fn compare(
    tap: &Tap,
    tape: &Tape,
    arch: Arch,
    allow: &AllowList,
    show: &[usize],
) -> Result<Verification, VerifyError> {
    let (nvk_setup, nvk_run) = nvk_methods(tap)?;
    let device = Device::for_arch(arch);
    let model_init = device.init_push().map_err(ReplayError::from)?;
    let decode_err = |side| move |reason| VerifyError::Decode { side, reason };
    let model_setup =
        segment::decode(Numbering::Model, model_init.words()).map_err(decode_err("the model"))?;
    let mut v = Verification {
        setup_nvk_methods: nvk_setup.len(),
        setup_model_methods: model_setup.len(),
        macros: macros::compare(
            &macros::uploaded(&nvk_setup, Numbering::Nvk),
            &macros::uploaded(&model_setup, Numbering::Model),
        ),
        ..Verification::default()
    };

    let nvk_segments = segment::split(&nvk_run, &[]);
    let model_segments = segment::model_segments(tape).map_err(decode_err("the model"))?;
    let draws = |s: &[Segment]| s.iter().filter(|s| s.draw_macro.is_some()).count();
    v.draw_counts = (draws(&nvk_segments), draws(&model_segments));

    let mut nvk_gpu = Gpu::new(arch);
    let mut model_gpu = Gpu::new(arch);
    run_methods(
        &mut nvk_gpu,
        &nvk_setup,
        Numbering::Nvk,
        &mut v.mme_failures.0,
        &mut v.mme_failures.2,
    );
    run_methods(
        &mut model_gpu,
        &model_setup,
        Numbering::Model,
        &mut v.mme_failures.1,
        &mut v.mme_failures.2,
    );

    let mut differences: BTreeMap<(Kind, String), Difference> = BTreeMap::new();
    let empty = Segment::default();
    for index in 0..nvk_segments.len().max(model_segments.len()) {
        let nvk = nvk_segments.get(index).unwrap_or(&empty);
        let model = model_segments.get(index).unwrap_or(&empty);
        let seq = model.row.map(|(seq, _)| seq);
        let steps = diff::diff(&nvk.methods, &model.methods);
        let mut part = model.parts.first().copied().unwrap_or(Part::Commands);
        let mut touched: Vec<(Kind, String)> = Vec::new();
        // Each part seen in this draw, and whether it differed.
        let mut seen: BTreeMap<Part, bool> = BTreeMap::new();
        let (mut equal, mut explained, mut faithful) = (true, true, true);
        for step in &steps {
            let (n, m) = match *step {
                Step::Same(i, j) | Step::Data(i, j) => (Some(nvk.methods[i]), Some(j)),
                Step::NvkOnly(i) => (Some(nvk.methods[i]), None),
                Step::ModelOnly(j) => (None, Some(j)),
            };
            if let Some(j) = m {
                part = model.parts.get(j).copied().unwrap_or(Part::Commands);
            }
            let m = m.map(|j| model.methods[j]);
            let totals = v.parts.entry(part).or_default();
            totals.nvk += u64::from(n.is_some());
            totals.model += u64::from(m.is_some());
            let differs = seen.entry(part).or_insert(false);
            let kind = match step {
                Step::Same(..) => {
                    totals.same += 1;
                    continue;
                }
                Step::Data(..) => Kind::Data,
                Step::NvkOnly(_) => Kind::NvkOnly,
                Step::ModelOnly(_) => Kind::ModelOnly,
            };
            equal = false;
            *differs = true;
            let label = step_label(nvk, model, *step);
            let reason = allow.reason(kind, &label).map(str::to_string);
            explained &= reason.is_some();
            faithful &= reason.as_deref().is_some_and(|r| !allow::is_gap(r));
            let key = (kind, label.clone());
            let d = differences
                .entry(key.clone())
                .or_insert_with(|| Difference {
                    kind,
                    method: label,
                    part,
                    count: 0,
                    draws: 0,
                    first: (index, seq, n.map(|x| x.data), m.map(|x| x.data)),
                    reason,
                });
            d.count += 1;
            if !touched.contains(&key) {
                touched.push(key);
                d.draws += 1;
            }
        }
        if show.contains(&index) {
            v.excerpts.push(whole(index, seq, nvk, model, &steps));
        } else if !explained && show.is_empty() && v.excerpts.len() < EXCERPTS {
            v.excerpts
                .push(excerpt(index, seq, nvk, model, &steps, allow));
        }
        let nvk_mme = run_methods(
            &mut nvk_gpu,
            &nvk.methods,
            Numbering::Nvk,
            &mut v.mme_failures.0,
            &mut v.mme_failures.2,
        );
        let model_mme = run_methods(
            &mut model_gpu,
            &model.methods,
            Numbering::Model,
            &mut v.mme_failures.1,
            &mut v.mme_failures.2,
        );
        if nvk.draw_macro.is_some() || model.draw_macro.is_some() {
            for (part, differs) in seen {
                let totals = v.parts.entry(part).or_default();
                totals.draws += 1;
                totals.exact_draws += u64::from(!differs);
            }
            v.draws.push(DrawResult {
                seq,
                draw_macro: nvk.draw_macro.or(model.draw_macro),
                nvk_methods: nvk.methods.len(),
                model_methods: model.methods.len(),
                equal,
                explained,
                faithful,
                nvk_mme,
                model_mme,
            });
        }
    }
    v.differences = differences.into_values().collect();
    let used: std::collections::BTreeSet<usize> = v
        .differences
        .iter()
        .filter_map(|d| allow.rule(d.kind, &d.method))
        .collect();
    v.unused_rules = (0..allow.len())
        .filter(|i| !used.contains(i))
        .map(|i| allow.line(i))
        .collect();
    v.differences
        .sort_by(|a, b| b.count.cmp(&a.count).then(a.method.cmp(&b.method)));
    Ok(v)
}

/// NVK's channel set-up (the first submission on the 3D channel) and everything it
/// submitted there after it, as canonical methods. The pushes after the set-up are
/// decoded as one stream: before Turing NVK splices indirect draws' arguments in as
/// pushes of their own, the data of a header in the push before.
fn nvk_methods(tap: &Tap) -> Result<(Vec<Method>, Vec<Method>), VerifyError> {
    let channel = tap.channel_3d().ok_or(VerifyError::NoChannel)?;
    let mut setup: Option<Vec<u32>> = None;
    let mut run = Vec::new();
    for exec in tap.execs.iter().filter(|e| e.channel == channel) {
        let mut words = Vec::new();
        for push in &exec.pushes {
            if push.unreadable {
                return Err(VerifyError::Unreadable { va: push.va });
            }
            words.extend_from_slice(&push.words);
        }
        if words.is_empty() {
            continue;
        }
        match setup {
            None => setup = Some(words),
            Some(_) => run.extend(words),
        }
    }
    let decode = |words: &[u32]| {
        segment::decode(Numbering::Nvk, words).map_err(|reason| VerifyError::Decode {
            side: "NVK",
            reason,
        })
    };
    Ok((decode(&setup.unwrap_or_default())?, decode(&run)?))
}

/// Runs methods on `gpu`, one header each (macro calls back in `numbering`'s ids), and
/// returns the MME instructions they ran; a failure is counted, the first kept.
fn run_methods(
    gpu: &mut Gpu,
    methods: &[Method],
    numbering: Numbering,
    failures: &mut u64,
    first: &mut Option<String>,
) -> u64 {
    let mut words = Vec::with_capacity(methods.len() * 2);
    for m in methods {
        let mthd = match (numbering, segment::macro_id(m.subc, m.mthd)) {
            (Numbering::Model, Some(id)) => {
                let model_id = nvk::MACROS
                    .get(usize::from(id))
                    .and_then(|name| Macro::ALL.iter().find(|x| x.name() == *name))
                    .map_or(id.wrapping_sub(200), |x| x.id());
                driver::class::CALL_MME_MACRO + 8 * model_id + m.mthd % 8
            }
            _ => m.mthd,
        };
        words.push(MethodHeader::new(HeaderKind::Incrementing, m.subc, mthd, 1).0);
        words.push(m.data);
    }
    let (cost, outcome) = gpu.execute_partial(&words);
    if let Err(mut e) = outcome {
        // The GPU model names a macro by the model's numbering; NVK's has its own.
        if let (Numbering::Nvk, driver::gpu::GpuError::Macro(run)) = (numbering, &mut e) {
            if let Some(name) = Macro::ALL
                .iter()
                .find(|m| m.name() == run.name)
                .and_then(|m| nvk::nvk_macro_name(m.id()))
            {
                run.name = name.to_string();
            }
        }
        *failures += 1;
        if first.is_none() {
            let side = match numbering {
                Numbering::Nvk => "NVK's macros",
                Numbering::Model => "the model's macros",
            };
            *first = Some(format!("{side}: {e}"));
        }
    }
    cost.mme_instructions
}

/// Every method of a draw, both sides lined up.
fn whole(
    index: usize,
    seq: Option<u64>,
    nvk: &Segment,
    model: &Segment,
    steps: &[Step],
) -> Excerpt {
    Excerpt {
        draw: index,
        seq,
        lines: steps.iter().map(|s| shown_step(nvk, model, *s)).collect(),
    }
}

/// One step as an excerpt shows it.
fn shown_step(nvk: &Segment, model: &Segment, step: Step) -> (Shown, Shown, &'static str) {
    let nvk_side = |i: usize| Some((nvk.label(i), nvk.methods[i].data));
    let model_side = |j: usize| Some((model.label(j), model.methods[j].data));
    match step {
        Step::Same(i, j) => (nvk_side(i), model_side(j), ""),
        Step::Data(i, j) => (nvk_side(i), model_side(j), "data"),
        Step::NvkOnly(i) => (nvk_side(i), None, "nvk-only"),
        Step::ModelOnly(j) => (None, model_side(j), "model-only"),
    }
}

/// A step's label: NVK's method's where NVK has one (its field is what NVK meant).
fn step_label(nvk: &Segment, model: &Segment, step: Step) -> String {
    match step {
        Step::Same(i, _) | Step::Data(i, _) | Step::NvkOnly(i) => nvk.label(i),
        Step::ModelOnly(j) => model.label(j),
    }
}

/// The methods around a draw's first unexplained difference.
fn excerpt(
    index: usize,
    seq: Option<u64>,
    nvk: &Segment,
    model: &Segment,
    steps: &[Step],
    allow: &AllowList,
) -> Excerpt {
    let unexplained = |s: &Step| {
        let kind = match *s {
            Step::Same(..) => return false,
            Step::Data(..) => Kind::Data,
            Step::NvkOnly(_) => Kind::NvkOnly,
            Step::ModelOnly(_) => Kind::ModelOnly,
        };
        allow.reason(kind, &step_label(nvk, model, *s)).is_none()
    };
    let at = steps.iter().position(unexplained).unwrap_or(0);
    let lines = steps[at.saturating_sub(CONTEXT)..(at + CONTEXT + 1).min(steps.len())]
        .iter()
        .map(|s| shown_step(nvk, model, *s))
        .collect();
    Excerpt {
        draw: index,
        seq,
        lines,
    }
}

/// The MME generation of a chipset NVK runs on (`NOUVEAU_CHIPSET`): Turing's from
/// TU10x (0x160) on.
pub fn arch_of_chipset(chipset: u32) -> Arch {
    if chipset >= 0x160 {
        Arch::Turing
    } else {
        Arch::Fermi
    }
}
