//! The replayer: streams a trace through the bundled driver model and times every draw.
//!
//! Data flows: [`replay`] reads the trace chunk by chunk ([`trace_format::TraceReader`],
//! with read-ahead), rebuilds the objects the driver needs (`objects`), records each
//! command buffer's commands (`commands`), and at every submit encodes them with NVK's
//! [`CommandEncoder`](driver::nvk::CommandEncoder) and executes them on the
//! [GPU model](driver::gpu), one command at a time, so each draw gets its own costs:
//! MME instructions, methods, push-buffer dwords, hardware draws, and host time for
//! encoding, execution and the multiview loop. Rows stream into a results file.

#![deny(missing_docs)]

mod clock;
pub mod commands;
mod descriptor_sets;
pub mod device;
mod direct_commands;
mod execute;
mod generated;
pub mod generic;
mod handles;
mod inspect;
mod layouts;
pub mod objects;
mod pass_barriers;
mod pipeline_state;
mod replay;
mod shaders;
pub mod swapchain;
pub mod verify;

pub use inspect::{inspect_draw, method_label, method_label_on, DrawInspection, MethodRun};
pub use replay::{
    replay, replay_with_gpu_times, run_chipset, FailedCalls, GpuTimes, ReplayError, ReplayOptions,
    Summary, Tape, TapeLabel, Unmodelled, DEFAULT_MME_BUDGET,
};
