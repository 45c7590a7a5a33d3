//! The draw macros' bodies, built op for op as NVK 25.0.7 builds them
//! (`nvk_mme_build_draw` and its callers), so their binaries are NVK's.
//!
//! Every draw macro loads its parameters first, writes the draw parameters to the root
//! descriptor table where they changed (on Turing; always before it), and only then
//! loops over the view mask: the loop sits after the loads because parameters arrive
//! once per call (NVK's first multiview attempt looped around the loads and drew only
//! the first view). With a zero mask the instance loop runs once; otherwise, for each
//! set bit, the view index goes to `draw.view_index` and `SET_RT_LAYER` before the
//! instance loop. The instance loop is Mesa's `mme_loop`: Turing's LOOP instruction,
//! which runs its body at least once. BEGIN is not a parameter: the topology flush
//! keeps it in the `DRAW_BEGIN` slot (nvk_flush_ia_state).

use super::{root, Scratch};
use crate::class::{self, InstanceId};
use crate::mme::{Arch, Builder, Cmp, Value};

/// Parameters of one draw after the draw index, in VkDrawIndirectCommand
/// order: vertexCount, instanceCount, firstVertex, firstInstance.
pub const DRAW_PARAMS: u32 = 4;
/// Parameters of one indexed draw, in VkDrawIndexedIndirectCommand order: indexCount,
/// instanceCount, firstIndex, vertexOffset, firstInstance.
pub const INDEXED_DRAW_PARAMS: u32 = 5;

fn params(indexed: bool) -> u32 {
    if indexed {
        INDEXED_DRAW_PARAMS
    } else {
        DRAW_PARAMS
    }
}

/// vkCmdDraw / vkCmdDrawIndexed: `draw_index,` then the draw's parameters. Mirrors
/// nvk_mme_draw and nvk_mme_draw_indexed op for op.
pub fn direct(b: &mut Builder, indexed: bool) {
    let draw_index = b.load();
    build_draw(b, draw_index, indexed);
}

/// Mirrors nvk_mme_build_draw and nvk_mme_build_draw_indexed: the parameters into the
/// root table where they changed, then the instance loop once without a view mask,
/// or once per view with one.
fn build_draw(b: &mut Builder, draw_index: Value, indexed: bool) {
    // VkDrawIndirectCommand or VkDrawIndexedIndirectCommand order.
    let count = b.load();
    let instance_count = b.load();
    let first = b.load();
    let vertex_offset = indexed.then(|| b.load());
    let first_instance = b.load();
    set_draw_params(
        b,
        DrawParams {
            base_vertex: vertex_offset.unwrap_or(Value::Zero),
            first_vertex: vertex_offset.unwrap_or(first),
            first_instance,
            draw_index,
        },
    );
    if let Some(v) = vertex_offset {
        b.free_reg(v);
    }
    b.free_reg(first_instance);
    let turing = b.arch() == Arch::Turing;
    if !turing && draw_index.reg().is_some() {
        // nvk_mme_spill: pre-Turing's seven registers.
        b.store_scratch(Scratch::DrawIdx as u16, draw_index);
        b.free_reg(draw_index);
    }
    let launch = Launch::of(indexed);
    for_each_view(b, &|b| draw_loop(b, launch, instance_count, first, count));
    b.free_reg(instance_count);
    b.free_reg(first);
    b.free_reg(count);
    if !turing && draw_index.reg().is_some() {
        // nvk_mme_unspill.
        b.realloc_reg(draw_index);
        b.load_scratch_to(draw_index, Scratch::DrawIdx as u16);
    }
}

/// `draw` once without a view mask; with one, once per set bit after pointing
/// `draw.view_index` and `SET_RT_LAYER` at it (the view loop of nvk_mme_build_draw and
/// nvk_mme_xfb_draw_indirect).
fn for_each_view(b: &mut Builder, draw: &dyn Fn(&mut Builder)) {
    let view_mask = b.load_scratch(Scratch::ViewMask as u16);
    b.if_(Cmp::Eq, view_mask, Value::Zero, |b| {
        b.free_reg(view_mask);
        draw(b);
    });
    let view_mask = b.load_scratch(Scratch::ViewMask as u16);
    b.if_(Cmp::Ne, view_mask, Value::Zero, |b| {
        b.free_reg(view_mask);
        let view = b.mov(Value::Zero);
        b.while_(Cmp::Ne, view, Value::Imm(32), |b| {
            let view_mask = b.load_scratch(Scratch::ViewMask as u16);
            let has_view = b.bfe(view_mask, view, 1);
            b.free_reg(view_mask);
            b.if_(Cmp::Ne, has_view, Value::Zero, |b| {
                b.free_reg(has_view);
                set_view_index(b, view);
                draw(b);
            });
            b.add_to(view, view, Value::Imm(1));
        });
        b.free_reg(view);
    });
}

/// A draw's parameters as NVK's macros pass them around (`struct mme_draw_params`).
struct DrawParams {
    base_vertex: Value,
    first_vertex: Value,
    first_instance: Value,
    draw_index: Value,
}

/// `val` into method `mthd` and the root table at `cb0_offset`; on Turing only when
/// the method's state differs. Mirrors nvk_mme_set_cb0_mthd.
fn set_cb0_mthd(b: &mut Builder, cb0_offset: u32, mthd: u16, val: Value) {
    let write = |b: &mut Builder| {
        b.mthd(mthd);
        b.emit(val);
        b.mthd(class::LOAD_CONSTANT_BUFFER_OFFSET);
        b.emit(Value::Imm(cb0_offset));
        b.mthd(class::LOAD_CONSTANT_BUFFER);
        b.emit(val);
    };
    if b.arch() == Arch::Turing {
        let old = b.state(mthd);
        b.if_(Cmp::Ne, old, val, write);
        b.free_reg(old);
    } else {
        // Pre-Turing's registers are too few for the comparison: always.
        write(b);
    }
}

/// `val` into shadow scratch `slot` and the root table (nvk_mme_set_cb0_scratch).
fn set_cb0_scratch(b: &mut Builder, cb0_offset: u32, slot: Scratch, val: Value) {
    set_cb0_mthd(
        b,
        cb0_offset,
        class::set_mme_shadow_scratch(slot as u16),
        val,
    );
}

/// Mirrors nvk_mme_build_set_draw_params.
fn set_draw_params(b: &mut Builder, p: DrawParams) {
    set_cb0_scratch(
        b,
        root::DRAW_BASE_VERTEX,
        Scratch::Cb0FirstVertex,
        p.first_vertex,
    );
    set_cb0_mthd(
        b,
        root::DRAW_BASE_INSTANCE,
        class::SET_GLOBAL_BASE_INSTANCE_INDEX,
        p.first_instance,
    );
    set_cb0_scratch(b, root::DRAW_ID, Scratch::Cb0DrawIndex, p.draw_index);
    set_cb0_scratch(b, root::DRAW_VIEW_INDEX, Scratch::Cb0ViewIndex, Value::Zero);
    b.mthd(class::SET_GLOBAL_BASE_VERTEX_INDEX);
    b.emit(p.base_vertex);
    b.mthd(class::SET_VERTEX_ID_BASE);
    b.emit(p.base_vertex);
}

/// `draw.view_index` and `SET_RT_LAYER` to `view` (nvk_mme_emit_view_index).
fn set_view_index(b: &mut Builder, view: Value) {
    set_cb0_scratch(b, root::DRAW_VIEW_INDEX, Scratch::Cb0ViewIndex, view);
    b.mthd(class::SET_RT_LAYER);
    b.emit(view);
}

/// BEGIN, the launch and END for each instance, the first BEGIN's INSTANCE_ID
/// as the topology flush left it, the rest SUBSEQUENT (nvk_mme_build_draw_loop,
/// nvk_mme_build_draw_indexed_loop): Mesa's `mme_loop`, so on Turing a count of 0
/// still draws once.
fn draw_loop(b: &mut Builder, launch: Launch, instance_count: Value, first: Value, count: Value) {
    let begin = b.load_scratch(Scratch::DrawBegin as u16);
    b.hw_loop(instance_count, |b| {
        b.mthd(class::BEGIN);
        b.emit(begin);
        match launch {
            Launch::Array | Launch::Indexed => {
                b.mthd(if launch == Launch::Indexed {
                    class::SET_INDEX_BUFFER_F
                } else {
                    class::SET_VERTEX_ARRAY_START
                });
                b.emit(first);
                b.emit(count);
            }
            Launch::Auto => {
                b.mthd(class::DRAW_AUTO);
                b.emit(count);
            }
        }
        b.mthd(class::END);
        b.emit(Value::Zero);
        b.merge_to(
            begin,
            begin,
            Value::Imm(InstanceId::Subsequent as u32),
            class::Begin::INSTANCE_ID_SHIFT,
            2,
            0,
        );
    });
    b.free_reg(begin);
}

/// The indirect draws: on Turing `addr_hi, addr_lo,` then `draw_count` or (for the
/// count variants) `count_addr_hi, count_addr_lo, max_draw_count`, then `stride`, each
/// command read from memory with `MME_DMA_READ_FIFOED`; before Turing `draw_count,
/// pad_dw,` then the commands spliced into the push buffer, each followed by `pad_dw`
/// words of padding (the rest of the stride). Mirrors nvk_mme_draw_indirect,
/// nvk_mme_draw_indexed_indirect and (Turing) their count variants; before Turing
/// NVK 25.0.7 has no count variants, and the model splices them as the others.
pub fn indirect(b: &mut Builder, indexed: bool, count_buffer: bool) {
    if b.arch() != Arch::Turing {
        return spliced(b, indexed);
    }
    let hi = b.load();
    let lo = b.load();
    if count_buffer {
        let count_hi = b.load();
        let count_lo = b.load();
        let max = b.load();
        let stride = b.load();
        b.read_fifoed(count_hi, count_lo, Value::Imm(1));
        b.free_reg(count_lo);
        b.free_reg(count_hi);
        let in_buffer = b.load();
        b.if_(Cmp::Leu, in_buffer, max, |b| b.mov_to(max, in_buffer));
        b.free_reg(in_buffer);
        indirect_loop(b, indexed, [hi, lo], max, stride);
    } else {
        let draw_count = b.load();
        let stride = b.load();
        indirect_loop(b, indexed, [hi, lo], draw_count, stride);
    }
}

/// Each of `draw_count` commands read from `addr` and drawn, `addr` advancing by
/// `stride` (the loop of nvk_mme_draw_indirect and its variants on Turing).
fn indirect_loop(
    b: &mut Builder,
    indexed: bool,
    addr: [Value; 2],
    draw_count: Value,
    stride: Value,
) {
    let [hi, lo] = addr;
    let draw = b.mov(Value::Zero);
    b.while_(Cmp::Ltu, draw, draw_count, |b| {
        b.read_fifoed(hi, lo, Value::Imm(params(indexed)));
        build_draw(b, draw, indexed);
        b.add_to(draw, draw, Value::Imm(1));
        b.alu64_to(
            crate::mme::Alu64Op::Add,
            [lo, hi],
            [lo, hi],
            [stride, Value::Zero],
        );
    });
}

/// Pre-Turing indirect draws: the encoder splices the commands into the push buffer.
/// `draw_count, pad_dw,` then per draw its parameters and `pad_dw` words of padding.
pub fn spliced(b: &mut Builder, indexed: bool) {
    let draw_count = b.load();
    b.load_to_scratch(Scratch::DrawPadDw as u16);
    let draw = b.mov(Value::Zero);
    b.while_(Cmp::Ne, draw, draw_count, |b| {
        // nvk_mme_spill and nvk_mme_unspill around the draw: seven registers.
        b.store_scratch(Scratch::DrawCount as u16, draw_count);
        b.free_reg(draw_count);
        build_draw(b, draw, indexed);
        b.add_to(draw, draw, Value::Imm(1));
        let pad = b.load_scratch(Scratch::DrawPadDw as u16);
        b.hw_loop(pad, |b| {
            let skipped = b.load();
            b.free_reg(skipped);
        });
        b.free_reg(pad);
        b.realloc_reg(draw_count);
        b.load_scratch_to(draw_count, Scratch::DrawCount as u16);
    });
}

/// The `XFB_DRAW_INDIRECT` macro, vkCmdDrawIndirectByteCountEXT's: `instance_count,
/// first_instance,` then the transform-feedback counter (on Turing its address, read
/// with READ_FIFOED; before Turing the value itself, pushed from memory). Every
/// instance of every view is a BEGIN, `DRAW_AUTO` with the counter and END: the
/// hardware divides the bytes past `SET_DRAW_AUTO_START` by `SET_DRAW_AUTO_STRIDE`.
/// Mirrors nvk_mme_xfb_draw_indirect.
pub fn xfb_draw_indirect(b: &mut Builder) {
    let instance_count = b.load();
    let first_instance = b.load();
    if b.arch() == Arch::Turing {
        let hi = b.load();
        let lo = b.load();
        b.read_fifoed(hi, lo, Value::Imm(1));
        b.free_reg(lo);
        b.free_reg(hi);
    }
    let counter = b.load();
    set_draw_params(
        b,
        DrawParams {
            base_vertex: Value::Zero,
            first_vertex: Value::Zero,
            first_instance,
            draw_index: Value::Zero,
        },
    );
    b.free_reg(first_instance);
    for_each_view(b, &|b| {
        draw_loop(b, Launch::Auto, instance_count, Value::Zero, counter)
    });
    b.free_reg(instance_count);
    b.free_reg(counter);
}

/// How a hardware draw is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launch {
    /// `SET_VERTEX_ARRAY_START` (first) and `DRAW_VERTEX_ARRAY` (count).
    Array,
    /// `SET_INDEX_BUFFER_F` (first) and `DRAW_INDEX_BUFFER` (count).
    Indexed,
    /// `DRAW_AUTO` with the transform-feedback byte count (first unused).
    Auto,
}

impl Launch {
    /// The array or indexed launch.
    pub fn of(indexed: bool) -> Launch {
        if indexed {
            Launch::Indexed
        } else {
            Launch::Array
        }
    }
}
