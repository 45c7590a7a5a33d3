//! The typed records replayed by hand: objects' lifetimes, memory, and the commands the
//! capture layer records in its own tables.

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::{Call, Record};

use super::{frames, pipelines, DeviceError, Frame, Replay};

impl Replay {
    /// Replays typed record `record`.
    pub(super) fn typed(
        &mut self,
        seq: u64,
        name: &str,
        record: &Record<'_>,
    ) -> Result<(), DeviceError> {
        let fail = |e: vk::Result| DeviceError::call(seq, name, e);
        let device = self.device(seq)?.clone();
        let timed = match &self.timing {
            Some(_) => self.timed_draw(record, seq, name)?,
            None => None,
        };
        if let (Some(cb), Some(t)) = (timed, self.timing.as_mut()) {
            t.before(&device, cb, seq).map_err(fail)?;
        }
        self.view_tracking(record, seq, name)?;
        // SAFETY (every call below): `device` is live; handles come from the replay's
        // map, so they name live objects of it; what the create infos point to lives
        // across each call.
        unsafe {
            match record.call_type() {
                Call::AllocateMemory => {
                    let c = get!(record, call_as_allocate_memory, seq, name);
                    let memory = self
                        .memory
                        .as_mut()
                        .ok_or_else(|| DeviceError::call(seq, name, "no device"))?;
                    let flags = vk::MemoryAllocateFlags::from_raw(c.flags());
                    memory.allocate(c.memory(), c.size(), c.memory_type_index(), flags, seq)?;
                }
                Call::FreeMemory if self.keep_objects => {}
                Call::DestroyObject if self.keep_objects => {}
                Call::FreeMemory => {
                    let c = get!(record, call_as_free_memory, seq, name);
                    if let Some(m) = &mut self.memory {
                        m.free(&device, c.memory());
                    }
                }
                Call::MemoryContents => {
                    let c = get!(record, call_as_memory_contents, seq, name);
                    let data = c.data().map_or(&[][..], |d| d.bytes());
                    let written = self
                        .memory
                        .as_mut()
                        .is_some_and(|m| m.write(c.memory(), c.offset(), data));
                    if !written {
                        return Err(DeviceError::call(
                            seq,
                            name,
                            format!("{} bytes at {} of memory {:#x}: not mapped on the replay device, or past its end", data.len(), c.offset(), c.memory()),
                        ));
                    }
                }
                Call::CreateBuffer => {
                    let c = get!(record, call_as_create_buffer, seq, name);
                    let info = vk::BufferCreateInfo::default()
                        .flags(vk::BufferCreateFlags::from_raw(c.flags()))
                        .size(c.size())
                        .usage(vk::BufferUsageFlags::from_raw(c.usage()));
                    let b = device.create_buffer(&info, None).map_err(fail)?;
                    self.handles
                        .insert(vk::ObjectType::BUFFER, c.buffer(), b.as_raw());
                }
                Call::BindBufferMemory => {
                    let c = get!(record, call_as_bind_buffer_memory, seq, name);
                    let buffer: vk::Buffer = self.handle(c.buffer(), seq, name)?;
                    let req = device.get_buffer_memory_requirements(buffer);
                    let memory = self
                        .memory
                        .as_mut()
                        .ok_or_else(|| DeviceError::call(seq, name, "no device"))?;
                    let (mem, offset) = memory.place(&device, c.memory(), c.offset(), req, seq)?;
                    device
                        .bind_buffer_memory(buffer, mem, offset)
                        .map_err(fail)?;
                }
                Call::CreateImage => {
                    let c = get!(record, call_as_create_image, seq, name);
                    let e = c.extent();
                    let info = vk::ImageCreateInfo::default()
                        .flags(vk::ImageCreateFlags::from_raw(c.flags()))
                        .image_type(vk::ImageType::from_raw(c.image_type() as i32))
                        .format(vk::Format::from_raw(c.format() as i32))
                        .extent(vk::Extent3D {
                            width: e.map_or(1, |e| e.width()),
                            height: e.map_or(1, |e| e.height()),
                            depth: e.map_or(1, |e| e.depth()),
                        })
                        .mip_levels(c.mip_levels())
                        .array_layers(c.array_layers())
                        .samples(vk::SampleCountFlags::from_raw(c.samples()))
                        .tiling(vk::ImageTiling::from_raw(c.tiling() as i32))
                        .usage(vk::ImageUsageFlags::from_raw(c.usage()))
                        .initial_layout(vk::ImageLayout::from_raw(c.initial_layout() as i32));
                    let i = device.create_image(&info, None).map_err(fail)?;
                    self.handles
                        .insert(vk::ObjectType::IMAGE, c.image(), i.as_raw());
                }
                Call::BindImageMemory => {
                    let c = get!(record, call_as_bind_image_memory, seq, name);
                    let image: vk::Image = self.handle(c.image(), seq, name)?;
                    let req = device.get_image_memory_requirements(image);
                    let memory = self
                        .memory
                        .as_mut()
                        .ok_or_else(|| DeviceError::call(seq, name, "no device"))?;
                    let (mem, offset) = memory.place(&device, c.memory(), c.offset(), req, seq)?;
                    device.bind_image_memory(image, mem, offset).map_err(fail)?;
                }
                Call::CreateImageView => {
                    let c = get!(record, call_as_create_image_view, seq, name);
                    // VK_COMPONENT_SWIZZLE_IDENTITY (0) to _A (6): another value would
                    // reach the driver as invalid usage.
                    if (0..4).any(|i| (c.components() >> (8 * i)) & 0xff > 6) {
                        return Err(DeviceError::bad(
                            seq,
                            name,
                            format!(
                                "component mapping {:#010x} names no swizzle",
                                c.components()
                            ),
                        ));
                    }
                    let swizzle = |i: u32| {
                        vk::ComponentSwizzle::from_raw(((c.components() >> (8 * i)) & 0xff) as i32)
                    };
                    let info = vk::ImageViewCreateInfo::default()
                        .flags(vk::ImageViewCreateFlags::from_raw(c.flags()))
                        .image(self.handle(c.image(), seq, name)?)
                        .view_type(vk::ImageViewType::from_raw(c.view_type() as i32))
                        .components(vk::ComponentMapping {
                            r: swizzle(0),
                            g: swizzle(1),
                            b: swizzle(2),
                            a: swizzle(3),
                        })
                        .format(vk::Format::from_raw(c.format() as i32))
                        .subresource_range(vk::ImageSubresourceRange {
                            aspect_mask: vk::ImageAspectFlags::from_raw(c.aspect_mask()),
                            base_mip_level: c.base_mip_level(),
                            level_count: c.level_count(),
                            base_array_layer: c.base_array_layer(),
                            layer_count: c.layer_count(),
                        });
                    let v = device.create_image_view(&info, None).map_err(fail)?;
                    self.handles
                        .insert(vk::ObjectType::IMAGE_VIEW, c.image_view(), v.as_raw());
                }
                Call::DestroyObject => {
                    let c = get!(record, call_as_destroy_object, seq, name);
                    self.destroy_object(
                        &device,
                        vk::ObjectType::from_raw(c.object_type() as i32),
                        c.handle(),
                    );
                }
                Call::CreateRenderPass => {
                    let c = get!(record, call_as_create_render_pass, seq, name);
                    let rp = pipelines::create_render_pass(&device, &c).map_err(fail)?;
                    self.handles
                        .insert(vk::ObjectType::RENDER_PASS, c.render_pass(), rp.as_raw());
                }
                Call::CreateFramebuffer => {
                    let c = get!(record, call_as_create_framebuffer, seq, name);
                    let views: Vec<vk::ImageView> = c
                        .attachments()
                        .iter()
                        .flatten()
                        .map(|v| self.handle(v, seq, name))
                        .collect::<Result<_, _>>()?;
                    let mut info = vk::FramebufferCreateInfo::default()
                        .flags(vk::FramebufferCreateFlags::from_raw(c.flags()))
                        .render_pass(self.handle(c.render_pass(), seq, name)?)
                        .width(c.width())
                        .height(c.height())
                        .layers(c.layers());
                    info.attachment_count = c.attachments().map_or(0, |a| a.len() as u32);
                    if !views.is_empty() {
                        info.p_attachments = views.as_ptr();
                    }
                    let fb = device.create_framebuffer(&info, None).map_err(fail)?;
                    self.handles
                        .insert(vk::ObjectType::FRAMEBUFFER, c.framebuffer(), fb.as_raw());
                }
                Call::CreateShaderModule => {
                    let c = get!(record, call_as_create_shader_module, seq, name);
                    let code: Vec<u32> = c.code().map(|c| c.iter().collect()).unwrap_or_default();
                    let info = vk::ShaderModuleCreateInfo::default().code(&code);
                    let m = device.create_shader_module(&info, None).map_err(fail)?;
                    self.handles.insert(
                        vk::ObjectType::SHADER_MODULE,
                        c.shader_module(),
                        m.as_raw(),
                    );
                }
                Call::CreatePipelineLayout => {
                    let c = get!(record, call_as_create_pipeline_layout, seq, name);
                    let sets: Vec<vk::DescriptorSetLayout> = c
                        .set_layouts()
                        .iter()
                        .flatten()
                        .map(|s| self.handle(s, seq, name))
                        .collect::<Result<_, _>>()?;
                    let ranges: Vec<vk::PushConstantRange> = c
                        .push_constant_ranges()
                        .iter()
                        .flatten()
                        .map(|r| vk::PushConstantRange {
                            stage_flags: vk::ShaderStageFlags::from_raw(r.stage_flags()),
                            offset: r.offset(),
                            size: r.size(),
                        })
                        .collect();
                    let info = vk::PipelineLayoutCreateInfo::default()
                        .flags(vk::PipelineLayoutCreateFlags::from_raw(c.flags()))
                        .set_layouts(&sets)
                        .push_constant_ranges(&ranges);
                    let l = device.create_pipeline_layout(&info, None).map_err(fail)?;
                    self.handles.insert(
                        vk::ObjectType::PIPELINE_LAYOUT,
                        c.pipeline_layout(),
                        l.as_raw(),
                    );
                }
                Call::CreateGraphicsPipelines => {
                    let c = get!(record, call_as_create_graphics_pipelines, seq, name);
                    for p in c.pipelines().iter().flatten() {
                        let pipeline =
                            pipelines::create_graphics_pipeline(&device, &self.handles, &p)
                                .map_err(|e| DeviceError::of_call(seq, name, e))?;
                        self.handles.insert(
                            vk::ObjectType::PIPELINE,
                            p.pipeline(),
                            pipeline.as_raw(),
                        );
                    }
                }
                Call::CreateCommandPool => {
                    let c = get!(record, call_as_create_command_pool, seq, name);
                    let info = vk::CommandPoolCreateInfo::default()
                        .flags(vk::CommandPoolCreateFlags::from_raw(c.flags()))
                        .queue_family_index(self.family);
                    let pool = device.create_command_pool(&info, None).map_err(fail)?;
                    self.handles.insert(
                        vk::ObjectType::COMMAND_POOL,
                        c.command_pool(),
                        pool.as_raw(),
                    );
                }
                Call::AllocateCommandBuffers => {
                    let c = get!(record, call_as_allocate_command_buffers, seq, name);
                    let ids: Vec<u64> = c
                        .command_buffers()
                        .map(|v| v.iter().collect())
                        .unwrap_or_default();
                    let info = vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.handle(c.command_pool(), seq, name)?)
                        .level(vk::CommandBufferLevel::from_raw(c.level() as i32))
                        .command_buffer_count(ids.len() as u32);
                    let buffers = device.allocate_command_buffers(&info).map_err(fail)?;
                    for (id, b) in ids.iter().zip(buffers) {
                        self.handles
                            .insert(vk::ObjectType::COMMAND_BUFFER, *id, b.as_raw());
                    }
                }
                Call::BeginCommandBuffer => {
                    let c = get!(record, call_as_begin_command_buffer, seq, name);
                    let cb: vk::CommandBuffer = self.handle(c.command_buffer(), seq, name)?;
                    let mut inheritance = vk::CommandBufferInheritanceInfo::default();
                    if let Some(i) = c.inheritance() {
                        inheritance = inheritance
                            .render_pass(self.handle(i.render_pass(), seq, name)?)
                            .subpass(i.subpass())
                            .framebuffer(self.handle(i.framebuffer(), seq, name)?)
                            .occlusion_query_enable(i.occlusion_query_enable())
                            .query_flags(vk::QueryControlFlags::from_raw(i.query_flags()))
                            .pipeline_statistics(vk::QueryPipelineStatisticFlags::from_raw(
                                i.pipeline_statistics(),
                            ));
                    }
                    let info = vk::CommandBufferBeginInfo::default()
                        .flags(vk::CommandBufferUsageFlags::from_raw(c.flags()))
                        .inheritance_info(&inheritance);
                    device.begin_command_buffer(cb, &info).map_err(fail)?;
                }
                Call::EndCommandBuffer => {
                    let c = get!(record, call_as_end_command_buffer, seq, name);
                    device
                        .end_command_buffer(self.handle(c.command_buffer(), seq, name)?)
                        .map_err(fail)?;
                }
                Call::ResetCommandBuffer => {
                    let c = get!(record, call_as_reset_command_buffer, seq, name);
                    device
                        .reset_command_buffer(
                            self.handle(c.command_buffer(), seq, name)?,
                            vk::CommandBufferResetFlags::from_raw(c.flags()),
                        )
                        .map_err(fail)?;
                }
                Call::CreateQueryPool => {
                    let c = get!(record, call_as_create_query_pool, seq, name);
                    let info = vk::QueryPoolCreateInfo::default()
                        .flags(vk::QueryPoolCreateFlags::from_raw(c.flags()))
                        .query_type(vk::QueryType::from_raw(c.query_type() as i32))
                        .query_count(c.query_count())
                        .pipeline_statistics(vk::QueryPipelineStatisticFlags::from_raw(
                            c.pipeline_statistics(),
                        ));
                    let pool = device.create_query_pool(&info, None).map_err(fail)?;
                    self.handles
                        .insert(vk::ObjectType::QUERY_POOL, c.query_pool(), pool.as_raw());
                }
                Call::QueueSubmit => {
                    let c = get!(record, call_as_queue_submit, seq, name);
                    let mut batches: Vec<Vec<vk::CommandBuffer>> = Vec::new();
                    for s in c.submits().iter().flatten() {
                        batches.push(
                            s.command_buffers()
                                .iter()
                                .flatten()
                                .map(|b| self.handle(b, seq, name))
                                .collect::<Result<_, _>>()?,
                        );
                    }
                    let infos: Vec<vk::SubmitInfo> = batches
                        .iter()
                        .map(|b| vk::SubmitInfo::default().command_buffers(b))
                        .collect();
                    let fence: vk::Fence = self.handle(c.fence(), seq, name)?;
                    let all: Vec<vk::CommandBuffer> = batches.concat();
                    if let Some(t) = &self.timing {
                        t.prepare(&device, &all);
                    }
                    device
                        .queue_submit(self.queue, &infos, fence)
                        .map_err(fail)?;
                    device.queue_wait_idle(self.queue).map_err(fail)?;
                    if let Some(t) = &self.timing {
                        t.collect(&device, self.pass, seq, &all, &mut self.summary.gpu_times)
                            .map_err(fail)?;
                    }
                    self.summary.submits += 1;
                }
                Call::QueuePresent => {
                    let c = get!(record, call_as_queue_present, seq, name);
                    let swapchains: Vec<u64> = c
                        .swapchains()
                        .map(|s| s.iter().collect())
                        .unwrap_or_default();
                    let indices: Vec<u32> = c
                        .image_indices()
                        .map(|s| s.iter().collect())
                        .unwrap_or_default();
                    if self.options.read_frames || self.options.dump_frames.is_some() {
                        for (s, i) in swapchains.iter().zip(&indices) {
                            self.present(&device, seq, *s, *i)?;
                        }
                    }
                }
                _ if self.command(&device, seq, name, record)? => {}
                _ => return Err(DeviceError::call(seq, name, "an unknown record")),
            }
        }
        if let (Some(cb), Some(t)) = (timed, self.timing.as_mut()) {
            t.after(&device, cb);
        }
        Ok(())
    }

    /// The command buffer of a draw the replay times.
    fn timed_draw(
        &self,
        record: &Record<'_>,
        seq: u64,
        name: &str,
    ) -> Result<Option<vk::CommandBuffer>, DeviceError> {
        let id = match record.call_type() {
            Call::CmdDraw => record.call_as_cmd_draw().map(|c| c.command_buffer()),
            Call::CmdDrawIndexed => record
                .call_as_cmd_draw_indexed()
                .map(|c| c.command_buffer()),
            Call::CmdDrawIndirect => record
                .call_as_cmd_draw_indirect()
                .map(|c| c.command_buffer()),
            Call::CmdDrawIndexedIndirect => record
                .call_as_cmd_draw_indexed_indirect()
                .map(|c| c.command_buffer()),
            Call::CmdDrawIndirectCount => record
                .call_as_cmd_draw_indirect_count()
                .map(|c| c.command_buffer()),
            Call::CmdDrawIndexedIndirectCount => record
                .call_as_cmd_draw_indexed_indirect_count()
                .map(|c| c.command_buffer()),
            Call::CmdDrawIndirectByteCount => record
                .call_as_cmd_draw_indirect_byte_count()
                .map(|c| c.command_buffer()),
            _ => None,
        };
        id.map(|id| self.handle(id, seq, name)).transpose()
    }

    /// Follows the views of each command buffer's render pass instance, and forgets a
    /// command buffer's timed draws when it is recorded again.
    fn view_tracking(
        &mut self,
        record: &Record<'_>,
        seq: u64,
        name: &str,
    ) -> Result<(), DeviceError> {
        if let Some(c) = record.call_as_create_render_pass() {
            let masks = c
                .subpasses()
                .iter()
                .flatten()
                .map(|s| s.view_mask())
                .collect();
            self.render_pass_views.insert(c.render_pass(), masks);
            return Ok(());
        }
        let Some(t) = self.timing.as_mut() else {
            return Ok(());
        };
        let handles = &self.handles;
        let cb_of = |id: u64| {
            handles
                .typed::<vk::CommandBuffer>(id)
                .map_err(|e| DeviceError::of_call(seq, name, e))
        };
        match record.call_type() {
            Call::BeginCommandBuffer => {
                if let Some(c) = record.call_as_begin_command_buffer() {
                    let cb = cb_of(c.command_buffer())?;
                    t.begin(cb);
                    if let Some(i) = c.inheritance() {
                        let mask = self
                            .render_pass_views
                            .get(&i.render_pass())
                            .and_then(|m| m.get(i.subpass() as usize).copied())
                            .unwrap_or(i.rendering_view_mask());
                        t.set_views(cb, mask);
                    }
                }
            }
            Call::CmdBeginRenderPass => {
                if let Some(c) = record.call_as_cmd_begin_render_pass() {
                    let cb = cb_of(c.command_buffer())?;
                    let masks = self
                        .render_pass_views
                        .get(&c.render_pass())
                        .cloned()
                        .unwrap_or_default();
                    t.set_views(cb, masks.first().copied().unwrap_or(0));
                    self.subpasses.insert(c.command_buffer(), (masks, 0));
                }
            }
            Call::CmdNextSubpass => {
                if let Some(c) = record.call_as_cmd_next_subpass() {
                    let cb = cb_of(c.command_buffer())?;
                    if let Some((masks, index)) = self.subpasses.get_mut(&c.command_buffer()) {
                        *index += 1;
                        t.set_views(cb, masks.get(*index).copied().unwrap_or(0));
                    }
                }
            }
            Call::CmdBeginRendering => {
                if let Some(c) = record.call_as_cmd_begin_rendering() {
                    t.set_views(cb_of(c.command_buffer())?, c.view_mask());
                }
            }
            Call::CmdEndRenderPass => {
                if let Some(c) = record.call_as_cmd_end_render_pass() {
                    t.set_views(cb_of(c.command_buffer())?, 0);
                }
            }
            Call::CmdEndRendering => {
                if let Some(c) = record.call_as_cmd_end_rendering() {
                    t.set_views(cb_of(c.command_buffer())?, 0);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Reads presented image `index` of swapchain `id` back, checksums it and dumps it.
    pub(super) fn present(
        &mut self,
        device: &ash::Device,
        seq: u64,
        id: u64,
        index: u32,
    ) -> Result<(), DeviceError> {
        let s = self
            .swapchains
            .get(&id)
            .ok_or_else(|| DeviceError::bad(seq, "vkQueuePresentKHR", "an unknown swapchain"))?;
        let (image, _) = *s.images.get(index as usize).ok_or_else(|| {
            DeviceError::bad(
                seq,
                "vkQueuePresentKHR",
                format!("image {index} of a swapchain of {}", s.images.len()),
            )
        })?;
        let shown = frames::Shown {
            image,
            layout: vk::ImageLayout::PRESENT_SRC_KHR,
            format: s.format,
            extent: s.extent,
        };
        let checksum = self.show(device, seq, "vkQueuePresentKHR", &shown)?;
        self.summary.frames.push(Frame {
            frame: self.frame,
            seq,
            pass: self.pass,
            swapchain: id,
            checksum,
            captured: None,
        });
        Ok(())
    }

    /// An offscreen frame's checksum record: the image it names read back in the
    /// recorded layout, checksummed, dumped, and compared with the record.
    pub(super) fn offscreen_frame(
        &mut self,
        device: &ash::Device,
        seq: u64,
        c: &trace_format::generated::trace::FrameChecksum<'_>,
    ) -> Result<(), DeviceError> {
        let name = "frame checksum";
        let shown = frames::Shown {
            image: self.handle(c.image(), seq, name)?,
            layout: vk::ImageLayout::from_raw(c.layout() as i32),
            format: vk::Format::from_raw(c.format() as i32),
            extent: vk::Extent2D {
                width: c.width(),
                height: c.height(),
            },
        };
        let checksum = self.show(device, seq, name, &shown)?;
        self.summary.frames.push(Frame {
            frame: self.frame,
            seq,
            pass: self.pass,
            swapchain: 0,
            checksum,
            captured: Some(c.crc32()),
        });
        Ok(())
    }

    /// Reads `shown` back, dumps it where asked, and returns its checksum.
    fn show(
        &mut self,
        device: &ash::Device,
        seq: u64,
        name: &str,
        shown: &frames::Shown,
    ) -> Result<u32, DeviceError> {
        let memory = self
            .memory
            .as_ref()
            .ok_or_else(|| DeviceError::call(seq, name, "no device"))?;
        let readback = self
            .readback
            .as_mut()
            .ok_or_else(|| DeviceError::call(seq, name, "no device"))?;
        let frame = readback
            .read(device, self.queue, memory, shown)
            .map_err(|e| DeviceError::call(seq, name, e))?;
        if let Some(dir) = &self.options.dump_frames {
            frame
                .write_png(&dir.join(format!("frame-{:06}.png", self.frame)))
                .map_err(|e| DeviceError::call(seq, name, e))?;
        }
        Ok(frame.checksum())
    }

    /// Destroys an object the program destroyed.
    ///
    /// # Safety
    /// The program destroyed it, so nothing in flight uses it (submits are waited for).
    unsafe fn destroy_object(&mut self, device: &ash::Device, ty: vk::ObjectType, id: u64) {
        let Some(raw) = self.handles.remove(ty, id) else {
            return;
        };
        match ty {
            vk::ObjectType::BUFFER => device.destroy_buffer(vk::Buffer::from_raw(raw), None),
            // Swapchain images are the replay's own, destroyed with their swapchain.
            vk::ObjectType::IMAGE
                if !self
                    .swapchains
                    .values()
                    .any(|s| s.images.iter().any(|(i, _)| i.as_raw() == raw)) =>
            {
                device.destroy_image(vk::Image::from_raw(raw), None)
            }
            vk::ObjectType::IMAGE_VIEW => {
                device.destroy_image_view(vk::ImageView::from_raw(raw), None)
            }
            vk::ObjectType::RENDER_PASS => {
                device.destroy_render_pass(vk::RenderPass::from_raw(raw), None)
            }
            vk::ObjectType::FRAMEBUFFER => {
                device.destroy_framebuffer(vk::Framebuffer::from_raw(raw), None)
            }
            vk::ObjectType::SHADER_MODULE => {
                device.destroy_shader_module(vk::ShaderModule::from_raw(raw), None)
            }
            vk::ObjectType::PIPELINE_LAYOUT => {
                device.destroy_pipeline_layout(vk::PipelineLayout::from_raw(raw), None)
            }
            vk::ObjectType::PIPELINE => device.destroy_pipeline(vk::Pipeline::from_raw(raw), None),
            vk::ObjectType::COMMAND_POOL => {
                device.destroy_command_pool(vk::CommandPool::from_raw(raw), None)
            }
            vk::ObjectType::QUERY_POOL => {
                device.destroy_query_pool(vk::QueryPool::from_raw(raw), None)
            }
            _ => {}
        }
    }
}
