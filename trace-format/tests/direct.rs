//! Records laid out directly (without a flatbuffers builder) read back as the same
//! records a builder makes, through the verifying reader, for every field kind; blocks
//! of interleaved numbers merge into one order.

use trace_format::direct::DirectField as F;
use trace_format::generated::trace::*;
use trace_format::record_block::{RecordBlock, RecordEncoder};
use trace_format::sequencer::{command_key, numbered_key, Sequencer};
use trace_format::{CallMeta, TraceReader, TraceWriter, WriterOptions};

macro_rules! mk {
    ($t:ident { $($field:ident : $value:expr),* $(,)? }) => {{
        let mut value = $t::default();
        $(value.$field = $value;)*
        value
    }};
}

/// Calls with every direct field kind: 8- and 4-byte scalars in any order, a negative
/// `int`, byte vectors of lengths that leave the next object unaligned (and empty),
/// vectors of `uint` and `ulong`.
fn calls() -> Vec<(CallT, Call, Vec<F<'static>>)> {
    vec![
        (
            CallT::CmdDraw(Box::new(mk!(CmdDrawT {
                command_buffer: 0x1122_3344_5566_7788,
                vertex_count: 3,
                instance_count: 1,
                first_vertex: 7,
                first_instance: 0
            }))),
            Call::CmdDraw,
            vec![
                F::U64(0x1122_3344_5566_7788),
                F::U32(3),
                F::U32(1),
                F::U32(7),
                F::U32(0),
            ],
        ),
        (
            CallT::CmdDrawIndexed(Box::new(mk!(CmdDrawIndexedT {
                command_buffer: 9,
                index_count: 36,
                instance_count: 2,
                first_index: 5,
                vertex_offset: -4,
                first_instance: 1
            }))),
            Call::CmdDrawIndexed,
            vec![
                F::U64(9),
                F::U32(36),
                F::U32(2),
                F::U32(5),
                F::I32(-4),
                F::U32(1),
            ],
        ),
        (
            CallT::CmdPushConstants(Box::new(mk!(CmdPushConstantsT {
                command_buffer: 9,
                layout: 0xabc,
                stage_flags: 0x11,
                offset: 4,
                data: Some(vec![1, 2, 3, 4, 5])
            }))),
            Call::CmdPushConstants,
            vec![
                F::U64(9),
                F::U64(0xabc),
                F::U32(0x11),
                F::U32(4),
                F::Bytes(&[1, 2, 3, 4, 5]),
            ],
        ),
        (
            CallT::CmdPushConstants(Box::new(mk!(CmdPushConstantsT {
                command_buffer: 9,
                layout: 0xabc,
                stage_flags: 0x11,
                offset: 0,
                data: Some(vec![])
            }))),
            Call::CmdPushConstants,
            vec![
                F::U64(9),
                F::U64(0xabc),
                F::U32(0x11),
                F::U32(0),
                F::Bytes(&[]),
            ],
        ),
        (
            CallT::CmdBindDescriptorSets(Box::new(mk!(CmdBindDescriptorSetsT {
                command_buffer: 9,
                pipeline_bind_point: 0,
                layout: 0xabc,
                first_set: 1,
                descriptor_sets: Some(vec![0x10, 0x20, 0x30]),
                dynamic_offsets: Some(vec![256, 512])
            }))),
            Call::CmdBindDescriptorSets,
            vec![
                F::U64(9),
                F::U32(0),
                F::U64(0xabc),
                F::U32(1),
                F::U64s(&[0x10, 0x20, 0x30]),
                F::U32s(&[256, 512]),
            ],
        ),
        (
            CallT::CmdBindVertexBuffers(Box::new(mk!(CmdBindVertexBuffersT {
                command_buffer: 9,
                first_binding: 2,
                buffers: Some(vec![0x40]),
                offsets: Some(vec![64])
            }))),
            Call::CmdBindVertexBuffers,
            vec![F::U64(9), F::U32(2), F::U64s(&[0x40]), F::U64s(&[64])],
        ),
        // A generic record as the layer writes it: no name, no parameter tables, its
        // packed parameters, its command's number.
        (
            CallT::VulkanCall(Box::new(mk!(VulkanCallT {
                packed: Some(vec![1, 0, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0, 0]),
                command_id: 7
            }))),
            Call::VulkanCall,
            vec![
                F::Absent,
                F::Absent,
                F::Bytes(&[1, 0, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0, 0]),
                F::U32(7),
            ],
        ),
        // One named by its name (an import's command the list lacks).
        (
            CallT::VulkanCall(Box::new(mk!(VulkanCallT {
                command: Some(String::new()),
                packed: Some(vec![])
            }))),
            Call::VulkanCall,
            vec![F::Str(""), F::Absent, F::Bytes(&[]), F::U32(0)],
        ),
    ]
}

fn meta(i: usize) -> CallMeta {
    CallMeta {
        thread_id: 3,
        timestamp_ns: 1000 + i as u64,
        result: -(i as i32),
    }
}

/// Writes `block` (numbered calls from 0) as the trace `path`.
fn write_block(block: RecordBlock, path: &std::path::Path) {
    let mut sequencer =
        Sequencer::new(TraceWriter::create(path, &WriterOptions::default()).unwrap());
    sequencer.add(block).unwrap();
    sequencer.release_all().unwrap();
    sequencer.finish().unwrap();
}

/// Writes `block` (numbered calls from 0) as a trace and reads every record back.
fn write_and_read(block: RecordBlock) -> Vec<RecordT> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    write_block(block, &path);
    let mut records = Vec::new();
    for chunk in TraceReader::open(&path).unwrap() {
        records.extend(chunk.unwrap().records().map(|r| r.unpack()));
    }
    records
}

#[test]
fn direct_records_read_back_as_the_builders_records() {
    let calls = calls();
    let mut built = RecordBlock::new();
    let mut direct = RecordBlock::new();
    let mut encoder = RecordEncoder::new();
    for (i, (call, call_type, fields)) in calls.iter().enumerate() {
        let key = numbered_key(i as u64);
        built.push(encoder.encode(key, meta(i), |fbb| (*call_type, call.pack(fbb).unwrap())));
        direct.push_direct(key, meta(i), *call_type, fields);
    }
    let from_builder = write_and_read(built);
    let from_direct = write_and_read(direct);
    assert_eq!(from_builder.len(), calls.len());
    assert_eq!(from_direct, from_builder);
    for (record, (call, _, _)) in from_direct.iter().zip(&calls) {
        assert_eq!(&record.call, call);
    }
}

#[test]
fn records_taken_out_of_a_block_and_pushed_into_another_stay_the_same() {
    // Compact and finished records alternating, in one block.
    let calls = calls();
    let mut first = RecordBlock::new();
    let mut encoder = RecordEncoder::new();
    for (i, (call, call_type, fields)) in calls.iter().enumerate() {
        let key = numbered_key(i as u64);
        if i % 2 == 0 {
            first.push_direct(key, meta(i), *call_type, fields);
        } else {
            first.push(encoder.encode(key, meta(i), |fbb| (*call_type, call.pack(fbb).unwrap())));
        }
    }
    let mut copy = RecordBlock::new();
    let mut moved = RecordBlock::new();
    for (i, (_, call_type, fields)) in calls.iter().enumerate() {
        let key = numbered_key(i as u64);
        copy.push_direct(key, meta(i), *call_type, fields);
        moved.push(first.pop().unwrap().unwrap());
    }
    assert!(first.pop().unwrap().is_none());
    let moved = write_and_read(moved);
    assert_eq!(moved.len(), calls.len());
    assert_eq!(moved, write_and_read(copy));
}

#[test]
fn field_lists_that_do_not_match_the_schema_are_named() {
    use trace_format::direct::schema_mismatch;
    for (_, call_type, fields) in calls() {
        assert_eq!(schema_mismatch(call_type, &fields), None);
    }
    // A field missing, and a `uint` where the schema has a `ulong`.
    let missing = schema_mismatch(Call::CmdDraw, &[F::U64(1), F::U32(3)]).unwrap();
    assert!(
        missing.contains("CmdDraw: 2 fields given, the schema has 5"),
        "{missing}"
    );
    let wrong = schema_mismatch(Call::CmdBindPipeline, &[F::U64(1), F::U32(0), F::U32(2)]).unwrap();
    assert!(wrong.contains("CmdBindPipeline.pipeline"), "{wrong}");
    // A scalar cannot be left out (it has no offset to leave at 0), nor a string be bytes.
    let absent = schema_mismatch(Call::CmdBindPipeline, &[F::U64(1), F::U32(0), F::Absent]);
    assert!(absent.unwrap().contains("CmdBindPipeline.pipeline"));
    let bytes = schema_mismatch(
        Call::VulkanCall,
        &[F::Bytes(b"vk"), F::Absent, F::Bytes(&[]), F::U32(0)],
    );
    assert!(bytes.unwrap().contains("VulkanCall.command"));
}

/// One recorded call of [`four_threads`]: its thread, its key, its place in the order
/// the calls were made (a draw's vertex count carries it).
#[derive(Clone, Copy, Debug)]
struct Made {
    thread: u64,
    key: u64,
    step: u32,
}

/// Four threads making 400 calls between them, in a fixed pseudo-random interleaving;
/// one call in eight is numbered (it takes the counter), the rest are commands (they
/// read it). Each thread's calls, in blocks of up to 25, as (thread, first key, block).
fn four_threads() -> (Vec<Made>, Vec<(u64, u64, RecordBlock)>) {
    let mut counter = 0u64;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut made = Vec::new();
    for step in 0..400u32 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let thread = state % 4;
        let key = if state % 8 == 5 {
            counter += 1;
            numbered_key(counter - 1)
        } else {
            command_key(counter)
        };
        made.push(Made { thread, key, step });
    }
    let blocks = blocks_of(&made, |block, m| {
        block.push_direct(m.key, meta(m.step as usize), Call::CmdDraw, &draw_fields(m));
    });
    (made, blocks)
}

/// Each thread's records of `made` in blocks of 25 (with the thread and the first
/// record's key), each record pushed by `push`.
fn blocks_of(
    made: &[Made],
    mut push: impl FnMut(&mut RecordBlock, &Made),
) -> Vec<(u64, u64, RecordBlock)> {
    let mut blocks = Vec::new();
    for thread in 0..4 {
        let mine: Vec<&Made> = made.iter().filter(|m| m.thread == thread).collect();
        for part in mine.chunks(25) {
            let mut block = RecordBlock::new();
            for m in part {
                push(&mut block, m);
            }
            blocks.push((thread, part[0].key, block));
        }
    }
    blocks
}

/// The fields of the draw made at `m`: its thread as the command buffer, its step as
/// the vertex count.
fn draw_fields(m: &Made) -> [F<'static>; 5] {
    [
        F::U64(m.thread),
        F::U32(m.step),
        F::U32(1),
        F::U32(0),
        F::U32(0),
    ]
}

/// The calls a trace holds, as (thread, step), checking their numbers are gapless.
fn written_calls(path: &std::path::Path) -> Vec<(u64, u32)> {
    let mut calls = Vec::new();
    for chunk in TraceReader::open(path).unwrap() {
        for record in chunk.unwrap().records().map(|r| r.unpack()) {
            assert_eq!(
                record.envelope.seq,
                calls.len() as u64,
                "numbers are gapless"
            );
            let CallT::CmdDraw(draw) = &record.call else {
                panic!("record {} is not a draw", calls.len());
            };
            calls.push((draw.command_buffer, draw.vertex_count));
        }
    }
    calls
}

#[test]
fn blocks_from_many_threads_merge_by_key_once_released() {
    // The threads' blocks arrive interleaved in a scrambled order (each thread's in
    // its own order, as the capture layer hands them over); nothing is written before a release; a
    // release writes exactly what lies below it; the trace keeps every thread's own
    // order, puts every numbered call in its place and every command between the
    // numbered calls it was made between.
    let (made, mut blocks) = four_threads();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    let mut sequencer =
        Sequencer::new(TraceWriter::create(&path, &WriterOptions::default()).unwrap());
    // Blocks are listed thread by thread: take them from the threads' queues in turn,
    // in a scrambled choice of thread.
    let mut queues: Vec<std::collections::VecDeque<RecordBlock>> =
        (0..4).map(|_| Default::default()).collect();
    for (thread, _, block) in blocks.drain(..) {
        queues[thread as usize].push_back(block);
    }
    let mut turn = 3usize;
    while queues.iter().any(|q| !q.is_empty()) {
        turn = (turn * 5 + 1) % 4;
        if let Some(block) = queues[turn].pop_front() {
            sequencer.add(block).unwrap();
        }
    }
    assert_eq!(sequencer.writer().next_seq(), 0, "nothing is released yet");
    assert!(sequencer.held_bytes() > 0);
    let numbered = made.iter().filter(|m| m.key % 2 == 0).count() as u64;
    let c = numbered / 2;
    sequencer.release(c).unwrap();
    let below = made.iter().filter(|m| m.key <= command_key(c)).count() as u64;
    assert_eq!(sequencer.writer().next_seq(), below);
    sequencer.release_all().unwrap();
    assert_eq!(sequencer.held_bytes(), 0);
    assert_eq!(sequencer.waiting_for(), None);
    sequencer.finish().unwrap();
    let calls = written_calls(&path);
    assert_eq!(calls.len(), made.len());
    let key_of = |step: u32| made[step as usize].key;
    for pair in calls.windows(2) {
        assert!(
            key_of(pair[0].1) <= key_of(pair[1].1),
            "{pair:?} out of key order"
        );
    }
    for thread in 0..4 {
        let steps: Vec<u32> = calls
            .iter()
            .filter(|c| c.0 == thread)
            .map(|c| c.1)
            .collect();
        assert!(
            steps.windows(2).all(|w| w[0] < w[1]),
            "thread {thread} reordered"
        );
    }
}

#[test]
fn a_numbered_call_not_yet_seen_holds_back_what_follows_it() {
    // The block holding some numbered call never arrives: everything before that call
    // is written, nothing after it, and the sequencer says what it waits for.
    let (made, blocks) = four_threads();
    let (missing_at, first_missing_key) = blocks
        .iter()
        .enumerate()
        .filter(|(_, (_, first, _))| first % 2 == 0)
        .max_by_key(|(_, (_, first, _))| *first)
        .map(|(i, (_, first, _))| (i, *first))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    let mut sequencer =
        Sequencer::new(TraceWriter::create(&path, &WriterOptions::default()).unwrap());
    let mut held = 0;
    for (i, (_, _, block)) in blocks.into_iter().enumerate() {
        if i != missing_at {
            held += block.len();
            sequencer.add(block).unwrap();
        }
    }
    sequencer.release_all().unwrap();
    let written = sequencer.writer().next_seq() as usize;
    let before = made.iter().filter(|m| m.key < first_missing_key).count();
    assert_eq!(written, before);
    assert_eq!(
        sequencer.waiting_for(),
        Some((first_missing_key / 2 - 1, held - written))
    );
    sequencer.finish().unwrap();
    assert_eq!(written_calls(&path).len(), before);
}

#[test]
fn commands_with_nothing_numbered_between_are_written_once_collected() {
    // One thread records a long command buffer and nothing numbered: a release of the
    // counter's value lets all of it be written, and commands of that key that come
    // after the release follow at once.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    let mut sequencer =
        Sequencer::new(TraceWriter::create(&path, &WriterOptions::default()).unwrap());
    let block = |steps: std::ops::Range<u32>| {
        let mut block = RecordBlock::new();
        for step in steps {
            let fields = [F::U64(7), F::U32(step), F::U32(1), F::U32(0), F::U32(0)];
            block.push_direct(command_key(0), meta(step as usize), Call::CmdDraw, &fields);
        }
        block
    };
    sequencer.add(block(0..100)).unwrap();
    assert_eq!(sequencer.writer().next_seq(), 0);
    sequencer.release(0).unwrap();
    assert_eq!(sequencer.writer().next_seq(), 100);
    assert_eq!(sequencer.held_bytes(), 0);
    sequencer.add(block(100..150)).unwrap();
    assert_eq!(sequencer.writer().next_seq(), 150);
    sequencer.finish().unwrap();
    let steps: Vec<u32> = written_calls(&path)
        .into_iter()
        .map(|(_, step)| step)
        .collect();
    assert_eq!(steps, (0..150).collect::<Vec<_>>());
}

/// Records of four threads, merged, keep each one's thread, timestamp and result and
/// its fields, whether it went into the trace alone or in a run with those after it:
/// compact records of each thread between finished ones (every fifth) and frame
/// boundaries (every 37th, as finished records), small chunks so runs meet chunk ends.
#[test]
fn merged_records_keep_their_thread_time_and_result() {
    let (made, _) = four_threads();
    let meta_of = |m: &Made| CallMeta {
        thread_id: 100 + m.thread,
        // Runs of equal timestamps, as the layer's clock gives them.
        timestamp_ns: 5_000 + u64::from(m.step / 3) * 7,
        result: if m.step % 11 == 0 {
            -(m.step as i32)
        } else {
            0
        },
    };
    let mut encoder = RecordEncoder::new();
    let blocks = blocks_of(&made, |block, m| {
        let meta = meta_of(m);
        if m.step % 37 == 0 {
            block.push(encoder.encode(m.key, meta, |fbb| {
                let b = FrameBoundary::create(fbb, &FrameBoundaryArgs { frame: 0 });
                (Call::FrameBoundary, b.as_union_value())
            }));
        } else if m.step % 5 == 0 {
            let call = CallT::CmdSetPrimitiveTopology(Box::new(mk!(CmdSetPrimitiveTopologyT {
                command_buffer: m.thread,
                topology: m.step
            })));
            block.push(encoder.encode(m.key, meta, |fbb| {
                (Call::CmdSetPrimitiveTopology, call.pack(fbb).unwrap())
            }));
        } else {
            block.push_direct(m.key, meta, Call::CmdDraw, &draw_fields(m));
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    let options = WriterOptions {
        chunk_target_bytes: 700,
        ..WriterOptions::default()
    };
    let mut sequencer = Sequencer::new(TraceWriter::create(&path, &options).unwrap());
    for (_, _, block) in blocks {
        sequencer.add(block).unwrap();
    }
    sequencer.release_all().unwrap();
    sequencer.finish().unwrap();
    let mut seen = 0;
    let mut frames = 0;
    for chunk in TraceReader::open(&path).unwrap() {
        for record in chunk.unwrap().records().map(|r| r.unpack()) {
            let step = match &record.call {
                CallT::CmdDraw(d) => d.vertex_count,
                CallT::CmdSetPrimitiveTopology(t) => t.topology,
                CallT::FrameBoundary(_) => {
                    frames += 1;
                    made.iter()
                        .filter(|m| m.step % 37 == 0)
                        .nth(frames - 1)
                        .map_or(u32::MAX, |m| m.step)
                }
                other => panic!("unexpected {other:?}"),
            };
            let m = &made[step as usize];
            let want = meta_of(m);
            assert_eq!(
                (
                    record.envelope.thread_id,
                    record.envelope.timestamp_ns,
                    record.envelope.result
                ),
                (want.thread_id, want.timestamp_ns, want.result),
                "record {seen} (step {step})"
            );
            assert_eq!(record.envelope.seq, seen as u64, "numbers are gapless");
            seen += 1;
        }
    }
    assert_eq!(seen, made.len());
}

#[test]
fn a_numbered_call_recorded_twice_stops_the_trace_naming_it() {
    let draw = |block: &mut RecordBlock, n: u64| {
        let fields = [F::U64(1), F::U32(3), F::U32(1), F::U32(0), F::U32(0)];
        block.push_direct(numbered_key(n), meta(n as usize), Call::CmdDraw, &fields);
    };
    let mut encoder = RecordEncoder::new();
    let mut boundary = |block: &mut RecordBlock, n: u64| {
        block.push(encoder.encode(numbered_key(n), meta(n as usize), |fbb| {
            let b = FrameBoundary::create(fbb, &FrameBoundaryArgs { frame: n });
            (Call::FrameBoundary, b.as_union_value())
        }));
    };
    // The repeat within a run of compact records, taken one at a time after a finished
    // record, and in a second block.
    let mut in_a_run = RecordBlock::new();
    for n in [0, 1, 2, 2, 3] {
        draw(&mut in_a_run, n);
    }
    let mut one_by_one = RecordBlock::new();
    for n in [0, 1, 1] {
        boundary(&mut one_by_one, n);
    }
    let mut first = RecordBlock::new();
    draw(&mut first, 0);
    let mut second = RecordBlock::new();
    draw(&mut second, 0);
    let dir = tempfile::tempdir().unwrap();
    for (case, blocks, repeated) in [
        ("in a run", vec![in_a_run], 2),
        ("one by one", vec![one_by_one], 1),
        ("in two blocks", vec![first, second], 0),
    ] {
        let path = dir.path().join(format!("{case}.mscope"));
        let mut sequencer =
            Sequencer::new(TraceWriter::create(&path, &WriterOptions::default()).unwrap());
        let mut outcome = Ok(());
        for block in blocks {
            outcome = outcome.and_then(|()| sequencer.add(block));
        }
        let error = outcome
            .and_then(|()| sequencer.release_all())
            .expect_err(case)
            .to_string();
        assert!(
            error.contains(&format!("numbered call {repeated} recorded twice")),
            "{case}: {error}"
        );
    }
}

#[test]
fn memory_stored_as_byte_planes_reads_back_as_the_bytes_written() {
    // Words that differ in their low bytes, a tail that is not a word, and text; each
    // pushed as planes split beforehand and as bytes the record splits as it is written.
    let words: Vec<u8> = (0u32..300)
        .flat_map(|i| (0x4000_0000 ^ i).to_le_bytes())
        .chain([7, 8, 9])
        .collect();
    let text = b"not words at all, but stored as planes all the same".repeat(3);
    let mut block = RecordBlock::new();
    let mut key = 0;
    for bytes in [&words[..], &text[..]] {
        let mut planes = Vec::new();
        trace_format::byte_planes::split_into(bytes, &mut planes);
        assert_ne!(planes, bytes);
        for field in [F::BytePlanes(&planes), F::BytesAsPlanes(bytes)] {
            block.push_direct(
                numbered_key(key),
                meta(key as usize),
                Call::MemoryContents,
                &[F::U64(0x77), F::U64(4096), field],
            );
            key += 1;
        }
    }
    let records = write_and_read(block);
    let read: Vec<_> = records
        .iter()
        .map(|r| match &r.call {
            CallT::MemoryContents(c) => (c.memory, c.offset, c.data.clone().unwrap_or_default()),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    let expected =
        [&words, &words, &text.to_vec(), &text.to_vec()].map(|bytes| (0x77, 4096, bytes.clone()));
    assert_eq!(read, expected);
}

#[test]
fn a_block_whose_last_record_ends_off_a_word_boundary_merges_whole() {
    // A compact record's bytes end where its fields do: here five bytes into a word,
    // the last of its block (a generic record's packed parameters end so at random).
    for last in [&[1u8, 2, 3, 4, 5][..], &[7; 13], &[]] {
        let mut block = RecordBlock::new();
        let fields = [F::U64(9), F::U64(7), F::U32(1), F::U32(0), F::Bytes(last)];
        block.push_direct(numbered_key(0), meta(0), Call::CmdPushConstants, &fields);
        let records = write_and_read(block);
        assert_eq!(records.len(), 1);
        let CallT::CmdPushConstants(c) = &records[0].call else {
            panic!("{:?}", records[0].call);
        };
        assert_eq!(c.data.as_deref(), Some(last));
    }
}

#[test]
fn generic_records_read_by_name_whether_they_give_it_or_its_number() {
    use trace_format::direct_records::{ChunkRecord, DirectCalls};
    use trace_format::names::{command_id, command_of_id, generic_command};
    let barrier = command_id("vkCmdPipelineBarrier2").expect("the list numbers it");
    assert_eq!(command_of_id(barrier), Some("vkCmdPipelineBarrier2"));
    assert_eq!(command_of_id(0), None);
    let unknown = u32::MAX;
    assert_eq!(command_of_id(unknown), None);
    let packed: &[u8] = &[0, 0, 0, 0];
    let mut block = RecordBlock::new();
    let records: [&[F<'_>]; 3] = [
        // As the layer writes it since version 5: by number.
        &[F::Absent, F::Absent, F::Bytes(packed), F::U32(barrier)],
        // As layers wrote it before the table grew: its name, and no number field.
        &[F::Str("vkCmdSetCullMode"), F::Absent, F::Bytes(packed)],
        // A number this build does not know.
        &[F::Absent, F::Absent, F::Bytes(packed), F::U32(unknown)],
    ];
    for (i, fields) in records.iter().enumerate() {
        block.push_direct(numbered_key(i as u64), meta(i), Call::VulkanCall, fields);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    write_block(block, &path);
    let expected = [
        Some("vkCmdPipelineBarrier2"),
        Some("vkCmdSetCullMode"),
        None,
    ];
    // Laid out as tables: the name, by either field.
    let mut names = Vec::new();
    for chunk in TraceReader::open(&path).unwrap() {
        for record in chunk.unwrap().records() {
            let call = record.call_as_vulkan_call().expect("a generic record");
            assert_eq!(call.packed().map(|p| p.bytes()), Some(packed));
            names.push(generic_command(&call).map(str::to_string));
            let (name, _) = trace_format::names::record_name(&record);
            let shown = expected[names.len() - 1].unwrap_or("vkUnknownCommand");
            assert_eq!(name, shown);
        }
    }
    let expected: Vec<_> = expected.iter().map(|n| n.map(str::to_string)).collect();
    assert_eq!(names, expected);
    // Handed over as stored: the fields as written, the number last where given.
    let read = trace_format::ReadOptions {
        direct: DirectCalls::of(&[Call::VulkanCall]),
        ..Default::default()
    };
    let mut numbers = Vec::new();
    for chunk in TraceReader::open_with(&path, &read).unwrap() {
        for entry in chunk.unwrap().entries() {
            let ChunkRecord::Direct(record) = entry else {
                panic!("every generic record is handed over");
            };
            let mut cursor = record.field_cursor();
            let name = match cursor.next_field() {
                F::Str(s) => Some(s.to_string()),
                _ => None,
            };
            let _tables = cursor.next_field();
            let _packed = cursor.next_field();
            numbers.push((name, cursor.u32()));
        }
    }
    assert_eq!(
        numbers,
        [
            (None, Some(barrier)),
            (Some("vkCmdSetCullMode".to_string()), None),
            (None, Some(unknown)),
        ]
    );
}
