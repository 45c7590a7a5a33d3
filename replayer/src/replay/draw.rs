//! Draws and the rendering they draw in (NVK's nvk_cmd_draw.c): dynamic and
//! render-pass rendering, secondaries continuing it, each draw encoded.

use super::*;

impl Pass<'_> {
    /// The driver model's rendering info for a recorded vkCmdBeginRendering.
    /// How secondary `cb` begins, as nvk_cmd_buffer_begin_graphics does: one that
    /// continues a render pass whose framebuffer it names resumes that subpass's
    /// rendering over the whole framebuffer (Mesa's
    /// vk_get_command_buffer_inheritance_as_rendering_resume: every attachment loaded,
    /// nothing cleared), pushed right after it begins; one that continues a rendering
    /// without a framebuffer takes the rendering's view mask and attachment count,
    /// pushing nothing; any other starts with no rendering. A secondary whose beginning
    /// the trace does not hold is taken to continue the rendering it is executed in
    /// (`view_mask`, `colors`).
    pub(super) fn begin_secondary(
        &mut self,
        sec: &mut CommandEncoder<'_>,
        cb: u64,
        view_mask: u32,
        colors: u32,
    ) {
        let Some(begin) = self.begins.get(&cb).copied() else {
            return sec.inherit_rendering(view_mask, colors);
        };
        if !begin.continues_render_pass {
            return;
        }
        let pass = self.objects.render_passes.get(&begin.render_pass);
        match (pass, self.objects.framebuffer_area(begin.framebuffer)) {
            (Some(pass), Some((area, layers))) => {
                let mut info = self.objects.subpass_rendering(
                    pass,
                    begin.framebuffer,
                    begin.subpass as usize,
                    area,
                    &[],
                );
                info.flags |= RENDERING_RESUMING;
                if info.view_mask == 0 {
                    info.layer_count = layers;
                }
                self.resume = Some(info);
            }
            (pass, _) => {
                let subpass = pass.and_then(|p| p.subpasses.get(begin.subpass as usize));
                let colors = subpass.map_or(colors, |s| s.colors.len() as u32);
                let view_mask = match begin.view_mask {
                    0 => subpass.map_or(view_mask, |s| s.view_mask),
                    m => m,
                };
                sec.inherit_rendering(view_mask, colors);
            }
        }
    }

    pub(super) fn rendering_info(&self, r: &RenderingCmd) -> RenderingInfo {
        let colors = r
            .colors
            .iter()
            .map(|a| {
                let (image, view) = self.objects.view_target(a.view, &r.area)?;
                Some(ColorAttachment {
                    image,
                    view,
                    clear: (a.load_op == objects::LOAD_OP_CLEAR).then_some(a.clear),
                    resolve_mode: a.resolve_mode,
                    resolve_to: self.objects.view_target(a.resolve_view, &r.area),
                    loads: a.load_op == objects::LOAD_OP_LOAD,
                    stores: a.store_op == objects::STORE_OP_STORE,
                })
            })
            .collect();
        // One image holds both aspects; the depth view if there is one.
        let ds_view = if r.depth.view != 0 {
            r.depth.view
        } else {
            r.stencil.view
        };
        let depth_stencil = self
            .objects
            .view_target(ds_view, &r.area)
            .map(|(image, view)| DepthStencilAttachment {
                image,
                view,
                depth_clear: (r.depth.view != 0 && r.depth.load_op == objects::LOAD_OP_CLEAR)
                    .then_some(r.depth.clear[0]),
                stencil_clear: (r.stencil.view != 0 && r.stencil.load_op == objects::LOAD_OP_CLEAR)
                    .then_some(r.stencil.clear[1]),
                depth_resolve_mode: if r.depth.view != 0 {
                    r.depth.resolve_mode
                } else {
                    0
                },
                stencil_resolve_mode: if r.stencil.view != 0 {
                    r.stencil.resolve_mode
                } else {
                    0
                },
                // vk_meta_resolve_rendering resolves depth into the depth attachment's
                // resolve view, stencil alone into the stencil's.
                resolve_to: match r.depth.view != 0 && r.depth.resolve_mode != 0 {
                    true => self.objects.view_target(r.depth.resolve_view, &r.area),
                    false => self.objects.view_target(r.stencil.resolve_view, &r.area),
                },
                aspects: DepthStencilAspects {
                    depth: r.depth.view != 0,
                    stencil: r.stencil.view != 0,
                },
            });
        RenderingInfo {
            flags: r.flags,
            area: r.area,
            layer_count: r.layer_count,
            view_mask: r.view_mask,
            colors,
            depth_stencil,
        }
    }

    /// Encodes one draw; `None` when it cannot be (an unbound indirect buffer).
    pub(super) fn encode_draw(
        &mut self,
        enc: &mut CommandEncoder<'_>,
        seq: u64,
        kind: DrawKind,
        args: &DrawArgs,
    ) -> Option<DrawShape> {
        let memory = &self.gpu.state.memory;
        let shape = |instance_count, element_count, indirect_draw_count, r: Recorded| DrawShape {
            seq,
            kind: results_kind(kind),
            instance_count,
            element_count,
            indirect_draw_count,
            state: r.state,
            memory_words: r.memory_words,
        };
        match *args {
            DrawArgs::Direct {
                vertex_count,
                instance_count,
                first_vertex,
                first_instance,
            } => {
                let r = enc.draw(vertex_count, instance_count, first_vertex, first_instance);
                Some(shape(instance_count, vertex_count, 1, r))
            }
            DrawArgs::Indexed {
                index_count,
                instance_count,
                first_index,
                vertex_offset,
                first_instance,
            } => {
                let r = enc.draw_indexed(
                    index_count,
                    instance_count,
                    first_index,
                    vertex_offset,
                    first_instance,
                );
                Some(shape(instance_count, index_count, 1, r))
            }
            DrawArgs::Indirect {
                buffer,
                offset,
                draw_count,
                stride,
                count,
            } => {
                let Some(addr) = self.objects.buffer_addr(buffer, offset) else {
                    self.skip("indirect draw from an unbound buffer", true);
                    return None;
                };
                let count_addr = match count {
                    Some((b, o)) => match self.objects.buffer_addr(b, o) {
                        Some(a) => Some(a),
                        None => {
                            self.skip("indirect count from an unbound buffer", true);
                            return None;
                        }
                    },
                    None => None,
                };
                let draws = count_addr.map_or(draw_count, |a| memory.read_u32(a).min(draw_count));
                if self.options.arch() == Arch::Fermi {
                    // Before Turing the commands are the macro's parameters: one word
                    // at least one instruction, so a call with more than the budget
                    // allows cannot finish; beyond a bound, they are not gathered.
                    let per_draw = if kind.indexed() { 5 } else { 4 };
                    let words = u64::from(draws) * u64::from((stride / 4).max(per_draw));
                    if words > self.options.mme_budget.min(MAX_INDIRECT_PARAM_WORDS) {
                        self.skip(
                            "indirect draw with more parameter words than a macro call may run",
                            true,
                        );
                        return None;
                    }
                }
                let element_count = memory.read_u32(addr);
                let instance_count = memory.read_u32(addr.wrapping_add(4));
                let r = enc.draw_indirect(
                    kind,
                    IndirectArgs {
                        addr,
                        draw_count,
                        stride,
                        count_addr,
                    },
                    memory,
                );
                Some(shape(instance_count, element_count, draws, r))
            }
            DrawArgs::ByteCount {
                instance_count,
                first_instance,
                counter_buffer,
                counter_buffer_offset,
                counter_offset,
                vertex_stride,
            } => {
                let Some(addr) = self
                    .objects
                    .buffer_addr(counter_buffer, counter_buffer_offset)
                else {
                    self.skip("byte-count draw from an unbound counter buffer", true);
                    return None;
                };
                let bytes = memory.read_u32(addr).saturating_sub(counter_offset);
                let vertices = bytes.checked_div(vertex_stride).unwrap_or(0);
                let r = enc.draw_indirect_byte_count(
                    instance_count,
                    first_instance,
                    addr,
                    counter_offset,
                    vertex_stride,
                    memory,
                );
                Some(shape(instance_count, vertices, 1, r))
            }
        }
    }
}
