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
//! model's. Draws are lined up by what they draw ([`align`]), so that a draw one side
//! lacks stands alone. What no trace can carry is known to verify itself: GPU
//! addresses, compared by consistency ([`addresses`]), and the classes of
//! [`known`]'s list; differences an allow file explains ([`allow`]) are counted apart.

pub mod addresses;
pub mod align;
pub mod allow;
pub mod diff;
pub mod known;
pub mod macros;
pub mod nvk;
pub mod oracle;
pub mod segment;
pub mod tap;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use driver::chipset::Chipset;
use driver::gpu::{Channel, Gpu};
use driver::mme::Arch;
use driver::nvk::{Device, Macro};
use driver::push::{HeaderKind, MethodHeader, ParseError};

use crate::replay::{Discard, Pass, Tape};
use crate::{ReplayError, ReplayOptions};
use addresses::{AddressCheck, Conflict};
use align::Aligned;
use allow::{AllowList, Kind};
use diff::Step;
use segment::{switch_at, Field, Method, Numbering, Part, Segment};
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
    /// The reason it is explained, when it is: verify's own ([`Difference::known`]) or
    /// the allow file's.
    pub reason: Option<String>,
    /// Whether verify itself explains it (an address that corresponds, or a class of
    /// [`known`]'s list), not the allow file.
    pub known: bool,
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

/// One draw on both sides, or on one side alone.
#[derive(Clone, Debug)]
pub struct DrawResult {
    /// Its place among NVK's draws and the model's; `None` on the side that lacks it.
    pub places: (Option<usize>, Option<usize>),
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
    /// Whether every difference is one verify itself explains (what the trace cannot
    /// carry: an address that corresponds, a compile, NVK's queue, an NVK bug, a
    /// chosen version); no allow file's rule counts.
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
    /// Each draw, lined up ([`align`]): pairs, and draws one side made alone.
    pub draws: Vec<DrawResult>,
    /// Addresses whose correspondence broke: how many, and the first few.
    pub address_conflicts: (u64, Vec<Conflict>),
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
    /// The channels each side ran the trace's work on (NVK, the model): one a queue of
    /// each device the program made and submitted to.
    pub channels: (usize, usize),
}

impl Verification {
    /// Draws both sides made.
    pub fn paired_draws(&self) -> usize {
        self.draws.iter().filter(|d| d.is_paired()).count()
    }

    /// Draws one side made alone: (NVK's, the model's).
    pub fn unpaired_draws(&self) -> (usize, usize) {
        self.draws.iter().fold((0, 0), |(n, m), d| match d.places {
            (Some(_), None) => (n + 1, m),
            (None, Some(_)) => (n, m + 1),
            _ => (n, m),
        })
    }

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

    /// Differences nothing explains: methods (an address whose correspondence broke
    /// among them), draws one side made alone, and macro runs that failed on the
    /// simulator.
    pub fn unexplained(&self) -> u64 {
        let (nvk_alone, model_alone) = self.unpaired_draws();
        self.differences
            .iter()
            .filter(|d| d.reason.is_none())
            .map(|d| d.count)
            .sum::<u64>()
            + (nvk_alone + model_alone) as u64
            + self.mme_failures.0
            + self.mme_failures.1
    }
}

impl DrawResult {
    /// Whether both sides made it.
    pub fn is_paired(&self) -> bool {
        self.places.0.is_some() && self.places.1.is_some()
    }
}

/// What a report adds to the label of an address that breaks the correspondence.
pub const ANOTHER_OBJECT: &str = "(address: another object)";

/// How many address conflicts [`Verification::address_conflicts`] keeps.
const CONFLICTS: usize = 5;

/// Why a difference is explained, if it is.
struct Explained {
    reason: Option<String>,
    known: bool,
}

/// Explains a difference of `kind` in the method labelled `label`: an address word
/// that keeps the correspondence ([`AddressCheck`]), a class verify knows, or the
/// allow file's rule.
fn explain(kind: Kind, label: &str, arch: Arch, known: &AllowList, allow: &AllowList) -> Explained {
    if kind == Kind::Data && addresses::is_address(label, arch) {
        return Explained {
            reason: Some(
                "address: where NVK placed the object; the model's corresponds to it".into(),
            ),
            known: true,
        };
    }
    if let Some(reason) = known.reason(kind, label) {
        return Explained {
            reason: Some(reason.to_string()),
            known: true,
        };
    }
    Explained {
        reason: allow.reason(kind, label).map(str::to_string),
        known: false,
    }
}

/// A method's label in verification reports: [`crate::method_label`]'s, but macro calls
/// named by NVK's numbering (both sides' calls are renumbered to it) with the
/// parameter's position, and root-table loads by the member they land in.
pub fn label(m: Method, field: Field, names: Option<&Chipset>) -> String {
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
        _ => match names {
            Some(chipset) => crate::method_label_on(chipset, m.subc, m.mthd),
            None => crate::method_label(m.subc, m.mthd),
        },
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
    compare(tap, &tape, options.chipset, allow, show)
}

/// Every word the model pushes replaying `trace`, after its channel set-up. The model
/// is given the program NVK ran: the device replay makes a device made while one that
/// asked for the same lives that device again, so the model runs both on one device's
/// channels too.
pub fn model_tape(trace: &Path, options: &ReplayOptions) -> Result<Tape, VerifyError> {
    let mut pass = Pass::new(options, 0)?;
    pass.tape = Some(Tape::default());
    pass.channels.share_alike_devices = true;
    pass.run(trace, &mut Discard, &mut |_, _| {})?;
    Ok(pass.tape.take().unwrap_or_default())
}

/// Compares NVK's push buffers (`tap`) with the model's (`tape`, on `chipset`).
pub fn compare(
    tap: &Tap,
    tape: &Tape,
    chipset: Chipset,
    allow: &AllowList,
    show: &[usize],
) -> Result<Verification, VerifyError> {
    let (nvk_setup, nvk_run) = nvk_methods(tap)?;
    let arch = chipset.arch();
    let device = Device::for_chipset(chipset);
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

    let mut nvk_segments = segment::split(&nvk_run.methods, &[], &nvk_run.switches);
    let mut model_segments = segment::model_segments(tape).map_err(decode_err("the model"))?;
    for s in nvk_segments.iter_mut().chain(&mut model_segments) {
        s.names = Some(chipset);
    }

    // Each side's macros run on its own GPU model, every segment in its own order and
    // on its own channel.
    let first = &mut v.mme_failures.2;
    let mut nvk_gpu = SideGpu::new(arch, Numbering::Nvk, &nvk_setup, first);
    let mut model_gpu = SideGpu::new(arch, Numbering::Model, &model_setup, first);
    let nvk_mme: Vec<u64> = nvk_segments.iter().map(|s| nvk_gpu.run(s, first)).collect();
    let model_mme: Vec<u64> = model_segments
        .iter()
        .map(|s| model_gpu.run(s, first))
        .collect();
    v.mme_failures.0 = nvk_gpu.failures;
    v.mme_failures.1 = model_gpu.failures;
    v.channels = (nvk_gpu.channels(), model_gpu.channels());

    let draws_of = |s: &[Segment]| -> Vec<usize> {
        (0..s.len())
            .filter(|&i| s[i].draw_macro.is_some())
            .collect()
    };
    let (nvk_draws, model_draws) = (draws_of(&nvk_segments), draws_of(&model_segments));
    v.draw_counts = (nvk_draws.len(), model_draws.len());
    let nvk_signatures: Vec<_> = nvk_draws
        .iter()
        .map(|&i| signature(&nvk_segments[i], arch))
        .collect();
    let model_signatures: Vec<_> = model_draws
        .iter()
        .map(|&i| signature(&model_segments[i], arch))
        .collect();

    let known = known::nvk_25_0_7();
    let mut c = Comparer {
        v: &mut v,
        differences: BTreeMap::new(),
        known: &known,
        allow,
        check: AddressCheck::new(arch),
        arch,
        show,
    };
    let empty = Segment::default();
    for (index, step) in align::align(&nvk_signatures, &model_signatures)
        .into_iter()
        .enumerate()
    {
        let (a, b) = match step {
            Aligned::Pair(a, b) => (Some(a), Some(b)),
            Aligned::NvkOnly(a) => (Some(a), None),
            Aligned::ModelOnly(b) => (None, Some(b)),
        };
        let (nvk_at, model_at) = (a.map(|a| nvk_draws[a]), b.map(|b| model_draws[b]));
        let nvk = nvk_at.map_or(&empty, |i| &nvk_segments[i]);
        let model = model_at.map_or(&empty, |j| &model_segments[j]);
        let seq = model.row.map(|(seq, _)| seq);
        let (equal, explained, faithful) = if a.is_some() && b.is_some() {
            c.segments(index, nvk, model)
        } else {
            (false, false, false)
        };
        c.v.draws.push(DrawResult {
            places: (a, b),
            seq,
            draw_macro: nvk.draw_macro.or(model.draw_macro),
            nvk_methods: nvk.methods.len(),
            model_methods: model.methods.len(),
            equal,
            explained,
            faithful,
            nvk_mme: nvk_at.map_or(0, |i| nvk_mme[i]),
            model_mme: model_at.map_or(0, |j| model_mme[j]),
        });
    }
    // What each side pushed after its last draw.
    let tails = (tail(&nvk_segments), tail(&model_segments));
    if tails.0.is_some() || tails.1.is_some() {
        let index = c.v.draws.len();
        c.segments(index, tails.0.unwrap_or(&empty), tails.1.unwrap_or(&empty));
    }
    let mut differences: Vec<Difference> =
        std::mem::take(&mut c.differences).into_values().collect();
    let used: std::collections::BTreeSet<usize> = differences
        .iter()
        .filter(|d| !d.known)
        .filter_map(|d| allow.rule(d.kind, &d.method))
        .collect();
    v.unused_rules = (0..allow.len())
        .filter(|i| !used.contains(i))
        .map(|i| allow.line(i))
        .collect();
    differences.sort_by(|a, b| b.count.cmp(&a.count).then(a.method.cmp(&b.method)));
    v.differences = differences;
    Ok(v)
}

/// What a side pushed after its last draw.
fn tail(segments: &[Segment]) -> Option<&Segment> {
    segments.last().filter(|s| s.draw_macro.is_none())
}

/// What identifies a draw across the two sides: its draw macro and the parameters of
/// its call, addresses left out (they are NVK's own on one side).
fn signature(s: &Segment, arch: Arch) -> (Option<&'static str>, Vec<u32>) {
    let call_start = (0..s.methods.len())
        .rev()
        .find(|&i| {
            let m = s.methods[i];
            m.mthd % 8 == 0 && segment::macro_id(m.subc, m.mthd).is_some()
        })
        .unwrap_or(s.methods.len());
    let params = (call_start..s.methods.len())
        .map(|i| {
            if addresses::is_address(&s.label(i), arch) {
                0
            } else {
                s.methods[i].data
            }
        })
        .collect();
    (s.draw_macro, params)
}

/// The state of a comparison as it goes through the draws.
struct Comparer<'a> {
    v: &'a mut Verification,
    differences: BTreeMap<(Kind, String), Difference>,
    known: &'a AllowList,
    allow: &'a AllowList,
    check: AddressCheck,
    arch: Arch,
    show: &'a [usize],
}

impl Comparer<'_> {
    /// Compares one draw's methods (or the tail's) on both sides; returns whether
    /// they are equal, explained, and explained by verify itself.
    fn segments(&mut self, index: usize, nvk: &Segment, model: &Segment) -> (bool, bool, bool) {
        let seq = model.row.map(|(seq, _)| seq);
        let steps = diff::diff(&nvk.methods, &model.methods);
        let mut part = model.parts.first().copied().unwrap_or(Part::Commands);
        let mut touched: Vec<(Kind, String)> = Vec::new();
        // Each part seen in this draw, and whether it differed.
        let mut seen: BTreeMap<Part, bool> = BTreeMap::new();
        let mut conflicted: Vec<usize> = Vec::new();
        let (mut equal, mut explained, mut faithful) = (true, true, true);
        for (at, step) in steps.iter().enumerate() {
            let (n, m) = match *step {
                Step::Same(i, j) | Step::Data(i, j) => (Some(nvk.methods[i]), Some(j)),
                Step::NvkOnly(i) => (Some(nvk.methods[i]), None),
                Step::ModelOnly(j) => (None, Some(j)),
            };
            if let Some(j) = m {
                part = model.parts.get(j).copied().unwrap_or(Part::Commands);
            }
            let m = m.map(|j| model.methods[j]);
            let totals = self.v.parts.entry(part).or_default();
            totals.nvk += u64::from(n.is_some());
            totals.model += u64::from(m.is_some());
            let differs = seen.entry(part).or_insert(false);
            let label = step_label(nvk, model, *step);
            let conflict = match (n, m) {
                (Some(n), Some(m)) => self.check.observe(&label, n.data, m.data, index).1,
                _ => None,
            };
            let kind = match step {
                Step::Same(..) if conflict.is_none() => {
                    totals.same += 1;
                    continue;
                }
                Step::Same(..) | Step::Data(..) => Kind::Data,
                Step::NvkOnly(_) => Kind::NvkOnly,
                Step::ModelOnly(_) => Kind::ModelOnly,
            };
            equal = false;
            *differs = true;
            // An address that breaks the correspondence is never verify's own to
            // explain: only an allow file's rule for it as such (a known gap).
            let label = match &conflict {
                Some(_) => format!("{label} {ANOTHER_OBJECT}"),
                None => label,
            };
            let why = match &conflict {
                Some(_) => Explained {
                    reason: self.allow.reason(kind, &label).map(str::to_string),
                    known: false,
                },
                None => explain(kind, &label, self.arch, self.known, self.allow),
            };
            if let Some(conflict) = conflict {
                conflicted.push(at);
                self.v.address_conflicts.0 += 1;
                if self.v.address_conflicts.1.len() < CONFLICTS {
                    self.v.address_conflicts.1.push(conflict);
                }
            }
            explained &= why.reason.is_some();
            faithful &= why.known;
            let key = (kind, label.clone());
            let d = self
                .differences
                .entry(key.clone())
                .or_insert_with(|| Difference {
                    kind,
                    method: label,
                    part,
                    count: 0,
                    draws: 0,
                    first: (index, seq, n.map(|x| x.data), m.map(|x| x.data)),
                    reason: why.reason,
                    known: why.known,
                });
            d.count += 1;
            if !touched.contains(&key) {
                touched.push(key);
                d.draws += 1;
            }
        }
        if self.show.contains(&index) {
            self.v.excerpts.push(whole(index, seq, nvk, model, &steps));
        } else if !explained && self.show.is_empty() && self.v.excerpts.len() < EXCERPTS {
            let at = first_unexplained(
                nvk,
                model,
                &steps,
                self.arch,
                self.known,
                self.allow,
                &conflicted,
            );
            self.v
                .excerpts
                .push(excerpt(index, seq, nvk, model, &steps, at));
        }
        if nvk.draw_macro.is_some() || model.draw_macro.is_some() {
            for (part, differs) in seen {
                let totals = self.v.parts.entry(part).or_default();
                totals.draws += 1;
                totals.exact_draws += u64::from(!differs);
            }
        }
        (equal, explained, faithful)
    }
}

/// What NVK pushed on the channels it ran the trace's work on, as canonical methods:
/// the first channel's set-up, and everything submitted after each channel's set-up,
/// in the order NVK submitted it, with where the channel changed (the first method on
/// a channel, and the channel). The pushes of one channel's consecutive submissions are
/// decoded as one stream: before Turing NVK splices indirect draws' arguments in as
/// pushes of their own, the data of a header in the push before.
fn nvk_methods(tap: &Tap) -> Result<(Vec<Method>, ChannelRun), VerifyError> {
    let channels = tap.channels_3d().map_err(|_| VerifyError::NoChannel)?;
    let decode = |words: &[u32]| {
        segment::decode(Numbering::Nvk, words).map_err(|reason| VerifyError::Decode {
            side: "NVK",
            reason,
        })
    };
    let mut setup: Option<Vec<u32>> = None;
    // The channels whose set-up has come.
    let mut set_up_channels: Vec<u32> = Vec::new();
    let mut run = ChannelRun::default();
    // The channel whose words are gathered, and its words not yet decoded.
    let mut stretch: Option<(u32, Vec<u32>)> = None;
    for exec in tap.execs.iter().filter(|e| channels.contains(&e.channel)) {
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
        if !set_up_channels.contains(&exec.channel) {
            set_up_channels.push(exec.channel);
            setup.get_or_insert(words);
            continue;
        }
        match &mut stretch {
            Some((channel, gathered)) if *channel == exec.channel => gathered.extend(words),
            _ => {
                if let Some((channel, gathered)) = stretch.take() {
                    run.extend(channel, decode(&gathered)?);
                }
                stretch = Some((exec.channel, words));
            }
        }
    }
    if let Some((channel, gathered)) = stretch {
        run.extend(channel, decode(&gathered)?);
    }
    Ok((decode(&setup.unwrap_or_default())?, run))
}

/// Methods as one side ran them, and the channels they ran on.
#[derive(Debug, Default)]
struct ChannelRun {
    methods: Vec<Method>,
    /// Where the channel changed: the first method on it, and the channel.
    switches: Vec<(usize, u32)>,
}

impl ChannelRun {
    /// `methods` ran next, on `channel`.
    fn extend(&mut self, channel: u32, methods: Vec<Method>) {
        switch_at(&mut self.switches, self.methods.len(), channel);
        self.methods.extend(methods);
    }
}

/// One side's GPU model for counting its macros' instructions: it runs each segment's
/// methods on the channel they ran on, each channel set up by that side's set-up before
/// its first method, as NVK sets each queue's channel up.
struct SideGpu<'s> {
    gpu: Gpu,
    numbering: Numbering,
    setup: &'s [Method],
    /// The channel the GPU runs now (`None` before the first segment's).
    running: Option<u32>,
    parked: HashMap<u32, Channel>,
    failures: u64,
}

impl<'s> SideGpu<'s> {
    fn new(
        arch: Arch,
        numbering: Numbering,
        setup: &'s [Method],
        first: &mut Option<String>,
    ) -> Self {
        let mut side = SideGpu {
            gpu: Gpu::new(arch),
            numbering,
            setup,
            running: None,
            parked: HashMap::new(),
            failures: 0,
        };
        side.set_up(first);
        side
    }

    /// Sets the channel running up as this side's first channel was.
    fn set_up(&mut self, first: &mut Option<String>) {
        self.run_methods(self.setup, first);
    }

    /// Runs `methods` on the channel running; the MME instructions they ran.
    fn run_methods(&mut self, methods: &[Method], first: &mut Option<String>) -> u64 {
        run_methods(
            &mut self.gpu,
            methods,
            self.numbering,
            &mut self.failures,
            first,
        )
    }

    /// Runs `segment`'s methods, switching channel where it says; the MME instructions
    /// they ran.
    fn run(&mut self, segment: &Segment, first: &mut Option<String>) -> u64 {
        let mut at = 0;
        let mut instructions = 0;
        for &(start, channel) in &segment.channels {
            instructions += self.run_methods(&segment.methods[at..start], first);
            self.switch_to(channel, first);
            at = start;
        }
        instructions + self.run_methods(&segment.methods[at..], first)
    }

    /// The methods from now on run on `channel`: the one running is parked, and
    /// `channel` taken from where it was parked, or made and set up.
    fn switch_to(&mut self, channel: u32, first: &mut Option<String>) {
        let Some(running) = self.running.replace(channel) else {
            // The channel set up first is the first one's.
            return;
        };
        if running == channel {
            return;
        }
        let (mut other, fresh) = match self.parked.remove(&channel) {
            Some(parked) => (parked, false),
            None => (Channel::new(self.gpu.arch(), true), true),
        };
        self.gpu.exchange_channel(&mut other);
        self.parked.insert(running, other);
        if fresh {
            self.set_up(first);
        }
    }

    /// The channels it ran methods on.
    fn channels(&self) -> usize {
        self.parked.len() + 1
    }
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

/// The step of a draw's first unexplained difference (`conflicted`: steps whose
/// address broke the correspondence).
fn first_unexplained(
    nvk: &Segment,
    model: &Segment,
    steps: &[Step],
    arch: Arch,
    known: &AllowList,
    allow: &AllowList,
    conflicted: &[usize],
) -> usize {
    let unexplained = |at: usize, s: &Step| {
        let kind = match *s {
            _ if conflicted.contains(&at) => {
                let label = format!("{} {ANOTHER_OBJECT}", step_label(nvk, model, *s));
                return allow.reason(Kind::Data, &label).is_none();
            }
            Step::Same(..) => return false,
            Step::Data(..) => Kind::Data,
            Step::NvkOnly(_) => Kind::NvkOnly,
            Step::ModelOnly(_) => Kind::ModelOnly,
        };
        explain(kind, &step_label(nvk, model, *s), arch, known, allow)
            .reason
            .is_none()
    };
    steps
        .iter()
        .enumerate()
        .position(|(at, s)| unexplained(at, s))
        .unwrap_or(0)
}

/// The methods around step `at` of a draw.
fn excerpt(
    index: usize,
    seq: Option<u64>,
    nvk: &Segment,
    model: &Segment,
    steps: &[Step],
    at: usize,
) -> Excerpt {
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
