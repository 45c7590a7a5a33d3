//! Multisampling.

use super::on_masked_scratch_change;
use super::{Dirty, DynamicState, StateBit};
use crate::class;
use crate::mme::{Arch, Builder, Cmp, Value};
use crate::nvk::{root, Scratch};
use crate::push::{PushBuffer, SUBC_3D};

/// Mirrors nvk_flush_ms_state's alpha-to-coverage/one and sample mask (the sample
/// layout and locations follow the render pass's sample count, which the trace does
/// not give this model: not modelled).
pub(super) fn flush_ms_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    if d.any(&[
        StateBit::MsAlphaToCoverageEnable,
        StateBit::MsAlphaToOneEnable,
    ]) {
        let control =
            u32::from(s.alpha_to_coverage_enable) | (u32::from(s.alpha_to_one_enable) << 4);
        p.immd_or_mthd(SUBC_3D, class::SET_ANTI_ALIAS_ALPHA_CONTROL, control);
    }
    if d.has(StateBit::MsSampleMask) {
        let m = s.sample_mask & 0xffff;
        p.inc(SUBC_3D, class::SET_SAMPLE_MASK_X0_Y0, &[m, m, m, m]);
    }
}

/// The `SET_ANTI_ALIAS` macro: one masked value of the anti-aliasing state (minimum
/// sample shading's log2 reciprocal in 3:0, the sample count's log2 in 7:4). When it
/// changes: `SET_HYBRID_ANTI_ALIAS_CONTROL` with the passes (`samples >> rcp`, at
/// least 1) and the centroid mode, then the root table's sample masks — every sample
/// alone with one sample a pass, all of them with one pass, else the masks kept in
/// scratch for two or four passes. Mirrors nvk_mme_set_anti_alias.
pub(crate) fn set_anti_alias(b: &mut Builder) {
    on_masked_scratch_change(b, Scratch::AntiAlias, |b, anti_alias| {
        let rcp_mss_log2 = b.merge(Value::Zero, anti_alias, 0, 4, 0);
        let samples_log2 = b.merge(Value::Zero, anti_alias, 0, 4, 4);
        b.free_reg(anti_alias);
        let passes_log2 = b.sub(samples_log2, rcp_mss_log2);
        b.free_reg(rcp_mss_log2);
        // At least one pass: a negative difference becomes 0.
        let negative = b.srl(passes_log2, Value::Imm(31));
        b.if_(Cmp::Ne, negative, Value::Zero, |b| {
            b.mov_to(passes_log2, Value::Zero)
        });
        b.free_reg(negative);
        let control = b.mov(Value::Zero); // CENTROID_PER_FRAGMENT
        b.if_(Cmp::Ne, passes_log2, Value::Zero, |b| {
            b.mov_to(control, Value::Imm(1 << 4)); // CENTROID_PER_PASS
        });
        let passes = if b.arch() == Arch::Turing {
            b.sll(Value::Imm(1), passes_log2)
        } else {
            // This builder's Fermi lowering has no shift by a register: the same
            // 1 << passes_log2 (0 to 3) by comparisons.
            let passes = b.mov(Value::Imm(1));
            for log2 in 1..4 {
                b.if_(Cmp::Eq, passes_log2, Value::Imm(log2), |b| {
                    b.mov_to(passes, Value::Imm(1 << log2))
                });
            }
            passes
        };
        b.merge_to(control, control, passes, 0, 4, 0);
        b.free_reg(passes);
        b.mthd(class::SET_HYBRID_ANTI_ALIAS_CONTROL);
        b.emit(control);
        b.free_reg(control);
        b.mthd(class::LOAD_CONSTANT_BUFFER_OFFSET);
        b.emit(Value::Imm(root::DRAW_SAMPLE_MASKS));
        b.mthd(class::load_constant_buffer(0));
        let per_pass_log2 = b.sub(samples_log2, passes_log2);
        b.free_reg(samples_log2);
        b.if_(Cmp::Eq, per_pass_log2, Value::Zero, |b| {
            // One sample a pass: each pass's mask is its sample alone, two a word.
            for i in (0..8).step_by(2) {
                b.emit(Value::Imm((1 << i) | (1 << (i + 1)) << 16));
            }
        });
        b.if_(Cmp::Ne, per_pass_log2, Value::Zero, |b| {
            b.if_(Cmp::Eq, passes_log2, Value::Zero, |b| {
                for _ in 0..4 {
                    b.emit(Value::Imm(u32::MAX));
                }
            });
            for (passes, first) in [
                (1, Scratch::SampleMasks2Pass0),
                (2, Scratch::SampleMasks4Pass0),
            ] {
                b.if_(Cmp::Eq, passes_log2, Value::Imm(passes), |b| {
                    for i in 0..4 {
                        let m = b.load_scratch(first as u16 + i);
                        b.emit(m);
                        b.free_reg(m);
                    }
                });
            }
        });
        b.free_reg(per_pass_log2);
        b.free_reg(passes_log2);
    });
}
