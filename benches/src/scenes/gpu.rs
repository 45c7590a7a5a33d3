//! The Vulkan a scene needs: an instance and device, an offscreen colour target with
//! four layers (one per view), host-visible buffers, shader modules, pipelines, and
//! submitting a frame.

use std::ffi::CStr;

use ash::vk;

/// `VK_EXT_frame_boundary`: where a driver or a capture layer offers it, each frame's
/// last submit carries a `VkFrameBoundaryEXT`, so a capture knows where frames end
/// without a swapchain.
const FRAME_BOUNDARY: &CStr = c"VK_EXT_frame_boundary";
/// `VK_EXT_graphics_pipeline_library` and the extension it needs: pipelines linked from
/// separately made parts, where the device offers them.
const PIPELINE_LIBRARY: [&CStr; 2] = [
    c"VK_KHR_pipeline_library",
    c"VK_EXT_graphics_pipeline_library",
];

/// Side of the square colour target.
pub const SIZE: u32 = 64;
/// Layers of the colour target: views 0 to 3.
pub const LAYERS: u32 = 4;
/// Samples a pixel of the resolve scene's attachments.
const RESOLVED_SAMPLES: vk::SampleCountFlags = vk::SampleCountFlags::TYPE_4;

/// Why a scene could not run.
pub type Error = Box<dyn std::error::Error>;

/// A device and what every scene renders with.
pub struct Gpu {
    _entry: ash::Entry,
    pub instance: ash::Instance,
    pub device: ash::Device,
    pub queue: vk::Queue,
    /// The graphics queue's family.
    pub family: u32,
    pub pool: vk::CommandPool,
    memory_props: vk::PhysicalDeviceMemoryProperties,
    /// Whether frames are marked with `VK_EXT_frame_boundary`.
    pub frame_boundary: bool,
    /// Whether graphics pipeline libraries are enabled.
    pub pipeline_libraries: bool,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period: f32,
    pub color: vk::Image,
    pub color_view: vk::ImageView,
    /// Debug labels and object names (`VK_EXT_debug_utils`), where the loader offers
    /// the extension.
    debug_utils: Option<ash::ext::debug_utils::Device>,
    /// Every object to destroy, in reverse order of making.
    garbage: Vec<Garbage>,
}

enum Garbage {
    Buffer(vk::Buffer),
    Memory(vk::DeviceMemory),
    Image(vk::Image),
    View(vk::ImageView),
    Module(vk::ShaderModule),
    Pipeline(vk::Pipeline),
    Layout(vk::PipelineLayout),
    SetLayout(vk::DescriptorSetLayout),
    DescriptorPool(vk::DescriptorPool),
    RenderPass(vk::RenderPass),
    Framebuffer(vk::Framebuffer),
    QueryPool(vk::QueryPool),
    Event(vk::Event),
}

/// What [`Gpu::make_pipeline`] makes.
struct PipelineMaking<'a> {
    stages: &'a [(vk::ShaderStageFlags, vk::ShaderModule)],
    topology: vk::PrimitiveTopology,
    /// The parts of a library; `None` for a pipeline.
    library: Option<vk::GraphicsPipelineLibraryFlagsEXT>,
    /// The libraries a pipeline is linked from.
    libraries: &'a [vk::Pipeline],
    /// Samples per pixel, and whether it tests and writes depth and stencil.
    samples: vk::SampleCountFlags,
    depth_stencil: bool,
}

/// A host-visible buffer, mapped.
pub struct Buffer {
    pub buffer: vk::Buffer,
    pub mapped: *mut u8,
    pub size: u64,
}

impl Gpu {
    /// An instance, the first device with a graphics queue, and the colour target.
    pub fn new(name: &CStr) -> Result<Gpu, Error> {
        Gpu::asking(name, false)
    }

    /// [`Gpu::new`], its device asking for one feature more (`samplerAnisotropy`) where
    /// `more`: a device unlike the others a process makes.
    pub fn asking(name: &CStr, more: bool) -> Result<Gpu, Error> {
        // SAFETY: loading the system Vulkan loader, as every Vulkan program does.
        let entry = unsafe { ash::Entry::load()? };
        let app = vk::ApplicationInfo::default()
            .application_name(name)
            .engine_name(c"macroscope-scenes")
            .api_version(vk::API_VERSION_1_3);
        // Labels are how an engine marks its passes: ask for them where offered.
        let offered = unsafe { entry.enumerate_instance_extension_properties(None)? };
        let labels = offered
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::debug_utils::NAME));
        let instance_extensions = if labels {
            vec![ash::ext::debug_utils::NAME.as_ptr()]
        } else {
            Vec::new()
        };
        let instance = unsafe {
            entry.create_instance(
                &vk::InstanceCreateInfo::default()
                    .application_info(&app)
                    .enabled_extension_names(&instance_extensions),
                None,
            )?
        };
        let physical = unsafe { instance.enumerate_physical_devices()? }
            .into_iter()
            .next()
            .ok_or("no Vulkan device")?;
        let family = unsafe { instance.get_physical_device_queue_family_properties(physical) }
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS))
            .ok_or("no graphics queue")? as u32;
        let extensions = unsafe { instance.enumerate_device_extension_properties(physical)? };
        let offered = |name: &CStr| {
            extensions
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
        };
        let frame_boundary = offered(FRAME_BOUNDARY);
        let pipeline_libraries = PIPELINE_LIBRARY.iter().all(|e| offered(e));
        let mut enabled = Vec::new();
        if frame_boundary {
            enabled.push(FRAME_BOUNDARY.as_ptr());
        }
        if pipeline_libraries {
            enabled.extend(PIPELINE_LIBRARY.iter().map(|e| e.as_ptr()));
        }
        let mut libraries = vk::PhysicalDeviceGraphicsPipelineLibraryFeaturesEXT::default()
            .graphics_pipeline_library(true);
        let features = vk::PhysicalDeviceFeatures::default()
            .tessellation_shader(true)
            .geometry_shader(true)
            .multi_draw_indirect(true)
            .pipeline_statistics_query(true)
            .sampler_anisotropy(more);
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default()
            .multiview(true)
            .multiview_geometry_shader(true)
            .multiview_tessellation_shader(true);
        // Depth and stencil in layouts of their own (the resolve scene), where offered.
        let mut offered12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut offered_features = vk::PhysicalDeviceFeatures2::default().push_next(&mut offered12);
        unsafe { instance.get_physical_device_features2(physical, &mut offered_features) };
        let separate_layouts = offered12.separate_depth_stencil_layouts == vk::TRUE;
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
            .draw_indirect_count(true)
            .separate_depth_stencil_layouts(separate_layouts);
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&enabled)
            .enabled_features(&features)
            .push_next(&mut v11)
            .push_next(&mut v12);
        if pipeline_libraries {
            info = info.push_next(&mut libraries);
        }
        let device = unsafe { instance.create_device(physical, &info, None)? };
        let queue = unsafe { device.get_device_queue(family, 0) };
        let pool = unsafe {
            device.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )?
        };
        let props = unsafe { instance.get_physical_device_properties(physical) };
        let memory_props = unsafe { instance.get_physical_device_memory_properties(physical) };
        let debug_utils = labels.then(|| ash::ext::debug_utils::Device::new(&instance, &device));
        let mut gpu = Gpu {
            _entry: entry,
            instance,
            device,
            queue,
            family,
            pool,
            memory_props,
            frame_boundary,
            pipeline_libraries,
            timestamp_period: props.limits.timestamp_period,
            color: vk::Image::null(),
            color_view: vk::ImageView::null(),
            debug_utils,
            garbage: Vec::new(),
        };
        gpu.make_color_target()?;
        Ok(gpu)
    }

    /// Opens a debug-label region in `cb` (nothing where labels are not offered).
    pub fn begin_label(&self, cb: vk::CommandBuffer, name: &CStr) {
        if let Some(d) = &self.debug_utils {
            let label = vk::DebugUtilsLabelEXT::default().label_name(name);
            unsafe { d.cmd_begin_debug_utils_label(cb, &label) };
        }
    }

    /// Closes the innermost label region in `cb`.
    pub fn end_label(&self, cb: vk::CommandBuffer) {
        if let Some(d) = &self.debug_utils {
            unsafe { d.cmd_end_debug_utils_label(cb) };
        }
    }

    /// Names `object` for tools (`vkSetDebugUtilsObjectNameEXT`).
    pub fn name<H: vk::Handle>(&self, object: H, name: &CStr) -> Result<(), Error> {
        if let Some(d) = &self.debug_utils {
            let info = vk::DebugUtilsObjectNameInfoEXT::default()
                .object_handle(object)
                .object_name(name);
            unsafe { d.set_debug_utils_object_name(&info)? };
        }
        Ok(())
    }

    /// Whether the scene's labels are recorded (the loader offered them).
    pub fn labels(&self) -> bool {
        self.debug_utils.is_some()
    }

    fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Result<u32, Error> {
        (0..self.memory_props.memory_type_count)
            .find(|&i| {
                bits & (1 << i) != 0
                    && self.memory_props.memory_types[i as usize]
                        .property_flags
                        .contains(flags)
            })
            .ok_or_else(|| "no suitable memory type".into())
    }

    fn make_color_target(&mut self) -> Result<(), Error> {
        let image = self.bound_image(
            vk::Format::R8G8B8A8_UNORM,
            vk::SampleCountFlags::TYPE_1,
            LAYERS,
            vk::ImageUsageFlags::COLOR_ATTACHMENT
                | vk::ImageUsageFlags::TRANSFER_SRC
                | vk::ImageUsageFlags::TRANSFER_DST,
        )?;
        let d = &self.device;
        let view = unsafe {
            d.create_image_view(
                &vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(vk::ImageViewType::TYPE_2D_ARRAY)
                    .format(vk::Format::R8G8B8A8_UNORM)
                    .subresource_range(vk::ImageSubresourceRange {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        base_mip_level: 0,
                        level_count: 1,
                        base_array_layer: 0,
                        layer_count: LAYERS,
                    }),
                None,
            )?
        };
        self.color = image;
        self.color_view = view;
        self.garbage.push(Garbage::View(view));
        Ok(())
    }

    /// A mapped host-visible buffer of `size` bytes for `usage`, filled with `data`.
    pub fn buffer(&mut self, usage: vk::BufferUsageFlags, data: &[u8]) -> Result<Buffer, Error> {
        let buffer = self.mapped_buffer(usage, data.len().max(16) as u64)?;
        // SAFETY: the mapping holds at least `size` bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buffer.mapped, data.len()) };
        Ok(buffer)
    }

    /// A host-visible, coherent buffer of `size` bytes, mapped whole for the rest of
    /// the scene (its contents start as the driver gives them).
    pub fn mapped_buffer(
        &mut self,
        usage: vk::BufferUsageFlags,
        size: u64,
    ) -> Result<Buffer, Error> {
        let d = &self.device;
        let buffer = unsafe {
            d.create_buffer(
                &vk::BufferCreateInfo::default().size(size).usage(usage),
                None,
            )?
        };
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        let flags = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let memory = unsafe {
            d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(self.memory_type(req.memory_type_bits, flags)?),
                None,
            )?
        };
        unsafe { d.bind_buffer_memory(buffer, memory, 0)? };
        let mapped =
            unsafe { d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())? }
                as *mut u8;
        self.garbage
            .extend([Garbage::Memory(memory), Garbage::Buffer(buffer)]);
        Ok(Buffer {
            buffer,
            mapped,
            size,
        })
    }

    /// A shader module from SPIR-V bytes.
    pub fn module(&mut self, spirv: &[u8]) -> Result<vk::ShaderModule, Error> {
        let words = ash::util::read_spv(&mut std::io::Cursor::new(spirv))?;
        let module = unsafe {
            self.device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)?
        };
        self.garbage.push(Garbage::Module(module));
        Ok(module)
    }

    /// A render pass over the colour target whose subpasses have these view masks, one
    /// after another, and its framebuffer.
    pub fn render_pass(
        &mut self,
        view_masks: &[u32],
    ) -> Result<(vk::RenderPass, vk::Framebuffer), Error> {
        let attachment = [vk::AttachmentDescription::default()
            .format(vk::Format::R8G8B8A8_UNORM)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)];
        let color_ref = [vk::AttachmentReference {
            attachment: 0,
            layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        }];
        let subpasses: Vec<_> = view_masks
            .iter()
            .map(|_| {
                vk::SubpassDescription::default()
                    .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
                    .color_attachments(&color_ref)
            })
            .collect();
        let dependencies: Vec<_> = (1..view_masks.len() as u32)
            .map(|i| {
                vk::SubpassDependency::default()
                    .src_subpass(i - 1)
                    .dst_subpass(i)
                    .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
                    .dst_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
                    .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
                    .dst_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
            })
            .collect();
        let multiview = view_masks.iter().any(|m| *m != 0);
        let mut mv = vk::RenderPassMultiviewCreateInfo::default().view_masks(view_masks);
        let mut info = vk::RenderPassCreateInfo::default()
            .attachments(&attachment)
            .subpasses(&subpasses)
            .dependencies(&dependencies);
        if multiview {
            info = info.push_next(&mut mv);
        }
        let pass = unsafe { self.device.create_render_pass(&info, None)? };
        self.garbage.push(Garbage::RenderPass(pass));
        let layers = if multiview { 1 } else { LAYERS };
        let framebuffer = self.framebuffer(pass, &[self.color_view], layers)?;
        Ok((pass, framebuffer))
    }

    /// The pipeline layout every scene uses: one uniform buffer at set 0 binding 0 and
    /// 16 bytes of vertex push constants; with two descriptor sets pointing at `tints`.
    pub fn layout(
        &mut self,
        tints: &[&Buffer],
    ) -> Result<(vk::PipelineLayout, Vec<vk::DescriptorSet>), Error> {
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::FRAGMENT)];
        let (layout, sets) = self.layout_and_sets(&binding, tints.len() as u32)?;
        let d = &self.device;
        for (set, tint) in sets.iter().zip(tints) {
            let info = [vk::DescriptorBufferInfo {
                buffer: tint.buffer,
                offset: 0,
                range: vk::WHOLE_SIZE,
            }];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(*set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                .buffer_info(&info);
            unsafe { d.update_descriptor_sets(&[write], &[]) };
        }
        Ok((layout, sets))
    }

    /// A pipeline layout of one descriptor set laid out as `bindings` and 16 bytes of
    /// vertex push constants, and `count` sets of that layout from a pool of their own.
    fn layout_and_sets(
        &mut self,
        bindings: &[vk::DescriptorSetLayoutBinding<'_>],
        count: u32,
    ) -> Result<(vk::PipelineLayout, Vec<vk::DescriptorSet>), Error> {
        let d = &self.device;
        let set_layout = unsafe {
            d.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(bindings),
                None,
            )?
        };
        let ranges = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::VERTEX,
            offset: 0,
            size: 16,
        }];
        let set_layouts = [set_layout];
        let layout = unsafe {
            d.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&set_layouts)
                    .push_constant_ranges(&ranges),
                None,
            )?
        };
        let sizes: Vec<_> = bindings
            .iter()
            .map(|b| vk::DescriptorPoolSize {
                ty: b.descriptor_type,
                descriptor_count: count * b.descriptor_count,
            })
            .collect();
        let pool = unsafe {
            d.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(count)
                    .pool_sizes(&sizes),
                None,
            )?
        };
        let layouts = vec![set_layout; count as usize];
        let sets = unsafe {
            d.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )?
        };
        self.garbage.extend([
            Garbage::DescriptorPool(pool),
            Garbage::SetLayout(set_layout),
            Garbage::Layout(layout),
        ]);
        Ok((layout, sets))
    }

    /// A compute pipeline running `spirv` on one storage buffer (set 0, binding 0):
    /// its layout, the descriptor set pointing at `storage`, and the pipeline.
    pub fn compute_pipeline(
        &mut self,
        spirv: &[u8],
        storage: &Buffer,
    ) -> Result<(vk::PipelineLayout, vk::DescriptorSet, vk::Pipeline), Error> {
        let module = self.module(spirv)?;
        let d = &self.device;
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        let set_layout = unsafe {
            d.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                None,
            )?
        };
        let set_layouts = [set_layout];
        let layout = unsafe {
            d.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
                None,
            )?
        };
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: 1,
        }];
        let pool = unsafe {
            d.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )?
        };
        let set = unsafe {
            d.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&set_layouts),
            )?[0]
        };
        let info = [vk::DescriptorBufferInfo {
            buffer: storage.buffer,
            offset: 0,
            range: vk::WHOLE_SIZE,
        }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&info);
        unsafe { d.update_descriptor_sets(&[write], &[]) };
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout);
        let pipeline = unsafe {
            d.create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)?[0]
        };
        self.garbage.extend([
            Garbage::DescriptorPool(pool),
            Garbage::SetLayout(set_layout),
            Garbage::Layout(layout),
            Garbage::Pipeline(pipeline),
        ]);
        Ok((layout, set, pipeline))
    }

    /// An event, unset.
    pub fn event(&mut self) -> Result<vk::Event, Error> {
        let event = unsafe {
            self.device
                .create_event(&vk::EventCreateInfo::default(), None)?
        };
        self.garbage.push(Garbage::Event(event));
        Ok(event)
    }

    /// A graphics pipeline for subpass `subpass` of `pass` with these stages.
    pub fn pipeline(
        &mut self,
        layout: vk::PipelineLayout,
        pass: vk::RenderPass,
        subpass: u32,
        stages: &[(vk::ShaderStageFlags, vk::ShaderModule)],
        topology: vk::PrimitiveTopology,
    ) -> Result<vk::Pipeline, Error> {
        let whole = PipelineMaking {
            stages,
            topology,
            library: None,
            libraries: &[],
            samples: vk::SampleCountFlags::TYPE_1,
            depth_stencil: false,
        };
        self.make_pipeline(layout, pass, subpass, whole)
    }

    /// The same pipeline as [`Gpu::pipeline`] makes, linked from three libraries made
    /// apart (`VK_EXT_graphics_pipeline_library`): vertex input; the shaders (with
    /// rasterization and multisampling); the fragment output.
    pub fn linked_pipeline(
        &mut self,
        layout: vk::PipelineLayout,
        pass: vk::RenderPass,
        subpass: u32,
        stages: &[(vk::ShaderStageFlags, vk::ShaderModule)],
        topology: vk::PrimitiveTopology,
    ) -> Result<vk::Pipeline, Error> {
        if !self.pipeline_libraries {
            return Err("the device offers no VK_EXT_graphics_pipeline_library".into());
        }
        use vk::GraphicsPipelineLibraryFlagsEXT as Part;
        let mut libraries = Vec::new();
        for (part, stages) in [
            (Part::VERTEX_INPUT_INTERFACE, &[][..]),
            (
                Part::PRE_RASTERIZATION_SHADERS | Part::FRAGMENT_SHADER,
                stages,
            ),
            (Part::FRAGMENT_OUTPUT_INTERFACE, &[][..]),
        ] {
            let library = PipelineMaking {
                stages,
                topology,
                library: Some(part),
                libraries: &[],
                samples: vk::SampleCountFlags::TYPE_1,
                depth_stencil: false,
            };
            libraries.push(self.make_pipeline(layout, pass, subpass, library)?);
        }
        let linked = PipelineMaking {
            stages: &[],
            topology,
            library: None,
            libraries: &libraries,
            samples: vk::SampleCountFlags::TYPE_1,
            depth_stencil: false,
        };
        self.make_pipeline(layout, pass, subpass, linked)
    }

    /// A pipeline, a library of one or more parts of one, or one linked from
    /// libraries, as `making` says; every state structure is given (those of parts the
    /// pipeline does not define are ignored).
    fn make_pipeline(
        &mut self,
        layout: vk::PipelineLayout,
        pass: vk::RenderPass,
        subpass: u32,
        making: PipelineMaking<'_>,
    ) -> Result<vk::Pipeline, Error> {
        let PipelineMaking {
            stages,
            topology,
            library,
            libraries,
            samples,
            depth_stencil,
        } = making;
        let stage_infos: Vec<_> = stages
            .iter()
            .map(|(stage, module)| {
                vk::PipelineShaderStageCreateInfo::default()
                    .stage(*stage)
                    .module(*module)
                    .name(c"main")
            })
            .collect();
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(topology);
        let tessellation =
            vk::PipelineTessellationStateCreateInfo::default().patch_control_points(3);
        let viewports = [vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: SIZE as f32,
            height: SIZE as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }];
        let scissors = [vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent: vk::Extent2D {
                width: SIZE,
                height: SIZE,
            },
        }];
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewports(&viewports)
            .scissors(&scissors);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .line_width(1.0);
        let multisample =
            vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(samples);
        // Depth tested and written; stencil set to the reference where drawn.
        let stencil = vk::StencilOpState::default()
            .compare_op(vk::CompareOp::ALWAYS)
            .pass_op(vk::StencilOp::REPLACE)
            .compare_mask(0xff)
            .write_mask(0xff)
            .reference(1);
        let tests = vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(true)
            .depth_write_enable(true)
            .depth_compare_op(vk::CompareOp::LESS_OR_EQUAL)
            .stencil_test_enable(true)
            .front(stencil)
            .back(stencil);
        let blend_attachment = [vk::PipelineColorBlendAttachmentState::default()
            .color_write_mask(vk::ColorComponentFlags::RGBA)];
        let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachment);
        let mut info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stage_infos)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .color_blend_state(&blend)
            .layout(layout)
            .render_pass(pass)
            .subpass(subpass);
        if topology == vk::PrimitiveTopology::PATCH_LIST {
            info = info.tessellation_state(&tessellation);
        }
        if depth_stencil {
            info = info.depth_stencil_state(&tests);
        }
        let mut parts = vk::GraphicsPipelineLibraryCreateInfoEXT::default();
        if let Some(part) = library {
            parts = parts.flags(part);
            info = info
                .flags(vk::PipelineCreateFlags::LIBRARY_KHR)
                .push_next(&mut parts);
        }
        let mut linked = vk::PipelineLibraryCreateInfoKHR::default().libraries(libraries);
        if !libraries.is_empty() {
            info = info.push_next(&mut linked);
        }
        let pipeline = unsafe {
            self.device
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
                .map_err(|(_, e)| e)?[0]
        };
        self.garbage.push(Garbage::Pipeline(pipeline));
        Ok(pipeline)
    }

    /// A pipeline for [`Gpu::resolving_pass`]: four samples, depth and stencil tested
    /// and written.
    pub fn resolving_pipeline(
        &mut self,
        layout: vk::PipelineLayout,
        pass: vk::RenderPass,
        stages: &[(vk::ShaderStageFlags, vk::ShaderModule)],
    ) -> Result<vk::Pipeline, Error> {
        let making = PipelineMaking {
            stages,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            library: None,
            libraries: &[],
            samples: RESOLVED_SAMPLES,
            depth_stencil: true,
        };
        self.make_pipeline(layout, pass, 0, making)
    }

    /// A single-layer 2D image of `format` with `samples` per pixel, its memory, and a
    /// view of it showing `aspects`.
    fn image(
        &mut self,
        format: vk::Format,
        samples: vk::SampleCountFlags,
        usage: vk::ImageUsageFlags,
        aspects: vk::ImageAspectFlags,
    ) -> Result<vk::ImageView, Error> {
        let image = self.bound_image(format, samples, 1, usage)?;
        self.view(image, format, aspects, 0)
    }

    /// A `SIZE`×`SIZE` 2D image of `format`, `samples` per pixel and `layers` layers,
    /// bound to memory of its own.
    fn bound_image(
        &mut self,
        format: vk::Format,
        samples: vk::SampleCountFlags,
        layers: u32,
        usage: vk::ImageUsageFlags,
    ) -> Result<vk::Image, Error> {
        let d = &self.device;
        let image = unsafe {
            d.create_image(
                &vk::ImageCreateInfo::default()
                    .image_type(vk::ImageType::TYPE_2D)
                    .format(format)
                    .extent(vk::Extent3D {
                        width: SIZE,
                        height: SIZE,
                        depth: 1,
                    })
                    .mip_levels(1)
                    .array_layers(layers)
                    .samples(samples)
                    .usage(usage),
                None,
            )?
        };
        let req = unsafe { d.get_image_memory_requirements(image) };
        let memory = unsafe {
            d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(
                        self.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty())?,
                    ),
                None,
            )?
        };
        unsafe { d.bind_image_memory(image, memory, 0)? };
        self.garbage
            .extend([Garbage::Memory(memory), Garbage::Image(image)]);
        Ok(image)
    }

    /// A 2D view of layer `layer` of `image`, `aspects`.
    fn view(
        &mut self,
        image: vk::Image,
        format: vk::Format,
        aspects: vk::ImageAspectFlags,
        layer: u32,
    ) -> Result<vk::ImageView, Error> {
        let view = unsafe {
            self.device.create_image_view(
                &vk::ImageViewCreateInfo::default()
                    .image(image)
                    .view_type(vk::ImageViewType::TYPE_2D)
                    .format(format)
                    .subresource_range(vk::ImageSubresourceRange {
                        aspect_mask: aspects,
                        base_mip_level: 0,
                        level_count: 1,
                        base_array_layer: layer,
                        layer_count: 1,
                    }),
                None,
            )?
        };
        self.garbage.push(Garbage::View(view));
        Ok(view)
    }

    /// A version-2 render pass (`vkCreateRenderPass2`) drawing four samples a pixel
    /// into a colour and a depth/stencil attachment, both resolved at its end: the
    /// colour into the colour target's first layer, depth and stencil (sample zero)
    /// into a single-sampled depth/stencil image. Depth and stencil are in layouts of
    /// their own (`VkAttachmentDescriptionStencilLayout`,
    /// `VkAttachmentReferenceStencilLayout`); the stencil aspect ends read-only. And its
    /// framebuffer.
    pub fn resolving_pass(&mut self) -> Result<(vk::RenderPass, vk::Framebuffer), Error> {
        use vk::ImageLayout as L;
        let color_format = vk::Format::R8G8B8A8_UNORM;
        let ds_format = vk::Format::D32_SFLOAT_S8_UINT;
        let ds_aspects = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
        let attachment = |format, samples, load, initial, last| {
            vk::AttachmentDescription2::default()
                .format(format)
                .samples(samples)
                .load_op(load)
                .store_op(vk::AttachmentStoreOp::STORE)
                .stencil_load_op(load)
                .stencil_store_op(vk::AttachmentStoreOp::STORE)
                .initial_layout(initial)
                .final_layout(last)
        };
        let mut ms_stencil = vk::AttachmentDescriptionStencilLayout::default()
            .stencil_initial_layout(L::UNDEFINED)
            .stencil_final_layout(L::STENCIL_READ_ONLY_OPTIMAL);
        let mut resolved_stencil = vk::AttachmentDescriptionStencilLayout::default()
            .stencil_initial_layout(L::UNDEFINED)
            .stencil_final_layout(L::STENCIL_ATTACHMENT_OPTIMAL);
        let clear = vk::AttachmentLoadOp::CLEAR;
        let dont_care = vk::AttachmentLoadOp::DONT_CARE;
        let attachments = [
            attachment(
                color_format,
                RESOLVED_SAMPLES,
                clear,
                L::UNDEFINED,
                L::COLOR_ATTACHMENT_OPTIMAL,
            ),
            attachment(
                ds_format,
                RESOLVED_SAMPLES,
                clear,
                L::UNDEFINED,
                L::DEPTH_ATTACHMENT_OPTIMAL,
            )
            .push_next(&mut ms_stencil),
            attachment(
                color_format,
                vk::SampleCountFlags::TYPE_1,
                dont_care,
                L::UNDEFINED,
                L::COLOR_ATTACHMENT_OPTIMAL,
            ),
            attachment(
                ds_format,
                vk::SampleCountFlags::TYPE_1,
                dont_care,
                L::UNDEFINED,
                L::DEPTH_ATTACHMENT_OPTIMAL,
            )
            .push_next(&mut resolved_stencil),
        ];
        let reference = |attachment, layout| {
            vk::AttachmentReference2::default()
                .attachment(attachment)
                .layout(layout)
        };
        let mut ds_stencil = vk::AttachmentReferenceStencilLayout::default()
            .stencil_layout(L::STENCIL_ATTACHMENT_OPTIMAL);
        let mut resolve_stencil = vk::AttachmentReferenceStencilLayout::default()
            .stencil_layout(L::STENCIL_ATTACHMENT_OPTIMAL);
        let colors = [reference(0, L::COLOR_ATTACHMENT_OPTIMAL)];
        let color_resolves = [reference(2, L::COLOR_ATTACHMENT_OPTIMAL)];
        let depth = reference(1, L::DEPTH_ATTACHMENT_OPTIMAL).push_next(&mut ds_stencil);
        let depth_resolve =
            reference(3, L::DEPTH_ATTACHMENT_OPTIMAL).push_next(&mut resolve_stencil);
        let mut resolve = vk::SubpassDescriptionDepthStencilResolve::default()
            .depth_resolve_mode(vk::ResolveModeFlags::SAMPLE_ZERO)
            .stencil_resolve_mode(vk::ResolveModeFlags::SAMPLE_ZERO)
            .depth_stencil_resolve_attachment(&depth_resolve);
        let subpasses = [vk::SubpassDescription2::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&colors)
            .resolve_attachments(&color_resolves)
            .depth_stencil_attachment(&depth)
            .push_next(&mut resolve)];
        let info = vk::RenderPassCreateInfo2::default()
            .attachments(&attachments)
            .subpasses(&subpasses);
        let pass = unsafe { self.device.create_render_pass2(&info, None)? };
        self.garbage.push(Garbage::RenderPass(pass));
        let attach = vk::ImageUsageFlags::TRANSFER_SRC;
        let views = [
            self.image(
                color_format,
                RESOLVED_SAMPLES,
                attach | vk::ImageUsageFlags::COLOR_ATTACHMENT,
                vk::ImageAspectFlags::COLOR,
            )?,
            self.image(
                ds_format,
                RESOLVED_SAMPLES,
                attach | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
                ds_aspects,
            )?,
            self.view(self.color, color_format, vk::ImageAspectFlags::COLOR, 0)?,
            self.image(
                ds_format,
                vk::SampleCountFlags::TYPE_1,
                attach | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
                ds_aspects,
            )?,
        ];
        let framebuffer = self.framebuffer(pass, &views, 1)?;
        Ok((pass, framebuffer))
    }

    /// A version-1 render pass of three subpasses chained through input attachments,
    /// as a deferred renderer's: subpass 0 draws into image A, subpass 1 into image B
    /// reading A, subpass 2 into the colour target's first layer reading B. Each
    /// attachment is cleared where the pass first uses it; A is not stored at the end
    /// (it is, for subpass 1, after subpass 0). Its framebuffer, and the views of A and
    /// B.
    pub fn chained_pass(
        &mut self,
    ) -> Result<(vk::RenderPass, vk::Framebuffer, [vk::ImageView; 2]), Error> {
        use vk::ImageLayout as L;
        let format = vk::Format::R8G8B8A8_UNORM;
        let attachment = |store, last| {
            vk::AttachmentDescription::default()
                .format(format)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(store)
                .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                .initial_layout(L::UNDEFINED)
                .final_layout(last)
        };
        let attachments = [
            attachment(
                vk::AttachmentStoreOp::DONT_CARE,
                L::SHADER_READ_ONLY_OPTIMAL,
            ),
            attachment(vk::AttachmentStoreOp::STORE, L::SHADER_READ_ONLY_OPTIMAL),
            attachment(vk::AttachmentStoreOp::STORE, L::COLOR_ATTACHMENT_OPTIMAL),
        ];
        let reference = |attachment, layout| vk::AttachmentReference { attachment, layout };
        let drawn = [0, 1, 2].map(|a| [reference(a, L::COLOR_ATTACHMENT_OPTIMAL)]);
        let read = [0, 1].map(|a| [reference(a, L::SHADER_READ_ONLY_OPTIMAL)]);
        let subpasses: Vec<_> = drawn
            .iter()
            .enumerate()
            .map(|(i, colors)| {
                let subpass = vk::SubpassDescription::default()
                    .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
                    .color_attachments(colors);
                match i.checked_sub(1) {
                    Some(before) => subpass.input_attachments(&read[before]),
                    None => subpass,
                }
            })
            .collect();
        let dependencies: Vec<_> = (1..3)
            .map(|i| {
                vk::SubpassDependency::default()
                    .src_subpass(i - 1)
                    .dst_subpass(i)
                    .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
                    .dst_stage_mask(vk::PipelineStageFlags::FRAGMENT_SHADER)
                    .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
                    .dst_access_mask(vk::AccessFlags::INPUT_ATTACHMENT_READ)
                    .dependency_flags(vk::DependencyFlags::BY_REGION)
            })
            .collect();
        let info = vk::RenderPassCreateInfo::default()
            .attachments(&attachments)
            .subpasses(&subpasses)
            .dependencies(&dependencies);
        let pass = unsafe { self.device.create_render_pass(&info, None)? };
        self.garbage.push(Garbage::RenderPass(pass));
        let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::INPUT_ATTACHMENT;
        let single = vk::SampleCountFlags::TYPE_1;
        let color = vk::ImageAspectFlags::COLOR;
        let a = self.image(format, single, usage, color)?;
        let b = self.image(format, single, usage, color)?;
        let target = self.view(self.color, format, color, 0)?;
        let framebuffer = self.framebuffer(pass, &[a, b, target], 1)?;
        Ok((pass, framebuffer, [a, b]))
    }

    /// The layout of a pipeline blending a tint with an input attachment: a uniform
    /// buffer at set 0 binding 0, an input attachment at binding 1, 16 bytes of vertex
    /// push constants; and a descriptor set for each of `inputs`, each with `tint`.
    pub fn input_layout(
        &mut self,
        tint: &Buffer,
        inputs: &[vk::ImageView],
    ) -> Result<(vk::PipelineLayout, Vec<vk::DescriptorSet>), Error> {
        let fragment = vk::ShaderStageFlags::FRAGMENT;
        let bindings = [
            vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                .descriptor_count(1)
                .stage_flags(fragment),
            vk::DescriptorSetLayoutBinding::default()
                .binding(1)
                .descriptor_type(vk::DescriptorType::INPUT_ATTACHMENT)
                .descriptor_count(1)
                .stage_flags(fragment),
        ];
        let (layout, sets) = self.layout_and_sets(&bindings, inputs.len() as u32)?;
        let d = &self.device;
        for (set, input) in sets.iter().zip(inputs) {
            let buffer = [vk::DescriptorBufferInfo {
                buffer: tint.buffer,
                offset: 0,
                range: vk::WHOLE_SIZE,
            }];
            let image = [vk::DescriptorImageInfo {
                sampler: vk::Sampler::null(),
                image_view: *input,
                image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            }];
            let writes = [
                vk::WriteDescriptorSet::default()
                    .dst_set(*set)
                    .dst_binding(0)
                    .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                    .buffer_info(&buffer),
                vk::WriteDescriptorSet::default()
                    .dst_set(*set)
                    .dst_binding(1)
                    .descriptor_type(vk::DescriptorType::INPUT_ATTACHMENT)
                    .image_info(&image),
            ];
            unsafe { d.update_descriptor_sets(&writes, &[]) };
        }
        Ok((layout, sets))
    }

    /// A `SIZE`×`SIZE` framebuffer of `layers` layers for `pass` over `views`.
    fn framebuffer(
        &mut self,
        pass: vk::RenderPass,
        views: &[vk::ImageView],
        layers: u32,
    ) -> Result<vk::Framebuffer, Error> {
        let framebuffer = unsafe {
            self.device.create_framebuffer(
                &vk::FramebufferCreateInfo::default()
                    .render_pass(pass)
                    .attachments(views)
                    .width(SIZE)
                    .height(SIZE)
                    .layers(layers),
                None,
            )?
        };
        self.garbage.push(Garbage::Framebuffer(framebuffer));
        Ok(framebuffer)
    }

    /// Begins [`Gpu::resolving_pass`] on `framebuffer`: colour to black, depth to 1,
    /// stencil to 0.
    pub fn begin_resolving_pass(
        &self,
        cb: vk::CommandBuffer,
        pass: vk::RenderPass,
        framebuffer: vk::Framebuffer,
    ) {
        let clear = [
            vk::ClearValue {
                color: vk::ClearColorValue {
                    float32: [0.0, 0.0, 0.0, 1.0],
                },
            },
            vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue {
                    depth: 1.0,
                    stencil: 0,
                },
            },
        ];
        self.begin_pass_clearing(cb, pass, framebuffer, &clear, vk::SubpassContents::INLINE);
    }

    /// Begins [`Gpu::chained_pass`] on `framebuffer`: A to be cleared to dark red, B to
    /// dark blue, the target to black.
    pub fn begin_chained_pass(
        &self,
        cb: vk::CommandBuffer,
        pass: vk::RenderPass,
        framebuffer: vk::Framebuffer,
    ) {
        let clear = [
            [0.4, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.4, 1.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
        .map(|float32| vk::ClearValue {
            color: vk::ClearColorValue { float32 },
        });
        self.begin_pass_clearing(cb, pass, framebuffer, &clear, vk::SubpassContents::INLINE);
    }

    /// A query pool.
    pub fn query_pool(&mut self, ty: vk::QueryType, count: u32) -> Result<vk::QueryPool, Error> {
        let pool = unsafe {
            self.device.create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(ty)
                    .query_count(count),
                None,
            )?
        };
        self.garbage.push(Garbage::QueryPool(pool));
        Ok(pool)
    }

    /// Records one frame with `record`, submits it (marked as the frame's end where
    /// frame boundaries are on) and waits for it.
    pub fn frame(&self, frame: u64, record: impl FnOnce(vk::CommandBuffer)) -> Result<(), Error> {
        let cb = self.begin(self.pool)?;
        record(cb);
        unsafe { self.device.end_command_buffer(cb)? };
        self.submit(frame, &[cb])?;
        unsafe { self.device.free_command_buffers(self.pool, &[cb]) };
        Ok(())
    }

    /// One command buffer of `level` from `pool`.
    fn allocate(
        &self,
        pool: vk::CommandPool,
        level: vk::CommandBufferLevel,
    ) -> Result<vk::CommandBuffer, Error> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(level)
            .command_buffer_count(1);
        // SAFETY: `pool` is a live pool of this device.
        Ok(unsafe { self.device.allocate_command_buffers(&info)?[0] })
    }

    /// A primary command buffer from `pool`, begun for one submit.
    pub fn begin(&self, pool: vk::CommandPool) -> Result<vk::CommandBuffer, Error> {
        let d = &self.device;
        let cb = self.allocate(pool, vk::CommandBufferLevel::PRIMARY)?;
        unsafe {
            d.begin_command_buffer(
                cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )?
        };
        Ok(cb)
    }

    /// A command pool of the graphics queue's family, for one recording thread.
    pub fn command_pool(&self) -> Result<vk::CommandPool, Error> {
        let family = self.family;
        Ok(unsafe {
            self.device.create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                None,
            )?
        })
    }

    /// Submits `cbs` as frame `frame` (its last submit) and waits for them.
    pub fn submit(&self, frame: u64, cbs: &[vk::CommandBuffer]) -> Result<(), Error> {
        let d = &self.device;
        // The colour target is the frame's result: a capture checksums it.
        let shown = [self.color];
        let mut boundary = vk::FrameBoundaryEXT::default()
            .flags(vk::FrameBoundaryFlagsEXT::FRAME_END)
            .frame_id(frame);
        if self.color != vk::Image::null() {
            boundary = boundary.images(&shown);
        }
        let mut submit = vk::SubmitInfo::default().command_buffers(cbs);
        if self.frame_boundary {
            submit = submit.push_next(&mut boundary);
        }
        let fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None)? };
        unsafe {
            d.queue_submit(self.queue, &[submit], fence)?;
            d.wait_for_fences(&[fence], true, u64::MAX)?;
            d.destroy_fence(fence, None);
        }
        Ok(())
    }

    /// Submits nothing to the queue (no frame boundary) and waits for it: work of a
    /// device's own, however little.
    pub fn submit_nothing(&self) -> Result<(), Error> {
        let d = &self.device;
        let fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None)? };
        unsafe {
            d.queue_submit(self.queue, &[vk::SubmitInfo::default()], fence)?;
            d.wait_for_fences(&[fence], true, u64::MAX)?;
            d.destroy_fence(fence, None);
        }
        Ok(())
    }

    /// Begins `pass` on `framebuffer`, clearing the target.
    pub fn begin_pass(
        &self,
        cb: vk::CommandBuffer,
        pass: vk::RenderPass,
        framebuffer: vk::Framebuffer,
    ) {
        self.begin_pass_with(cb, pass, framebuffer, vk::SubpassContents::INLINE);
    }

    /// Begins `pass` on `framebuffer`, clearing the target, its first subpass's commands
    /// `contents` (inline, or in secondary command buffers).
    pub fn begin_pass_with(
        &self,
        cb: vk::CommandBuffer,
        pass: vk::RenderPass,
        framebuffer: vk::Framebuffer,
        contents: vk::SubpassContents,
    ) {
        let clear = [vk::ClearValue {
            color: vk::ClearColorValue {
                float32: [0.0, 0.0, 0.0, 1.0],
            },
        }];
        self.begin_pass_clearing(cb, pass, framebuffer, &clear, contents);
    }

    /// Begins `pass` on `framebuffer` over the whole target with `clear` values.
    fn begin_pass_clearing(
        &self,
        cb: vk::CommandBuffer,
        pass: vk::RenderPass,
        framebuffer: vk::Framebuffer,
        clear: &[vk::ClearValue],
        contents: vk::SubpassContents,
    ) {
        let info = vk::RenderPassBeginInfo::default()
            .render_pass(pass)
            .framebuffer(framebuffer)
            .render_area(vk::Rect2D {
                offset: vk::Offset2D::default(),
                extent: vk::Extent2D {
                    width: SIZE,
                    height: SIZE,
                },
            })
            .clear_values(clear);
        unsafe { self.device.cmd_begin_render_pass(cb, &info, contents) };
    }

    /// A secondary command buffer from `pool`, begun to continue subpass 0 of `pass`
    /// on `framebuffer`.
    pub fn begin_secondary(
        &self,
        pool: vk::CommandPool,
        pass: vk::RenderPass,
        framebuffer: vk::Framebuffer,
    ) -> Result<vk::CommandBuffer, Error> {
        let d = &self.device;
        let cb = self.allocate(pool, vk::CommandBufferLevel::SECONDARY)?;
        let inheritance = vk::CommandBufferInheritanceInfo::default()
            .render_pass(pass)
            .subpass(0)
            .framebuffer(framebuffer);
        unsafe {
            d.begin_command_buffer(
                cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(
                        vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT
                            | vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE,
                    )
                    .inheritance_info(&inheritance),
            )?
        };
        Ok(cb)
    }

    /// Places the next triangle: push constants of offset and scale.
    pub fn place(
        &self,
        cb: vk::CommandBuffer,
        layout: vk::PipelineLayout,
        x: f32,
        y: f32,
        scale: f32,
    ) {
        let values: Vec<u8> = [x, y, scale, 0.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        unsafe {
            self.device
                .cmd_push_constants(cb, layout, vk::ShaderStageFlags::VERTEX, 0, &values)
        };
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        let d = &self.device;
        unsafe {
            let _ = d.device_wait_idle();
            for g in self.garbage.drain(..).rev() {
                match g {
                    Garbage::Buffer(b) => d.destroy_buffer(b, None),
                    Garbage::Memory(m) => d.free_memory(m, None),
                    Garbage::Image(i) => d.destroy_image(i, None),
                    Garbage::View(v) => d.destroy_image_view(v, None),
                    Garbage::Module(m) => d.destroy_shader_module(m, None),
                    Garbage::Pipeline(p) => d.destroy_pipeline(p, None),
                    Garbage::Layout(l) => d.destroy_pipeline_layout(l, None),
                    Garbage::SetLayout(l) => d.destroy_descriptor_set_layout(l, None),
                    Garbage::DescriptorPool(p) => d.destroy_descriptor_pool(p, None),
                    Garbage::RenderPass(p) => d.destroy_render_pass(p, None),
                    Garbage::Framebuffer(f) => d.destroy_framebuffer(f, None),
                    Garbage::QueryPool(p) => d.destroy_query_pool(p, None),
                    Garbage::Event(e) => d.destroy_event(e, None),
                }
            }
            d.destroy_command_pool(self.pool, None);
            d.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
