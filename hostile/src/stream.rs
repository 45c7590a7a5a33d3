//! Hostile traces: a valid base (the synthetic trace's set-up and a frame of draws),
//! then records of every type with values from a [`Values`] source and records written
//! to break assumptions, with a submit of the base's command buffer after every few so
//! that what they recorded runs.

use std::path::Path;

use flatbuffers::FlatBufferBuilder;
use trace_format::generated::trace::*;
use trace_format::synthetic::{handles, write_synthetic_calls, SyntheticShape};
use trace_format::{CallMeta, TraceWriter, WriterOptions};

use crate::generated::{build_call, CALLS, CALL_FIELDS, FIELDS};
use crate::values::{Extreme, Mode, Values};

/// Builds a generated object-API value (they are `#[non_exhaustive]`) from the fields
/// given; the rest keep their defaults.
macro_rules! obj {
    ($t:ident { $($field:ident $(: $value:expr)?),* $(,)? }) => {{
        let mut o = $t::default();
        $(obj!(@set o, $field $(, $value)?);)*
        o
    }};
    (@set $o:ident, $field:ident) => { $o.$field = $field; };
    (@set $o:ident, $field:ident, $value:expr) => { $o.$field = $value; };
}

/// Records between two submits of the base's command buffer.
const SUBMIT_EVERY: usize = 8;
/// `VK_OBJECT_TYPE_PIPELINE`.
const OBJECT_TYPE_PIPELINE: u32 = 19;
/// The first SPIR-V word.
const SPIRV_MAGIC: u32 = 0x0723_0203;

/// One hostile trace to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// What it is, for messages.
    pub name: String,
    /// Where its values come from.
    pub mode: Mode,
}

/// The fixed cases: every field at 0, 1 and max; each field alone at 0, 1 and max;
/// `random` seeds of random values.
pub fn cases(random: u64) -> Vec<Case> {
    let extremes = [Extreme::Zero, Extreme::One, Extreme::Max];
    let mut cases: Vec<Case> = extremes
        .iter()
        .map(|&e| Case {
            name: format!("every field {e:?}"),
            mode: Mode::All(e),
        })
        .collect();
    cases.extend(extremes.iter().map(|&e| Case {
        name: format!("each field alone {e:?}"),
        mode: Mode::Field(0, e),
    }));
    cases.extend((1..=random).map(|seed| Case {
        name: format!("random values, seed {seed}"),
        mode: Mode::Random(seed),
    }));
    cases
}

/// The generic commands the replayer decodes (command buffer and set-up commands), with
/// their parameter counts, and one it does not know.
fn generic_commands() -> Vec<(String, usize)> {
    let mut commands: Vec<(String, usize)> = replayer::generic::DECODED
        .iter()
        .chain(replayer::generic::DECODED_SETUP)
        .map(|&(name, arity)| (name.to_string(), arity))
        .collect();
    commands.push(("vkCmdNoSuchCommandEXT".into(), 3));
    commands
}

struct Out {
    writer: TraceWriter,
    records: usize,
    time: u64,
}

impl Out {
    fn meta(&mut self) -> CallMeta {
        self.time += 1000;
        CallMeta {
            thread_id: 1,
            timestamp_ns: self.time,
            result: 0,
        }
    }

    fn call(&mut self, call: &CallT) -> trace_format::Result<()> {
        let meta = self.meta();
        self.writer.append(meta, call)?;
        self.counted()
    }

    fn built(&mut self, index: usize, v: &mut Values) -> trace_format::Result<()> {
        let meta = self.meta();
        self.writer
            .append_with(meta, |fbb| build_call(fbb, index, v))?;
        self.counted()
    }

    /// After every few records, the base's command buffer submitted, a frame ended and
    /// the command buffer begun again.
    fn counted(&mut self) -> trace_format::Result<()> {
        self.records += 1;
        if self.records % SUBMIT_EVERY == 0 {
            self.submit()?;
        }
        Ok(())
    }

    fn submit(&mut self) -> trace_format::Result<()> {
        let submit = CallT::QueueSubmit(Box::new(obj!(QueueSubmitT {
            queue: handles::QUEUE,
            submits: Some(vec![obj!(SubmitInfoT {
                command_buffers: Some(vec![handles::COMMAND_BUFFER]),
            })]),
            fence: 0,
        })));
        let meta = self.meta();
        self.writer.append(meta, &submit)?;
        let meta = self.meta();
        self.writer.end_frame(meta)?;
        // Recorded anew: each hostile record runs once.
        let begin = CallT::BeginCommandBuffer(Box::new(obj!(BeginCommandBufferT {
            command_buffer: handles::COMMAND_BUFFER,
        })));
        let meta = self.meta();
        self.writer.append(meta, &begin)?;
        Ok(())
    }
}

/// Writes the hostile trace of `mode` to `path`: the base, then every record type
/// (each generic command the replayer decodes, once; in [`Mode::Field`], once per field
/// the record reaches, that field at the extreme), then [`write_special`]'s records.
/// Returns how many hostile records it holds.
pub fn write_case(path: &Path, mode: &Mode) -> trace_format::Result<usize> {
    let mut out = Out {
        writer: TraceWriter::create(path, &WriterOptions::default())?,
        records: 0,
        time: 0,
    };
    write_base(&mut out.writer)?;
    let commands = generic_commands();
    let mut v = Values::new(mode.clone(), &handles::ALL, &commands);
    v.prefer_command_buffer(handles::COMMAND_BUFFER);
    let vulkan_call = CALLS.iter().position(|&c| c == "VulkanCall");
    for (index, fields) in CALL_FIELDS.iter().enumerate() {
        let repeats = if Some(index) == vulkan_call {
            commands.len()
        } else {
            1
        };
        for _ in 0..repeats {
            if matches!(mode, Mode::Field(..)) {
                for &field in fields.iter() {
                    v.set_field(field);
                    out.built(index, &mut v)?;
                }
            } else {
                out.built(index, &mut v)?;
            }
        }
    }
    write_special(&mut out)?;
    out.submit()?;
    let records = out.records;
    out.writer.finish()?;
    Ok(records)
}

/// Writes a trace for a fuzzer's input: the base, then records whose types and values
/// all come from `input`, until it runs out (at most `max_records`).
pub fn write_fuzzed(path: &Path, input: &[u8], max_records: usize) -> trace_format::Result<usize> {
    let mut out = Out {
        writer: TraceWriter::create(path, &WriterOptions::default())?,
        records: 0,
        time: 0,
    };
    write_base(&mut out.writer)?;
    let commands = generic_commands();
    let mut v = Values::new(Mode::Bytes(input.to_vec()), &handles::ALL, &commands);
    v.prefer_command_buffer(handles::COMMAND_BUFFER);
    while !v.exhausted() && out.records < max_records {
        let index = v.scalar::<u8>(0) as usize % CALLS.len();
        out.built(index, &mut v)?;
    }
    out.submit()?;
    let records = out.records;
    out.writer.finish()?;
    Ok(records)
}

/// The valid base: the synthetic trace's set-up and one frame of draws under a
/// two-view mask.
fn write_base(writer: &mut TraceWriter) -> trace_format::Result<()> {
    write_synthetic_calls(
        writer,
        &SyntheticShape {
            frames: 1,
            draws_per_frame: 12,
            view_mask: 0b11,
        },
    )
}

/// Records written to break a reader's or the model's assumptions: indirect draws of
/// `u32::MAX` commands with stride 0, offsets past the memory they name, query indices
/// past the pool, a view mask with every bit, garbage and truncated SPIR-V, a destroyed
/// pipeline bound and drawn with, a command buffer that executes itself, memory
/// contents at the end of the address space.
fn write_special(out: &mut Out) -> trace_format::Result<()> {
    let cb = handles::COMMAND_BUFFER;
    let [_, _, device, _, memory, vertex_buffer, index_buffer, indirect_buffer, _, _, _, pipeline, _, _, query_pool, _, _] =
        handles::ALL;
    let draw = || {
        CallT::CmdDraw(Box::new(obj!(CmdDrawT {
            command_buffer: cb,
            vertex_count: 3,
            instance_count: 1,
            first_vertex: 0,
            first_instance: 0,
        })))
    };
    let calls = vec![
        CallT::CmdDrawIndirect(Box::new(obj!(CmdDrawIndirectT {
            command_buffer: cb,
            buffer: indirect_buffer,
            offset: 0,
            draw_count: u32::MAX,
            stride: 0,
        }))),
        CallT::CmdDrawIndexedIndirectCount(Box::new(obj!(CmdDrawIndexedIndirectCountT {
            command_buffer: cb,
            buffer: indirect_buffer,
            offset: 0,
            count_buffer: indirect_buffer,
            count_buffer_offset: 0,
            max_draw_count: u32::MAX,
            stride: 0,
        }))),
        CallT::CmdDrawIndirect(Box::new(obj!(CmdDrawIndirectT {
            command_buffer: cb,
            buffer: indirect_buffer,
            offset: u64::MAX - 3,
            draw_count: 4,
            stride: 20,
        }))),
        CallT::CmdBeginQuery(Box::new(obj!(CmdBeginQueryT {
            command_buffer: cb,
            query_pool,
            query: u32::MAX,
            flags: 0,
        }))),
        CallT::CmdEndQuery(Box::new(obj!(CmdEndQueryT {
            command_buffer: cb,
            query_pool,
            query: u32::MAX,
        }))),
        CallT::CmdResetQueryPool(Box::new(obj!(CmdResetQueryPoolT {
            command_buffer: cb,
            query_pool,
            first_query: u32::MAX - 1,
            query_count: u32::MAX,
        }))),
        CallT::CmdCopyQueryPoolResults(Box::new(obj!(CmdCopyQueryPoolResultsT {
            command_buffer: cb,
            query_pool,
            first_query: 0,
            query_count: u32::MAX,
            dst_buffer: vertex_buffer,
            dst_offset: u64::MAX,
            stride: 0,
            flags: u32::MAX,
        }))),
        CallT::CmdBeginRendering(Box::new(obj!(CmdBeginRenderingT {
            command_buffer: cb,
            layer_count: u32::MAX,
            view_mask: u32::MAX,
        }))),
        draw(),
        CallT::CmdEndRendering(Box::new(obj!(CmdEndRenderingT { command_buffer: cb }))),
        CallT::CreateShaderModule(Box::new(obj!(CreateShaderModuleT {
            device,
            shader_module: 0x7001,
            flags: 0,
            code: Some(vec![0xdead_beef; 64]),
        }))),
        CallT::CreateShaderModule(Box::new(obj!(CreateShaderModuleT {
            device,
            shader_module: 0x7002,
            flags: 0,
            code: Some(vec![SPIRV_MAGIC, 0x0001_0000, 0, u32::MAX, 0, 0x0004_0011]),
        }))),
        CallT::CreateShaderModule(Box::new(obj!(CreateShaderModuleT {
            device,
            shader_module: 0x7003,
            flags: 0,
            code: Some(vec![SPIRV_MAGIC]),
        }))),
        CallT::DestroyObject(Box::new(obj!(DestroyObjectT {
            device,
            object_type: OBJECT_TYPE_PIPELINE,
            handle: pipeline,
        }))),
        CallT::CmdBindPipeline(Box::new(obj!(CmdBindPipelineT {
            command_buffer: cb,
            pipeline_bind_point: 0,
            pipeline,
        }))),
        draw(),
        CallT::MemoryContents(Box::new(obj!(MemoryContentsT {
            memory,
            offset: u64::MAX - 2,
            data: Some(vec![0xff; 16]),
        }))),
        CallT::MemoryContents(Box::new(obj!(MemoryContentsT {
            memory: 0x9999,
            offset: 0,
            data: Some(vec![0xff; 16]),
        }))),
        CallT::CmdUpdateBuffer(Box::new(obj!(CmdUpdateBufferT {
            command_buffer: cb,
            buffer: vertex_buffer,
            offset: u64::MAX - 8,
            data: Some(vec![1; 64]),
        }))),
        CallT::CmdBindVertexBuffers(Box::new(obj!(CmdBindVertexBuffersT {
            command_buffer: cb,
            first_binding: u32::MAX,
            buffers: Some(vec![vertex_buffer]),
            offsets: Some(vec![u64::MAX]),
        }))),
        CallT::CmdBindIndexBuffer(Box::new(obj!(CmdBindIndexBufferT {
            command_buffer: cb,
            buffer: index_buffer,
            offset: u64::MAX,
            index_type: u32::MAX,
        }))),
        CallT::CmdDrawIndexed(Box::new(obj!(CmdDrawIndexedT {
            command_buffer: cb,
            index_count: u32::MAX,
            instance_count: u32::MAX,
            first_index: u32::MAX,
            vertex_offset: i32::MIN,
            first_instance: u32::MAX,
        }))),
        CallT::CmdExecuteCommands(Box::new(obj!(CmdExecuteCommandsT {
            command_buffer: cb,
            command_buffers: Some(vec![cb; 16]),
        }))),
        CallT::AllocateMemory(Box::new(obj!(AllocateMemoryT {
            device,
            memory: 0x7004,
            size: u64::MAX,
            memory_type_index: u32::MAX,
        }))),
        CallT::CmdBeginRenderPass(Box::new(obj!(CmdBeginRenderPassT {
            command_buffer: cb,
            render_pass: 0x7005,
            framebuffer: 0x7006,
        }))),
        CallT::CmdNextSubpass(Box::new(obj!(CmdNextSubpassT {
            command_buffer: cb,
            contents: u32::MAX,
        }))),
        draw(),
    ];
    for call in &calls {
        out.call(call)?;
    }
    // The same command buffer submitted many times in one submit.
    let submit = CallT::QueueSubmit(Box::new(obj!(QueueSubmitT {
        queue: handles::QUEUE,
        submits: Some(vec![obj!(SubmitInfoT {
            command_buffers: Some(vec![cb; 64]),
        })]),
        fence: 0,
    })));
    out.call(&submit)
}

/// Builds one record of call `index` into a fresh builder (for tests of the builders).
pub fn build_alone(index: usize, mode: &Mode) -> usize {
    let mut fbb = FlatBufferBuilder::new();
    let mut v = Values::new(mode.clone(), &handles::ALL, &generic_commands());
    let (_, offset) = build_call(&mut fbb, index, &mut v);
    fbb.finish_minimal(offset);
    fbb.finished_data().len()
}

/// The field ids, for messages: `Table.field`.
pub fn field_name(field: u16) -> String {
    FIELDS
        .get(usize::from(field))
        .map_or_else(|| format!("field {field}"), |(t, f)| format!("{t}.{f}"))
}
