//! Transform feedback (`nvk_cmd_draw.c`'s transform-feedback entry points): buffer
//! binds, beginning (write pointers reset, then loaded from the counter buffers by
//! `XFB_COUNTER_LOAD`), ending (each buffer's byte count reported into its counter
//! buffer). vkCmdDrawIndirectByteCountEXT is in `draw.rs` (`XFB_DRAW_INDIRECT`).

use super::encoder::{CommandEncoder, Recorded};
use super::Macro;
use crate::class::{
    self, PipelineLocation, Report, ReportSemaphoreD, SemaphoreOperation, StructureSize,
};
use crate::gpu::Memory;
use crate::mme::{Arch, Builder, Value};
use crate::push::SUBC_3D;

/// Transform-feedback buffers NVK resets at every begin.
const MAX_XFB_BUFFERS: u32 = 4;

/// The `XFB_COUNTER_LOAD` macro: a buffer's `LOAD_WRITE_POINTER` index, then its
/// counter (on Turing the counter's address, read with READ_FIFOED; before Turing the
/// counter itself, pushed from memory), written as the buffer's write pointer.
/// Mirrors nvk_mme_xfb_counter_load.
pub fn xfb_counter_load(b: &mut Builder) {
    let buffer = b.load();
    if b.arch() == Arch::Turing {
        let hi = b.load();
        let lo = b.load();
        b.read_fifoed(hi, lo, Value::Imm(1));
        b.free_reg(hi);
        b.free_reg(lo);
    }
    let counter = b.load();
    b.mthd_arr(class::SET_STREAM_OUT_BUFFER_LOAD_WRITE_POINTER, buffer);
    b.emit(counter);
    b.free_reg(counter);
    b.free_reg(buffer);
}

impl CommandEncoder<'_> {
    /// vkCmdBindTransformFeedbackBuffersEXT with each buffer's address and size from
    /// `first`. Mirrors nvk_CmdBindTransformFeedbackBuffersEXT: enable, address and
    /// size per buffer.
    pub fn bind_transform_feedback_buffers(
        &mut self,
        first: u32,
        buffers: &[(u64, u32)],
    ) -> Recorded {
        let before = self.push.len();
        for (i, (addr, size)) in buffers.iter().enumerate() {
            let j = (first as usize + i).min(3) as u16;
            self.push.inc(
                SUBC_3D,
                class::set_stream_out_buffer_enable(j),
                &[1, (addr >> 32) as u32, *addr as u32, *size],
            );
        }
        self.recorded(before)
    }

    /// vkCmdBeginTransformFeedbackEXT with the counter buffers' addresses from
    /// `first` (`None` where there is none). Mirrors nvk_CmdBeginTransformFeedbackEXT:
    /// stream output on, every write pointer reset, then each counter loaded through
    /// `XFB_COUNTER_LOAD` (before Turing with the counter pushed from `memory`).
    pub fn begin_transform_feedback(
        &mut self,
        first: u32,
        counters: &[Option<u64>],
        memory: &Memory,
    ) -> Recorded {
        let before = self.push.len();
        self.push.immd_or_mthd(SUBC_3D, class::SET_STREAM_OUTPUT, 1);
        for i in 0..MAX_XFB_BUFFERS as u16 {
            self.push.immd_or_mthd(
                SUBC_3D,
                class::SET_STREAM_OUT_BUFFER_LOAD_WRITE_POINTER + 32 * i,
                0,
            );
        }
        let call = class::call_mme_macro(Macro::XfbCounterLoad.id());
        for (i, counter) in counters.iter().enumerate() {
            let Some(addr) = counter else { continue };
            let index = first + i as u32;
            match self.device_arch() {
                // The write pointers are 8 dwords apart.
                Arch::Turing => self.push.inc_once(
                    SUBC_3D,
                    call,
                    &[index * 8, (addr >> 32) as u32, *addr as u32],
                ),
                // NVK passes the buffer's index itself here.
                Arch::Fermi => self
                    .push
                    .inc_once(SUBC_3D, call, &[index, memory.read_u32(*addr)]),
            }
        }
        self.recorded(before)
    }

    /// vkCmdEndTransformFeedbackEXT. Mirrors nvk_CmdEndTransformFeedbackEXT: stream
    /// output off, then each buffer's byte count reported into its counter buffer.
    pub fn end_transform_feedback(&mut self, first: u32, counters: &[Option<u64>]) -> Recorded {
        let before = self.push.len();
        self.push.immd_or_mthd(SUBC_3D, class::SET_STREAM_OUTPUT, 0);
        for (i, counter) in counters.iter().enumerate() {
            let Some(addr) = counter else { continue };
            let d = ReportSemaphoreD {
                operation: SemaphoreOperation::ReportOnly,
                flush_disable: false,
                release_after_writes: false,
                pipeline_location: PipelineLocation::StreamingOutput,
                report: Report::StreamingByteCount,
                structure_size: StructureSize::OneWord,
            };
            // SUB_REPORT (7:5): the buffer.
            let sub_report = ((first + i as u32) & 7) << 5;
            self.push.inc(
                SUBC_3D,
                class::SET_REPORT_SEMAPHORE_A,
                &[(addr >> 32) as u32, *addr as u32, 0, d.pack() | sub_report],
            );
        }
        self.recorded(before)
    }
}
