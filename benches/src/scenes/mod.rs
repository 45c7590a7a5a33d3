//! The scenes: small Vulkan programs that render offscreen and exit by themselves, as
//! capture workloads. Each reports what it issued ([`Issued`]) so a test can hold a
//! capture of it against what it drew.
//!
//! - `multiview`: a render pass with view mask 0b1111, and one whose four subpasses use
//!   view masks 5, 10, 5, 10, with occlusion queries around draws and timestamps.
//! - `indirect`: draw indirect, indexed indirect, indirect count and indexed indirect
//!   count, from host-written argument and count buffers.
//! - `storm`: 10,000 draws a frame, each with push constants and a descriptor bind.
//! - `tessellation`: patches through tessellation and a geometry shader.
//! - `threads`: four threads record command buffers at once, 2,500 draws each, submitted
//!   together.
//! - `compute`: a dispatch-heavy frame: three dispatches with barriers between them, an
//!   indirect dispatch, an event set after it and waited on, a buffer copy and a fill,
//!   a clear of the colour target, a blit between its layers and copies between it and
//!   a buffer.
//! - `mapped`: 512 MiB of vertex buffer persistently mapped, 1 MiB of it written a
//!   frame (a different MiB each frame) and drawn from, 16 draws binding 64 KiB each.
//! - `libraries`: one draw a frame, even frames with a pipeline made whole, odd frames
//!   with the same pipeline linked from three graphics pipeline libraries.
//! - `subpasses`: a render pass of three subpasses chained through input attachments,
//!   as a deferred renderer's, and a multiview pass whose second subpass adds a view.

mod gpu;
mod own_fault_handler;

use std::collections::BTreeMap;
use std::ffi::CStr;

use ash::vk;

pub use gpu::{Buffer, Error, Gpu, LAYERS, SIZE};

/// The scenes' vertex shader: a triangle placed by push constants.
pub const TRI_VERT: &[u8] = include_bytes!("../../shaders/tri.vert.spv");
/// A fragment shader writing the bound tint.
pub const COLOR_FRAG: &[u8] = include_bytes!("../../shaders/color.frag.spv");
/// A fragment shader shading each view differently (reads ViewIndex).
pub const VIEW_FRAG: &[u8] = include_bytes!("../../shaders/view.frag.spv");
const PATCH_TESC: &[u8] = include_bytes!("../../shaders/patch.tesc.spv");
const PATCH_TESE: &[u8] = include_bytes!("../../shaders/patch.tese.spv");
const SHRINK_GEOM: &[u8] = include_bytes!("../../shaders/shrink.geom.spv");
const DOUBLE_COMP: &[u8] = include_bytes!("../../shaders/double.comp.spv");
const BLEND_INPUT_FRAG: &[u8] = include_bytes!("../../shaders/blend_input.frag.spv");

/// The scenes by name.
pub const SCENES: [&str; 11] = [
    "multiview",
    "indirect",
    "storm",
    "tessellation",
    "threads",
    "secondary",
    "compute",
    "mapped",
    "libraries",
    "resolve",
    "subpasses",
];

/// What a scene asked the GPU to do, per frame and in total.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Issued {
    /// Frames rendered.
    pub frames: u64,
    /// API draws by command name (`CmdDraw`, `CmdDrawIndexedIndirectCount`...), and
    /// compute work (`CmdDispatch`, `CmdCopyBuffer`...).
    pub draws: BTreeMap<&'static str, u64>,
    /// Draws by the view mask they ran under.
    pub view_masks: BTreeMap<u32, u64>,
    /// Queries ended (occlusion) or written (timestamps).
    pub queries: BTreeMap<&'static str, u64>,
    /// Whether frames were marked with `VK_EXT_frame_boundary`.
    pub frame_boundaries: bool,
    /// Rows (draws, and the queries' rows none) by the debug-label path they were
    /// issued under (`a/b`), where the scene labels its work.
    pub labelled_draws: BTreeMap<&'static str, u64>,
}

impl Issued {
    fn draw(&mut self, command: &'static str, view_mask: u32) {
        *self.draws.entry(command).or_default() += 1;
        *self.view_masks.entry(view_mask).or_default() += 1;
    }

    /// Counts a row issued under label path `path`, where the scene labels.
    fn labelled(&mut self, path: &'static str, labels: bool) {
        if labels {
            *self.labelled_draws.entry(path).or_default() += 1;
        }
    }

    fn query(&mut self, kind: &'static str) {
        *self.queries.entry(kind).or_default() += 1;
    }

    /// One line of JSON.
    pub fn to_json(&self, scene: &str) -> String {
        let map = |m: &BTreeMap<&'static str, u64>| {
            m.iter()
                .map(|(k, v)| format!("\"{k}\":{v}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let masks = self
            .view_masks
            .iter()
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect::<Vec<_>>()
            .join(",");
        format!(
            "{{\"scene\":\"{scene}\",\"frames\":{},\"frame_boundaries\":{},\"draws\":{{{}}},\"view_masks\":{{{masks}}},\"queries\":{{{}}},\"labelled_draws\":{{{}}}}}",
            self.frames,
            self.frame_boundaries,
            map(&self.draws),
            map(&self.queries),
            map(&self.labelled_draws)
        )
    }
}

/// Variations of a scene, for tests that compare two captures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SceneOptions {
    /// One more draw in frame 1 (the multiview scene: after its first draw), so that
    /// two captures differ by exactly one draw.
    pub extra_draw: bool,
    /// The mapped scene installs a SIGSEGV handler of its own once its mapping is
    /// watched, and faults into it once at the end (see `own_fault_handler`).
    pub own_fault_handler: bool,
    /// Before its own, the scene makes a Vulkan instance and device and destroys them,
    /// as a GL driver or a toolkit probing the GPU does.
    pub probe_first: bool,
    /// Once its own device is made (and a buffer on it), the scene makes a second
    /// instance and device, submits to its queue once and keeps them to the end, as a
    /// program with two GL contexts on Zink does (Sweet Home 3D's Java2D and Java3D).
    pub second_device: bool,
    /// With `second_device`: the second device asks for a feature the first does not.
    pub second_device_unlike: bool,
    /// The scene runs once more after its instance and device are destroyed, on an
    /// instance and device made anew, as a program that makes a device again does
    /// (VLC: three in turn).
    pub again_on_a_new_device: bool,
    /// Once its frames are drawn, the scene prints its line and waits to be killed, its
    /// device kept, as a program that draws on demand and then waits for input does.
    pub then_wait: bool,
    /// The mapped scene first writes [`BIG_WRITE`] bytes that do not repeat at the end of
    /// its mapping, all before its first submit, as Blender uploads more than a trace
    /// chunk holds at once.
    pub big_write: bool,
}

/// What the mapped scene writes before its first submit with `big_write`: more than a
/// trace chunk's 64 MiB.
pub const BIG_WRITE: u64 = 80 << 20;

/// The word at index `i` of the mapped scene's big write: a byte repeated four times,
/// another from word to word, as an 8-bit image's rows are — bytes more like the byte
/// before them than the word before, which the layer stores as they are, not as byte
/// planes.
pub fn big_write_word(i: u64) -> u32 {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed;
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    u32::from((x ^ x >> 32) as u8) * 0x0101_0101
}

/// Runs scene `name` for `frames` frames.
pub fn run(name: &str, frames: u64) -> Result<Issued, Error> {
    run_with(name, frames, SceneOptions::default())
}

/// Runs scene `name` for `frames` frames with `options`.
pub fn run_with(name: &str, frames: u64, options: SceneOptions) -> Result<Issued, Error> {
    let app = match name {
        "multiview" => c"macroscope-scene-multiview",
        "indirect" => c"macroscope-scene-indirect",
        "storm" => c"macroscope-scene-storm",
        "tessellation" => c"macroscope-scene-tessellation",
        "threads" => c"macroscope-scene-threads",
        "secondary" => c"macroscope-scene-secondary",
        "compute" => c"macroscope-scene-compute",
        "mapped" => c"macroscope-scene-mapped",
        "libraries" => c"macroscope-scene-libraries",
        "resolve" => c"macroscope-scene-resolve",
        "subpasses" => c"macroscope-scene-subpasses",
        _ => return Err(format!("no scene `{name}` (one of {})", SCENES.join(", ")).into()),
    };
    if options.probe_first {
        drop(Gpu::new(c"macroscope-scene-probe")?);
    }
    if options.again_on_a_new_device {
        run_on_its_device(name, app, frames, options)?;
    }
    run_on_its_device(name, app, frames, options)
}

/// Makes scene `name`'s instance and device (for `app`), runs it for `frames` frames
/// and destroys them.
fn run_on_its_device(
    name: &str,
    app: &std::ffi::CStr,
    frames: u64,
    options: SceneOptions,
) -> Result<Issued, Error> {
    let mut gpu = Gpu::new(app)?;
    let _second = match options.second_device {
        // A buffer in memory of the scene's device, made before the second device.
        true => {
            gpu.buffer(vk::BufferUsageFlags::UNIFORM_BUFFER, &[0; 16])?;
            let second = Gpu::asking(c"macroscope-scene-second", options.second_device_unlike)?;
            second.submit_nothing()?;
            Some(second)
        }
        false => None,
    };
    let mut issued = Issued {
        frames,
        frame_boundaries: gpu.frame_boundary,
        ..Issued::default()
    };
    match name {
        "multiview" => multiview(&mut gpu, frames, options, &mut issued)?,
        "indirect" => indirect(&mut gpu, frames, &mut issued)?,
        "storm" => storm(&mut gpu, frames, &mut issued)?,
        "threads" => threads(&mut gpu, frames, &mut issued)?,
        "secondary" => secondary(&mut gpu, frames, &mut issued)?,
        "compute" => compute(&mut gpu, frames, &mut issued)?,
        "mapped" => mapped(&mut gpu, frames, options, &mut issued)?,
        "libraries" => libraries(&mut gpu, frames, &mut issued)?,
        "resolve" => resolve(&mut gpu, frames, &mut issued)?,
        "subpasses" => subpasses(&mut gpu, frames, &mut issued)?,
        _ => tessellation(&mut gpu, frames, &mut issued)?,
    }
    if options.then_wait {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", issued.to_json(name))?;
        out.flush()?;
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    Ok(issued)
}

fn tints(gpu: &mut Gpu) -> Result<[gpu::Buffer; 2], Error> {
    let bytes = |c: [f32; 4]| c.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    Ok([
        gpu.buffer(
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &bytes([1.0, 0.5, 0.2, 1.0]),
        )?,
        gpu.buffer(
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            &bytes([0.2, 0.5, 1.0, 1.0]),
        )?,
    ])
}

/// The multiview scene's subpass labels, and the paths its draws lie under.
const SUBPASS_LABELS: [&CStr; 4] = [c"subpass 0", c"subpass 1", c"subpass 2", c"subpass 3"];
const SUBPASS_PATHS: [&str; 4] = [
    "frame/view pairs/subpass 0",
    "frame/view pairs/subpass 1",
    "frame/view pairs/subpass 2",
    "frame/view pairs/subpass 3",
];

fn multiview(
    gpu: &mut Gpu,
    frames: u64,
    options: SceneOptions,
    issued: &mut Issued,
) -> Result<(), Error> {
    let [a, b] = tints(gpu)?;
    let (layout, sets) = gpu.layout(&[&a, &b])?;
    let vert = gpu.module(TRI_VERT)?;
    let frag = gpu.module(VIEW_FRAG)?;
    let stages = [
        (vk::ShaderStageFlags::VERTEX, vert),
        (vk::ShaderStageFlags::FRAGMENT, frag),
    ];
    let whole = [0b1111];
    let split = [5, 10, 5, 10];
    let (pass_whole, fb_whole) = gpu.render_pass(&whole)?;
    let (pass_split, fb_split) = gpu.render_pass(&split)?;
    let tri = vk::PrimitiveTopology::TRIANGLE_LIST;
    let p_whole = gpu.pipeline(layout, pass_whole, 0, &stages, tri)?;
    let p_split: Vec<_> = (0..split.len() as u32)
        .map(|s| gpu.pipeline(layout, pass_split, s, &stages, tri))
        .collect::<Result<_, _>>()?;
    // Occlusion queries take one slot per view under multiview: 4 + 2 × 4 = 12 a frame.
    let occlusion = gpu.query_pool(vk::QueryType::OCCLUSION, 16)?;
    let timestamps = gpu.query_pool(vk::QueryType::TIMESTAMP, 4)?;
    gpu.name(fb_whole, c"all views")?;
    gpu.name(fb_split, c"view pairs")?;
    let labels = gpu.labels();
    let d = gpu.device.clone();
    for frame in 0..frames {
        gpu.frame(frame, |cb| unsafe {
            d.cmd_reset_query_pool(cb, occlusion, 0, 16);
            d.cmd_reset_query_pool(cb, timestamps, 0, 4);
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, timestamps, 0);
            issued.query("timestamp");
            // Labels as an engine places them: the frame, each pass, each subpass.
            gpu.begin_label(cb, c"frame");
            gpu.begin_label(cb, c"all views");
            gpu.begin_pass(cb, pass_whole, fb_whole);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, p_whole);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::GRAPHICS,
                layout,
                0,
                &sets[..1],
                &[],
            );
            d.cmd_begin_query(cb, occlusion, 0, vk::QueryControlFlags::empty());
            gpu.place(cb, layout, 0.0, 0.0, 0.5);
            d.cmd_draw(cb, 3, 1, 0, 0);
            issued.draw("CmdDraw", 0b1111);
            issued.labelled("frame/all views", labels);
            d.cmd_end_query(cb, occlusion, 0);
            issued.query("occlusion");
            if options.extra_draw && frame == 1 {
                d.cmd_draw(cb, 6, 2, 0, 0);
                issued.draw("CmdDraw", 0b1111);
                issued.labelled("frame/all views", labels);
            }
            gpu.place(cb, layout, 0.3, 0.3, 0.2);
            d.cmd_draw(cb, 3, 2, 0, 0);
            issued.draw("CmdDraw", 0b1111);
            issued.labelled("frame/all views", labels);
            d.cmd_end_render_pass(cb);
            gpu.end_label(cb);
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, timestamps, 1);
            issued.query("timestamp");
            gpu.begin_label(cb, c"view pairs");
            gpu.begin_pass(cb, pass_split, fb_split);
            for (s, mask) in split.iter().enumerate() {
                if s > 0 {
                    d.cmd_next_subpass(cb, vk::SubpassContents::INLINE);
                }
                gpu.begin_label(cb, SUBPASS_LABELS[s]);
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, p_split[s]);
                d.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::GRAPHICS,
                    layout,
                    0,
                    &sets[s % 2..s % 2 + 1],
                    &[],
                );
                // Subpasses 0 and 1 take slots 4-5 and 6-7 (two views each), 2 and 3
                // take 8-9 and 10-11.
                let slot = 4 + 2 * s as u32;
                d.cmd_begin_query(cb, occlusion, slot, vk::QueryControlFlags::empty());
                gpu.place(cb, layout, -0.3, 0.0, 0.4);
                d.cmd_draw(cb, 3, 1, 0, 0);
                issued.draw("CmdDraw", *mask);
                issued.labelled(SUBPASS_PATHS[s], labels);
                d.cmd_end_query(cb, occlusion, slot);
                issued.query("occlusion");
                gpu.end_label(cb);
            }
            d.cmd_end_render_pass(cb);
            gpu.end_label(cb);
            gpu.end_label(cb);
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, timestamps, 2);
            issued.query("timestamp");
        })?;
    }
    Ok(())
}

/// Bytes of `u32` words.
fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// What a single-subpass scene draws with: the layout, its two descriptor sets, the
/// render pass, its framebuffer and one pipeline of `stages`.
struct SinglePass {
    layout: vk::PipelineLayout,
    sets: Vec<vk::DescriptorSet>,
    pass: vk::RenderPass,
    framebuffer: vk::Framebuffer,
    pipeline: vk::Pipeline,
}

fn single_pass(
    gpu: &mut Gpu,
    shaders: &[(vk::ShaderStageFlags, &[u8])],
    topology: vk::PrimitiveTopology,
) -> Result<SinglePass, Error> {
    let [a, b] = tints(gpu)?;
    let (layout, sets) = gpu.layout(&[&a, &b])?;
    let stages = shaders
        .iter()
        .map(|(stage, spirv)| Ok((*stage, gpu.module(spirv)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let (pass, framebuffer) = gpu.render_pass(&[0])?;
    let pipeline = gpu.pipeline(layout, pass, 0, &stages, topology)?;
    Ok(SinglePass {
        layout,
        sets,
        pass,
        framebuffer,
        pipeline,
    })
}

/// The vertex and colour shaders most scenes draw with.
const COLORED: [(vk::ShaderStageFlags, &[u8]); 2] = [
    (vk::ShaderStageFlags::VERTEX, TRI_VERT),
    (vk::ShaderStageFlags::FRAGMENT, COLOR_FRAG),
];

fn indirect(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let SinglePass {
        layout,
        sets,
        pass,
        framebuffer: fb,
        pipeline,
    } = single_pass(gpu, &COLORED, vk::PrimitiveTopology::TRIANGLE_LIST)?;
    // Four VkDrawIndirectCommand (vertex count, instances, first vertex, first instance)
    // then four VkDrawIndexedIndirectCommand (index count, instances, first index,
    // vertex offset, first instance).
    let mut args = Vec::new();
    for i in 0..4u32 {
        args.extend([3 * (i + 1), 1 + i, 0, 0]);
    }
    for i in 0..4u32 {
        args.extend([3 * (i + 1), 2, 0, 0, 0]);
    }
    let args = gpu.buffer(vk::BufferUsageFlags::INDIRECT_BUFFER, &words(&args))?;
    let count = gpu.buffer(vk::BufferUsageFlags::INDIRECT_BUFFER, &words(&[3, 2]))?;
    let indices: Vec<u32> = (0..12).collect();
    let index = gpu.buffer(vk::BufferUsageFlags::INDEX_BUFFER, &words(&indices))?;
    let d = gpu.device.clone();
    let indexed_at = 4 * 16;
    for frame in 0..frames {
        gpu.frame(frame, |cb| unsafe {
            gpu.begin_pass(cb, pass, fb);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::GRAPHICS,
                layout,
                0,
                &sets[..1],
                &[],
            );
            d.cmd_bind_index_buffer(cb, index.buffer, 0, vk::IndexType::UINT32);
            gpu.place(cb, layout, 0.0, 0.0, 0.3);
            d.cmd_draw_indirect(cb, args.buffer, 0, 4, 16);
            issued.draw("CmdDrawIndirect", 0);
            d.cmd_draw_indexed_indirect(cb, args.buffer, indexed_at, 4, 20);
            issued.draw("CmdDrawIndexedIndirect", 0);
            d.cmd_draw_indirect_count(cb, args.buffer, 0, count.buffer, 0, 4, 16);
            issued.draw("CmdDrawIndirectCount", 0);
            d.cmd_draw_indexed_indirect_count(cb, args.buffer, indexed_at, count.buffer, 4, 4, 20);
            issued.draw("CmdDrawIndexedIndirectCount", 0);
            d.cmd_end_render_pass(cb);
        })?;
    }
    Ok(())
}

/// Two overlapping triangles a frame, four samples a pixel, depth and stencil tested
/// and written, in a version-2 render pass whose colour, depth and stencil are
/// resolved at its end (`VkSubpassDescriptionDepthStencilResolve`) and whose depth
/// and stencil are in layouts of their own (the separate depth/stencil layouts of
/// Vulkan 1.2).
fn resolve(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let [a, b] = tints(gpu)?;
    let (layout, sets) = gpu.layout(&[&a, &b])?;
    let stages = COLORED
        .iter()
        .map(|(stage, spirv)| Ok((*stage, gpu.module(spirv)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let (pass, fb) = gpu.resolving_pass()?;
    let pipeline = gpu.resolving_pipeline(layout, pass, &stages)?;
    let d = gpu.device.clone();
    for frame in 0..frames {
        gpu.frame(frame, |cb| unsafe {
            gpu.begin_resolving_pass(cb, pass, fb);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
            for (i, set) in sets.iter().enumerate() {
                d.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::GRAPHICS,
                    layout,
                    0,
                    std::slice::from_ref(set),
                    &[],
                );
                let at = 0.2 * i as f32;
                gpu.place(cb, layout, at - 0.1, at - 0.1, 0.6);
                d.cmd_draw(cb, 3, 1, 0, 0);
                issued.draw("CmdDraw", 0);
            }
            d.cmd_end_render_pass(cb);
        })?;
    }
    Ok(())
}

/// Two render passes a frame: [`Gpu::chained_pass`], its first subpass drawing a tint
/// and the next two each blending a tint with what the one before drew, read as an
/// input attachment; then a multiview pass whose first subpass draws view 0 and whose
/// second views 0 and 1, view 1 cleared where the second begins (Mesa's common code
/// clears it in a rendering of its own). Two draws in each subpass.
fn subpasses(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let [tint, other] = tints(gpu)?;
    let (chained, chained_fb, [a, b]) = gpu.chained_pass()?;
    // Each subpass's set: the attachment it reads (none in the first).
    let (input_layout, input_sets) = gpu.input_layout(&tint, &[b, a, b])?;
    let vert = gpu.module(TRI_VERT)?;
    let colored = [
        (vk::ShaderStageFlags::VERTEX, vert),
        (vk::ShaderStageFlags::FRAGMENT, gpu.module(COLOR_FRAG)?),
    ];
    let blending = [
        (vk::ShaderStageFlags::VERTEX, vert),
        (
            vk::ShaderStageFlags::FRAGMENT,
            gpu.module(BLEND_INPUT_FRAG)?,
        ),
    ];
    let tri = vk::PrimitiveTopology::TRIANGLE_LIST;
    let chained_pipelines = [
        gpu.pipeline(input_layout, chained, 0, &colored, tri)?,
        gpu.pipeline(input_layout, chained, 1, &blending, tri)?,
        gpu.pipeline(input_layout, chained, 2, &blending, tri)?,
    ];
    let growing_masks = [0b01, 0b11];
    let (growing, growing_fb) = gpu.render_pass(&growing_masks)?;
    let (layout, sets) = gpu.layout(&[&tint, &other])?;
    let growing_pipelines = [
        gpu.pipeline(layout, growing, 0, &colored, tri)?,
        gpu.pipeline(layout, growing, 1, &colored, tri)?,
    ];
    let d = gpu.device.clone();
    let subpass = |cb,
                   i: usize,
                   pipeline,
                   layout,
                   set: &vk::DescriptorSet,
                   mask,
                   issued: &mut Issued| unsafe {
        if i > 0 {
            d.cmd_next_subpass(cb, vk::SubpassContents::INLINE);
        }
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
        d.cmd_bind_descriptor_sets(
            cb,
            vk::PipelineBindPoint::GRAPHICS,
            layout,
            0,
            std::slice::from_ref(set),
            &[],
        );
        for k in 0..2 {
            let at = 0.3 * i as f32 - 0.3 + 0.2 * k as f32;
            gpu.place(cb, layout, at, at, 0.5);
            d.cmd_draw(cb, 3, 1, 0, 0);
            issued.draw("CmdDraw", mask);
        }
    };
    for frame in 0..frames {
        gpu.frame(frame, |cb| unsafe {
            gpu.begin_chained_pass(cb, chained, chained_fb);
            for (i, (pipeline, set)) in chained_pipelines.iter().zip(&input_sets).enumerate() {
                subpass(cb, i, *pipeline, input_layout, set, 0, issued);
            }
            d.cmd_end_render_pass(cb);
            gpu.begin_pass(cb, growing, growing_fb);
            for (i, (pipeline, mask)) in growing_pipelines.iter().zip(growing_masks).enumerate() {
                subpass(cb, i, *pipeline, layout, &sets[i], mask, issued);
            }
            d.cmd_end_render_pass(cb);
        })?;
    }
    Ok(())
}

/// Draws per frame in the storm.
pub const STORM_DRAWS: u32 = 10_000;

fn storm(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let SinglePass {
        layout,
        sets,
        pass,
        framebuffer: fb,
        pipeline,
    } = single_pass(gpu, &COLORED, vk::PrimitiveTopology::TRIANGLE_LIST)?;
    let d = gpu.device.clone();
    for frame in 0..frames {
        gpu.frame(frame, |cb| unsafe {
            gpu.begin_pass(cb, pass, fb);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
            for i in 0..STORM_DRAWS {
                let set = (i % 2) as usize;
                d.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::GRAPHICS,
                    layout,
                    0,
                    &sets[set..set + 1],
                    &[],
                );
                let x = (i % 100) as f32 / 50.0 - 1.0;
                let y = (i / 100) as f32 / 50.0 - 1.0;
                gpu.place(cb, layout, x, y, 0.01);
                d.cmd_draw(cb, 3, 1, 0, 0);
                issued.draw("CmdDraw", 0);
            }
            d.cmd_end_render_pass(cb);
        })?;
    }
    Ok(())
}

fn libraries(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let tri = vk::PrimitiveTopology::TRIANGLE_LIST;
    let SinglePass {
        layout,
        sets,
        pass,
        framebuffer: fb,
        pipeline: whole,
    } = single_pass(gpu, &COLORED, tri)?;
    let stages = COLORED
        .iter()
        .map(|(stage, spirv)| Ok((*stage, gpu.module(spirv)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let linked = gpu.linked_pipeline(layout, pass, 0, &stages, tri)?;
    let d = gpu.device.clone();
    for frame in 0..frames {
        let pipeline = if frame % 2 == 0 { whole } else { linked };
        gpu.frame(frame, |cb| unsafe {
            gpu.begin_pass(cb, pass, fb);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::GRAPHICS,
                layout,
                0,
                &sets[..1],
                &[],
            );
            gpu.place(cb, layout, 0.0, 0.0, 0.5);
            d.cmd_draw(cb, 3, 1, 0, 0);
            issued.draw("CmdDraw", 0);
            d.cmd_end_render_pass(cb);
        })?;
    }
    Ok(())
}

/// The `mapped` scene's persistently mapped vertex memory, and what it writes a frame.
pub const MAPPED_BYTES: u64 = 512 << 20;
/// Bytes the `mapped` scene writes a frame.
pub const MAPPED_WRITE: u64 = 1 << 20;
const MAPPED_DRAWS: u64 = 16;

fn mapped(
    gpu: &mut Gpu,
    frames: u64,
    options: SceneOptions,
    issued: &mut Issued,
) -> Result<(), Error> {
    let SinglePass {
        layout,
        sets,
        pass,
        framebuffer: fb,
        pipeline,
    } = single_pass(gpu, &COLORED, vk::PrimitiveTopology::TRIANGLE_LIST)?;
    let vertices = gpu.mapped_buffer(vk::BufferUsageFlags::VERTEX_BUFFER, MAPPED_BYTES)?;
    if options.own_fault_handler {
        own_fault_handler::install();
    }
    let d = gpu.device.clone();
    if options.big_write {
        let words = (BIG_WRITE / 4) as usize;
        // SAFETY: the last BIG_WRITE bytes of the mapping, which stays mapped.
        let region = unsafe {
            std::slice::from_raw_parts_mut(
                vertices
                    .mapped
                    .add((MAPPED_BYTES - BIG_WRITE) as usize)
                    .cast::<u32>(),
                words,
            )
        };
        for (i, w) in region.iter_mut().enumerate() {
            *w = big_write_word(i as u64);
        }
    }
    let slices = MAPPED_BYTES / MAPPED_WRITE;
    for frame in 0..frames {
        // This frame's MiB: the frame number in every word, as a program streaming
        // vertex data would rewrite a region each frame.
        let at = frame % slices * MAPPED_WRITE;
        let words = MAPPED_WRITE as usize / 4;
        // SAFETY: `at + MAPPED_WRITE` is within the mapping, which stays mapped.
        let region = unsafe {
            std::slice::from_raw_parts_mut(vertices.mapped.add(at as usize).cast::<u32>(), words)
        };
        for (i, w) in region.iter_mut().enumerate() {
            *w = (frame as u32) ^ (i as u32);
        }
        gpu.frame(frame, |cb| unsafe {
            gpu.begin_pass(cb, pass, fb);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::GRAPHICS,
                layout,
                0,
                &sets[..1],
                &[],
            );
            for i in 0..MAPPED_DRAWS {
                let offset = at + i * (MAPPED_WRITE / MAPPED_DRAWS);
                d.cmd_bind_vertex_buffers(cb, 0, &[vertices.buffer], &[offset]);
                gpu.place(cb, layout, i as f32 / 8.0 - 1.0, 0.0, 0.1);
                d.cmd_draw(cb, 3, 1, 0, 0);
                issued.draw("CmdDraw", 0);
            }
            d.cmd_end_render_pass(cb);
        })?;
    }
    if options.own_fault_handler {
        let taken = own_fault_handler::fault_once()?;
        eprintln!("scene: its own SIGSEGV handler took {taken} fault(s)");
    }
    Ok(())
}

fn tessellation(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let shaders: [(vk::ShaderStageFlags, &[u8]); 5] = [
        (vk::ShaderStageFlags::VERTEX, TRI_VERT),
        (vk::ShaderStageFlags::TESSELLATION_CONTROL, PATCH_TESC),
        (vk::ShaderStageFlags::TESSELLATION_EVALUATION, PATCH_TESE),
        (vk::ShaderStageFlags::GEOMETRY, SHRINK_GEOM),
        (vk::ShaderStageFlags::FRAGMENT, COLOR_FRAG),
    ];
    let SinglePass {
        layout,
        sets,
        pass,
        framebuffer: fb,
        pipeline,
    } = single_pass(gpu, &shaders, vk::PrimitiveTopology::PATCH_LIST)?;
    let d = gpu.device.clone();
    for frame in 0..frames {
        gpu.frame(frame, |cb| unsafe {
            gpu.begin_pass(cb, pass, fb);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::GRAPHICS,
                layout,
                0,
                &sets[1..2],
                &[],
            );
            for i in 0..4 {
                gpu.place(cb, layout, -0.5 + 0.3 * i as f32, 0.0, 0.3);
                d.cmd_draw(cb, 3, 1, 0, 0);
                issued.draw("CmdDraw", 0);
            }
            d.cmd_end_render_pass(cb);
        })?;
    }
    Ok(())
}

/// Recording threads in the `threads` scene, and draws each records a frame.
pub const THREADS: usize = 4;
/// Draws each thread records a frame.
pub const THREAD_DRAWS: u32 = 2_500;

/// One command buffer per pool, each recorded on a thread of its own, all at once:
/// `begin` makes thread `t`'s command buffer (in a render pass), then the thread binds
/// the pipeline and its tint and records `draws` placed triangles, and `end` ends it.
fn record_on_threads(
    gpu: &Gpu,
    pools: &[vk::CommandPool],
    pass: &SinglePass,
    draws: u32,
    begin: impl Fn(vk::CommandPool) -> Result<vk::CommandBuffer, Error> + Sync,
    end: impl Fn(vk::CommandBuffer) + Sync,
) -> Result<Vec<vk::CommandBuffer>, Error> {
    let (begin, end) = (&begin, &end);
    let cbs = std::thread::scope(|s| {
        let workers: Vec<_> = pools
            .iter()
            .enumerate()
            .map(|(t, pool)| {
                s.spawn(move || -> Result<vk::CommandBuffer, String> {
                    let d = &gpu.device;
                    let cb = begin(*pool).map_err(|e| e.to_string())?;
                    unsafe {
                        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pass.pipeline);
                        d.cmd_bind_descriptor_sets(
                            cb,
                            vk::PipelineBindPoint::GRAPHICS,
                            pass.layout,
                            0,
                            &pass.sets[t % 2..t % 2 + 1],
                            &[],
                        );
                        for i in 0..draws {
                            let x = (i % 50) as f32 / 25.0 - 1.0;
                            gpu.place(cb, pass.layout, x, t as f32 / 2.0 - 1.0, 0.02);
                            d.cmd_draw(cb, 3, 1, 0, 0);
                        }
                        end(cb);
                        d.end_command_buffer(cb).map_err(|e| e.to_string())?;
                    }
                    Ok(cb)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .map_err(|_| "a recording thread panicked".to_string())?
            })
            .collect::<Result<Vec<_>, String>>()
    })?;
    Ok(cbs)
}

fn threads(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let single = single_pass(gpu, &COLORED, vk::PrimitiveTopology::TRIANGLE_LIST)?;
    let pools: Vec<vk::CommandPool> = (0..THREADS)
        .map(|_| gpu.command_pool())
        .collect::<Result<_, _>>()?;
    let gpu: &Gpu = gpu;
    for frame in 0..frames {
        // Each thread records into its own pool's command buffer, all at once.
        let cbs = record_on_threads(
            gpu,
            &pools,
            &single,
            THREAD_DRAWS,
            |pool| {
                let cb = gpu.begin(pool)?;
                gpu.begin_pass(cb, single.pass, single.framebuffer);
                Ok(cb)
            },
            |cb| unsafe { gpu.device.cmd_end_render_pass(cb) },
        )?;
        for _ in 0..THREADS as u32 * THREAD_DRAWS {
            issued.draw("CmdDraw", 0);
        }
        gpu.submit(frame, &cbs)?;
        for (pool, cb) in pools.iter().zip(&cbs) {
            unsafe { gpu.device.free_command_buffers(*pool, &[*cb]) };
        }
    }
    for pool in pools {
        unsafe { gpu.device.destroy_command_pool(pool, None) };
    }
    Ok(())
}

/// Threads recording secondary command buffers at once, one render pass of a primary
/// executing them all: how engines spread a frame's draws over threads.
fn secondary(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let single = single_pass(gpu, &COLORED, vk::PrimitiveTopology::TRIANGLE_LIST)?;
    let (pass, framebuffer) = (single.pass, single.framebuffer);
    let pools: Vec<vk::CommandPool> = (0..THREADS)
        .map(|_| gpu.command_pool())
        .collect::<Result<_, _>>()?;
    let primary_pool = gpu.command_pool()?;
    let gpu: &Gpu = gpu;
    for frame in 0..frames {
        let secondaries = record_on_threads(
            gpu,
            &pools,
            &single,
            SECONDARY_DRAWS,
            |pool| gpu.begin_secondary(pool, pass, framebuffer),
            |_| {},
        )?;
        for _ in 0..THREADS as u32 * SECONDARY_DRAWS {
            issued.draw("CmdDraw", 0);
        }
        let primary = gpu.begin(primary_pool)?;
        unsafe {
            gpu.begin_pass_with(
                primary,
                pass,
                framebuffer,
                vk::SubpassContents::SECONDARY_COMMAND_BUFFERS,
            );
            gpu.device.cmd_execute_commands(primary, &secondaries);
            gpu.device.cmd_end_render_pass(primary);
            gpu.device.end_command_buffer(primary)?;
        }
        gpu.submit(frame, &[primary])?;
        unsafe {
            gpu.device.free_command_buffers(primary_pool, &[primary]);
            for (pool, cb) in pools.iter().zip(&secondaries) {
                gpu.device.free_command_buffers(*pool, &[*cb]);
            }
        }
    }
    for pool in pools.into_iter().chain([primary_pool]) {
        unsafe { gpu.device.destroy_command_pool(pool, None) };
    }
    Ok(())
}

/// Draws each thread of the secondary scene records.
const SECONDARY_DRAWS: u32 = 250;

/// Words in the compute scene's storage buffers.
const COMPUTE_WORDS: u32 = 1024;

fn compute(gpu: &mut Gpu, frames: u64, issued: &mut Issued) -> Result<(), Error> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST;
    let data: Vec<u32> = (0..COMPUTE_WORDS).collect();
    let storage = gpu.buffer(usage, &words(&data))?;
    let copy = gpu.buffer(usage, &words(&vec![0; 2 * COMPUTE_WORDS as usize]))?;
    // One VkDispatchIndirectCommand: 3 × 1 × 1 workgroups.
    let indirect = gpu.buffer(vk::BufferUsageFlags::INDIRECT_BUFFER, &words(&[3, 1, 1]))?;
    let (layout, set, pipeline) = gpu.compute_pipeline(DOUBLE_COMP, &storage)?;
    let event = gpu.event()?;
    let d = gpu.device.clone();
    let barrier = |cb, src, dst, dst_access| unsafe {
        let memory = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(dst_access)];
        d.cmd_pipeline_barrier(
            cb,
            src,
            dst,
            vk::DependencyFlags::empty(),
            &memory,
            &[],
            &[],
        );
    };
    let cs = vk::PipelineStageFlags::COMPUTE_SHADER;
    let rw = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
    let readback = gpu.buffer(usage, &vec![0; (SIZE * SIZE * 4) as usize])?;
    let transfer_barrier = |cb| unsafe {
        let memory = [vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE)];
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &memory,
            &[],
            &[],
        );
    };
    let color = gpu.color;
    let whole = vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: vk::REMAINING_ARRAY_LAYERS,
    };
    for frame in 0..frames {
        gpu.frame(frame, |cb| unsafe {
            let to_transfer = [vk::ImageMemoryBarrier::default()
                .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .old_layout(vk::ImageLayout::UNDEFINED)
                .new_layout(vk::ImageLayout::GENERAL)
                .image(color)
                .subresource_range(whole)];
            d.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &to_transfer,
            );
            let clear = vk::ClearColorValue {
                float32: [0.25, 0.5, 0.75, 1.0],
            };
            d.cmd_clear_color_image(cb, color, vk::ImageLayout::GENERAL, &clear, &[whole]);
            issued.draw("CmdClearColorImage", 0);
            transfer_barrier(cb);
            // Layer 0 blitted into layer 1 at half size, read back into a buffer,
            // and the buffer written into layer 2.
            let layer = |l: u32| vk::ImageSubresourceLayers {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                mip_level: 0,
                base_array_layer: l,
                layer_count: 1,
            };
            let corner = |v: i32| vk::Offset3D { x: v, y: v, z: 1 };
            let blit = vk::ImageBlit {
                src_subresource: layer(0),
                src_offsets: [vk::Offset3D::default(), corner(SIZE as i32)],
                dst_subresource: layer(1),
                dst_offsets: [vk::Offset3D::default(), corner(SIZE as i32 / 2)],
            };
            d.cmd_blit_image(
                cb,
                color,
                vk::ImageLayout::GENERAL,
                color,
                vk::ImageLayout::GENERAL,
                &[blit],
                vk::Filter::LINEAR,
            );
            issued.draw("CmdBlitImage", 0);
            transfer_barrier(cb);
            let whole_layer = |l: u32| vk::BufferImageCopy {
                buffer_offset: 0,
                buffer_row_length: 0,
                buffer_image_height: 0,
                image_subresource: layer(l),
                image_offset: vk::Offset3D::default(),
                image_extent: vk::Extent3D {
                    width: SIZE,
                    height: SIZE,
                    depth: 1,
                },
            };
            d.cmd_copy_image_to_buffer(
                cb,
                color,
                vk::ImageLayout::GENERAL,
                readback.buffer,
                &[whole_layer(1)],
            );
            issued.draw("CmdCopyImageToBuffer", 0);
            transfer_barrier(cb);
            d.cmd_copy_buffer_to_image(
                cb,
                readback.buffer,
                color,
                vk::ImageLayout::GENERAL,
                &[whole_layer(2)],
            );
            issued.draw("CmdCopyBufferToImage", 0);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            for groups in [16, 8, 4] {
                d.cmd_dispatch(cb, groups, 1, 1);
                issued.draw("CmdDispatch", 0);
                barrier(cb, cs, cs, rw);
            }
            d.cmd_dispatch_indirect(cb, indirect.buffer, 0);
            issued.draw("CmdDispatchIndirect", 0);
            // The copy waits for the dispatches through an event.
            d.cmd_reset_event(cb, event, vk::PipelineStageFlags::TOP_OF_PIPE);
            d.cmd_set_event(cb, event, cs);
            let memory = [vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::TRANSFER_READ)];
            d.cmd_wait_events(
                cb,
                &[event],
                cs,
                vk::PipelineStageFlags::TRANSFER,
                &memory,
                &[],
                &[],
            );
            let region = vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: u64::from(COMPUTE_WORDS) * 4,
            };
            d.cmd_copy_buffer(cb, storage.buffer, copy.buffer, &[region]);
            issued.draw("CmdCopyBuffer", 0);
            d.cmd_fill_buffer(
                cb,
                copy.buffer,
                u64::from(COMPUTE_WORDS) * 4,
                vk::WHOLE_SIZE,
                0xdead_beef,
            );
            issued.draw("CmdFillBuffer", 0);
        })?;
    }
    Ok(())
}
