//! The driver's SPIR-V passes, run on lavapipe: a shader lowered by a pass renders what
//! the original renders.
//!
//! ViewIndex: the scenes' multiview fragment shader, rendered once under a 4-view render
//! pass, against its lowered form rendered once per layer without multiview with the
//! root table (set 7, binding 0) holding that layer's view index: the four layers agree
//! byte for byte.
//!
//! Geometry vertex counting: a GS that tries to emit six vertices with a maximum of
//! three, counted, renders what the same GS emitting only its three renders.
//!
//! Pass-through TCS: patches tessellated with the synthesized TCS, its levels in push
//! constants, make as many primitives (a pipeline-statistics query of clipping
//! invocations) as with a hand-written TCS of the same levels, and one a patch at
//! levels 1.
//!
//! UBO access chains: a fragment shader summing a uniform array in a loop (dynamic
//! indices) and scaling by a constant-indexed member renders the same image after the
//! pass.
//!
//! Needs a Vulkan device (lavapipe here) and glslangValidator; without them the tests
//! say so and pass, unless MACROSCOPE_REQUIRE_VULKAN is set (scripts/test sets it).

use ash::vk;
use benches::scenes::{self, Gpu, LAYERS, SIZE};
use driver::spirv::view_index::{lower, Outcome, ROOT_TABLE_BINDING, ROOT_TABLE_SET};
use driver::spirv::{load, words};

const LAYER_BYTES: u64 = (SIZE * SIZE * 4) as u64;

fn gpu() -> Option<Gpu> {
    match Gpu::new(c"macroscope-shader-passes") {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            assert!(
                std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
                "no Vulkan device: {e}"
            );
            eprintln!("skipping: no Vulkan device ({e})");
            None
        }
    }
}

/// Copies `layers` layers of the colour target from `first` into `dst` at `offset`.
unsafe fn read_back(
    gpu: &Gpu,
    cb: vk::CommandBuffer,
    first: u32,
    layers: u32,
    dst: vk::Buffer,
    offset: u64,
) {
    let d = &gpu.device;
    let range = vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: first,
        layer_count: layers,
    };
    let barrier = vk::ImageMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_READ)
        .old_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        .new_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
        .image(gpu.color)
        .subresource_range(range);
    d.cmd_pipeline_barrier(
        cb,
        vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
        vk::PipelineStageFlags::TRANSFER,
        vk::DependencyFlags::empty(),
        &[],
        &[],
        &[barrier],
    );
    let region = vk::BufferImageCopy::default()
        .buffer_offset(offset)
        .image_subresource(vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: first,
            layer_count: layers,
        })
        .image_extent(vk::Extent3D {
            width: SIZE,
            height: SIZE,
            depth: 1,
        });
    d.cmd_copy_image_to_buffer(
        cb,
        gpu.color,
        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
        dst,
        &[region],
    );
}

#[test]
fn lowered_view_index_renders_what_multiview_renders() {
    let Some(mut gpu) = gpu() else { return };
    let tint_bytes: Vec<u8> = [0.9f32, 0.6, 0.3, 1.0]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let tint = gpu
        .buffer(vk::BufferUsageFlags::UNIFORM_BUFFER, &tint_bytes)
        .unwrap();
    let original_out = gpu
        .buffer(
            vk::BufferUsageFlags::TRANSFER_DST,
            &vec![0; (LAYER_BYTES * u64::from(LAYERS)) as usize],
        )
        .unwrap();
    let lowered_out = gpu
        .buffer(
            vk::BufferUsageFlags::TRANSFER_DST,
            &vec![0; (LAYER_BYTES * u64::from(LAYERS)) as usize],
        )
        .unwrap();
    let vert = gpu.module(scenes::TRI_VERT).unwrap();

    // The original: one draw under view mask 0b1111.
    let (layout, sets) = gpu.layout(&[&tint]).unwrap();
    let frag = gpu.module(scenes::VIEW_FRAG).unwrap();
    let stages = [
        (vk::ShaderStageFlags::VERTEX, vert),
        (vk::ShaderStageFlags::FRAGMENT, frag),
    ];
    let (multiview, mv_fb) = gpu.render_pass(&[0b1111]).unwrap();
    let pipeline = gpu
        .pipeline(
            layout,
            multiview,
            0,
            &stages,
            vk::PrimitiveTopology::TRIANGLE_LIST,
        )
        .unwrap();
    let d = gpu.device.clone();
    gpu.frame(0, |cb| unsafe {
        gpu.begin_pass(cb, multiview, mv_fb);
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
        d.cmd_bind_descriptor_sets(
            cb,
            vk::PipelineBindPoint::GRAPHICS,
            layout,
            0,
            &sets[..1],
            &[],
        );
        gpu.place(cb, layout, 0.0, 0.0, 0.8);
        d.cmd_draw(cb, 3, 1, 0, 0);
        d.cmd_end_render_pass(cb);
        read_back(&gpu, cb, 0, LAYERS, original_out.buffer, 0);
    })
    .unwrap();

    // The lowered shader: no multiview; the view index from the root table.
    let words_in: Vec<u32> = scenes::VIEW_FRAG
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let mut module = load(&words_in).unwrap();
    assert_eq!(lower(&mut module), Outcome::Lowered(1));
    let lowered: Vec<u8> = words(&module)
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let lowered_frag = gpu.module(&lowered).unwrap();
    let root = gpu
        .buffer(vk::BufferUsageFlags::UNIFORM_BUFFER, &[0; 256])
        .unwrap();
    let (root_layout, root_sets) = unsafe { root_table_layout(&gpu, &tint, &root) };
    let (single, _) = gpu.render_pass(&[0]).unwrap();
    let stages = [
        (vk::ShaderStageFlags::VERTEX, vert),
        (vk::ShaderStageFlags::FRAGMENT, lowered_frag),
    ];
    let lowered_pipeline = gpu
        .pipeline(
            root_layout,
            single,
            0,
            &stages,
            vk::PrimitiveTopology::TRIANGLE_LIST,
        )
        .unwrap();
    for layer in 0..LAYERS {
        let (view, fb) = unsafe { layer_framebuffer(&gpu, single, layer) };
        // SAFETY: the mapping holds 256 bytes; the GPU is idle between frames.
        unsafe {
            std::ptr::copy_nonoverlapping(layer.to_le_bytes().as_ptr(), root.mapped.add(12), 4)
        };
        gpu.frame(u64::from(layer) + 1, |cb| unsafe {
            gpu.begin_pass(cb, single, fb);
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, lowered_pipeline);
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::GRAPHICS,
                root_layout,
                0,
                &root_sets[..1],
                &[],
            );
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::GRAPHICS,
                root_layout,
                ROOT_TABLE_SET,
                &root_sets[1..],
                &[],
            );
            gpu.place(cb, root_layout, 0.0, 0.0, 0.8);
            d.cmd_draw(cb, 3, 1, 0, 0);
            d.cmd_end_render_pass(cb);
            read_back(
                &gpu,
                cb,
                layer,
                1,
                lowered_out.buffer,
                u64::from(layer) * LAYER_BYTES,
            );
        })
        .unwrap();
        unsafe {
            d.destroy_framebuffer(fb, None);
            d.destroy_image_view(view, None);
        }
    }

    let bytes = |b: &scenes::Buffer| unsafe {
        std::slice::from_raw_parts(b.mapped, (LAYER_BYTES * u64::from(LAYERS)) as usize).to_vec()
    };
    let (a, b) = (bytes(&original_out), bytes(&lowered_out));
    let layer =
        |v: &[u8], l: u64| v[(l * LAYER_BYTES) as usize..((l + 1) * LAYER_BYTES) as usize].to_vec();
    for l in 0..u64::from(LAYERS) {
        assert!(layer(&a, l) == layer(&b, l), "layer {l} differs");
    }
    // The layers differ from each other: the view index reached the shader.
    assert!(layer(&a, 0) != layer(&a, 3));
    unsafe {
        d.destroy_pipeline_layout(root_layout, None);
    }
}

/// A pipeline layout with the tint at set 0, empty sets 1 to 6 and the root table at
/// set 7; descriptor sets for set 0 and set 7.
unsafe fn root_table_layout(
    gpu: &Gpu,
    tint: &scenes::Buffer,
    root: &scenes::Buffer,
) -> (vk::PipelineLayout, Vec<vk::DescriptorSet>) {
    let d = &gpu.device;
    let ubo = [vk::DescriptorSetLayoutBinding::default()
        .binding(ROOT_TABLE_BINDING)
        .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
        .descriptor_count(1)
        .stage_flags(vk::ShaderStageFlags::FRAGMENT)];
    let with_ubo = d
        .create_descriptor_set_layout(
            &vk::DescriptorSetLayoutCreateInfo::default().bindings(&ubo),
            None,
        )
        .unwrap();
    let empty = d
        .create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default(), None)
        .unwrap();
    let mut set_layouts = vec![with_ubo];
    set_layouts.extend(std::iter::repeat_n(empty, ROOT_TABLE_SET as usize - 1));
    set_layouts.push(with_ubo);
    let ranges = [vk::PushConstantRange {
        stage_flags: vk::ShaderStageFlags::VERTEX,
        offset: 0,
        size: 16,
    }];
    let layout = d
        .create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default()
                .set_layouts(&set_layouts)
                .push_constant_ranges(&ranges),
            None,
        )
        .unwrap();
    let sizes = [vk::DescriptorPoolSize {
        ty: vk::DescriptorType::UNIFORM_BUFFER,
        descriptor_count: 2,
    }];
    let pool = d
        .create_descriptor_pool(
            &vk::DescriptorPoolCreateInfo::default()
                .max_sets(2)
                .pool_sizes(&sizes),
            None,
        )
        .unwrap();
    let sets = d
        .allocate_descriptor_sets(
            &vk::DescriptorSetAllocateInfo::default()
                .descriptor_pool(pool)
                .set_layouts(&[with_ubo, with_ubo]),
        )
        .unwrap();
    for (set, buffer) in sets.iter().zip([tint.buffer, root.buffer]) {
        let info = [vk::DescriptorBufferInfo {
            buffer,
            offset: 0,
            range: vk::WHOLE_SIZE,
        }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(*set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
            .buffer_info(&info);
        d.update_descriptor_sets(&[write], &[]);
    }
    (layout, sets)
}

/// A framebuffer of `pass` over layer `layer` of the colour target alone.
unsafe fn layer_framebuffer(
    gpu: &Gpu,
    pass: vk::RenderPass,
    layer: u32,
) -> (vk::ImageView, vk::Framebuffer) {
    let d = &gpu.device;
    let view = d
        .create_image_view(
            &vk::ImageViewCreateInfo::default()
                .image(gpu.color)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(vk::Format::R8G8B8A8_UNORM)
                .subresource_range(vk::ImageSubresourceRange {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    base_mip_level: 0,
                    level_count: 1,
                    base_array_layer: layer,
                    layer_count: 1,
                }),
            None,
        )
        .unwrap();
    let views = [view];
    let fb = d
        .create_framebuffer(
            &vk::FramebufferCreateInfo::default()
                .render_pass(pass)
                .attachments(&views)
                .width(SIZE)
                .height(SIZE)
                .layers(1),
            None,
        )
        .unwrap();
    (view, fb)
}

/// SPIR-V bytes compiled from `driver/tests/shaders/NAME` with glslangValidator.
fn compile(name: &str) -> Option<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.spv");
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../driver/tests/shaders")
        .join(name);
    let run = std::process::Command::new("glslangValidator")
        .args(["-V", "--target-env", "vulkan1.1", "-o"])
        .arg(&out)
        .arg(&source)
        .output();
    match run {
        Ok(o) if o.status.success() => Some(std::fs::read(out).unwrap()),
        other => {
            assert!(
                std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
                "glslangValidator: {other:?}"
            );
            eprintln!("skipping: glslangValidator is missing");
            None
        }
    }
}

#[test]
fn a_counted_geometry_shader_emits_exactly_its_maximum() {
    use driver::spirv::gs_count;
    let (Some(overflow), Some(max)) = (compile("fan_overflow.geom"), compile("fan_max.geom"))
    else {
        return;
    };
    let Some(mut gpu) = gpu() else { return };
    let words_in: Vec<u32> = overflow
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let mut module = load(&words_in).unwrap();
    assert!(matches!(
        gs_count::lower(&mut module),
        gs_count::Outcome::Counted { emits: 1, .. }
    ));
    let counted: Vec<u8> = words(&module)
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let reference = render_point(&mut gpu, &max);
    let lowered = render_point(&mut gpu, &counted);
    assert!(
        reference.iter().any(|b| *b != 0 && *b != 255),
        "the reference drew nothing"
    );
    assert!(
        lowered == reference,
        "the counted shader drew something else"
    );
}

/// Primitives reaching the clipper when `patches` patches go through `tcs` (with push
/// constants `levels`, inner[2] then outer[4]) and the tessellation scene's TES.
fn primitives(gpu: &mut Gpu, tcs: &[u8], levels: [f32; 6], patches: u32) -> u64 {
    let d = gpu.device.clone();
    let ranges = [vk::PushConstantRange {
        stage_flags: vk::ShaderStageFlags::TESSELLATION_CONTROL,
        offset: 0,
        size: 24,
    }];
    let layout = unsafe {
        d.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges),
            None,
        )
    }
    .unwrap();
    let tese = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/patch.tese.spv"),
    )
    .unwrap();
    let stages = [
        (
            vk::ShaderStageFlags::VERTEX,
            gpu.module(&compile("patch.vert").unwrap()).unwrap(),
        ),
        (
            vk::ShaderStageFlags::TESSELLATION_CONTROL,
            gpu.module(tcs).unwrap(),
        ),
        (
            vk::ShaderStageFlags::TESSELLATION_EVALUATION,
            gpu.module(&tese).unwrap(),
        ),
        (
            vk::ShaderStageFlags::FRAGMENT,
            gpu.module(&compile("white.frag").unwrap()).unwrap(),
        ),
    ];
    let (pass, fb) = gpu.render_pass(&[0]).unwrap();
    let pipeline = gpu
        .pipeline(layout, pass, 0, &stages, vk::PrimitiveTopology::PATCH_LIST)
        .unwrap();
    let pool = unsafe {
        d.create_query_pool(
            &vk::QueryPoolCreateInfo::default()
                .query_type(vk::QueryType::PIPELINE_STATISTICS)
                .query_count(1)
                .pipeline_statistics(vk::QueryPipelineStatisticFlags::CLIPPING_INVOCATIONS),
            None,
        )
    }
    .unwrap();
    let bytes: Vec<u8> = levels.iter().flat_map(|f| f.to_le_bytes()).collect();
    gpu.frame(0, |cb| unsafe {
        d.cmd_reset_query_pool(cb, pool, 0, 1);
        gpu.begin_pass(cb, pass, fb);
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
        d.cmd_push_constants(
            cb,
            layout,
            vk::ShaderStageFlags::TESSELLATION_CONTROL,
            0,
            &bytes,
        );
        d.cmd_begin_query(cb, pool, 0, vk::QueryControlFlags::empty());
        d.cmd_draw(cb, 3 * patches, 1, 0, 0);
        d.cmd_end_query(cb, pool, 0);
        d.cmd_end_render_pass(cb);
    })
    .unwrap();
    let mut count = [0u64; 1];
    unsafe {
        d.get_query_pool_results(
            pool,
            0,
            &mut count,
            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
        )
        .unwrap();
        d.destroy_query_pool(pool, None);
        d.destroy_pipeline_layout(layout, None);
    }
    count[0]
}

#[test]
fn the_pass_through_tcs_tessellates_as_its_push_constants_say() {
    use driver::spirv::passthrough_tcs::synthesize;
    let Some(reference) = compile("levels.tesc") else {
        return;
    };
    let Some(mut gpu) = gpu() else { return };
    let synthesized: Vec<u8> = words(&synthesize(3, &[]).unwrap())
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    // Levels 1 everywhere: one triangle a patch.
    assert_eq!(primitives(&mut gpu, &synthesized, [1.0; 6], 5), 5);
    // The hand-written TCS's levels, through push constants: as many primitives.
    let levels = [3.0, 1.0, 2.0, 3.0, 4.0, 1.0];
    let expected = primitives(&mut gpu, &reference, [0.0; 6], 2);
    assert!(expected > 2, "{expected}");
    assert_eq!(primitives(&mut gpu, &synthesized, levels, 2), expected);
}

#[test]
fn ubo_chains_render_what_the_original_renders() {
    use driver::spirv::ubo_chains;
    let Some(original) = compile("dynamic_ubo.frag") else {
        return;
    };
    let Some(mut gpu) = gpu() else { return };
    // colors[4] (std140: 16 bytes apart) then scale at byte 64.
    let mut ubo: Vec<f32> = vec![
        0.1, 0.0, 0.05, 0.25, 0.0, 0.2, 0.0, 0.25, 0.05, 0.0, 0.3, 0.25, 0.1, 0.1, 0.0, 0.25,
    ];
    ubo.extend([1.5, 0.0, 0.0, 0.0]);
    let bytes: Vec<u8> = ubo.iter().flat_map(|f| f.to_le_bytes()).collect();
    let words_in: Vec<u32> = original
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let mut module = load(&words_in).unwrap();
    assert!(matches!(
        ubo_chains::lower(&mut module),
        ubo_chains::Outcome::Lowered(2)
    ));
    let lowered: Vec<u8> = words(&module)
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let triangle = |gpu: &mut Gpu, frag: &[u8]| {
        let shaders = [(vk::ShaderStageFlags::FRAGMENT, frag)];
        render(
            gpu,
            &shaders,
            &bytes,
            vk::PrimitiveTopology::TRIANGLE_LIST,
            3,
            0.8,
        )
    };
    let before = triangle(&mut gpu, &original);
    let after = triangle(&mut gpu, &lowered);
    assert!(before.iter().any(|b| *b != 0 && *b != 255), "nothing drawn");
    assert!(before == after, "the lowered shader renders differently");
}

/// Draws `vertices` vertices of `topology` once through `shaders` (the scenes' vertex
/// shader first, its triangle scaled by `scale`) with `ubo` at set 0, and reads back
/// layer 0.
fn render(
    gpu: &mut Gpu,
    shaders: &[(vk::ShaderStageFlags, &[u8])],
    ubo: &[u8],
    topology: vk::PrimitiveTopology,
    vertices: u32,
    scale: f32,
) -> Vec<u8> {
    let data = gpu
        .buffer(vk::BufferUsageFlags::UNIFORM_BUFFER, ubo)
        .unwrap();
    let out = gpu
        .buffer(
            vk::BufferUsageFlags::TRANSFER_DST,
            &vec![0; LAYER_BYTES as usize],
        )
        .unwrap();
    let (layout, sets) = gpu.layout(&[&data]).unwrap();
    let mut stages = vec![(
        vk::ShaderStageFlags::VERTEX,
        gpu.module(scenes::TRI_VERT).unwrap(),
    )];
    for (stage, spirv) in shaders {
        stages.push((*stage, gpu.module(spirv).unwrap()));
    }
    let (pass, fb) = gpu.render_pass(&[0]).unwrap();
    let pipeline = gpu.pipeline(layout, pass, 0, &stages, topology).unwrap();
    let d = gpu.device.clone();
    gpu.frame(0, |cb| unsafe {
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
        gpu.place(cb, layout, 0.0, 0.0, scale);
        d.cmd_draw(cb, vertices, 1, 0, 0);
        d.cmd_end_render_pass(cb);
        read_back(gpu, cb, 0, 1, out.buffer, 0);
    })
    .unwrap();
    unsafe { std::slice::from_raw_parts(out.mapped, LAYER_BYTES as usize).to_vec() }
}

/// One point through `geometry` (the scenes' colour shader after it).
fn render_point(gpu: &mut Gpu, geometry: &[u8]) -> Vec<u8> {
    let tint: Vec<u8> = [0.2f32, 0.8, 0.4, 1.0]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    // Vertex 0 of the scenes' triangle sits at (-1, -1) × scale + offset: the centre.
    let shaders = [
        (vk::ShaderStageFlags::GEOMETRY, geometry),
        (vk::ShaderStageFlags::FRAGMENT, scenes::COLOR_FRAG),
    ];
    render(
        gpu,
        &shaders,
        &tint,
        vk::PrimitiveTopology::POINT_LIST,
        1,
        0.0,
    )
}
