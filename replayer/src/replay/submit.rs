//! Submits: each command buffer's commands executed through the encoder and
//! the GPU model, rows written (NVK's nvk_QueueSubmit2 and the command buffer it replays).

use super::*;

impl Pass<'_> {
    pub(super) fn submit(
        &mut self,
        seq: u64,
        command_buffers: &[u64],
        sink: &mut dyn RowSink,
    ) -> Result<(), ReplayError> {
        if self
            .options
            .frames
            .is_some_and(|(first, last)| !(first..=last).contains(&self.frame))
        {
            return Ok(());
        }
        let submit = self.submits as u32;
        let mut totals = SubmitTotals::default();
        let mut listed = HashSet::new();
        for cb in command_buffers {
            if !listed.insert(*cb) {
                // Legal only with SIMULTANEOUS_USE, and rare: run once, so that a
                // submit's work stays bounded by the command buffers it holds.
                self.skip(
                    "vkQueueSubmit (a command buffer listed again: run once)",
                    true,
                );
                continue;
            }
            // Taken out while it runs, then put back: it may be submitted again.
            let cmds = self.recording.take(*cb);
            let device = self.device.clone();
            let mut enc = CommandEncoder::new(&device);
            enc.recycle_push(std::mem::take(&mut self.spare_push));
            // Binds after a command buffer's last draw belong to no draw.
            self.pending = Pending::default();
            let result = self.execute(&mut enc, &cmds, submit, &mut totals, sink, 0);
            self.spare_push = enc.take_push();
            self.recording.put_back(*cb, cmds);
            result?;
        }
        self.submits += 1;
        self.teardown_submits += 1;
        let row = SubmitRow::new(
            seq,
            self.frame as u32,
            submit,
            self.repetition,
            totals.draws,
            totals.hw_draws,
            totals.mme_instructions,
            totals.methods,
            totals.dwords,
            totals.queries,
            totals.zero_queries,
            totals.encode_ns,
            totals.mme_ns,
            totals.multiview_ns,
            totals.query_ns,
        );
        sink.submit(row)?;
        Ok(())
    }

    pub(super) fn execute(
        &mut self,
        enc: &mut CommandEncoder<'_>,
        cmds: &[Cmd],
        submit: u32,
        totals: &mut SubmitTotals,
        sink: &mut dyn RowSink,
        depth: u32,
    ) -> Result<(), ReplayError> {
        enc.begin_command_buffer(depth == 0);
        if let Some(info) = self.resume.take() {
            enc.begin_rendering(&info);
        }
        self.execute_untimed(enc, totals)?;
        let mut pipeline = 0u64;
        let mut active_pass: Option<ActivePass> = None;
        for cmd in cmds {
            // Only draws' and queries' host times are reported; the rest go untimed.
            let timed = matches!(
                cmd,
                Cmd::Draw { .. }
                    | Cmd::Work { .. }
                    | Cmd::EndQuery { .. }
                    | Cmd::WriteTimestamp { .. }
            );
            let t0 = timed.then(clock::now);
            let mut recorded = None;
            let mut draw: Option<DrawShape> = None;
            match cmd {
                Cmd::BeginRenderPass {
                    render_pass,
                    framebuffer,
                    area,
                    clear_values,
                } => {
                    let pass = self
                        .objects
                        .render_passes
                        .get(render_pass)
                        .cloned()
                        .unwrap_or_default();
                    let (clears, info) =
                        self.objects
                            .subpass_begin(&pass, *framebuffer, 0, *area, clear_values);
                    let whole = self.objects.covers_views(*framebuffer, area);
                    let mut barriers = PassBarriers::begin(&pass, &whole);
                    if let Some(b) = barriers.begin_subpass(&pass, 0) {
                        enc.pipeline_barrier(&b);
                    }
                    clear_alone(enc, &clears);
                    enc.begin_rendering(&info);
                    let extent = (area.width, area.height);
                    self.places.begin_pass(
                        self.frame,
                        "vkCmdBeginRenderPass",
                        &[*framebuffer, *render_pass],
                        extent,
                    );
                    active_pass = Some(ActivePass {
                        pass,
                        framebuffer: *framebuffer,
                        subpass: 0,
                        area: *area,
                        clear_values: clear_values.clone(),
                        barriers,
                    });
                }
                Cmd::NextSubpass => {
                    enc.end_rendering();
                    if let Some(a) = &mut active_pass {
                        if let Some(b) = a.barriers.end_subpass(&a.pass, a.subpass) {
                            enc.pipeline_barrier(&b);
                        }
                        a.subpass += 1;
                        if let Some(b) = a.barriers.begin_subpass(&a.pass, a.subpass) {
                            enc.pipeline_barrier(&b);
                        }
                        let (clears, info) = self.objects.subpass_begin(
                            &a.pass,
                            a.framebuffer,
                            a.subpass,
                            a.area,
                            &a.clear_values,
                        );
                        clear_alone(enc, &clears);
                        enc.begin_rendering(&info);
                    }
                }
                Cmd::EndRenderPass => {
                    enc.end_rendering();
                    if let Some(mut a) = active_pass.take() {
                        if let Some(b) = a.barriers.end_subpass(&a.pass, a.subpass) {
                            enc.pipeline_barrier(&b);
                        }
                        if let Some(b) = a.barriers.end(&a.pass) {
                            enc.pipeline_barrier(&b);
                        }
                    }
                    self.places.end_pass();
                }
                Cmd::BeginRendering(r) => {
                    let info = self.rendering_info(r);
                    enc.begin_rendering(&info);
                    let view = r.colors.first().map_or(0, |c| c.view);
                    let extent = (r.area.width, r.area.height);
                    self.places
                        .begin_rendering(self.frame, r.flags, view, extent);
                }
                Cmd::EndRendering => {
                    enc.end_rendering();
                    self.places.end_pass();
                }
                Cmd::BeginLabel { name } => self.places.begin_label(name),
                Cmd::EndLabel => self.places.end_label(),
                Cmd::InsertLabel => {}
                Cmd::BeginConditionalRendering {
                    buffer,
                    offset,
                    inverted,
                } => {
                    let addr = self.objects.buffer_addr(*buffer, *offset).unwrap_or(0);
                    enc.begin_conditional_rendering(addr, *inverted);
                }
                Cmd::EndConditionalRendering => {
                    enc.end_conditional_rendering();
                }
                Cmd::BindPipeline {
                    bind_point,
                    pipeline: p,
                } if *bind_point != 0 => {
                    // 0 where the shader's workgroup size is unknown: the encoder
                    // takes a stand-in.
                    let size = self.objects.compute_pipelines.get(p).copied();
                    enc.bind_compute_pipeline(size.unwrap_or(0));
                }
                Cmd::BindPipeline { pipeline: p, .. } => {
                    pipeline = *p;
                    if let Some(bound) = self.objects.pipelines.get(p) {
                        enc.bind_graphics_shaders(&bound.shaders);
                        let state = enc.state_mut();
                        match &bound.state {
                            Some(values) => state.bind_pipeline_with_state(
                                *p,
                                &bound.dynamic_states,
                                values,
                                bound.groups(),
                            ),
                            None => {
                                state.bind_pipeline(*p, &bound.dynamic_states, bound.groups());
                                state.set_topology(bound.vk_topology);
                            }
                        }
                        if let Some(mask) = bound.rp_attachments {
                            state.set_rp_attachments(mask);
                        }
                    }
                }
                Cmd::PushConstants {
                    stages,
                    offset,
                    data,
                } => {
                    // Compute's go to the compute root table, uploaded at dispatch.
                    if stages & VK_SHADER_STAGE_ALL_GRAPHICS != 0 {
                        enc.push_constants(*offset, data);
                    }
                }
                Cmd::BindVertexBuffers {
                    first_binding,
                    buffers,
                    offsets,
                } => {
                    let ranges: Vec<(u64, u32)> = buffers
                        .iter()
                        .zip(offsets)
                        .map(|(b, o)| self.objects.buffer_range(*b, *o))
                        .collect();
                    enc.bind_vertex_buffers(*first_binding, &ranges);
                }
                Cmd::BindIndexBuffer {
                    buffer,
                    offset,
                    index_type,
                } => {
                    let (addr, size) = self.objects.buffer_range(*buffer, *offset);
                    enc.bind_index_buffer(addr, size, *index_type);
                }
                Cmd::BindDescriptorSets {
                    bind_point,
                    layout,
                    first_set,
                    sets,
                    dynamic_offsets,
                } => {
                    // Compute descriptors live in the compute root table, uploaded
                    // whole at each dispatch: binding them pushes nothing.
                    if *bind_point == 0 {
                        let dynamic = if dynamic_offsets.is_empty() {
                            None
                        } else {
                            self.dynamic_buffers(*layout, *first_set, sets)
                        };
                        let addresses: smallvec::SmallVec<[u64; 4]> = sets
                            .iter()
                            .map(|s| self.descriptor_sets.address(*s))
                            .collect();
                        let bound = self.bound_sets.get(
                            &self.layouts,
                            *layout,
                            *first_set,
                            sets.len(),
                            self.device.min_cbuf_alignment(),
                        );
                        enc.bind_descriptor_sets(
                            *first_set,
                            &addresses,
                            dynamic_offsets,
                            bound.dynamic_counts.as_deref(),
                            bound.descriptor_bytes.as_deref(),
                            dynamic.as_deref(),
                        );
                    }
                }
                Cmd::SetTopology { topology } => {
                    enc.state_mut().set_topology(*topology);
                }
                Cmd::PushDescriptorSet { set, ubos } => {
                    enc.push_descriptor_set(*set);
                    enc.push_descriptor_ubos(*set, ubos);
                }
                Cmd::Generic(cmd) => {
                    execute::execute(enc, cmd, &mut self.objects, &self.gpu.state.memory)
                }
                Cmd::UpdateBuffer {
                    buffer,
                    offset,
                    data,
                } => match self.objects.buffer_addr(*buffer, *offset) {
                    Some(addr) => {
                        enc.update_buffer(addr, data.len().min(u32::MAX as usize) as u32);
                        // The copy's effect, for later indirect reads.
                        self.gpu.state.memory.write_bytes(addr, data);
                    }
                    None => self.skip("vkCmdUpdateBuffer (buffer never bound)", true),
                },
                Cmd::Draw { seq, kind, args } => draw = self.encode_draw(enc, *seq, *kind, args),
                Cmd::Work { seq, args } => draw = Some(self.encode_work(enc, *seq, args)),
                Cmd::BeginQuery { pool, query, index } => {
                    if let Some(p) = self.query_pool(*pool, *query, 1, "vkCmdBeginQuery") {
                        enc.begin_query_indexed(&p, *query, *index);
                    }
                }
                Cmd::EndQuery { pool, query, index } => {
                    if let Some(p) = self.query_pool(*pool, *query, 1, "vkCmdEndQuery") {
                        recorded = Some(enc.end_query_indexed(&p, *query, *index));
                    }
                }
                Cmd::WriteTimestamp {
                    pool,
                    query,
                    stages,
                } => {
                    if let Some(p) = self.query_pool(*pool, *query, 1, "vkCmdWriteTimestamp") {
                        recorded = Some(enc.write_timestamp(&p, *query, *stages));
                    }
                }
                Cmd::ResetQueryPool { pool, first, count } => {
                    if let Some(p) = self.query_pool(*pool, *first, *count, "vkCmdResetQueryPool") {
                        enc.reset_query_pool(&p, *first, *count);
                    }
                }
                Cmd::CopyQueryPoolResults {
                    pool,
                    first,
                    count,
                    flags,
                    ..
                } => {
                    if let Some(p) =
                        self.query_pool(*pool, *first, *count, "vkCmdCopyQueryPoolResults")
                    {
                        enc.copy_query_pool_results(&p, *first, *count, *flags);
                    }
                }
                Cmd::ExecuteCommands { command_buffers } => {
                    // NVK encodes a secondary on its own (its state starts unknown)
                    // and chains its pushes; the primary's state is unknown after.
                    if depth < 4 {
                        let (view_mask, colors) = enc.rendering();
                        for cb in command_buffers {
                            let secondary = self.recording.take(*cb);
                            let device = self.device.clone();
                            let mut sec = CommandEncoder::new(&device);
                            self.begin_secondary(&mut sec, *cb, view_mask, colors);
                            let result =
                                self.execute(&mut sec, &secondary, submit, totals, sink, depth + 1);
                            self.recording.put_back(*cb, secondary);
                            result?;
                        }
                        enc.invalidate_state();
                    }
                }
            }
            if draw.is_none() && recorded.is_none() && enc.push_is_empty() {
                // A bind or state change that pushed nothing (NVK defers most to the
                // next draw's flush): nothing to execute, count or log.
                continue;
            }
            let t1 = t0.map(|_| clock::now());
            let words = enc.take_push();
            let seq = draw.as_ref().map_or(0, |d: &DrawShape| d.seq);
            // The watched draw's stream begins with the root table updates before it.
            let next_is_watched = self
                .watch
                .as_ref()
                .is_some_and(|w| w.ordinal == self.draws && w.found.is_none());
            let logged = next_is_watched && (draw.is_some() || cmd.bind_group().is_some());
            let paused = if logged {
                self.gpu.state.method_log.get_or_insert_with(Vec::new);
                None
            } else {
                self.gpu.state.method_log.take()
            };
            let budget = match &draw {
                Some(d) => draw_budget(d, enc.view_mask(), self.options.mme_budget),
                None => self.options.mme_budget.min(DEFAULT_BUDGET),
            };
            self.gpu.set_macro_budget(budget);
            // Most replays have no runaway draw: no lookup per command then.
            let runaway = if seq == 0 || self.runaway.is_empty() {
                None
            } else {
                self.runaway.get(&seq)
            };
            let (cost, failure) = match runaway {
                Some(message) => {
                    let message = message.clone();
                    self.count_failure(BUDGET_EXCEEDED, seq, &message);
                    (ExecCost::default(), Some(message))
                }
                _ => {
                    let (cost, outcome) = match &mut draw {
                        // A draw's groups run one by one, so that what the macros a
                        // group calls emit counts in that group.
                        Some(d) if names::is_draw_kind(d.kind) => {
                            execute_draw(&mut self.gpu, words.words(), &mut d.state)
                        }
                        _ => self.gpu.execute_partial(words.words()),
                    };
                    let failure = outcome.err().map(|e| {
                        let at = if seq != 0 { seq } else { self.current_seq };
                        let message = self.fail(at, &e);
                        if seq != 0 && failure_reason(&e) == BUDGET_EXCEEDED {
                            self.runaway.insert(seq, message.clone());
                        }
                        message
                    });
                    (cost, failure)
                }
            };
            if paused.is_some() {
                self.gpu.state.method_log = paused;
            }
            if let Some(tape) = &mut self.tape {
                tape.command(words.words(), cmd.bind_group(), draw.as_ref());
            }
            if let Some(group) = cmd.bind_group() {
                self.pending
                    .cost
                    .add_group(group, cost.methods as u32, words.len() as u32);
                self.pending.cost.add_mme(group, cost.mme_instructions);
                self.pending.mme_instructions += cost.mme_instructions;
            }
            let pending = if draw.is_some() {
                std::mem::take(&mut self.pending)
            } else {
                Pending::default()
            };
            let pending_methods = u64::from(pending.cost.total_methods());
            let pending_dwords = u64::from(pending.cost.total_dwords());
            // The row carries the binds and the flush together.
            let row_state = draw.as_ref().map(|d| {
                let mut state = d.state;
                for (i, group) in StateGroup::ALL.iter().enumerate() {
                    state.add_group(*group, pending.cost.methods[i], pending.cost.dwords[i]);
                    state.add_mme(*group, pending.cost.mme_instructions[i].into());
                }
                state
            });
            let mme_instructions = cost.mme_instructions + pending.mme_instructions;
            if logged && draw.is_some() {
                let methods = self.gpu.state.method_log.take().unwrap_or_default();
                if let Some(w) = &mut self.watch {
                    w.found = Some(DrawInspection {
                        seq,
                        binds: pending.cost,
                        state: draw.as_ref().map(|d| d.state).unwrap_or_default(),
                        view_mask: enc.view_mask(),
                        dwords: words.len() as u64 + pending_dwords,
                        mme_instructions,
                        methods,
                    });
                }
            }
            let (encode_ns, exec_ns) = match (t0, t1) {
                (Some(t0), Some(t1)) => (
                    clock::ns_between(t0, t1),
                    clock::ns_between(t1, clock::now()),
                ),
                _ => (0, 0),
            };
            totals.methods += cost.methods;
            totals.dwords += words.len() as u64;
            totals.mme_instructions += cost.mme_instructions;
            self.mme_instructions += cost.mme_instructions;
            if let Some(r) = recorded {
                totals.queries += r.queries;
                totals.zero_queries += r.zero_queries;
                totals.query_ns += encode_ns + exec_ns;
            }
            if let Some(d) = draw {
                self.row_mme_instructions += mme_instructions;
                let view_mask = enc.view_mask();
                let multiview_ns = self.gpu.last_macro.map_or(0, |m| m.view_loop_ns);
                let row = DrawRow::new(
                    d.seq,
                    pipeline,
                    self.frame as u32,
                    submit,
                    self.repetition,
                    d.kind,
                    view_mask.count_ones() as u8,
                    view_mask,
                    d.instance_count,
                    d.element_count,
                    d.indirect_draw_count,
                    mme_instructions.min(u64::from(u32::MAX)) as u32,
                    (cost.methods + pending_methods).min(u64::from(u32::MAX)) as u32,
                    (words.len() as u64 + pending_dwords).min(u64::from(u32::MAX)) as u32,
                    cost.hw_draws as u32,
                    0,
                    0,
                    encode_ns,
                    exec_ns,
                    multiview_ns,
                    0,
                );
                let state = draw_state(&row_state.unwrap_or_default());
                let gpu_ns = self.gpu_ns(d.seq);
                let place = self.places.place();
                for name in self.places.take_fresh() {
                    sink.name(name);
                }
                sink.row(
                    row,
                    state,
                    d.memory_words,
                    failure.as_deref(),
                    gpu_ns,
                    place,
                )?;
                totals.draws += 1;
                totals.hw_draws += cost.hw_draws as u32;
                totals.encode_ns += encode_ns;
                totals.mme_ns += exec_ns;
                totals.multiview_ns += multiview_ns;
                self.draws += 1;
                if is_compute_kind(d.kind) {
                    self.dispatches += 1;
                }
                if is_clear_kind(d.kind) {
                    self.clears += 1;
                }
                if d.kind == results::DrawKind::PipelineBarrier {
                    self.barriers += 1;
                }
                self.hw_draws += cost.hw_draws;
                let mut f = Fnv(self.fingerprint);
                for v in [
                    d.seq,
                    mme_instructions,
                    cost.methods + pending_methods,
                    words.len() as u64 + pending_dwords,
                    cost.hw_draws,
                ] {
                    f.u64(v);
                }
                self.fingerprint = f.0;
            }
            enc.recycle_push(words);
        }
        Ok(())
    }

    /// The dynamic buffers of `sets` bound from `first_set` with pipeline layout
    /// `layout`, in order: each set's as its updates wrote them, of the kinds the
    /// pipeline layout's set layouts give (NVK reads both at the bind). `None` when
    /// the trace does not hold the layouts.
    fn dynamic_buffers(
        &self,
        layout: u64,
        first_set: u32,
        sets: &[u64],
    ) -> Option<smallvec::SmallVec<[driver::nvk::DynamicBuffer; 4]>> {
        let mut buffers = smallvec::SmallVec::new();
        for (i, set) in sets.iter().enumerate() {
            let set_layout = self.layouts.set(layout, first_set + i as u32)?;
            let written = self.descriptor_sets.dynamic_buffers(*set);
            for (j, kind) in set_layout.dynamic_kinds().enumerate() {
                buffers.push(driver::nvk::DynamicBuffer {
                    descriptor: written.get(j).copied().unwrap_or_default(),
                    uniform: kind == crate::layouts::DynamicKind::Uniform,
                });
            }
        }
        Some(buffers)
    }

    /// Executes what `enc` holds that belongs to no row (a command buffer's beginning),
    /// into the submit's totals.
    pub(super) fn execute_untimed(
        &mut self,
        enc: &mut CommandEncoder<'_>,
        totals: &mut SubmitTotals,
    ) -> Result<(), ReplayError> {
        let words = enc.take_push();
        if let Some(tape) = &mut self.tape {
            tape.push(words.words(), TapeLabel::Other);
        }
        let cost = self
            .gpu
            .execute_measured(words.words())
            .map_err(|source| ReplayError::Gpu {
                seq: self.current_seq,
                source,
            })?;
        totals.methods += cost.methods;
        totals.dwords += words.len() as u64;
        totals.mme_instructions += cost.mme_instructions;
        self.mme_instructions += cost.mme_instructions;
        enc.recycle_push(words);
        Ok(())
    }
}

/// Mesa's common render-pass code clearing attachments a subpass loads but renders to
/// in no other way (`load_attachment`): a rendering of each alone, begun and ended.
fn clear_alone(enc: &mut CommandEncoder<'_>, clears: &[RenderingInfo]) {
    for info in clears {
        enc.begin_rendering(info);
        enc.end_rendering();
    }
}
