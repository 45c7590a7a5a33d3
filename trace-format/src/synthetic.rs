//! A synthetic trace shaped like a real frame: the set-up calls a Vulkan program makes,
//! then frames of thousands of draws with pipeline, descriptor and vertex-buffer binds,
//! push constants, occlusion queries, memory updates, a submit and a present.
//!
//! It exercises the container at realistic record sizes and mixes, for benches, tests
//! and `macroscope sample`. It is not a capture: no program made these calls, and its
//! shader modules carry no SPIR-V.

use crate::container::WriterStats;
use crate::direct::DirectField as F;
use crate::error::Result;
use crate::generated::trace::*;
use crate::trace::{CallMeta, TraceWriter};

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyntheticShape {
    /// Frames to record.
    pub frames: u64,
    /// API draws per frame.
    pub draws_per_frame: u32,
    /// View mask of the render pass's subpass (0: multiview off).
    pub view_mask: u32,
}

impl Default for SyntheticShape {
    fn default() -> Self {
        SyntheticShape {
            frames: 3,
            draws_per_frame: 2000,
            view_mask: 0,
        }
    }
}

// Handles: fixed ids, as a capture would assign them.
const INSTANCE: u64 = 0x10;
const PHYSICAL_DEVICE: u64 = 0x11;
const DEVICE: u64 = 0x12;
const QUEUE: u64 = 0x13;
const MEMORY: u64 = 0x20;
const VERTEX_BUFFER: u64 = 0x21;
const INDEX_BUFFER: u64 = 0x22;
const INDIRECT_BUFFER: u64 = 0x23;
const RENDER_PASS: u64 = 0x30;
const FRAMEBUFFER: u64 = 0x31;
const LAYOUT: u64 = 0x40;
const PIPELINE_BASE: u64 = 0x100;
const PIPELINES: u64 = 8;
const DESCRIPTOR_SET_BASE: u64 = 0x200;
const QUERY_POOL: u64 = 0x50;
const COMMAND_POOL: u64 = 0x60;
const COMMAND_BUFFER: u64 = 0x61;

/// The handles the synthetic trace creates, for tests that build records on top of it.
pub mod handles {
    /// The queue its submits go to.
    pub const QUEUE: u64 = super::QUEUE;
    /// The command buffer its frames record into and submit.
    pub const COMMAND_BUFFER: u64 = super::COMMAND_BUFFER;
    /// Every handle it creates (pipelines and descriptor sets: their first).
    pub const ALL: [u64; 17] = [
        super::INSTANCE,
        super::PHYSICAL_DEVICE,
        super::DEVICE,
        super::QUEUE,
        super::MEMORY,
        super::VERTEX_BUFFER,
        super::INDEX_BUFFER,
        super::INDIRECT_BUFFER,
        super::RENDER_PASS,
        super::FRAMEBUFFER,
        super::LAYOUT,
        super::PIPELINE_BASE,
        super::PIPELINE_BASE + 1,
        super::DESCRIPTOR_SET_BASE,
        super::QUERY_POOL,
        super::COMMAND_POOL,
        super::COMMAND_BUFFER,
    ];
}

const VK_FORMAT_B8G8R8A8_UNORM: u32 = 44;
/// Where the indirect buffer lives in its memory.
const INDIRECT_OFFSET: u64 = 32 << 20;
/// VkDrawIndexedIndirectCommands in the indirect buffer (20 bytes each).
const INDIRECT_COMMANDS: u32 = 1024;
const VK_QUERY_TYPE_OCCLUSION: u32 = 0;
const VK_STAGE_VERTEX_AND_FRAGMENT: u32 = 0x1 | 0x10;
const QUERIES_PER_FRAME: u32 = 16;

/// A small deterministic generator, so every run writes the same bytes.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 32) as u32
    }
}

/// Writes the synthetic trace into `writer` and finishes it.
pub fn write_synthetic(mut writer: TraceWriter, shape: &SyntheticShape) -> Result<WriterStats> {
    write_synthetic_calls(&mut writer, shape)?;
    writer.finish()
}

/// Writes the synthetic trace's calls into `writer`, leaving it open.
pub fn write_synthetic_calls(writer: &mut TraceWriter, shape: &SyntheticShape) -> Result<()> {
    let mut clock = Clock::default();
    write_setup(writer, &mut clock, shape)?;
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..shape.frames {
        write_frame(writer, &mut clock, &mut rng, shape)?;
    }
    Ok(())
}

/// Timestamps that advance a little per call.
#[derive(Default)]
struct Clock(u64);

impl Clock {
    fn meta(&mut self) -> CallMeta {
        self.0 += 150;
        CallMeta {
            thread_id: 1,
            timestamp_ns: self.0,
            result: 0,
        }
    }
}

fn write_setup(w: &mut TraceWriter, clock: &mut Clock, shape: &SyntheticShape) -> Result<()> {
    let calls = [
        CallT::CreateInstance(Box::new(CreateInstanceT {
            instance: INSTANCE,
            application: Some(Box::new(ApplicationInfoT {
                application_name: Some("macroscope-synthetic".into()),
                application_version: 1,
                engine_name: Some("macroscope".into()),
                engine_version: 1,
                api_version: (1 << 22) | (3 << 12),
            })),
            enabled_layers: Some(vec![]),
            enabled_extensions: Some(vec!["VK_KHR_surface".into()]),
        })),
        CallT::PhysicalDeviceInfo(Box::new(PhysicalDeviceInfoT {
            physical_device: PHYSICAL_DEVICE,
            vendor_id: 0x10de,
            device_id: 0x2330,
            device_type: 2,
            device_name: Some("synthetic NVIDIA device".into()),
            api_version: (1 << 22) | (3 << 12),
            driver_version: 0,
            driver_name: Some("synthetic".into()),
            driver_info: None,
            max_multiview_view_count: 32,
            max_multiview_instance_index: u32::MAX,
        })),
        CallT::CreateDevice(Box::new(CreateDeviceT {
            physical_device: PHYSICAL_DEVICE,
            device: DEVICE,
            queues: Some(vec![DeviceQueueCreateInfoT {
                queue_family_index: 0,
                queue_count: 1,
            }]),
            enabled_extensions: Some(vec!["VK_KHR_swapchain".into()]),
            multiview: shape.view_mask != 0,
            ..Default::default()
        })),
        CallT::GetDeviceQueue(Box::new(GetDeviceQueueT {
            device: DEVICE,
            queue: QUEUE,
            ..Default::default()
        })),
        CallT::AllocateMemory(Box::new(AllocateMemoryT {
            device: DEVICE,
            memory: MEMORY,
            size: 64 << 20,
            memory_type_index: 1,
            flags: 0,
        })),
        CallT::MapMemory(Box::new(MapMemoryT {
            device: DEVICE,
            memory: MEMORY,
            offset: 0,
            size: u64::MAX,
            flags: 0,
        })),
        buffer(VERTEX_BUFFER, 16 << 20, 0x80),
        buffer(INDEX_BUFFER, 8 << 20, 0x40),
        buffer(INDIRECT_BUFFER, 1 << 20, 0x100),
        CallT::BindBufferMemory(Box::new(BindBufferMemoryT {
            device: DEVICE,
            buffer: INDIRECT_BUFFER,
            memory: MEMORY,
            offset: INDIRECT_OFFSET,
        })),
        CallT::MemoryContents(Box::new(MemoryContentsT {
            memory: MEMORY,
            offset: INDIRECT_OFFSET,
            data: Some(indirect_commands()),
        })),
        CallT::CreateRenderPass(Box::new(CreateRenderPassT {
            device: DEVICE,
            render_pass: RENDER_PASS,
            version: 1,
            attachments: Some(vec![AttachmentDescriptionT {
                format: VK_FORMAT_B8G8R8A8_UNORM,
                samples: 1,
                load_op: 1,
                stencil_load_op: 2,
                stencil_store_op: 1,
                final_layout: 1000001002,
                ..Default::default()
            }]),
            subpasses: Some(vec![SubpassDescriptionT {
                view_mask: shape.view_mask,
                color_attachments: Some(vec![AttachmentReferenceT {
                    attachment: 0,
                    layout: 2,
                    aspect_mask: 0,
                }]),
                ..Default::default()
            }]),
            dependencies: Some(vec![]),
            correlation_masks: Some(vec![shape.view_mask]),
            stencil_layouts: None,
        })),
        CallT::CreateFramebuffer(Box::new(CreateFramebufferT {
            device: DEVICE,
            framebuffer: FRAMEBUFFER,
            render_pass: RENDER_PASS,
            attachments: Some(vec![0x70]),
            width: 1920,
            height: 1080,
            layers: 1,
            ..Default::default()
        })),
        CallT::CreatePipelineLayout(Box::new(CreatePipelineLayoutT {
            device: DEVICE,
            pipeline_layout: LAYOUT,
            flags: 0,
            set_layouts: Some(vec![0x41]),
            push_constant_ranges: Some(vec![PushConstantRangeT {
                stage_flags: VK_STAGE_VERTEX_AND_FRAGMENT,
                offset: 0,
                size: 64,
            }]),
        })),
        CallT::CreateGraphicsPipelines(Box::new(CreateGraphicsPipelinesT {
            device: DEVICE,
            pipeline_cache: 0,
            pipelines: Some(
                (0..PIPELINES)
                    .map(|i| GraphicsPipelineT {
                        pipeline: PIPELINE_BASE + i,
                        topology: 3,
                        layout: LAYOUT,
                        render_pass: RENDER_PASS,
                        stages: Some(vec![
                            ShaderStageT {
                                stage: 0x1,
                                module: 0x80 + 2 * i,
                                entry_point: Some("main".into()),
                                ..Default::default()
                            },
                            ShaderStageT {
                                stage: 0x10,
                                module: 0x81 + 2 * i,
                                entry_point: Some("main".into()),
                                ..Default::default()
                            },
                        ]),
                        ..Default::default()
                    })
                    .collect(),
            ),
        })),
        CallT::CreateQueryPool(Box::new(CreateQueryPoolT {
            device: DEVICE,
            query_pool: QUERY_POOL,
            query_type: VK_QUERY_TYPE_OCCLUSION,
            query_count: QUERIES_PER_FRAME * shape.view_mask.count_ones().max(1),
            ..Default::default()
        })),
        CallT::CreateCommandPool(Box::new(CreateCommandPoolT {
            device: DEVICE,
            command_pool: COMMAND_POOL,
            ..Default::default()
        })),
        CallT::AllocateCommandBuffers(Box::new(AllocateCommandBuffersT {
            device: DEVICE,
            command_pool: COMMAND_POOL,
            level: 0,
            command_buffers: Some(vec![COMMAND_BUFFER]),
        })),
    ];
    for call in &calls {
        w.append(clock.meta(), call)?;
    }
    Ok(())
}

/// `INDIRECT_COMMANDS` indexed draws: 3·(i+1) indices, one instance.
fn indirect_commands() -> Vec<u8> {
    (0..INDIRECT_COMMANDS)
        .flat_map(|i| [3 * (i % 100 + 1), 1, i * 3, 0, 0])
        .flat_map(u32::to_le_bytes)
        .collect()
}

fn buffer(handle: u64, size: u64, usage: u32) -> CallT {
    CallT::CreateBuffer(Box::new(CreateBufferT {
        device: DEVICE,
        buffer: handle,
        flags: 0,
        size,
        usage,
    }))
}

fn write_frame(
    w: &mut TraceWriter,
    clock: &mut Clock,
    rng: &mut XorShift,
    shape: &SyntheticShape,
) -> Result<()> {
    let cb = COMMAND_BUFFER;
    let frame = w.frame();
    w.append(
        clock.meta(),
        &CallT::BeginCommandBuffer(Box::new(BeginCommandBufferT {
            command_buffer: cb,
            flags: 1,
            inheritance: None,
        })),
    )?;
    w.append(
        clock.meta(),
        &CallT::CmdResetQueryPool(Box::new(CmdResetQueryPoolT {
            command_buffer: cb,
            query_pool: QUERY_POOL,
            first_query: 0,
            query_count: QUERIES_PER_FRAME * shape.view_mask.count_ones().max(1),
        })),
    )?;
    w.append(
        clock.meta(),
        &CallT::CmdBeginRenderPass(Box::new(CmdBeginRenderPassT {
            command_buffer: cb,
            render_pass: RENDER_PASS,
            framebuffer: FRAMEBUFFER,
            render_area: Some(Rect2DT {
                offset: Offset2DT { x: 0, y: 0 },
                extent: Extent2DT {
                    width: 1920,
                    height: 1080,
                },
            }),
            clear_values: Some(vec![ClearValueT {
                w0: 0,
                w1: 0,
                w2: 0,
                w3: 0x3f80_0000,
            }]),
            contents: 0,
        })),
    )?;
    let draws = shape.draws_per_frame;
    let query_every = (draws / QUERIES_PER_FRAME).max(1);
    let views = shape.view_mask.count_ones().max(1);
    let mut push = [0u8; 64];
    for d in 0..draws {
        if d % 64 == 0 {
            let pipeline = PIPELINE_BASE + u64::from(rng.next()) % PIPELINES;
            w.append_with(clock.meta(), |fbb| {
                let t = CmdBindPipeline::create(
                    fbb,
                    &CmdBindPipelineArgs {
                        command_buffer: cb,
                        pipeline_bind_point: 0,
                        pipeline,
                    },
                );
                (Call::CmdBindPipeline, t.as_union_value())
            })?;
        }
        if d % 8 == 0 {
            let offset = u64::from(rng.next() % 4096) * 256;
            w.append_with(clock.meta(), |fbb| {
                let buffers = fbb.create_vector(&[VERTEX_BUFFER]);
                let offsets = fbb.create_vector(&[offset]);
                let t = CmdBindVertexBuffers::create(
                    fbb,
                    &CmdBindVertexBuffersArgs {
                        command_buffer: cb,
                        first_binding: 0,
                        buffers: Some(buffers),
                        offsets: Some(offsets),
                    },
                );
                (Call::CmdBindVertexBuffers, t.as_union_value())
            })?;
        }
        // The commands a program issues by the thousand are stored compact, as the
        // capture layer stores them.
        let set = DESCRIPTOR_SET_BASE + u64::from(rng.next() % 256);
        let dynamic = rng.next() % 1024 * 256;
        w.append_direct(
            clock.meta(),
            Call::CmdBindDescriptorSets,
            &[
                F::U64(cb),
                F::U32(0),
                F::U64(LAYOUT),
                F::U32(0),
                F::U64s(&[set]),
                F::U32s(&[dynamic]),
            ],
        )?;
        for chunk in push.chunks_exact_mut(4) {
            chunk.copy_from_slice(&rng.next().to_le_bytes());
        }
        w.append_direct(
            clock.meta(),
            Call::CmdPushConstants,
            &[
                F::U64(cb),
                F::U64(LAYOUT),
                F::U32(VK_STAGE_VERTEX_AND_FRAGMENT),
                F::U32(0),
                F::Bytes(&push),
            ],
        )?;
        let query = d / query_every * views;
        let queried = d % query_every == 0 && query < QUERIES_PER_FRAME * views;
        if queried {
            w.append_with(clock.meta(), |fbb| {
                let t = CmdBeginQuery::create(
                    fbb,
                    &CmdBeginQueryArgs {
                        command_buffer: cb,
                        query_pool: QUERY_POOL,
                        query,
                        flags: 0,
                    },
                );
                (Call::CmdBeginQuery, t.as_union_value())
            })?;
        }
        write_draw(w, clock, rng, d)?;
        if queried {
            w.append_with(clock.meta(), |fbb| {
                let t = CmdEndQuery::create(
                    fbb,
                    &CmdEndQueryArgs {
                        command_buffer: cb,
                        query_pool: QUERY_POOL,
                        query,
                    },
                );
                (Call::CmdEndQuery, t.as_union_value())
            })?;
        }
    }
    w.append(
        clock.meta(),
        &CallT::CmdEndRenderPass(Box::new(CmdEndRenderPassT { command_buffer: cb })),
    )?;
    w.append(
        clock.meta(),
        &CallT::EndCommandBuffer(Box::new(EndCommandBufferT { command_buffer: cb })),
    )?;
    let uniforms: Vec<u8> = (0..1024).map(|i| (i as u64 ^ frame) as u8).collect();
    w.append(
        clock.meta(),
        &CallT::MemoryContents(Box::new(MemoryContentsT {
            memory: MEMORY,
            offset: 4096 * frame,
            data: Some(uniforms),
        })),
    )?;
    w.append(
        clock.meta(),
        &CallT::QueueSubmit(Box::new(QueueSubmitT {
            queue: QUEUE,
            submits: Some(vec![SubmitInfoT {
                command_buffers: Some(vec![cb]),
                ..Default::default()
            }]),
            fence: 0,
        })),
    )?;
    w.append(
        clock.meta(),
        &CallT::QueuePresent(Box::new(QueuePresentT {
            queue: QUEUE,
            wait_semaphores: Some(vec![]),
            swapchains: Some(vec![0x90]),
            image_indices: Some(vec![(frame % 3) as u32]),
        })),
    )?;
    w.end_frame(clock.meta())?;
    Ok(())
}

/// Mostly indexed draws, some plain and some indirect, as a renderer's mix.
fn write_draw(w: &mut TraceWriter, clock: &mut Clock, rng: &mut XorShift, d: u32) -> Result<()> {
    let cb = COMMAND_BUFFER;
    let r = rng.next();
    let count = 3 * (1 + r % 2000);
    let instances = if d % 16 == 0 { 1 + r % 8 } else { 1 };
    match d % 10 {
        0..=6 => w.append_direct(
            clock.meta(),
            Call::CmdDrawIndexed,
            &[
                F::U64(cb),
                F::U32(count),
                F::U32(instances),
                F::U32(r % 65536),
                F::I32((r % 1024) as i32),
                F::U32(0),
            ],
        ),
        7 | 8 => w.append_direct(
            clock.meta(),
            Call::CmdDraw,
            &[
                F::U64(cb),
                F::U32(count),
                F::U32(instances),
                F::U32(r % 4096),
                F::U32(0),
            ],
        ),
        _ => w.append_with(clock.meta(), |fbb| {
            let t = CmdDrawIndexedIndirect::create(
                fbb,
                &CmdDrawIndexedIndirectArgs {
                    command_buffer: cb,
                    buffer: INDIRECT_BUFFER,
                    offset: u64::from(r % INDIRECT_COMMANDS) * 20,
                    draw_count: 1,
                    stride: 20,
                },
            );
            (Call::CmdDrawIndexedIndirect, t.as_union_value())
        }),
    }
    .map(drop)
}

/// Writes a results file of `draws` synthetic draw rows, `draws_per_frame` to a frame
/// and a submit every thousand, with costs spread like a replay's, for benches of the
/// analyzer and the browser. Not a replay: no driver ran these draws.
pub fn write_synthetic_results(
    path: &std::path::Path,
    draws: u64,
    draws_per_frame: u64,
) -> Result<WriterStats> {
    use crate::generated::results::{DrawKind, DrawRow, RunInfoT};
    let run = RunInfoT {
        repetitions: 1,
        frames_last: u64::MAX,
        ..Default::default()
    };
    let mut w = crate::ResultsWriter::create(path, run, &crate::WriterOptions::default())?;
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let per_frame = draws_per_frame.max(1);
    for seq in 0..draws {
        rng.next();
        let x = rng.0;
        let views = (x % 5) as u8;
        let row = DrawRow::new(
            seq,
            x >> 60,
            (seq / per_frame) as u32,
            (seq / 1000) as u32,
            0,
            DrawKind((x >> 8) as u8 % 7),
            views,
            (1u32 << views) - 1,
            1 + (x >> 20) as u32 % 4,
            3 + (x >> 24) as u32 % 3000,
            1,
            60 + (x >> 32) as u32 % 400,
            20 + (x >> 40) as u32 % 50,
            7,
            u32::from(views.max(1)),
            0,
            0,
            100 + (x >> 44) % 900,
            2000 + (x >> 48) % 8000,
            (x >> 52) % 3000,
            0,
        );
        w.push_draw(row)?;
    }
    w.finish(&[])
}
