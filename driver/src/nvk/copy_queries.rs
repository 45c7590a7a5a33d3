//! vkCmdCopyQueryPoolResults as a Turing macro.
//!
//! NVK copies query results with a compute shader. This model copies them with an MME
//! macro instead — one call per query: it reads the availability word and the reports
//! with READ_FIFOED, subtracts begin from end, and writes the results (and optionally
//! the availability) with one-word semaphore releases. Pre-Turing MMEs cannot read
//! memory, so there it is not modelled.

use crate::class::{
    self, PipelineLocation, Report, ReportSemaphoreD, SemaphoreOperation, StructureSize,
};
use crate::mme::{Alu64Op, Builder, Cmp, Value};

/// VK_QUERY_RESULT_64_BIT.
pub const RESULT_64_BIT: u32 = 1;
/// VK_QUERY_RESULT_WAIT_BIT (the model's writes are already complete).
pub const RESULT_WAIT: u32 = 2;
/// VK_QUERY_RESULT_WITH_AVAILABILITY_BIT.
pub const RESULT_WITH_AVAILABILITY: u32 = 4;
/// VK_QUERY_RESULT_PARTIAL_BIT.
pub const RESULT_PARTIAL: u32 = 8;

fn release_one_word() -> u32 {
    ReportSemaphoreD {
        operation: SemaphoreOperation::Release,
        flush_disable: false,
        release_after_writes: true,
        pipeline_location: PipelineLocation::All,
        report: Report::None,
        structure_size: StructureSize::OneWord,
    }
    .pack()
}

/// Writes `value` at `(hi << 32) | lo`.
fn write_word(b: &mut Builder, addr: [Value; 2], value: Value) {
    b.mthd(class::SET_REPORT_SEMAPHORE_A);
    b.emit(addr[1]);
    b.emit(addr[0]);
    b.emit(value);
    b.emit(Value::Imm(release_one_word()));
}

/// Writes one result (32 or 64 bits, as `flags` say) at `dst`, and advances `dst`.
fn write_result(b: &mut Builder, dst: [Value; 2], result: [Value; 2], flags: Value) {
    write_word(b, dst, result[0]);
    b.alu64_to(Alu64Op::Add, dst, dst, [Value::Imm(4), Value::Zero]);
    let wide = b.and(flags, Value::Imm(RESULT_64_BIT));
    b.if_(Cmp::Ne, wide, Value::Zero, |b| {
        write_word(b, dst, result[1]);
        b.alu64_to(Alu64Op::Add, dst, dst, [Value::Imm(4), Value::Zero]);
    });
    b.free_reg(wide);
}

/// The macro. Parameters: `avail_hi, avail_lo, report_hi, report_lo, dst_hi, dst_lo,
/// avail_dst_hi, avail_dst_lo, flags, pairs` — `pairs` is the number of begin/end
/// report pairs (0 for a timestamp, whose single report's timestamp is the result).
pub fn build(b: &mut Builder) {
    let avail_hi = b.load();
    let avail_lo = b.load();
    b.read_fifoed(avail_hi, avail_lo, Value::Imm(1));
    b.free_reg(avail_hi);
    b.free_reg(avail_lo);
    let available = b.load();
    let report = [Value::Zero; 2].map(|_| b.alloc_reg());
    b.load_to(report[1]);
    b.load_to(report[0]);
    let dst = [Value::Zero; 2].map(|_| b.alloc_reg());
    b.load_to(dst[1]);
    b.load_to(dst[0]);
    let avail_dst = [Value::Zero; 2].map(|_| b.alloc_reg());
    b.load_to(avail_dst[1]);
    b.load_to(avail_dst[0]);
    let flags = b.load();
    let pairs = b.load();

    let write = b.mov(available);
    let partial = b.and(flags, Value::Imm(RESULT_PARTIAL));
    b.if_(Cmp::Ne, partial, Value::Zero, |b| {
        b.mov_to(write, Value::Imm(1))
    });
    b.free_reg(partial);
    b.if_(Cmp::Ne, write, Value::Zero, |b| {
        b.if_(Cmp::Eq, pairs, Value::Zero, |b| {
            // {value, timestamp}: the timestamp is words 2 and 3.
            b.read_fifoed(report[1], report[0], Value::Imm(4));
            for _ in 0..2 {
                let skipped = b.load();
                b.free_reg(skipped);
            }
            let ts = [b.load(), b.load()];
            write_result(b, dst, ts, flags);
            ts.into_iter().for_each(|v| b.free_reg(v));
        });
        b.loop_(pairs, |b| {
            // Begin then end report: the result is end.value - begin.value.
            b.read_fifoed(report[1], report[0], Value::Imm(8));
            let begin = [b.load(), b.load()];
            for _ in 0..2 {
                let skipped = b.load();
                b.free_reg(skipped);
            }
            let end = [b.load(), b.load()];
            for _ in 0..2 {
                let skipped = b.load();
                b.free_reg(skipped);
            }
            b.alu64_to(Alu64Op::Sub, end, end, begin);
            begin.into_iter().for_each(|v| b.free_reg(v));
            write_result(b, dst, end, flags);
            end.into_iter().for_each(|v| b.free_reg(v));
            b.alu64_to(Alu64Op::Add, report, report, [Value::Imm(32), Value::Zero]);
        });
    });
    let with_availability = b.and(flags, Value::Imm(RESULT_WITH_AVAILABILITY));
    b.if_(Cmp::Ne, with_availability, Value::Zero, |b| {
        write_result(b, avail_dst, [available, Value::Zero], flags);
    });
}
