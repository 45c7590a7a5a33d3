//! Compute dispatches as NVK encodes them (`nvk_cmd_dispatch.c`): the compute root
//! table and the QMD (the launch descriptor) uploaded to GPU memory, the invocation
//! count added up by `ADD_CS_INVOCATIONS` for pipeline statistics, and the launch
//! (`SEND_PCAS_A`, `SEND_SIGNALING_PCAS_B`) on the compute class; indirect dispatches
//! through `DISPATCH_INDIRECT`, which writes the group counts read from memory into the
//! root table and the QMD before the launch.

use super::encoder::{CommandEncoder, Recorded};
use super::{root, Macro, Scratch};
use crate::chipset::classes::TURING_COMPUTE_A;
use crate::class;
use crate::gpu::Memory;
use crate::mme::{Alu64Op, AluOp, Arch, Builder, Cmp, Value};
use crate::push::{SUBC_3D, SUBC_COMPUTE};

/// Dwords of the QMD NVK 25.0.7 builds and uploads for every dispatch
/// (nvk_cmd_upload_qmd's `uint32_t qmd[64]`: every QMD version is 256 bytes).
pub const QMD_DWORDS: u32 = 64;
/// Byte offset of `CTA_RASTER_WIDTH` in the QMD (bit 384 in every version; HEIGHT and
/// DEPTH follow a word apart from QMD 02_01 (Pascal) on, 16 bits apart before:
/// [`store_qmd_dispatch_size`]).
const QMD_CTA_RASTER_WIDTH: u32 = 48;
/// `SEND_SIGNALING_PCAS_B`: invalidate (bit 0) and schedule (bit 1).
const PCAS_B_INVALIDATE_SCHEDULE: u32 = 0b11;
/// `SEND_SIGNALING_PCAS2_B`'s `PCAS_ACTION_INVALIDATE_COPY_SCHEDULE`.
const PCAS2_INVALIDATE_COPY_SCHEDULE: u32 = 3;
/// `SET_MME_DATA_FIFO_CONFIG`'s `FIFO_SIZE_SIZE_4KB`.
const MME_DATA_FIFO_4KB: u32 = 1;
/// The report-semaphore D word of a one-word release: what `mme_store_global` writes.
const RELEASE_ONE_WORD: u32 = 0x1000_0000;
/// Workgroup invocations taken when the trace does not say (the compute shader's
/// `LocalSize` lives in SPIR-V the replay does not compile).
pub const UNKNOWN_LOCAL_SIZE: u32 = 64;

/// The compute state of a command buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComputeState {
    /// Invocations per workgroup of the bound compute pipeline.
    pub local_size: u32,
    /// Where the next upload goes in the model's command-buffer upload memory.
    upload_next: u64,
}

/// The model's upload memory for compute root tables and QMDs (after the push
/// descriptors').
const UPLOAD_BASE: u64 = 0x1_0040_0000;
/// Bytes of upload memory the model cycles through.
const UPLOAD_SIZE: u64 = 0x40_0000;

impl ComputeState {
    /// Allocates `bytes` of upload memory, `align`-aligned (nvk_cmd_buffer_upload_alloc).
    fn upload(&mut self, bytes: u64, align: u64) -> u64 {
        let offset = self.upload_next.next_multiple_of(align);
        let offset = if offset + bytes > UPLOAD_SIZE {
            0
        } else {
            offset
        };
        self.upload_next = offset + bytes;
        UPLOAD_BASE + offset
    }
}

/// Writes `v` to the 64-bit address in `addr` with a one-word release
/// (mme_store_global).
fn store_global(b: &mut Builder, addr: [Value; 2], v: Value) {
    b.mthd(class::SET_REPORT_SEMAPHORE_A);
    b.emit(addr[1]);
    b.emit(addr[0]);
    b.emit(v);
    b.emit(Value::Imm(RELEASE_ONE_WORD));
}

/// Adds the 64-bit `count` (low, high) to the invocation count in scratch
/// (nvk_build_mme_add_cs_invocations).
fn add_cs_invocations_to_scratch(b: &mut Builder, count: [Value; 2]) {
    let hi = b.load_scratch(Scratch::CsInvocationsHi as u16);
    let lo = b.load_scratch(Scratch::CsInvocationsLo as u16);
    b.alu64_to(Alu64Op::Add, [lo, hi], [lo, hi], count);
    b.mthd(class::set_mme_shadow_scratch(
        Scratch::CsInvocationsHi as u16,
    ));
    b.emit(hi);
    b.emit(lo);
    b.free_reg(hi);
    b.free_reg(lo);
}

/// The `ADD_CS_INVOCATIONS` macro: a 64-bit count (high, low) added to the
/// compute-invocation statistic. Mirrors nvk_mme_add_cs_invocations.
pub fn add_cs_invocations(b: &mut Builder) {
    let hi = b.load();
    let lo = b.load();
    add_cs_invocations_to_scratch(b, [lo, hi]);
    b.free_reg(hi);
    b.free_reg(lo);
}

/// The `WRITE_CS_INVOCATIONS` macro: the compute-invocation statistic in scratch
/// written, low word then high, to the address given (a pipeline-statistics query's
/// report). Mirrors nvk_mme_write_cs_invocations.
pub fn write_cs_invocations(b: &mut Builder) {
    let hi = b.load();
    let lo = b.load();
    let count_hi = b.state(class::set_mme_shadow_scratch(
        Scratch::CsInvocationsHi as u16,
    ));
    let count_lo = b.state(class::set_mme_shadow_scratch(
        Scratch::CsInvocationsLo as u16,
    ));
    store_global(b, [lo, hi], count_lo);
    // The next word's address in registers of its own (NVK's mme_add64).
    let [next_lo, next_hi] = b.add64([lo, hi], [Value::Imm(4), Value::Zero]);
    store_global(b, [next_lo, next_hi], count_hi);
    for v in [hi, lo, count_hi, count_lo, next_lo, next_hi] {
        b.free_reg(v);
    }
}

/// Writes `x`, `y`, `z` to three words at `offset` from the address in `addr` (low,
/// high), moving the address as it goes and freeing it after
/// (mme_store_global_vec3_free_addr).
fn store_global_vec3_free_addr(b: &mut Builder, addr: [Value; 2], offset: u32, xyz: [Value; 3]) {
    if offset != 0 {
        b.alu64_to(Alu64Op::Add, addr, addr, [Value::Imm(offset), Value::Zero]);
    }
    for (i, v) in xyz.into_iter().enumerate() {
        if i > 0 {
            b.alu64_to(Alu64Op::Add, addr, addr, [Value::Imm(4), Value::Zero]);
        }
        store_global(b, addr, v);
    }
    b.free_reg(addr[0]);
    b.free_reg(addr[1]);
}

/// The `DISPATCH_INDIRECT` macro: the group counts (read from memory on Turing, pushed
/// before it), the root table's address (their copy goes to its `cs.group_count`), the
/// QMD's address (its CTA raster size), the local size; adds the invocations to the
/// statistic. Mirrors NVK 25.0.7's nvk_mme_dispatch_indirect: on Turing every
/// parameter loaded before the indirect read, the copies stored with their addresses
/// moved and freed, the invocations a 64-bit product; before Turing the same stores,
/// then the product built by mme_builder.h's shift-and-add loops (a 32-bit y·z, then
/// two 32×64-bit products into registers NVK allocates without clearing).
/// `qmd_yz_packed`: the QMD keeps the height and depth in 16 bits each (QMD 00_06,
/// before PASCAL_COMPUTE_A).
pub fn dispatch_indirect(b: &mut Builder, qmd_yz_packed: bool) {
    if b.arch() == Arch::Turing {
        // Everything loaded before the switch to an indirect read.
        let (dispatch_hi, dispatch_lo) = (b.load(), b.load());
        let root = load_addr64(b);
        let qmd = load_addr64(b);
        let local_size = b.load();
        b.read_fifoed(dispatch_hi, dispatch_lo, Value::Imm(3));
        b.free_reg(dispatch_hi);
        b.free_reg(dispatch_lo);
        let xyz = [b.load(), b.load(), b.load()];
        store_global_vec3_free_addr(b, root, root::CS_GROUP_COUNT, xyz);
        store_qmd_dispatch_size(b, qmd, xyz, qmd_yz_packed);
        let [x, y, z] = xyz;
        let cs1 = b.umul_32x32_64(y, z);
        let cs2 = b.umul_32x32_64(x, local_size);
        let count = b.mul64(cs1, cs2);
        for v in cs1.into_iter().chain(cs2) {
            b.free_reg(v);
        }
        add_cs_invocations_to_scratch(b, count);
        return;
    }
    let xyz = [b.load(), b.load(), b.load()];
    let root = load_addr64(b);
    store_global_vec3_free_addr(b, root, root::CS_GROUP_COUNT, xyz);
    let qmd = load_addr64(b);
    store_qmd_dispatch_size(b, qmd, xyz, qmd_yz_packed);
    let [x, y, z] = xyz;
    // Y and Z are 16 bits: their product fits 32.
    let cs1 = b.alloc_reg();
    umul_32x32_32_to_free_srcs(b, cs1, y, z);
    let cs1_hi = b.mov(Value::Zero);
    let cs2 = [b.alloc_reg(), b.alloc_reg()];
    umul_32x64_64_to_free_srcs(b, cs2, x, [cs1, cs1_hi]);
    let local_size = b.load();
    let count = [b.alloc_reg(), b.alloc_reg()];
    umul_32x64_64_to_free_srcs(b, count, local_size, cs2);
    add_cs_invocations_to_scratch(b, count);
}

/// A 64-bit address pushed high word first (mme_load_addr64); returns (low, high).
fn load_addr64(b: &mut Builder) -> [Value; 2] {
    let hi = b.load();
    let lo = b.load();
    [lo, hi]
}

/// The group counts into the QMD's CTA raster size at `qmd` (low, high), freeing the
/// address: three whole words, or (QMD 00_06) the width then height and depth packed
/// 16 bits each into the next word. Mirrors mme_store_qmd_dispatch_size.
fn store_qmd_dispatch_size(b: &mut Builder, qmd: [Value; 2], xyz: [Value; 3], yz_packed: bool) {
    if !yz_packed {
        store_global_vec3_free_addr(b, qmd, QMD_CTA_RASTER_WIDTH, xyz);
        return;
    }
    let [x, y, z] = xyz;
    b.alu64_to(
        Alu64Op::Add,
        qmd,
        qmd,
        [Value::Imm(QMD_CTA_RASTER_WIDTH), Value::Zero],
    );
    store_global(b, qmd, x);
    let yz = b.merge(y, z, 16, 16, 0);
    b.alu64_to(Alu64Op::Add, qmd, qmd, [Value::Imm(4), Value::Zero]);
    store_global(b, qmd, yz);
    b.free_reg(yz);
    b.free_reg(qmd[0]);
    b.free_reg(qmd[1]);
}

/// `dst += x * y` by shift and add, `x` and `y` consumed (mme_fermi_umul_32x32_32_to_free_srcs:
/// the pre-Turing MME has no multiply; `dst` is not cleared first).
fn umul_32x32_32_to_free_srcs(b: &mut Builder, dst: Value, x: Value, y: Value) {
    b.while_(Cmp::Ne, x, Value::Zero, |b| {
        let lsb = b.and(x, Value::Imm(1));
        b.if_(Cmp::Ne, lsb, Value::Zero, |b| b.add_to(dst, dst, y));
        b.free_reg(lsb);
        b.alu_to(AluOp::Srl, x, x, Value::Imm(1));
        b.alu_to(AluOp::Sll, y, y, Value::Imm(1));
    });
    b.free_reg(x);
    b.free_reg(y);
}

/// `dst += x * y` for a 64-bit `y` (low, high) by shift and add, `x` and `y` consumed
/// (mme_fermi_umul_32x64_64_to_free_srcs; `dst` is not cleared first).
fn umul_32x64_64_to_free_srcs(b: &mut Builder, dst: [Value; 2], x: Value, y: [Value; 2]) {
    b.while_(Cmp::Ne, x, Value::Zero, |b| {
        let lsb = b.and(x, Value::Imm(1));
        b.if_(Cmp::Ne, lsb, Value::Zero, |b| {
            b.alu64_to(Alu64Op::Add, dst, dst, y)
        });
        b.free_reg(lsb);
        b.alu_to(AluOp::Srl, x, x, Value::Imm(1));
        b.alu64_to(Alu64Op::Add, y, y, y);
    });
    b.free_reg(x);
    b.free_reg(y[0]);
    b.free_reg(y[1]);
}

impl CommandEncoder<'_> {
    /// vkCmdBindPipeline for compute: nothing is pushed until a dispatch (NVK's
    /// nvk_cmd_bind_compute_pipeline); the pipeline's workgroup size is kept.
    pub fn bind_compute_pipeline(&mut self, local_size: u32) {
        self.compute.local_size = local_size;
    }

    /// Uploads the compute root table and the QMD (nvk_flush_compute_state); returns
    /// their addresses.
    fn flush_compute_state(&mut self) -> (u64, u64) {
        let root_addr = self.compute.upload(u64::from(root::SIZE), 256);
        let qmd_addr = self.compute.upload(u64::from(QMD_DWORDS) * 4, 256);
        (root_addr, qmd_addr)
    }

    fn local_size(&self) -> u32 {
        if self.compute.local_size == 0 {
            UNKNOWN_LOCAL_SIZE
        } else {
            self.compute.local_size
        }
    }

    /// The launch: the QMD's address, then its signal — from Ampere the PCAS2 form
    /// (nvk_CmdDispatchBase, `cls_compute <= TURING_COMPUTE_A`).
    fn launch(&mut self, qmd_addr: u64) {
        self.push
            .mthd(SUBC_COMPUTE, class::SEND_PCAS_A, (qmd_addr >> 8) as u32);
        let (method, action) = if self.chipset().compute <= TURING_COMPUTE_A {
            (class::SEND_SIGNALING_PCAS_B, PCAS_B_INVALIDATE_SCHEDULE)
        } else {
            (
                class::SEND_SIGNALING_PCAS2_B,
                PCAS2_INVALIDATE_COPY_SCHEDULE,
            )
        };
        self.push.immd_or_mthd(SUBC_COMPUTE, method, action);
    }

    /// vkCmdDispatchBase (vkCmdDispatch from group 0). Mirrors nvk_CmdDispatchBase:
    /// the root table and QMD uploads, `ADD_CS_INVOCATIONS` with the invocation count,
    /// the launch.
    pub fn dispatch(&mut self, groups: [u32; 3]) -> Recorded {
        let before = self.push.len();
        let (_, qmd_addr) = self.flush_compute_state();
        // 64 bits, wrapping as NVK's C arithmetic does.
        let invocations = u64::from(self.local_size())
            .wrapping_mul(u64::from(groups[0]))
            .wrapping_mul(u64::from(groups[1]))
            .wrapping_mul(u64::from(groups[2]));
        self.push.inc_once(
            SUBC_3D,
            class::call_mme_macro(Macro::AddCsInvocations.id()),
            &[(invocations >> 32) as u32, invocations as u32],
        );
        self.launch(qmd_addr);
        Recorded {
            memory_words: root::SIZE / 4 + QMD_DWORDS,
            ..self.recorded(before)
        }
    }

    /// A dispatch of NVK's meta path, with its own shader's workgroup size; the bound
    /// pipeline's comes back after it (nvk_meta_begin_compute saves the compute state,
    /// nvk_meta_end_compute restores it).
    pub fn dispatch_meta(&mut self, groups: [u32; 3], local_size: u32) -> Recorded {
        let saved = self.compute.local_size;
        self.compute.local_size = local_size;
        let recorded = self.dispatch(groups);
        self.compute.local_size = saved;
        recorded
    }

    /// vkCmdDispatchIndirect with its command at `addr`. Mirrors
    /// nvk_CmdDispatchIndirect: on Turing the macro reads the group counts itself
    /// (after the MME data FIFO is configured); before Turing the command streamer
    /// stalls and pushes them from memory as the macro's first parameters.
    pub fn dispatch_indirect(&mut self, addr: u64, memory: &Memory) -> Recorded {
        let before = self.push.len();
        let (root_addr, qmd_addr) = self.flush_compute_state();
        let tail = [
            (root_addr >> 32) as u32,
            root_addr as u32,
            (qmd_addr >> 32) as u32,
            qmd_addr as u32,
            self.local_size(),
        ];
        let call = class::call_mme_macro(Macro::DispatchIndirect.id());
        match self.device_arch() {
            Arch::Turing => {
                self.push
                    .immd_or_mthd(SUBC_3D, class::SET_MME_DATA_FIFO_CONFIG, MME_DATA_FIFO_4KB);
                let mut params = vec![(addr >> 32) as u32, addr as u32];
                params.extend(tail);
                self.push.inc_once(SUBC_3D, call, &params);
            }
            Arch::Fermi => {
                self.push.immd_or_mthd(SUBC_3D, class::SET_REFERENCE, 0);
                let mut params: Vec<u32> = (0..3).map(|i| memory.read_u32(addr + 4 * i)).collect();
                params.extend(tail);
                self.push.inc_once(SUBC_3D, call, &params);
            }
        }
        self.launch(qmd_addr);
        Recorded {
            memory_words: root::SIZE / 4 + QMD_DWORDS,
            ..self.recorded(before)
        }
    }

    /// A dispatch of one of NVK's internal shaders with its push data in the root
    /// table (nvk_cmd_dispatch_shader → nvk_cmd_dispatch_with_root): the root table
    /// and QMD uploads, then the launch with rendering forced on around it (internal
    /// shaders ignore conditional rendering); no invocation statistic.
    /// `_groups` go into the uploaded root table, which the model does not write.
    pub fn dispatch_internal(&mut self, _groups: [u32; 3]) -> Recorded {
        let before = self.push.len();
        let (_, qmd_addr) = self.flush_compute_state();
        self.push
            .immd(SUBC_COMPUTE, class::SET_RENDER_ENABLE_OVERRIDE, 1);
        self.launch(qmd_addr);
        self.push
            .immd(SUBC_COMPUTE, class::SET_RENDER_ENABLE_OVERRIDE, 0);
        Recorded {
            memory_words: root::SIZE / 4 + QMD_DWORDS,
            ..self.recorded(before)
        }
    }

    /// Enters NVK's meta path on compute (nvk_meta_begin_compute): rendering forced on
    /// for the compute class.
    pub fn meta_begin_compute(&mut self) -> Recorded {
        let before = self.push.len();
        self.push
            .immd(SUBC_COMPUTE, class::SET_RENDER_ENABLE_OVERRIDE, 1);
        self.recorded(before)
    }

    /// Leaves NVK's meta path on compute (nvk_meta_end_compute).
    pub fn meta_end_compute(&mut self) -> Recorded {
        let before = self.push.len();
        self.push
            .immd(SUBC_COMPUTE, class::SET_RENDER_ENABLE_OVERRIDE, 0);
        self.recorded(before)
    }
}
