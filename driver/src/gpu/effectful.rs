//! The 3D-class methods whose write does more than set its shadow: the rest (state,
//! draw parameters, report addresses, no-ops) need no look at what they are, so that a
//! method write is a shadow store and a bit test for most of what NVK pushes.

use crate::class;

/// A set of 3D-class methods, by dword index (`mthd >> 2`, 12 bits: as the shadow
/// keeps them).
pub(super) struct MethodSet([u64; 64]);

impl MethodSet {
    const EMPTY: MethodSet = MethodSet([0; 64]);

    /// The set with `mthd` added.
    const fn with(mut self, mthd: u16) -> Self {
        let index = (mthd as usize >> 2) & 0xfff;
        self.0[index / 64] |= 1 << (index % 64);
        self
    }

    /// The set with every method from `first` to before `end` added.
    const fn with_range(mut self, first: u16, end: u16) -> Self {
        let mut mthd = first;
        while mthd < end {
            self = self.with(mthd);
            mthd += 4;
        }
        self
    }

    /// Whether the method of dword index `index` (12 bits) is in the set.
    #[inline(always)]
    pub(super) fn contains(&self, index: usize) -> bool {
        (self.0[(index / 64) & 63] >> (index % 64)) & 1 != 0
    }
}

/// The methods `GpuState::effect` acts on (it answers `false` for every other).
pub(super) const EFFECTFUL: MethodSet = {
    let mut set = MethodSet::EMPTY
        .with(class::SET_CONSTANT_BUFFER_SELECTOR_A)
        .with(class::SET_CONSTANT_BUFFER_SELECTOR_B)
        .with(class::SET_CONSTANT_BUFFER_SELECTOR_C)
        .with(class::LOAD_CONSTANT_BUFFER_OFFSET)
        .with_range(
            class::load_constant_buffer(0),
            class::load_constant_buffer(16),
        )
        .with(class::SET_RT_LAYER)
        .with(class::BEGIN)
        .with(class::DRAW_VERTEX_ARRAY)
        .with(class::DRAW_INDEX_BUFFER)
        .with(class::DRAW_AUTO)
        .with(class::SET_ZPASS_PIXEL_COUNT)
        .with(class::SET_FALCON04)
        .with(class::SET_REPORT_SEMAPHORE_D);
    // Each of the five shader stages' bind-group constant buffer method.
    let mut stage = 0;
    while stage < 5 {
        set = set.with(class::BIND_GROUP_CONSTANT_BUFFER + 32 * stage);
        stage += 1;
    }
    set
};

#[cfg(test)]
mod tests {
    use super::EFFECTFUL;
    use crate::gpu::Gpu;
    use crate::mme::Arch;

    /// A method left out of the set would lose what its write does: every method the set
    /// leaves out must be one the model's method write only shadows, whatever it carries.
    #[test]
    fn every_method_left_out_only_sets_its_shadow() {
        let mut gpu = Gpu::new(Arch::Turing);
        // A selected constant buffer with room, so that a write to it would show.
        gpu.state.cb_size = 0x100;
        for mthd in 0..=u16::MAX {
            if EFFECTFUL.contains(usize::from(mthd >> 2) & 0xfff) {
                continue;
            }
            for data in [0, 1, 0x11, 0x8000_0001, u32::MAX] {
                assert!(
                    !gpu.state.effect(mthd, data),
                    "method {mthd:#06x} (data {data:#x}) acts beyond its shadow but is not in EFFECTFUL"
                );
            }
        }
    }

    /// And the set holds what the model acts on: each named method is in it.
    #[test]
    fn the_methods_acted_on_are_in_the_set() {
        use crate::class;
        for mthd in [
            class::SET_CONSTANT_BUFFER_SELECTOR_A,
            class::LOAD_CONSTANT_BUFFER_OFFSET,
            class::load_constant_buffer(15),
            class::BIND_GROUP_CONSTANT_BUFFER + 4 * 32,
            class::BEGIN,
            class::DRAW_INDEX_BUFFER,
            class::SET_REPORT_SEMAPHORE_D,
        ] {
            assert!(EFFECTFUL.contains(usize::from(mthd >> 2)), "{mthd:#x}");
        }
        assert!(!EFFECTFUL.contains(usize::from(class::SET_VERTEX_ARRAY_START >> 2)));
    }
}
