//! Channels: NVK gives each queue a channel of its own, and its macros emit what
//! changed against the MME shadow scratch of the channel they run on. A GPU handed
//! another channel runs against that channel's state, and a fresh channel set up by
//! NVK's set-up costs what the first channel cost when it was fresh.

use driver::gpu::{Channel, Gpu};
use driver::mme::Arch;
use driver::nvk::{CommandEncoder, Device, RenderingInfo};

/// A command buffer of two draws from vertex 7.
fn draws_from_vertex_7(device: &Device) -> Vec<u32> {
    let mut enc = CommandEncoder::new(device);
    enc.begin_rendering(&RenderingInfo::views(0));
    enc.draw(3, 1, 7, 0);
    enc.draw(3, 1, 7, 0);
    enc.end_rendering();
    enc.finish().words().to_vec()
}

/// The methods the macros emitted and the MME instructions they ran, executing `words`.
fn macro_cost(gpu: &mut Gpu, words: &[u32]) -> (u64, u64) {
    let before = gpu.state.counters;
    gpu.execute(words).expect("the draws run");
    let after = gpu.state.counters;
    (
        after.macro_methods - before.macro_methods,
        after.mme_instructions - before.mme_instructions,
    )
}

/// On Turing NVK's draw macros write the root table's first vertex only where it
/// differs from the scratch that holds the last one written (`CB0_FIRST_VERTEX`).
#[test]
fn each_channel_runs_against_its_own_scratch_and_a_fresh_one_costs_what_a_fresh_one_did() {
    let arch = Arch::Turing;
    let device = Device::for_arch(arch);
    let setup = device.init_push().expect("macros build");
    let words = draws_from_vertex_7(&device);
    let mut gpu = Gpu::new(arch);
    gpu.execute(setup.words()).expect("set-up runs");

    // The first command buffer writes the root table's first vertex; the same one
    // again finds it written on this channel.
    let fresh = macro_cost(&mut gpu, &words);
    let again = macro_cost(&mut gpu, &words);
    assert!(again.0 < fresh.0, "{again:?} against {fresh:?}");

    // Another queue's channel, set up as NVK sets a queue up: the same command
    // buffer costs there what it cost on the first channel when it was fresh.
    let mut parked = Channel::new(arch, gpu.remembers_macro_runs());
    gpu.exchange_channel(&mut parked);
    gpu.execute(setup.words()).expect("set-up runs");
    assert_eq!(macro_cost(&mut gpu, &words), fresh);

    // Back on the first channel, its state is as that channel's last work left it.
    gpu.exchange_channel(&mut parked);
    assert_eq!(macro_cost(&mut gpu, &words), again);
}
