//! Events as NVK sets, resets and waits on them (nvk_CmdSetEvent2, nvk_CmdResetEvent2,
//! nvk_CmdWaitEvents2), on both MME generations: the event's word in memory, and the
//! waits' host semaphores and invalidations.

use driver::class;
use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::events::{EVENT_RESET, EVENT_SET};
use driver::nvk::{Barrier, CommandEncoder, Device};
use driver::push::SUBC_3D;

const EVENT: u64 = 0x30_0000_1000;

#[test]
fn set_and_reset_write_the_event_word_and_a_wait_acquires_it() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = Gpu::new(arch);
        gpu.execute(device.init_push().unwrap().words()).unwrap();
        // Compute writes to storage, then set: the flush without a wait for idle.
        let barrier = Barrier {
            src_stages: 0x800,
            src_access: 0x40,
            dst_stages: 0x800,
            dst_access: 0x20,
        };
        let mut enc = CommandEncoder::new(&device);
        let set = enc.set_event(EVENT, &[barrier], barrier.src_stages);
        gpu.execute(enc.finish().words()).unwrap();
        assert_eq!(gpu.state.memory.read_u32(EVENT), EVENT_SET, "{arch:?}");
        // INVALIDATE_SHADER_CACHES on compute, then the release (header and 4 words).
        assert_eq!(set.dwords, 1 + 5, "{arch:?}");

        let mut enc = CommandEncoder::new(&device);
        let wait = enc.wait_events(&[EVENT, EVENT + 16], &[barrier]);
        let reset = enc.reset_event(EVENT, 0x2000);
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        assert_eq!(gpu.state.memory.read_u32(EVENT), EVENT_RESET, "{arch:?}");
        assert_eq!(reset.dwords, 5, "{arch:?}");
        let log = gpu.state.method_log.take().unwrap();
        let acquires: Vec<u32> = log
            .iter()
            .filter(|m| m.subc == SUBC_3D && m.mthd == class::HOST_SEMAPHORE_A + 8)
            .map(|m| m.data)
            .collect();
        assert_eq!(acquires, [EVENT_SET, EVENT_SET], "{arch:?}");
        // Two acquires, then the storage read's invalidation.
        assert!(wait.dwords > 2 * 5, "{arch:?}");
    }
}
