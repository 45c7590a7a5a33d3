//! Vertex and index buffers: NVK binds them through macros, so the address and size
//! reach the hardware the same way whether the command buffer wrote them or an
//! indirect generated-commands buffer did.

use super::encoder::{CommandEncoder, Recorded};
use super::{Macro, Scratch};
use crate::class;
use crate::mme::{Alu64Op, AluOp, Arch, Builder, Cmp, Value};
use crate::push::SUBC_3D;

/// Vertex buffer bindings NVK exposes (`NVK_MAX_VBS`, maxVertexInputBindings).
pub const MAX_VERTEX_BUFFERS: u32 = 32;

/// `VkIndexType` and DXGI index formats the `BIND_IB` macro knows, with their
/// primitive-restart index and `SET_INDEX_BUFFER_E` size.
const INDEX_FORMATS: [(u32, u32, u32); 4] = [
    (0, 0xffff, 1),           // VK_INDEX_TYPE_UINT16
    (57, 0xffff, 1),          // DXGI_FORMAT_R16_UINT
    (1_000_265_000, 0xff, 0), // VK_INDEX_TYPE_UINT8_KHR
    (62, 0xff, 0),            // DXGI_FORMAT_R8_UINT
];

/// Loads a 64-bit address and a size; a null address binds nothing (size 0), and
/// before Turing an empty binding points at the zero page.
fn load_range(b: &mut Builder) -> (Value, Value, Value) {
    let hi = b.load();
    let lo = b.load();
    let size = b.load();
    let or = b.or(lo, hi);
    b.if_(Cmp::Eq, or, Value::Zero, |b| b.mov_to(size, Value::Zero));
    b.free_reg(or);
    if b.arch() == Arch::Fermi {
        b.if_(Cmp::Eq, size, Value::Zero, |b| {
            b.load_scratch_to(hi, Scratch::ZeroAddrHi as u16);
            b.load_scratch_to(lo, Scratch::ZeroAddrLo as u16);
        });
    }
    (hi, lo, size)
}

/// Before Turing the hardware takes the last byte's address: `addr + size − 1`.
fn to_limit(b: &mut Builder, hi: Value, lo: Value, size: Value) {
    b.alu64_to(Alu64Op::Add, [lo, hi], [lo, hi], [size, Value::Zero]);
    b.alu64_to(
        Alu64Op::Add,
        [lo, hi],
        [lo, hi],
        [Value::Imm(u32::MAX), Value::Imm(u32::MAX)],
    );
}

/// The `BIND_IB` macro: `addr_hi, addr_lo, size, index_type`. Mirrors nvk_mme_bind_ib.
pub fn bind_ib(b: &mut Builder) {
    let (hi, lo, size) = load_range(b);
    b.mthd(class::SET_INDEX_BUFFER_A);
    b.emit(hi);
    b.emit(lo);
    if b.arch() == Arch::Turing {
        b.mthd(class::SET_INDEX_BUFFER_SIZE_A);
        b.emit(Value::Zero);
        b.emit(size);
    } else {
        // SET_INDEX_BUFFER_C and D follow B.
        to_limit(b, hi, lo, size);
        b.emit(hi);
        b.emit(lo);
    }
    for v in [hi, lo, size] {
        b.free_reg(v);
    }
    let format = b.load();
    let restart = b.mov(Value::Imm(u32::MAX));
    let index_size = b.mov(Value::Imm(2)); // four bytes
    for (fmt, restart_index, size) in INDEX_FORMATS {
        b.if_(Cmp::Eq, format, Value::Imm(fmt), |b| {
            b.mov_to(restart, Value::Imm(restart_index));
            b.mov_to(index_size, Value::Imm(size));
        });
    }
    b.mthd(class::SET_DA_PRIMITIVE_RESTART_INDEX);
    b.emit(restart);
    b.mthd(class::SET_INDEX_BUFFER_E);
    b.emit(index_size);
}

/// The `BIND_VB` macro: `vb_idx, addr_hi, addr_lo, size`. Mirrors nvk_mme_bind_vb.
pub fn bind_vb(b: &mut Builder) {
    let idx = b.load();
    let (hi, lo, size) = load_range(b);
    let idx4 = b.sll(idx, Value::Imm(2));
    b.mthd_arr(class::SET_VERTEX_STREAM_A_LOCATION_A, idx4);
    b.free_reg(idx4);
    b.emit(hi);
    b.emit(lo);
    if b.arch() == Arch::Turing {
        let idx2 = b.sll(idx, Value::Imm(1));
        b.mthd_arr(class::SET_VERTEX_STREAM_SIZE_A, idx2);
        b.free_reg(idx2);
        b.emit(Value::Zero);
        b.emit(size);
    } else {
        to_limit(b, hi, lo, size);
        let idx2 = b.sll(idx, Value::Imm(1));
        b.mthd_arr(class::SET_VERTEX_STREAM_LIMIT_A_A, idx2);
        b.free_reg(idx2);
        b.emit(hi);
        b.emit(lo);
    }
    for v in [idx, hi, lo, size] {
        b.free_reg(v);
    }
}

impl CommandEncoder<'_> {
    /// vkCmdBindIndexBuffer(2): the `BIND_IB` macro with the range and the index type.
    /// Mirrors nvk_CmdBindIndexBuffer2KHR.
    pub fn bind_index_buffer(&mut self, addr: u64, size: u32, index_type: u32) -> Recorded {
        let before = self.push.len();
        self.push.inc_once(
            SUBC_3D,
            class::call_mme_macro(Macro::BindIb.id()),
            &[(addr >> 32) as u32, addr as u32, size, index_type],
        );
        self.recorded(before)
    }

    /// vkCmdBindVertexBuffers(2): one `BIND_VB` call per binding (address, size).
    /// Mirrors nvk_CmdBindVertexBuffers2 / nvk_cmd_bind_vertex_buffer. Bindings past
    /// the [`MAX_VERTEX_BUFFERS`] NVK exposes are not pushed (Vulkan forbids them).
    pub fn bind_vertex_buffers(&mut self, first: u32, ranges: &[(u64, u32)]) -> Recorded {
        let before = self.push.len();
        for (binding, (addr, size)) in (first..MAX_VERTEX_BUFFERS).zip(ranges) {
            if binding == 0 {
                self.vb0 = (*addr, *size);
            }
            self.push.inc_once(
                SUBC_3D,
                class::call_mme_macro(Macro::BindVb.id()),
                &[binding, (addr >> 32) as u32, *addr as u32, *size],
            );
        }
        self.recorded(before)
    }
}

/// The `SET_VB_ENABLES` macro: `enables`, a bit per vertex stream. Only the streams
/// whose bit changed since the last call get their `SET_VERTEX_STREAM_A_FORMAT`
/// rewritten, its enable bit (12) set from the mask. Mirrors nvk_mme_set_vb_enables.
pub fn set_vb_enables(b: &mut Builder) {
    let enables = b.load();
    let old = b.load_scratch(Scratch::VbEnables as u16);
    b.store_scratch(Scratch::VbEnables as u16, enables);
    let changed = b.xor(enables, old);
    b.free_reg(old);
    let idx4 = b.mov(Value::Zero);
    b.while_(Cmp::Ne, changed, Value::Zero, |b| {
        let bit = b.and(changed, Value::Imm(1));
        b.if_(Cmp::Ne, bit, Value::Zero, |b| {
            let state = b.state_arr(class::SET_VERTEX_STREAM_A_FORMAT, idx4);
            b.merge_to(state, state, enables, 12, 1, 0);
            b.mthd_arr(class::SET_VERTEX_STREAM_A_FORMAT, idx4);
            b.emit(state);
            b.free_reg(state);
        });
        b.free_reg(bit);
        b.add_to(idx4, idx4, Value::Imm(4));
        b.alu_to(AluOp::Srl, changed, changed, Value::Imm(1));
        b.alu_to(AluOp::Srl, enables, enables, Value::Imm(1));
    });
    for v in [enables, changed, idx4] {
        b.free_reg(v);
    }
}

/// The `SET_VB_STRIDE` macro: `vb_idx << 16 | stride`. Rewrites the stream's
/// `SET_VERTEX_STREAM_A_FORMAT` only when the stride changes it. Mirrors
/// nvk_mme_set_vb_stride.
pub fn set_vb_stride(b: &mut Builder) {
    let param = b.load();
    let idx4 = b.merge(Value::Zero, param, 2, 5, 16);
    let state = b.state_arr(class::SET_VERTEX_STREAM_A_FORMAT, idx4);
    let new_state = b.merge(state, param, 0, 12, 0);
    b.if_(Cmp::Ne, state, new_state, |b| {
        b.mthd_arr(class::SET_VERTEX_STREAM_A_FORMAT, idx4);
        b.emit(new_state);
    });
    for v in [param, idx4, state, new_state] {
        b.free_reg(v);
    }
}
