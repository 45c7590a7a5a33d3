//! The 3D-class methods whose write does more than set its shadow, and what each does:
//! the rest (state, draw parameters, report addresses, no-ops) need no look at what
//! they are, so that a method write is a shadow store and a table look-up for most of
//! what NVK pushes, and one that acts goes straight to its action.

use crate::class;

/// What writing a method does beyond setting its shadow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Effect {
    /// Nothing: the shadow keeps it.
    None,
    /// `SET_CONSTANT_BUFFER_SELECTOR_A`: the selected constant buffer's size.
    CbSize,
    /// `SET_CONSTANT_BUFFER_SELECTOR_B` and `_C`: its address.
    CbAddress,
    /// `LOAD_CONSTANT_BUFFER_OFFSET`.
    CbOffset,
    /// `LOAD_CONSTANT_BUFFER(i)`: a word into the selected constant buffer.
    CbLoad,
    /// A shader stage's `BIND_GROUP_CONSTANT_BUFFER`.
    BindGroupCb,
    /// `SET_RT_LAYER`.
    RtLayer,
    /// `BEGIN`.
    Begin,
    /// `DRAW_VERTEX_ARRAY`.
    DrawVertexArray,
    /// `DRAW_INDEX_BUFFER`.
    DrawIndexBuffer,
    /// `DRAW_AUTO`.
    DrawAuto,
    /// `SET_ZPASS_PIXEL_COUNT`.
    ZpassPixelCount,
    /// `SET_FALCON04`: the firmware's private-register write.
    Falcon04,
    /// `SET_REPORT_SEMAPHORE_D`.
    ReportSemaphore,
}

/// Each 3D-class method's [`Effect`], by dword index (`mthd >> 2`, 12 bits: as the
/// shadow keeps them).
pub(super) struct EffectTable([Effect; 4096]);

impl EffectTable {
    /// What a write to the method of dword index `index` (12 bits) does.
    #[inline(always)]
    pub(super) fn of(&self, index: usize) -> Effect {
        self.0[index & 0xfff]
    }

    /// The table with `mthd` doing `effect`.
    const fn with(mut self, mthd: u16, effect: Effect) -> Self {
        self.0[(mthd as usize >> 2) & 0xfff] = effect;
        self
    }

    /// The table with every method from `first` to before `end` doing `effect`.
    const fn with_range(mut self, first: u16, end: u16, effect: Effect) -> Self {
        let mut mthd = first;
        while mthd < end {
            self = self.with(mthd, effect);
            mthd += 4;
        }
        self
    }
}

/// The methods `GpuState::effect` acts on, and how.
pub(super) const EFFECTS: EffectTable = {
    let mut table = EffectTable([Effect::None; 4096])
        .with(class::SET_CONSTANT_BUFFER_SELECTOR_A, Effect::CbSize)
        .with(class::SET_CONSTANT_BUFFER_SELECTOR_B, Effect::CbAddress)
        .with(class::SET_CONSTANT_BUFFER_SELECTOR_C, Effect::CbAddress)
        .with(class::LOAD_CONSTANT_BUFFER_OFFSET, Effect::CbOffset)
        .with_range(
            class::load_constant_buffer(0),
            class::load_constant_buffer(16),
            Effect::CbLoad,
        )
        .with(class::SET_RT_LAYER, Effect::RtLayer)
        .with(class::BEGIN, Effect::Begin)
        .with(class::DRAW_VERTEX_ARRAY, Effect::DrawVertexArray)
        .with(class::DRAW_INDEX_BUFFER, Effect::DrawIndexBuffer)
        .with(class::DRAW_AUTO, Effect::DrawAuto)
        .with(class::SET_ZPASS_PIXEL_COUNT, Effect::ZpassPixelCount)
        .with(class::SET_FALCON04, Effect::Falcon04)
        .with(class::SET_REPORT_SEMAPHORE_D, Effect::ReportSemaphore);
    // Each of the five shader stages' bind-group constant buffer method.
    let mut stage = 0;
    while stage < 5 {
        table = table.with(
            class::BIND_GROUP_CONSTANT_BUFFER + 32 * stage,
            Effect::BindGroupCb,
        );
        stage += 1;
    }
    table
};

/// The 3D-class methods whose write only sets its shadow: no [`EFFECTS`] entry, not a
/// macro's (`CALL_MME_MACRO` on) and not one that loads the macro RAM. Kept as a count
/// of the other methods below each dword index, so that a run of consecutive methods is
/// found plain by one subtraction.
pub(super) struct PlainMethods([u16; 4097]);

impl PlainMethods {
    /// Whether the `count` methods from dword index `first` on are all plain (never for
    /// a run past the last method, which would wrap).
    #[inline(always)]
    pub(super) fn all(&self, first: usize, count: usize) -> bool {
        let end = first + count;
        end <= 4096 && self.0[end] == self.0[first]
    }
}

/// The plain methods ([`PlainMethods`]).
pub(super) const PLAIN: PlainMethods = {
    let mut others = [0u16; 4097];
    let mut index = 0;
    while index < 4096 {
        let mthd = (index as u16) << 2;
        let acts = !matches!(EFFECTS.0[index], Effect::None)
            || mthd >= class::CALL_MME_MACRO
            || (mthd >= *super::MacroStore::LOADS.start()
                && mthd <= *super::MacroStore::LOADS.end());
        others[index + 1] = others[index] + acts as u16;
        index += 1;
    }
    PlainMethods(others)
};

#[cfg(test)]
mod tests {
    use super::{Effect, EFFECTS};
    use crate::gpu::Gpu;
    use crate::mme::Arch;

    /// A method left out of the set would lose what its write does: every method the set
    /// leaves out must be one the model's method write only shadows, whatever it carries.
    #[test]
    fn every_method_left_out_only_sets_its_shadow() {
        let mut gpu = Gpu::new(Arch::Turing);
        // A selected constant buffer with room, so that a write to it would show.
        gpu.state.channel.cb_size = 0x100;
        for mthd in 0..=u16::MAX {
            if EFFECTS.of(usize::from(mthd >> 2)) != Effect::None {
                continue;
            }
            for data in [0, 1, 0x11, 0x8000_0001, u32::MAX] {
                assert!(
                    !gpu.state.effect(mthd, data),
                    "method {mthd:#06x} (data {data:#x}) acts beyond its shadow but has no effect in EFFECTS"
                );
            }
        }
    }

    /// And the table holds what the model acts on, each named method with its effect;
    /// a value past the methods (one that aliases a method's shadow) acts on nothing.
    #[test]
    fn the_methods_acted_on_have_their_effects() {
        use crate::class;
        for (mthd, effect) in [
            (class::SET_CONSTANT_BUFFER_SELECTOR_A, Effect::CbSize),
            (class::SET_CONSTANT_BUFFER_SELECTOR_C, Effect::CbAddress),
            (class::LOAD_CONSTANT_BUFFER_OFFSET, Effect::CbOffset),
            (class::load_constant_buffer(15), Effect::CbLoad),
            (
                class::BIND_GROUP_CONSTANT_BUFFER + 4 * 32,
                Effect::BindGroupCb,
            ),
            (class::BEGIN, Effect::Begin),
            (class::DRAW_INDEX_BUFFER, Effect::DrawIndexBuffer),
            (class::SET_REPORT_SEMAPHORE_D, Effect::ReportSemaphore),
        ] {
            assert_eq!(EFFECTS.of(usize::from(mthd >> 2)), effect, "{mthd:#x}");
        }
        for mthd in [
            class::SET_VERTEX_ARRAY_START,
            class::BIND_GROUP_CONSTANT_BUFFER + 4,
        ] {
            assert_eq!(
                EFFECTS.of(usize::from(mthd >> 2)),
                Effect::None,
                "{mthd:#x}"
            );
        }
        let mut gpu = Gpu::new(Arch::Turing);
        assert!(gpu.state.effect(class::SET_RT_LAYER, 3));
        assert!(!gpu.state.effect(class::SET_RT_LAYER + 0x4000, 5));
        assert_eq!(gpu.state.channel.rt_layer, 3);
    }
}
