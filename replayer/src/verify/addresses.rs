//! GPU addresses compared by consistency, not by value.
//!
//! A trace names objects by handle; NVK places them where its allocator does, the
//! model where its own does. Their addresses cannot be equal, but they must
//! correspond: each address the model pushes for an object stands for one address
//! NVK pushes for the same object throughout the trace, and each NVK address for one
//! of the model's at a time (NVK hands an address out again once its object is
//! freed; the model never does, so a freed object's address does not come back on its
//! side). A draw into the wrong image, a bind of the wrong buffer, a query written to
//! the wrong pool breaks the correspondence and is reported, although both sides push
//! an address.
//!
//! Addresses are pushed as two words (high and low, in an order each method has), so
//! the words of one family are paired into 64-bit addresses on each side before they
//! are compared. Addresses in command-buffer upload memory
//! ([`driver::nvk::UPLOAD_MEMORY`] on the model's side: push descriptor sets, compute
//! root tables, QMDs) are streamed on both sides, placed anew for each upload, and name
//! no object: they are not held to a correspondence.

use std::collections::HashMap;

use driver::mme::Arch;

/// Which word of an address a method carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Word {
    /// Bits 63:32, pushed first.
    HighFirst,
    /// Bits 31:0, after the high word.
    LowSecond,
    /// Bits 31:0, pushed first.
    LowFirst,
    /// Bits 63:32, after the low word.
    HighSecond,
    /// The whole address in one word, shifted right by 8 (a QMD's, 256-byte aligned).
    Whole,
    /// An offset in one word (a program's in the program region, before Volta).
    Offset,
    /// After the low word, a buffer descriptor's second word: bits 44:32 of the
    /// address (or of its 16-byte units, a bindless constant buffer's) in its low 13
    /// bits; above them a bindless constant buffer's size, zero otherwise (no GPU
    /// address reaches bit 45), which must be equal on both sides.
    DescriptorHigh,
}

/// The bits of a buffer descriptor's second word that hold address bits
/// ([`Word::DescriptorHigh`]).
const DESCRIPTOR_HIGH_ADDRESS: u32 = (1 << 13) - 1;

/// The address words verify knows, by their labels (as reports print them), with the
/// family that pairs them.
const ADDRESS_WORDS: &[(&str, &str, Word)] = &[
    ("SET_COLOR_TARGET_A(j)", "colour target", Word::HighFirst),
    ("SET_COLOR_TARGET_B(j)", "colour target", Word::LowSecond),
    ("SET_ZT_A", "depth target", Word::HighFirst),
    ("SET_ZT_B", "depth target", Word::LowSecond),
    (
        "SET_PIPELINE_PROGRAM_ADDRESS_A(j)",
        "shader program",
        Word::HighFirst,
    ),
    (
        "SET_PIPELINE_PROGRAM_ADDRESS_B(j)",
        "shader program",
        Word::LowSecond,
    ),
    ("SET_PIPELINE_PROGRAM(j)", "shader program", Word::Offset),
    (
        "SET_STREAM_OUT_BUFFER_ADDRESS_A(j)",
        "transform feedback buffer",
        Word::HighFirst,
    ),
    (
        "SET_STREAM_OUT_BUFFER_ADDRESS_B(j)",
        "transform feedback buffer",
        Word::LowSecond,
    ),
    ("SET_RENDER_ENABLE_A", "render enable", Word::HighFirst),
    ("SET_RENDER_ENABLE_B", "render enable", Word::LowSecond),
    (
        "SET_RENDER_ENABLE_A (subchannel 1)",
        "compute render enable",
        Word::HighFirst,
    ),
    (
        "SET_RENDER_ENABLE_B (subchannel 1)",
        "compute render enable",
        Word::LowSecond,
    ),
    ("SET_REPORT_SEMAPHORE_A", "report", Word::HighFirst),
    // nvk_mme_write_cs_invocations: where a pipeline-statistics query's compute
    // invocations are written.
    (
        "CALL_MME(write_cs_invocations) parameter 0",
        "report",
        Word::HighFirst,
    ),
    (
        "CALL_MME(write_cs_invocations) parameter 1",
        "report",
        Word::LowSecond,
    ),
    ("SET_REPORT_SEMAPHORE_B", "report", Word::LowSecond),
    ("SEMAPHOREA", "semaphore", Word::HighFirst),
    ("SEMAPHOREB", "semaphore", Word::LowSecond),
    (
        "SET_CONSTANT_BUFFER_SELECTOR_B",
        "constant buffer",
        Word::HighFirst,
    ),
    (
        "SET_CONSTANT_BUFFER_SELECTOR_C",
        "constant buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(bind_cbuf_desc) parameter 1",
        "uniform buffer descriptor",
        Word::HighFirst,
    ),
    (
        "CALL_MME(bind_cbuf_desc) parameter 2",
        "uniform buffer descriptor",
        Word::LowSecond,
    ),
    (
        "CALL_MME(bind_ib) parameter 0",
        "index buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(bind_ib) parameter 1",
        "index buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(bind_vb) parameter 1",
        "vertex buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(bind_vb) parameter 2",
        "vertex buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(draw_indirect) parameter 0",
        "indirect buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(draw_indirect) parameter 1",
        "indirect buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(draw_indexed_indirect) parameter 0",
        "indirect buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(draw_indexed_indirect) parameter 1",
        "indirect buffer",
        Word::LowSecond,
    ),
    (
        "LOAD_CONSTANT_BUFFER(root.sets[].base_addr (low))",
        "descriptor set",
        Word::LowFirst,
    ),
    (
        "LOAD_CONSTANT_BUFFER(root.sets[].base_addr (high))",
        "descriptor set",
        Word::HighSecond,
    ),
    (
        "LOAD_CONSTANT_BUFFER(root.dynamic_buffers[].addr (low))",
        "dynamic buffer",
        Word::LowFirst,
    ),
    (
        "LOAD_CONSTANT_BUFFER(root.dynamic_buffers[].addr (high; a constant buffer's size above))",
        "dynamic buffer",
        Word::DescriptorHigh,
    ),
    (
        "SEND_PCAS_A (subchannel 1)",
        "compute dispatch (QMD)",
        Word::Whole,
    ),
    (
        "OFFSET_IN_UPPER (subchannel 4)",
        "copy source",
        Word::HighFirst,
    ),
    (
        "OFFSET_IN_LOWER (subchannel 4)",
        "copy source",
        Word::LowSecond,
    ),
    (
        "OFFSET_OUT_UPPER (subchannel 4)",
        "copy destination",
        Word::HighFirst,
    ),
    (
        "OFFSET_OUT_LOWER (subchannel 4)",
        "copy destination",
        Word::LowSecond,
    ),
];

/// The macro parameters that are addresses on Turing only: the transform-feedback
/// counter's (`xfb_counter_load`, `xfb_draw_indirect`), the count-buffer draws'
/// (their indirect and count buffers; before Turing NVK 25.0.7 has no count-buffer
/// draws, and the model splices their commands into its parameters as for the other
/// indirect draws), and the `DISPATCH_INDIRECT` macro's (nvk_CmdDispatchIndirect: the
/// indirect command's, the root table's and the QMD's addresses, then the local size).
const TURING_MACRO_ADDRESSES: &[(&str, &str, Word)] = &[
    // A transform-feedback counter buffer's address, which Turing's macros read
    // (before Turing the command streamer pushes the counter's value instead).
    (
        "CALL_MME(xfb_counter_load) parameter 1",
        "transform feedback counter",
        Word::HighFirst,
    ),
    (
        "CALL_MME(xfb_counter_load) parameter 2",
        "transform feedback counter",
        Word::LowSecond,
    ),
    (
        "CALL_MME(xfb_draw_indirect) parameter 2",
        "transform feedback counter",
        Word::HighFirst,
    ),
    (
        "CALL_MME(xfb_draw_indirect) parameter 3",
        "transform feedback counter",
        Word::LowSecond,
    ),
    (
        "CALL_MME(draw_indirect_count) parameter 0",
        "indirect buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(draw_indirect_count) parameter 1",
        "indirect buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(draw_indirect_count) parameter 2",
        "count buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(draw_indirect_count) parameter 3",
        "count buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(draw_indexed_indirect_count) parameter 0",
        "indirect buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(draw_indexed_indirect_count) parameter 1",
        "indirect buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(draw_indexed_indirect_count) parameter 2",
        "count buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(draw_indexed_indirect_count) parameter 3",
        "count buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 0",
        "indirect buffer",
        Word::HighFirst,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 1",
        "indirect buffer",
        Word::LowSecond,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 2",
        "compute root table",
        Word::HighFirst,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 3",
        "compute root table",
        Word::LowSecond,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 4",
        "compute dispatch (QMD) the macro writes",
        Word::HighFirst,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 5",
        "compute dispatch (QMD) the macro writes",
        Word::LowSecond,
    ),
];

/// The same before Turing, where the group counts come first (the command streamer
/// pushes them from memory).
const DISPATCH_INDIRECT_FERMI: &[(&str, &str, Word)] = &[
    (
        "CALL_MME(dispatch_indirect) parameter 3",
        "compute root table",
        Word::HighFirst,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 4",
        "compute root table",
        Word::LowSecond,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 5",
        "compute dispatch (QMD) the macro writes",
        Word::HighFirst,
    ),
    (
        "CALL_MME(dispatch_indirect) parameter 6",
        "compute dispatch (QMD) the macro writes",
        Word::LowSecond,
    ),
];

/// Whether the method labelled `label` carries (a word of) a GPU address on `arch`'s
/// MME (where a macro's parameters differ by generation).
pub fn is_address(label: &str, arch: Arch) -> bool {
    word_of(label, arch).is_some()
}

fn word_of(label: &str, arch: Arch) -> Option<(&'static str, Word)> {
    let by_arch = match arch {
        Arch::Turing => TURING_MACRO_ADDRESSES,
        Arch::Fermi => DISPATCH_INDIRECT_FERMI,
    };
    ADDRESS_WORDS
        .iter()
        .chain(by_arch)
        .find(|(l, _, _)| *l == label)
        .map(|&(_, family, word)| (family, word))
}

/// Two objects the correspondence cannot hold together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The family (`colour target`, `vertex buffer`, …).
    pub family: &'static str,
    /// The draw where it broke, and where the earlier pairing was first seen.
    pub draws: (usize, usize),
    /// What it says.
    pub what: String,
}

/// The correspondence between the model's addresses and NVK's, built as a
/// verification goes.
#[derive(Debug)]
pub struct AddressCheck {
    /// The MME generation the macros' parameters are laid out for.
    arch: Arch,
    /// A pair's first word on each side (NVK, model), by family.
    pending: HashMap<&'static str, (u32, u32)>,
    /// The model's address → NVK's, and the draw that first paired them.
    by_model: HashMap<(&'static str, u64), (u64, usize)>,
    /// NVK's address → the model's it stands for now.
    by_nvk: HashMap<(&'static str, u64), u64>,
    /// Model addresses an NVK address stood for before (their objects freed on
    /// NVK's side, the address handed out again): seeing one again with it is a
    /// conflict.
    retired: HashMap<(&'static str, u64), Vec<u64>>,
}

impl AddressCheck {
    /// An empty correspondence for a verification on `arch`'s MME.
    pub fn new(arch: Arch) -> Self {
        AddressCheck {
            arch,
            pending: HashMap::new(),
            by_model: HashMap::new(),
            by_nvk: HashMap::new(),
            retired: HashMap::new(),
        }
    }

    /// Takes one address word both sides pushed (`nvk`, `model`) for the method
    /// labelled `label`, in draw `draw`. Returns whether it is an address word, and a
    /// conflict where the word completes an address that breaks the correspondence.
    pub fn observe(
        &mut self,
        label: &str,
        nvk: u32,
        model: u32,
        draw: usize,
    ) -> (bool, Option<Conflict>) {
        let Some((family, word)) = word_of(label, self.arch) else {
            return (false, None);
        };
        let join = |high: u32, low: u32| (u64::from(high) << 32) | u64::from(low);
        let pair = match word {
            Word::HighFirst | Word::LowFirst => {
                self.pending.insert(family, (nvk, model));
                return (true, None);
            }
            Word::DescriptorHigh => {
                let Some((n0, m0)) = self.pending.remove(family) else {
                    return (true, None);
                };
                let (nvk_size, model_size) = (nvk >> 13, model >> 13);
                if nvk_size != model_size {
                    return (
                        true,
                        Some(Conflict {
                            family,
                            draws: (draw, draw),
                            what: format!(
                                "the {family}'s size is NVK's {:#x} but the model's {:#x} \
                                 (16-byte units)",
                                nvk_size, model_size
                            ),
                        }),
                    );
                }
                (
                    join(nvk & DESCRIPTOR_HIGH_ADDRESS, n0),
                    join(model & DESCRIPTOR_HIGH_ADDRESS, m0),
                )
            }
            Word::LowSecond | Word::HighSecond => {
                let Some((n0, m0)) = self.pending.remove(family) else {
                    // Half an address (the other word not pushed alike on both
                    // sides): the structural difference is reported apart.
                    return (true, None);
                };
                match word {
                    Word::LowSecond => (join(n0, nvk), join(m0, model)),
                    _ => (join(nvk, n0), join(model, m0)),
                }
            }
            Word::Whole => (u64::from(nvk) << 8, u64::from(model) << 8),
            Word::Offset => (u64::from(nvk), u64::from(model)),
        };
        (true, self.pair(family, pair.0, pair.1, draw))
    }

    fn pair(
        &mut self,
        family: &'static str,
        nvk: u64,
        model: u64,
        draw: usize,
    ) -> Option<Conflict> {
        // The model's upload memory is streamed as NVK's is (each push descriptor set,
        // compute root table and QMD uploaded anew): such an address names no object.
        if driver::nvk::UPLOAD_MEMORY.contains(&model) {
            return None;
        }
        if let Some(&(seen, first)) = self.by_model.get(&(family, model)) {
            if seen != nvk {
                return Some(Conflict {
                    family,
                    draws: (draw, first),
                    what: format!(
                        "the model's {family} at {model:#x} is NVK's {nvk:#x} here but NVK's \
                         {seen:#x} from draw {first}: the model addresses two objects as one"
                    ),
                });
            }
        } else {
            self.by_model.insert((family, model), (nvk, draw));
        }
        match self.by_nvk.insert((family, nvk), model) {
            Some(before) if before != model => {
                let retired = self.retired.entry((family, nvk)).or_default();
                if retired.contains(&model) {
                    return Some(Conflict {
                        family,
                        draws: (
                            draw,
                            self.by_model.get(&(family, model)).map_or(draw, |p| p.1),
                        ),
                        what: format!(
                            "NVK's {family} at {nvk:#x} is the model's {model:#x} here and its \
                             {before:#x} in between: the model addresses one object as two"
                        ),
                    });
                }
                retired.push(before);
                None
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "SET_COLOR_TARGET_A(j)";
    const B: &str = "SET_COLOR_TARGET_B(j)";

    fn target(check: &mut AddressCheck, nvk: u64, model: u64, draw: usize) -> Option<Conflict> {
        let hi = |a: u64| (a >> 32) as u32;
        let lo = |a: u64| a as u32;
        assert_eq!(check.observe(A, hi(nvk), hi(model), draw), (true, None));
        let (known, conflict) = check.observe(B, lo(nvk), lo(model), draw);
        assert!(known);
        conflict
    }

    #[test]
    fn one_object_for_one_address_on_each_side() {
        let mut c = AddressCheck::new(Arch::Turing);
        assert_eq!(target(&mut c, 0x3f_fffb_6000, 0x10_0000_0000, 0), None);
        assert_eq!(target(&mut c, 0x3f_fffa_0000, 0x10_0002_0000, 1), None);
        assert_eq!(target(&mut c, 0x3f_fffb_6000, 0x10_0000_0000, 2), None);
        // The model draws into the object it had at 0x10_0000_0000 where NVK draws
        // into another.
        let conflict = target(&mut c, 0x3f_fff0_0000, 0x10_0000_0000, 3).expect("a conflict");
        assert_eq!((conflict.family, conflict.draws), ("colour target", (3, 0)));
    }

    #[test]
    fn an_address_nvk_hands_out_again_may_stand_for_a_new_object_but_not_an_old_one() {
        let mut c = AddressCheck::new(Arch::Turing);
        assert_eq!(target(&mut c, 0x40_0000, 0x10_0000_0000, 0), None);
        // Freed and made again: NVK reuses its address, the model places anew.
        assert_eq!(target(&mut c, 0x40_0000, 0x10_0004_0000, 1), None);
        // The first object is back at the same NVK address while the second lives.
        assert!(target(&mut c, 0x40_0000, 0x10_0000_0000, 2).is_some());
    }

    #[test]
    fn other_methods_are_no_addresses_and_words_pair_in_their_order() {
        let mut c = AddressCheck::new(Arch::Turing);
        assert_eq!(
            c.observe("SET_COLOR_TARGET_WIDTH(j)", 1, 2, 0),
            (false, None)
        );
        let low = "LOAD_CONSTANT_BUFFER(root.sets[].base_addr (low))";
        let high = "LOAD_CONSTANT_BUFFER(root.sets[].base_addr (high))";
        assert_eq!(c.observe(low, 0x1000, 0x2000, 0), (true, None));
        assert_eq!(c.observe(high, 0x3f, 0x55, 0), (true, None));
        // NVK's address again for another of the model's sets: the first was freed.
        assert_eq!(c.observe(low, 0x1000, 0x3000, 1), (true, None));
        assert_eq!(c.observe(high, 0x3f, 0x55, 1), (true, None));
        // The first set again at the same NVK address: both live, one address.
        assert_eq!(c.observe(low, 0x1000, 0x2000, 2), (true, None));
        let (_, conflict) = c.observe(high, 0x3f, 0x55, 2);
        assert!(
            conflict.is_some(),
            "NVK's set at 0x3f_00001000 is two of the model's"
        );
        assert_eq!(
            c.observe("SEND_PCAS_A (subchannel 1)", 7, 9, 2),
            (true, None)
        );
    }

    #[test]
    fn render_enables_stream_out_buffers_and_query_writes_are_addresses_count_draws_on_turing() {
        for arch in [Arch::Turing, Arch::Fermi] {
            for label in [
                "SET_RENDER_ENABLE_A",
                "SET_RENDER_ENABLE_B (subchannel 1)",
                "SET_STREAM_OUT_BUFFER_ADDRESS_A(j)",
                "SET_STREAM_OUT_BUFFER_ADDRESS_B(j)",
                "CALL_MME(write_cs_invocations) parameter 1",
            ] {
                assert!(is_address(label, arch), "{label} on {arch:?}");
            }
        }
        // Before Turing the model's count-draw parameters are the commands it splices,
        // and the transform-feedback macros take the counter's value, not its address.
        for label in [
            "CALL_MME(draw_indexed_indirect_count) parameter 1",
            "CALL_MME(xfb_counter_load) parameter 2",
            "CALL_MME(xfb_draw_indirect) parameter 3",
        ] {
            assert!(is_address(label, Arch::Turing), "{label}");
            assert!(!is_address(label, Arch::Fermi), "{label}");
        }
    }
}
