//! Transform feedback as NVK encodes it (nvk_CmdBeginTransformFeedbackEXT,
//! nvk_CmdEndTransformFeedbackEXT, nvk_CmdDrawIndirectByteCountEXT), on both MME
//! generations: write pointers loaded from the counter buffers by `XFB_COUNTER_LOAD`,
//! byte counts reported at the end, and `XFB_DRAW_INDIRECT` drawing with `DRAW_AUTO`.

use driver::class;
use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::{CommandEncoder, Device, RenderingInfo};
use driver::push::SUBC_3D;

const COUNTER: u64 = 0x30_0000_0000;

#[test]
fn begin_loads_write_pointers_end_reports_and_draw_auto_divides() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = Gpu::new(arch);
        gpu.execute(device.init_push().unwrap().words()).unwrap();
        // 96 bytes written past a 16-byte start, 8-byte vertices: 10 vertices.
        gpu.state.memory.write_u32(COUNTER, 96);
        let mut enc = CommandEncoder::new(&device);
        enc.bind_transform_feedback_buffers(0, &[(0x40_0000_0000, 4096)]);
        enc.begin_transform_feedback(0, &[Some(COUNTER)], &gpu.state.memory);
        enc.begin_rendering(&RenderingInfo::views(0b11));
        enc.draw_indirect_byte_count(2, 0, COUNTER, 16, 8, &gpu.state.memory);
        enc.end_rendering();
        enc.end_transform_feedback(0, &[Some(COUNTER + 64)]);
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        let log = gpu.state.method_log.take().unwrap();
        let writes = |mthd: u16| {
            log.iter()
                .filter(|m| m.subc == SUBC_3D && m.mthd == mthd)
                .map(|m| m.data)
                .collect::<Vec<_>>()
        };
        // Reset to 0, then loaded from the counter by the macro.
        assert_eq!(
            writes(class::SET_STREAM_OUT_BUFFER_LOAD_WRITE_POINTER),
            [0, 96],
            "{arch:?}"
        );
        assert_eq!(writes(class::SET_STREAM_OUTPUT), [1, 0], "{arch:?}");
        // Two views × two instances, each a DRAW_AUTO of the counter.
        assert_eq!(writes(class::DRAW_AUTO), [96; 4], "{arch:?}");
        let counts: Vec<u32> = gpu.state.draws.iter().map(|d| d.count).collect();
        assert_eq!(counts, [10; 4], "{arch:?}");
        // The end's byte-count report into the second counter buffer.
        let d = writes(class::SET_REPORT_SEMAPHORE_D);
        assert_eq!(d.last().map(|w| (w >> 23) & 0x1f), Some(0x1a), "{arch:?}");
    }
}
