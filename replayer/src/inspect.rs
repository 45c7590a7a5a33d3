//! Inspecting one draw: replays a trace up to a draw and captures every method the
//! driver model executed for it, pushed by the encoder or emitted by its macro.

use std::path::Path;

use driver::chipset::Chipset;
use driver::class;
use driver::gpu::LoggedMethod;
use driver::nvk::state::{StateCost, StateGroup};
use driver::nvk::Macro;
use driver::push::SUBC_3D;

use crate::replay::{Discard, Pass, Watch};
use crate::{ReplayError, ReplayOptions};

/// The method stream of one draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawInspection {
    /// The draw's sequence number in the trace.
    pub seq: u64,
    /// The view mask it ran under.
    pub view_mask: u32,
    /// Push-buffer dwords the encoder wrote for it.
    pub dwords: u64,
    /// MME instructions its macro executed.
    pub mme_instructions: u64,
    /// What the binds since the previous draw pushed (vertex and index buffers, root
    /// table updates), by group: the stream's first methods, in the order recorded.
    pub binds: StateCost,
    /// What the state flush before the draw wrote, by group: the methods after the
    /// binds', in [`StateGroup::ALL`] order.
    pub state: StateCost,
    /// Every method executed, in order.
    pub methods: Vec<LoggedMethod>,
}

/// A run of one method written repeatedly, for a summary of a method stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodRun {
    /// The method's name, or its offset in hex.
    pub name: String,
    /// Whether a macro emitted it.
    pub from_macro: bool,
    /// Consecutive writes.
    pub count: u32,
}

impl DrawInspection {
    /// The stream with the binds before the draw folded into one run, the flushed state
    /// into one run per state group (`state: viewport`; the group's counts take in what
    /// the macros it calls emit), and consecutive writes of one method folded together.
    pub fn runs(&self) -> Vec<MethodRun> {
        // The methods each leading run takes, in stream order.
        let mut quotas: Vec<(String, u32)> = Vec::new();
        let binds = self.binds.total_methods();
        if binds > 0 {
            let groups: Vec<String> = StateGroup::ALL
                .iter()
                .zip(self.binds.methods)
                .filter(|(_, m)| *m > 0)
                .map(|(g, m)| format!("{} {m}", g.name()))
                .collect();
            quotas.push((
                format!("binds since the last draw ({})", groups.join(", ")),
                binds,
            ));
        }
        for group in StateGroup::FLUSH_ORDER {
            let count = self.state.methods[group.index()];
            if count > 0 {
                quotas.push((format!("state: {}", group.name()), count));
            }
        }
        let mut quotas = quotas.into_iter();
        let mut left = 0u32;
        let mut runs: Vec<MethodRun> = Vec::new();
        // The draw's own macro call ends what the groups can take.
        let draw_call = self
            .methods
            .iter()
            .rposition(|m| !m.from_macro && m.subc == SUBC_3D && is_macro_call(m.mthd))
            .unwrap_or(self.methods.len());
        for (i, m) in self.methods.iter().enumerate() {
            if i >= draw_call {
                left = 0;
                quotas = Vec::new().into_iter();
            }
            if left == 0 {
                if let Some((name, count)) = quotas.next() {
                    runs.push(MethodRun {
                        name,
                        from_macro: false,
                        count: 0,
                    });
                    left = count;
                }
            }
            if left > 0 {
                // Inside a group: its pushed methods and what its macros emitted.
                if let Some(last) = runs.last_mut() {
                    last.count += 1;
                    left -= 1;
                    continue;
                }
            }
            let name = method_label(m.subc, m.mthd);
            match runs.last_mut() {
                Some(last) if last.name == name && last.from_macro == m.from_macro => {
                    last.count += 1
                }
                _ => runs.push(MethodRun {
                    name,
                    from_macro: m.from_macro,
                    count: 1,
                }),
            }
        }
        runs
    }
}

/// Whether `mthd` is `CALL_MME_MACRO(j)` (not its data).
fn is_macro_call(mthd: u16) -> bool {
    (class::CALL_MME_MACRO..0x4000).contains(&mthd) && mthd % 8 == 0
}

/// A method's name for people: the class header's name where the model knows it, the
/// macro it calls for `CALL_MME_MACRO`/`CALL_MME_DATA`, its offset otherwise (with
/// its subchannel when that is not the 3D class's). Names are the Turing classes';
/// [`method_label_on`] names a method as another GPU's classes do.
pub fn method_label(subc: u8, mthd: u16) -> String {
    let on_subc = |name: String| {
        if subc == SUBC_3D {
            name
        } else {
            format!("{name} (subchannel {subc})")
        }
    };
    if mthd < 0x100 {
        // The channel's own methods, on any subchannel.
        if let Some(name) = class::header_name(subc, mthd) {
            return on_subc(name);
        }
    }
    if subc != SUBC_3D {
        return class::method_name_on(subc, mthd)
            .map(str::to_string)
            .or_else(|| class::header_name(subc, mthd))
            .map_or_else(|| format!("subchannel {subc} method {mthd:#06x}"), on_subc);
    }
    if (class::CALL_MME_MACRO..0x4000).contains(&mthd) {
        let id = (mthd - class::CALL_MME_MACRO) / 8;
        let what = if mthd % 8 == 0 { "MACRO" } else { "DATA" };
        return match Macro::ALL.iter().find(|m| m.id() == id) {
            Some(m) => format!("CALL_MME_{what}({id}: {})", m.name()),
            None => format!("CALL_MME_{what}({id})"),
        };
    }
    class::method_name(mthd)
        .map(str::to_string)
        .or_else(|| class::header_name(subc, mthd))
        .unwrap_or_else(|| format!("method {mthd:#06x}"))
}

/// [`method_label`] on `chipset`: a method its own classes name otherwise than the
/// Turing classes do takes their name.
pub fn method_label_on(chipset: &Chipset, subc: u8, mthd: u16) -> String {
    // The pipeline slots' methods keep the model's slot-wide names (`(j)`).
    let slot = subc == SUBC_3D && class::method_name(mthd).is_some_and(|n| n.ends_with("(j)"));
    match class::own_header_name(chipset, subc, mthd) {
        Some(_) if slot => method_label(subc, mthd),
        Some(name) if subc == SUBC_3D => name,
        Some(name) => format!("{name} (subchannel {subc})"),
        None => method_label(subc, mthd),
    }
}

/// Replays `trace` as `options` say until the draw that wrote row `ordinal` of
/// repetition 0, and returns its method stream.
pub fn inspect_draw(
    trace: &Path,
    options: &ReplayOptions,
    ordinal: u64,
) -> Result<DrawInspection, ReplayError> {
    let mut pass = Pass::new(options, 0)?;
    pass.watch = Some(Watch {
        ordinal,
        found: None,
    });
    pass.run(trace, &mut Discard, &mut |_, _| {})?;
    pass.watch
        .and_then(|w| w.found)
        .ok_or(ReplayError::NoSuchDraw { ordinal })
}
