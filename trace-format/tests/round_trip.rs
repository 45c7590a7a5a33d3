//! Every record type written and read back unchanged, and the results file likewise.

use std::collections::BTreeSet;

use trace_format::generated::results::{DrawKind, DrawRow, MmeArch, RunInfoT, SubmitRow};
use trace_format::generated::trace::*;
use trace_format::record_block::{lay_out_stored, lay_out_stored_handing};
use trace_format::results::ROWS_PER_CHUNK;
use trace_format::{
    CallMeta, ResultsReader, ResultsWriter, SkippedCall, TraceReader, TraceWriter, WriterOptions,
};

/// Builds a generated object-API value (they are `#[non_exhaustive]`): defaults, then
/// the named fields.
macro_rules! mk {
    ($t:ident { $($field:ident : $value:expr),* $(,)? }) => {{
        #[allow(unused_mut)]
        let mut value = $t::default();
        $(value.$field = $value;)*
        value
    }};
}

macro_rules! call {
    ($variant:ident, $t:ident { $($body:tt)* }) => {
        CallT::$variant(Box::new(mk!($t { $($body)* })))
    };
    ($variant:ident, $value:expr) => {
        CallT::$variant(Box::new($value))
    };
}

fn strings(items: &[&str]) -> Option<Vec<String>> {
    Some(items.iter().map(|s| s.to_string()).collect())
}

/// One call of every type in the schema, each with distinctive field values.
fn one_of_each() -> Vec<CallT> {
    let attachment = mk!(AttachmentReferenceT {
        attachment: 1,
        layout: 2,
        aspect_mask: 1
    });
    let rendering_attachment = mk!(RenderingAttachmentT {
        image_view: 0x77,
        load_op: 1,
        clear_value: Some(mk!(ClearValueT {
            w0: 1,
            w1: 2,
            w2: 3,
            w3: 4
        }))
    });
    vec![
        call!(
            CreateInstance,
            mk!(CreateInstanceT {
                instance: 1,
                application: Some(Box::new(mk!(ApplicationInfoT {
                    application_name: Some("app".into()),
                    api_version: 4206592
                }))),
                enabled_layers: strings(&["VK_LAYER_KHRONOS_validation"]),
                enabled_extensions: strings(&["VK_KHR_surface", "VK_KHR_xcb_surface"]),
            })
        ),
        call!(DestroyInstance, mk!(DestroyInstanceT { instance: 1 })),
        call!(
            PhysicalDeviceInfo,
            mk!(PhysicalDeviceInfoT {
                physical_device: 2,
                vendor_id: 0x10de,
                device_name: Some("GPU".into()),
                max_multiview_view_count: 32
            })
        ),
        call!(
            CreateDevice,
            CreateDeviceT {
                physical_device: 2,
                device: 3,
                queues: Some(vec![mk!(DeviceQueueCreateInfoT {
                    queue_family_index: 0,
                    queue_count: 2
                })]),
                multiview: true
            }
        ),
        call!(DestroyDevice, mk!(DestroyDeviceT { device: 3 })),
        call!(
            GetDeviceQueue,
            mk!(GetDeviceQueueT {
                device: 3,
                queue_family_index: 1,
                queue_index: 1,
                queue: 4
            })
        ),
        call!(
            AllocateMemory,
            mk!(AllocateMemoryT {
                device: 3,
                memory: 5,
                size: 1 << 33,
                memory_type_index: 7
            })
        ),
        call!(
            FreeMemory,
            FreeMemoryT {
                device: 3,
                memory: 5
            }
        ),
        call!(
            MapMemory,
            MapMemoryT {
                device: 3,
                memory: 5,
                offset: 64,
                size: u64::MAX
            }
        ),
        call!(
            UnmapMemory,
            UnmapMemoryT {
                device: 3,
                memory: 5
            }
        ),
        call!(
            FlushMappedMemoryRanges,
            mk!(FlushMappedMemoryRangesT {
                device: 3,
                ranges: Some(vec![mk!(MemoryRangeT {
                    memory: 5,
                    offset: 0,
                    size: 256
                })])
            })
        ),
        call!(
            MemoryContents,
            mk!(MemoryContentsT {
                memory: 5,
                offset: 4096,
                data: Some((0..=255).collect())
            })
        ),
        call!(
            CreateBuffer,
            CreateBufferT {
                device: 3,
                buffer: 6,
                size: 1024,
                usage: 0x100
            }
        ),
        call!(
            BindBufferMemory,
            mk!(BindBufferMemoryT {
                device: 3,
                buffer: 6,
                memory: 5,
                offset: 512
            })
        ),
        call!(
            CreateImage,
            CreateImageT {
                device: 3,
                image: 7,
                format: 44,
                extent: Some(mk!(Extent3DT {
                    width: 64,
                    height: 32,
                    depth: 1
                })),
                array_layers: 4
            }
        ),
        call!(
            BindImageMemory,
            mk!(BindImageMemoryT {
                device: 3,
                image: 7,
                memory: 5,
                offset: 0
            })
        ),
        call!(
            CreateImageView,
            mk!(CreateImageViewT {
                device: 3,
                image_view: 8,
                image: 7,
                view_type: 5,
                layer_count: 4
            })
        ),
        call!(
            DestroyObject,
            mk!(DestroyObjectT {
                device: 3,
                object_type: 9,
                handle: 6
            })
        ),
        call!(
            CreateRenderPass,
            mk!(CreateRenderPassT {
                device: 3,
                render_pass: 9,
                version: 2,
                attachments: Some(vec![mk!(AttachmentDescriptionT {
                    format: 44,
                    samples: 1
                })]),
                subpasses: Some(
                    [5u32, 10, 5, 10]
                        .iter()
                        .map(|&m| mk!(SubpassDescriptionT {
                            view_mask: m,
                            color_attachments: Some(vec![attachment.clone()])
                        }))
                        .collect()
                ),
                dependencies: Some(vec![mk!(SubpassDependencyT {
                    src_subpass: 0,
                    dst_subpass: 1,
                    view_offset: -1
                })]),
                correlation_masks: Some(vec![15]),
            })
        ),
        call!(
            CreateFramebuffer,
            mk!(CreateFramebufferT {
                device: 3,
                framebuffer: 10,
                render_pass: 9,
                attachments: Some(vec![8]),
                width: 64,
                height: 32,
                layers: 1
            })
        ),
        call!(
            CmdBeginRenderPass,
            mk!(CmdBeginRenderPassT {
                command_buffer: 11,
                render_pass: 9,
                framebuffer: 10,
                render_area: Some(mk!(Rect2DT {
                    offset: mk!(Offset2DT { x: -1, y: 2 }),
                    extent: mk!(Extent2DT {
                        width: 64,
                        height: 32
                    })
                })),
                clear_values: Some(vec![mk!(ClearValueT {
                    w0: 9,
                    w1: 8,
                    w2: 7,
                    w3: 6
                })])
            })
        ),
        call!(
            CmdNextSubpass,
            mk!(CmdNextSubpassT {
                command_buffer: 11,
                contents: 1
            })
        ),
        call!(
            CmdEndRenderPass,
            mk!(CmdEndRenderPassT { command_buffer: 11 })
        ),
        call!(
            CmdBeginRendering,
            mk!(CmdBeginRenderingT {
                command_buffer: 11,
                layer_count: 1,
                view_mask: 0b1111,
                color_attachments: Some(vec![rendering_attachment.clone()]),
                depth_attachment: Some(Box::new(rendering_attachment))
            })
        ),
        call!(
            CmdEndRendering,
            mk!(CmdEndRenderingT { command_buffer: 11 })
        ),
        call!(
            CreateShaderModule,
            mk!(CreateShaderModuleT {
                device: 3,
                shader_module: 12,
                code: Some(vec![0x0723_0203, 0x0001_0300, 0, 5, 0])
            })
        ),
        call!(
            CreatePipelineLayout,
            mk!(CreatePipelineLayoutT {
                device: 3,
                pipeline_layout: 13,
                set_layouts: Some(vec![14, 15]),
                push_constant_ranges: Some(vec![mk!(PushConstantRangeT {
                    stage_flags: 0x11,
                    offset: 0,
                    size: 128
                })])
            })
        ),
        call!(
            CreateGraphicsPipelines,
            mk!(CreateGraphicsPipelinesT {
                device: 3,
                pipeline_cache: 0,
                pipelines: Some(vec![mk!(GraphicsPipelineT {
                    pipeline: 16,
                    stages: Some(vec![mk!(ShaderStageT {
                        stage: 1,
                        module: 12,
                        entry_point: Some("main".into()),
                        specialization_entries: Some(vec![mk!(SpecializationEntryT {
                            constant_id: 1,
                            offset: 0,
                            size: 4
                        })]),
                        specialization_data: Some(vec![1, 0, 0, 0])
                    })]),
                    topology: 10,
                    patch_control_points: 3,
                    layout: 13,
                    rendering: Some(Box::new(mk!(PipelineRenderingT {
                        view_mask: 3,
                        color_attachment_formats: Some(vec![44])
                    }))),
                    dynamic_states: Some(vec![0, 1])
                })])
            })
        ),
        call!(
            CreateCommandPool,
            mk!(CreateCommandPoolT {
                device: 3,
                command_pool: 17,
                queue_family_index: 0,
                flags: 2
            })
        ),
        call!(
            AllocateCommandBuffers,
            mk!(AllocateCommandBuffersT {
                device: 3,
                command_pool: 17,
                level: 1,
                command_buffers: Some(vec![11, 18])
            })
        ),
        call!(
            BeginCommandBuffer,
            mk!(BeginCommandBufferT {
                command_buffer: 18,
                flags: 2,
                inheritance: Some(Box::new(mk!(CommandBufferInheritanceT {
                    render_pass: 9,
                    subpass: 1,
                    rendering_view_mask: 5
                })))
            })
        ),
        call!(
            EndCommandBuffer,
            mk!(EndCommandBufferT { command_buffer: 18 })
        ),
        call!(
            ResetCommandBuffer,
            mk!(ResetCommandBufferT {
                command_buffer: 18,
                flags: 1
            })
        ),
        call!(
            CmdExecuteCommands,
            mk!(CmdExecuteCommandsT {
                command_buffer: 11,
                command_buffers: Some(vec![18])
            })
        ),
        call!(
            CmdBindPipeline,
            mk!(CmdBindPipelineT {
                command_buffer: 11,
                pipeline_bind_point: 0,
                pipeline: 16
            })
        ),
        call!(
            CmdBindDescriptorSets,
            mk!(CmdBindDescriptorSetsT {
                command_buffer: 11,
                layout: 13,
                first_set: 1,
                descriptor_sets: Some(vec![19]),
                dynamic_offsets: Some(vec![256])
            })
        ),
        call!(
            CmdBindVertexBuffers,
            mk!(CmdBindVertexBuffersT {
                command_buffer: 11,
                first_binding: 2,
                buffers: Some(vec![6]),
                offsets: Some(vec![16])
            })
        ),
        call!(
            CmdBindIndexBuffer,
            mk!(CmdBindIndexBufferT {
                command_buffer: 11,
                buffer: 6,
                offset: 8,
                index_type: 1
            })
        ),
        call!(
            CmdPushConstants,
            mk!(CmdPushConstantsT {
                command_buffer: 11,
                layout: 13,
                stage_flags: 1,
                offset: 16,
                data: Some(vec![1, 2, 3, 4])
            })
        ),
        call!(
            CmdDraw,
            CmdDrawT {
                command_buffer: 11,
                vertex_count: 4,
                instance_count: 2,
                first_vertex: 8,
                first_instance: 1
            }
        ),
        call!(
            CmdDrawIndexed,
            mk!(CmdDrawIndexedT {
                command_buffer: 11,
                index_count: 6,
                instance_count: 1,
                first_index: 3,
                vertex_offset: -2,
                first_instance: 0
            })
        ),
        call!(
            CmdDrawIndirect,
            mk!(CmdDrawIndirectT {
                command_buffer: 11,
                buffer: 6,
                offset: 0,
                draw_count: 2,
                stride: 16
            })
        ),
        call!(
            CmdDrawIndexedIndirect,
            mk!(CmdDrawIndexedIndirectT {
                command_buffer: 11,
                buffer: 6,
                offset: 32,
                draw_count: 3,
                stride: 20
            })
        ),
        call!(
            CmdDrawIndirectCount,
            mk!(CmdDrawIndirectCountT {
                command_buffer: 11,
                buffer: 6,
                offset: 0,
                count_buffer: 6,
                count_buffer_offset: 512,
                max_draw_count: 4,
                stride: 16
            })
        ),
        call!(
            CmdDrawIndexedIndirectCount,
            mk!(CmdDrawIndexedIndirectCountT {
                command_buffer: 11,
                buffer: 6,
                count_buffer: 6,
                count_buffer_offset: 516,
                max_draw_count: 8,
                stride: 20
            })
        ),
        call!(
            CmdDrawIndirectByteCount,
            mk!(CmdDrawIndirectByteCountT {
                command_buffer: 11,
                instance_count: 1,
                counter_buffer: 6,
                counter_offset: 4,
                vertex_stride: 12
            })
        ),
        call!(
            CreateQueryPool,
            mk!(CreateQueryPoolT {
                device: 3,
                query_pool: 20,
                query_type: 2,
                query_count: 8,
                pipeline_statistics: 0x7ff
            })
        ),
        call!(
            CmdBeginQuery,
            mk!(CmdBeginQueryT {
                command_buffer: 11,
                query_pool: 20,
                query: 4,
                flags: 1
            })
        ),
        call!(
            CmdEndQuery,
            CmdEndQueryT {
                command_buffer: 11,
                query_pool: 20,
                query: 4
            }
        ),
        call!(
            CmdWriteTimestamp,
            mk!(CmdWriteTimestampT {
                command_buffer: 11,
                pipeline_stage: 0x2000,
                query_pool: 20,
                query: 6
            })
        ),
        call!(
            CmdResetQueryPool,
            mk!(CmdResetQueryPoolT {
                command_buffer: 11,
                query_pool: 20,
                first_query: 0,
                query_count: 8
            })
        ),
        call!(
            CmdCopyQueryPoolResults,
            mk!(CmdCopyQueryPoolResultsT {
                command_buffer: 11,
                query_pool: 20,
                query_count: 8,
                dst_buffer: 6,
                stride: 16,
                flags: 3
            })
        ),
        call!(
            QueueSubmit,
            QueueSubmitT {
                queue: 4,
                submits: Some(vec![mk!(SubmitInfoT {
                    command_buffers: Some(vec![11]),
                    wait_semaphores: Some(vec![21])
                })]),
                fence: 22
            }
        ),
        call!(
            QueuePresent,
            QueuePresentT {
                queue: 4,
                swapchains: Some(vec![23]),
                image_indices: Some(vec![2]),
                wait_semaphores: Some(vec![24])
            }
        ),
        call!(FrameBoundary, mk!(FrameBoundaryT { frame: 0 })),
        call!(
            CmdSetPrimitiveTopology,
            mk!(CmdSetPrimitiveTopologyT {
                command_buffer: 11,
                topology: 4
            })
        ),
        call!(
            CmdUpdateBuffer,
            CmdUpdateBufferT {
                command_buffer: 11,
                buffer: 12,
                offset: 16,
                data: Some(vec![1, 2, 3, 4])
            }
        ),
        call!(
            CmdBeginConditionalRendering,
            mk!(CmdBeginConditionalRenderingT {
                command_buffer: 11,
                buffer: 12,
                offset: 8,
                flags: 1
            })
        ),
        call!(
            CmdEndConditionalRendering,
            mk!(CmdEndConditionalRenderingT { command_buffer: 11 })
        ),
        call!(
            VulkanCall,
            VulkanCallT {
                command: Some("vkCmdSetViewport".into()),
                params: Some(vec![
                    mk!(VulkanParamT { value: 11 }),
                    mk!(VulkanParamT {
                        bytes: Some(vec![0, 0, 128, 63]),
                        chain: Some(vec![mk!(VulkanParamT {
                            value: 1_000_053_001,
                            bytes: Some(vec![7; 16])
                        })]),
                        nested: Some(vec![mk!(VulkanParamT {
                            bytes: Some(vec![9; 24])
                        })])
                    })
                ])
            }
        ),
        call!(
            FrameChecksum,
            mk!(FrameChecksumT {
                swapchain: 21,
                image_index: 2,
                width: 500,
                height: 500,
                format: 44,
                crc32: 0xdead_beef
            })
        ),
    ]
}

#[test]
fn the_list_covers_every_call_in_the_schema() {
    let covered: BTreeSet<u8> = one_of_each().iter().map(|c| c.call_type().0).collect();
    let all: BTreeSet<u8> = (Call::ENUM_MIN + 1..=Call::ENUM_MAX).collect();
    assert_eq!(covered, all);
}

#[test]
fn every_record_type_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.mscope");
    let calls = one_of_each();
    let mut writer = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
    for (i, call) in calls.iter().enumerate() {
        let meta = CallMeta {
            thread_id: 100 + i as u64,
            timestamp_ns: 1000 * i as u64,
            result: -(i as i32),
        };
        assert_eq!(writer.append(meta, call).unwrap(), i as u64);
    }
    writer.finish().unwrap();

    let mut read = Vec::new();
    for chunk in TraceReader::open(&path).unwrap() {
        for record in chunk.unwrap().records() {
            read.push(record.unpack());
        }
    }
    assert_eq!(read.len(), calls.len());
    for (i, (record, call)) in read.iter().zip(&calls).enumerate() {
        let envelope = &record.envelope;
        assert_eq!(envelope.seq, i as u64);
        assert_eq!(envelope.thread_id, 100 + i as u64);
        assert_eq!(envelope.timestamp_ns, 1000 * i as u64);
        assert_eq!(envelope.result, -(i as i32));
        assert_eq!(&record.call, call, "record {i}");
    }
}

#[test]
fn frames_close_chunks_and_the_index_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frames.mscope");
    let mut writer = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
    for frame in 0..5u32 {
        for draw in 0..=frame {
            let call = call!(
                CmdDraw,
                CmdDrawT {
                    vertex_count: frame * 100 + draw
                }
            );
            writer.append(CallMeta::default(), &call).unwrap();
        }
        writer.end_frame(CallMeta::default()).unwrap();
    }
    let stats = writer.finish().unwrap();
    assert_eq!(stats.chunks, 5);

    let mut reader = TraceReader::open(&path).unwrap();
    assert_eq!(reader.container().footer_frame_count(), Some(5));
    reader.seek_to_frame(3).unwrap();
    let chunk = reader.next().unwrap().unwrap();
    assert_eq!(chunk.header().first_frame, 3);
    let counts: Vec<u32> = chunk
        .records()
        .filter_map(|r| r.call_as_cmd_draw())
        .map(|d| d.vertex_count())
        .collect();
    assert_eq!(counts, vec![300, 301, 302, 303]);
    assert!(reader.seek_to_frame(5).is_err());
}

#[test]
fn frames_share_a_chunk_until_it_is_old_enough_and_seeking_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.mscope");
    let options = WriterOptions {
        chunk_max_age: Some(std::time::Duration::from_secs(3600)),
        ..Default::default()
    };
    let mut writer = TraceWriter::create(&path, &options).unwrap();
    for frame in 0..5u32 {
        let call = call!(
            CmdDraw,
            CmdDrawT {
                vertex_count: frame
            }
        );
        writer.append(CallMeta::default(), &call).unwrap();
        writer.end_frame(CallMeta::default()).unwrap();
    }
    let stats = writer.finish().unwrap();
    assert_eq!(stats.chunks, 1, "five small frames in one chunk");
    let mut reader = TraceReader::open(&path).unwrap();
    assert_eq!(reader.frames_begun().unwrap(), 5);
    reader.seek_to_frame(3).unwrap();
    let chunk = reader.next().unwrap().unwrap();
    // The chunk holds frames 0 to 4: frame 3's draw follows three boundaries.
    assert_eq!(chunk.header().first_frame, 0);
    let mut frame = 0;
    let mut found = None;
    for record in chunk.records() {
        if let Some(draw) = record.call_as_cmd_draw() {
            if frame == 3 {
                found = Some(draw.vertex_count());
            }
        }
        if record.call_as_frame_boundary().is_some() {
            frame += 1;
        }
    }
    assert_eq!(found, Some(3));
    assert!(reader.seek_to_frame(5).is_err());

    // Without an age, a chunk a frame, as before.
    let path = dir.path().join("each.mscope");
    let mut writer = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
    for _ in 0..5 {
        writer.end_frame(CallMeta::default()).unwrap();
    }
    assert_eq!(writer.finish().unwrap().chunks, 5);
}

#[test]
fn chunks_close_at_the_size_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.mscope");
    let options = WriterOptions {
        chunk_target_bytes: 4096,
        ..Default::default()
    };
    let mut writer = TraceWriter::create(&path, &options).unwrap();
    for i in 0..2000 {
        writer
            .append(
                CallMeta::default(),
                &call!(CmdDraw, CmdDrawT { vertex_count: i }),
            )
            .unwrap();
    }
    let stats = writer.finish().unwrap();
    assert!(stats.chunks > 10, "{} chunks", stats.chunks);
    let mut next = 0;
    for chunk in TraceReader::open(&path).unwrap() {
        let chunk = chunk.unwrap();
        assert!(chunk.header().uncompressed_len < 4096 + 1024);
        for record in chunk.records() {
            assert_eq!(record.call_as_cmd_draw().unwrap().vertex_count(), next);
            next += 1;
        }
    }
    assert_eq!(next, 2000);
}

#[test]
fn chunks_compressed_on_several_threads_are_written_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parallel.mscope");
    let options = WriterOptions {
        chunk_target_bytes: 2048,
        compression_threads: 4,
        queue_depth: 3,
        ..Default::default()
    };
    let mut writer = TraceWriter::create(&path, &options).unwrap();
    for i in 0..20_000 {
        writer
            .append(
                CallMeta::default(),
                &call!(CmdDraw, CmdDrawT { vertex_count: i }),
            )
            .unwrap();
    }
    let stats = writer.finish().unwrap();
    assert!(stats.chunks > 100, "{} chunks", stats.chunks);
    // In order, gapless, and the footer's index agrees with the chunks.
    let reader = TraceReader::open(&path).unwrap();
    let (mut next, mut chunks) = (0, 0u64);
    for chunk in reader {
        let chunk = chunk.unwrap();
        assert_eq!(chunk.ordinal(), chunks);
        assert_eq!(chunk.header().first_seq, next as u64);
        chunks += 1;
        for record in chunk.records() {
            assert_eq!(record.call_as_cmd_draw().unwrap().vertex_count(), next);
            next += 1;
        }
    }
    assert_eq!((next, chunks), (20_000, stats.chunks));
    let container =
        trace_format::container::ContainerReader::open(&path, trace_format::Content::Trace)
            .unwrap();
    assert_eq!(
        container.index().map(|i| i.len() as u64),
        Some(stats.chunks)
    );
}

fn row(seq: u64, frame: u32, repetition: u16) -> DrawRow {
    DrawRow::new(
        seq,
        0x100 + seq % 3,
        frame,
        seq as u32 / 10,
        repetition,
        DrawKind::DrawIndexed,
        4,
        0b1111,
        2,
        36,
        1,
        120 + seq as u32,
        30,
        40,
        8,
        4,
        3,
        1_000 + seq,
        2_000,
        300,
        40,
    )
}

#[test]
fn results_round_trip_in_many_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.msr");
    let run = mk!(RunInfoT {
        tool_version: Some("0.1.0".into()),
        mme_arch: MmeArch::Fermi,
        trace_path: Some("t.mscope".into()),
        trace_hash: Some("abc".into()),
        repetitions: 3,
        frames_first: 0,
        frames_last: 9,
    });
    let mut writer = ResultsWriter::create(&path, run.clone(), &WriterOptions::default()).unwrap();
    let draws = 40_000u64;
    for seq in 0..draws {
        writer.push_draw(row(seq, (seq / 4000) as u32, 1)).unwrap();
        if seq % 1000 == 999 {
            writer
                .push_submit(SubmitRow::new(
                    seq,
                    (seq / 4000) as u32,
                    seq as u32 / 1000,
                    1,
                    1000,
                    4000,
                    1,
                    2,
                    3,
                    4,
                    5,
                    6,
                    7,
                    8,
                    9,
                ))
                .unwrap();
        }
    }
    let skipped = vec![SkippedCall {
        name: "vkCmdDispatch".into(),
        count: 7,
        needed: true,
    }];
    let stats = writer.finish(&skipped).unwrap();
    assert!(stats.chunks >= 3);

    let (mut n, mut submits, mut seen_run, mut seen_skipped) = (0u64, 0u64, None, Vec::new());
    for chunk in ResultsReader::open(&path).unwrap() {
        let chunk = chunk.unwrap();
        if let Some(r) = chunk.batch().run() {
            seen_run = Some(r.unpack());
        }
        for d in chunk.draws() {
            assert_eq!(*d, row(n, (n / 4000) as u32, 1));
            n += 1;
        }
        submits += chunk.submits().count() as u64;
        seen_skipped.extend(chunk.skipped_calls());
    }
    assert_eq!(n, draws);
    assert_eq!(submits, 40);
    assert_eq!(seen_run, Some(run));
    assert_eq!(seen_skipped, skipped);
}

/// A short replay's rows leave in small chunks, compressed beside the replay, so that
/// what is left to compress after its last row is a small part of it; a long one's
/// chunks grow to `ROWS_PER_CHUNK` and no further.
#[test]
fn results_chunks_start_small_and_grow_to_full_size() {
    let dir = tempfile::tempdir().unwrap();
    let chunk_sizes = |draws: u64| {
        let path = dir.path().join(format!("r{draws}.msr"));
        let mut writer =
            ResultsWriter::create(&path, RunInfoT::default(), &WriterOptions::default()).unwrap();
        for seq in 0..draws {
            writer.push_draw(row(seq, 0, 1)).unwrap();
        }
        writer.finish(&[]).unwrap();
        let sizes: Vec<usize> = ResultsReader::open(&path)
            .unwrap()
            .map(|chunk| chunk.unwrap().draws().count())
            .collect();
        assert_eq!(sizes.iter().sum::<usize>() as u64, draws);
        sizes
    };
    // 256 rows a chunk, then an eighth of those written: the 84 rows left after the
    // last row are under 3 % of them.
    let short = chunk_sizes(3_000);
    let mut want = vec![256; 9];
    want.extend([288, 324, 84]);
    assert_eq!(short, want);
    let long = chunk_sizes(200_000);
    assert_eq!(long[..3], [256, 256, 256]);
    assert!(long.iter().all(|&n| n <= ROWS_PER_CHUNK), "{long:?}");
    let (_, full) = long.split_last().unwrap();
    assert!(full.windows(2).all(|w| w[0] <= w[1]), "{long:?}");
    assert_eq!(long[long.len() - 2], ROWS_PER_CHUNK, "{long:?}");
}

#[test]
fn a_trace_is_not_a_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    TraceWriter::create(&path, &WriterOptions::default())
        .unwrap()
        .finish()
        .unwrap();
    let err = ResultsReader::open(&path).err().unwrap();
    assert!(
        err.to_string()
            .contains("is a trace file, not a results file"),
        "{err}"
    );
}

/// glxgears through Zink captured in trace format 1, where a generic record's
/// parameters are tables (`VulkanParam`) rather than one packed string: kept so that
/// reading and verifying that form stays tested now that the samples are newer.
fn format1_glxgears() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/glxgears-zink-lavapipe-format1.mscope")
}

/// Every payload of `path`, decompressed and checksummed.
fn payloads(path: &std::path::Path, content: trace_format::Content) -> Vec<Vec<u8>> {
    stored_payloads(path, content)
        .into_iter()
        .map(|(payload, stored)| match stored {
            Some((first_seq, records)) => {
                let mut laid_out = Vec::new();
                lay_out_stored(&payload, first_seq, records, usize::MAX, &mut laid_out).unwrap();
                laid_out
            }
            None => payload,
        })
        .collect()
}

/// A chunk's decompressed payload, with the first sequence number and record count of
/// a chunk of stored records.
type StoredPayload = (Vec<u8>, Option<(u64, u32)>);

/// Each chunk's payload as the file holds it.
fn stored_payloads(path: &std::path::Path, content: trace_format::Content) -> Vec<StoredPayload> {
    let mut reader = trace_format::container::ContainerReader::open(path, content).unwrap();
    let mut out = Vec::new();
    while let Some(chunk) = reader.next_chunk() {
        let mut chunk = chunk.unwrap();
        let header = chunk.header;
        let stored = (header.flags & trace_format::wire::CHUNK_STORED_RECORDS != 0)
            .then_some((header.first_seq, header.record_count));
        out.push((std::mem::take(&mut chunk.payload), stored));
    }
    out
}

/// Writes the synthetic storm of `frames` frames of `draws` draws as `dir`/storm.mscope;
/// its path.
fn write_storm(dir: &std::path::Path, frames: u64, draws: u32) -> std::path::PathBuf {
    let storm = dir.join("storm.mscope");
    trace_format::synthetic::write_synthetic(
        TraceWriter::create(&storm, &WriterOptions::default()).unwrap(),
        &trace_format::synthetic::SyntheticShape {
            frames,
            draws_per_frame: draws,
            view_mask: 0,
        },
    )
    .unwrap();
    storm
}

/// Writes, in `dir`, the synthetic storm and a trace of compact records of every field
/// kind between finished ones (as the capture layer's threads store them); their paths.
fn write_stored_traces(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let storm = write_storm(dir, 2, 40);
    // Compact records of every field kind, between finished ones, as the capture
    // layer's threads store them.
    let mixed = dir.join("mixed.mscope");
    {
        use trace_format::direct::DirectField as F;
        use trace_format::record_block::{RecordBlock, RecordEncoder};
        use trace_format::sequencer::{numbered_key, Sequencer};
        let mut block = RecordBlock::new();
        let mut encoder = RecordEncoder::new();
        for i in 0..30u64 {
            let meta = CallMeta {
                thread_id: 1 + i % 2,
                timestamp_ns: 100 * i,
                result: -(i as i32 % 3),
            };
            let key = numbered_key(i);
            match i % 7 {
                0 => block.push_direct(
                    key,
                    meta,
                    Call::CmdDraw,
                    &[F::U64(9), F::U32(3), F::U32(1), F::U32(0), F::U32(0)],
                ),
                1 => block.push_direct(
                    key,
                    meta,
                    Call::CmdPushConstants,
                    &[
                        F::U64(9),
                        F::U64(7),
                        F::U32(1),
                        F::U32(0),
                        F::Bytes(&[1, 2, 3, 4, 5]),
                    ],
                ),
                2 => block.push_direct(
                    key,
                    meta,
                    Call::CmdBindDescriptorSets,
                    &[
                        F::U64(9),
                        F::U32(0),
                        F::U64(7),
                        F::U32(1),
                        F::U64s(&[0x10, 0x20]),
                        F::U32s(&[256]),
                    ],
                ),
                3 => block.push_direct(
                    key,
                    meta,
                    Call::CmdDrawIndexed,
                    &[
                        F::U64(9),
                        F::U32(36),
                        F::U32(2),
                        F::U32(5),
                        F::I32(-4),
                        F::U32(1),
                    ],
                ),
                4 => {
                    let words: Vec<u8> = (0..32u32).flat_map(|w| (w ^ 5).to_le_bytes()).collect();
                    let mut planes = Vec::new();
                    trace_format::byte_planes::split_into(&words[..i as usize + 70], &mut planes);
                    block.push_direct(
                        key,
                        meta,
                        Call::MemoryContents,
                        &[F::U64(5), F::U64(64), F::BytePlanes(&planes)],
                    )
                }
                5 => block.push_direct(
                    key,
                    meta,
                    Call::VulkanCall,
                    &[
                        F::Str("vkCmdSetCullMode"),
                        F::Absent,
                        F::Bytes(&[
                            2, 0, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0,
                        ]),
                    ],
                ),
                _ => block.push(encoder.encode(key, meta, |fbb| {
                    let call = CallT::CmdEndRenderPass(Box::default());
                    (Call::CmdEndRenderPass, call.pack(fbb).unwrap())
                })),
            }
        }
        let mut sequencer =
            Sequencer::new(TraceWriter::create(&mixed, &WriterOptions::default()).unwrap());
        sequencer.add(block).unwrap();
        sequencer.release_all().unwrap();
        sequencer.finish().unwrap();
    }
    (storm, mixed)
}

/// The calls the handing tests ask a reader to hand over: draws, binds, push constants
/// and generic calls (what a replay asks for), not memory contents.
const HANDED: trace_format::direct_records::DirectCalls =
    trace_format::direct_records::DirectCalls::of(&[
        Call::CmdDraw,
        Call::CmdDrawIndexed,
        Call::CmdPushConstants,
        Call::CmdBindDescriptorSets,
        Call::VulkanCall,
    ]);

/// A reader asked to hand records over gives every record of the trace, in its place:
/// the handed-over ones, laid out as a reader lays them out, are the records an
/// ordinary reader reads; the others are the same tables.
#[test]
fn a_reader_handing_records_over_gives_every_record_in_its_place() {
    use trace_format::direct::{append_direct, DirectField, MAX_DIRECT_FIELDS};
    use trace_format::direct_records::ChunkRecord;

    let dir = tempfile::tempdir().unwrap();
    let (storm, mixed) = write_stored_traces(dir.path());
    for path in [storm, mixed] {
        for threads in [0, 2] {
            let plain: Vec<RecordT> = TraceReader::open(&path)
                .unwrap()
                .flat_map(|c| c.unwrap().records().map(|r| r.unpack()).collect::<Vec<_>>())
                .collect();
            let options = trace_format::ReadOptions {
                direct: HANDED,
                ..trace_format::ReadOptions::with_threads(threads)
            };
            let (mut handed, mut read) = (0, Vec::new());
            for chunk in TraceReader::open_with(&path, &options).unwrap() {
                for entry in chunk.unwrap().entries() {
                    read.push(match entry {
                        // A record of a handed call comes as a table where it was
                        // stored finished, not compact.
                        ChunkRecord::Table(record) => record.unpack(),
                        ChunkRecord::Direct(record) => {
                            handed += 1;
                            assert!(HANDED.contains(record.call()));
                            let mut room = [DirectField::Absent; MAX_DIRECT_FIELDS];
                            let fields = record.fields(&mut room);
                            let mut out = Vec::new();
                            let start = append_direct(
                                &mut out,
                                record.seq,
                                record.meta(),
                                record.call(),
                                fields,
                            );
                            flatbuffers::root::<Record>(&out[start..]).unwrap().unpack()
                        }
                    });
                }
            }
            assert!(handed > 10, "{}: {handed} handed over", path.display());
            assert_eq!(read.len(), plain.len(), "{}", path.display());
            for (i, (a, b)) in read.iter().zip(&plain).enumerate() {
                assert_eq!(a, b, "{}: record {i}", path.display());
            }
        }
    }
}

/// A call whose records leave a vector out in one record and hold it in the next lays
/// out readable both ways, in either order: the layout a call type is given at its first
/// record holds every field's place (before, a first record without the vector gave
/// its call a table with no place for it, and the next record's vector offset was
/// written over the table's vtable offset).
#[test]
fn a_vector_left_out_in_one_record_and_held_in_the_next_lays_out_both_ways() {
    use trace_format::direct::{append_direct, DirectField as F};

    let meta = CallMeta {
        thread_id: 1,
        timestamp_ns: 2,
        result: 0,
    };
    let handles = [0x11u64, 0x22, 0x33];
    // Call types no other test here lays out: each gets its layout from the first
    // record below.
    for (call, first_absent) in [
        (Call::CmdExecuteCommands, true),
        (Call::CmdBindVertexBuffers, false),
    ] {
        let mut shapes = [false, true, false, true];
        if !first_absent {
            shapes.rotate_left(1);
        }
        for (seq, absent) in shapes.into_iter().enumerate() {
            let vector = if absent { F::Absent } else { F::U64s(&handles) };
            let fields: Vec<F<'_>> = match call {
                Call::CmdExecuteCommands => vec![F::U64(9), vector],
                _ => vec![F::U64(9), F::U32(1), vector, F::U64s(&handles[..1])],
            };
            let mut out = Vec::new();
            let start = append_direct(&mut out, seq as u64, meta, call, &fields);
            let record = flatbuffers::root::<Record>(&out[start..])
                .unwrap_or_else(|e| panic!("{call:?} record {seq}: {e}"));
            assert_eq!(record.envelope().seq(), seq as u64);
            let read: Option<Vec<u64>> = match call {
                Call::CmdExecuteCommands => record
                    .call_as_cmd_execute_commands()
                    .and_then(|c| c.command_buffers())
                    .map(|v| v.iter().collect()),
                _ => {
                    let c = record.call_as_cmd_bind_vertex_buffers().unwrap();
                    assert_eq!(c.first_binding(), 1);
                    assert_eq!(c.offsets().map(|v| v.len()), Some(1));
                    c.buffers().map(|v| v.iter().collect())
                }
            };
            assert_eq!(
                read,
                (!absent).then(|| handles.to_vec()),
                "{call:?} record {seq}"
            );
        }
    }
}

/// A chunk of stored records, damaged at random, either fails to lay out (naming the
/// record) or lays out to a payload both verifiers accept: what the reader then reads
/// unchecked. Tried on the stored chunks of a written trace of every direct record kind
/// and of the synthetic storm.
#[test]
fn damaged_stored_records_fail_or_lay_out_verifiable() {
    use trace_format::verify::{verifier_options, verify_trace_payload};

    let dir = tempfile::tempdir().unwrap();
    let (storm, mixed) = write_stored_traces(dir.path());
    let mut chunks = stored_payloads(&storm, trace_format::Content::Trace);
    chunks.extend(stored_payloads(&mixed, trace_format::Content::Trace));
    assert!(
        chunks.iter().all(|(_, stored)| stored.is_some()),
        "a new trace stores its records"
    );
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut laid, mut refused) = (0, 0);
    for (payload, stored) in &chunks {
        let (first_seq, records) = stored.unwrap();
        for case in 0..3_000 {
            let m = if case == 0 {
                payload.clone()
            } else {
                mutate(payload, &mut rng)
            };
            // A count off by a little, now and then, as a damaged header would say.
            let declared = match case % 7 {
                5 => records.wrapping_sub(1),
                6 => records + 1,
                _ => records,
            };
            let mut out = Vec::new();
            let laid_out = lay_out_stored(&m, first_seq, declared, 64 << 20, &mut out);
            // Handing records over checks them alike: the same verdict, the same reason.
            let (mut handing_out, mut handed) = (Vec::new(), Vec::new());
            let handing = lay_out_stored_handing(
                &m,
                first_seq,
                declared,
                64 << 20,
                HANDED,
                &mut handing_out,
                &mut handed,
            );
            assert_eq!(
                handing.as_ref().map_err(|e| e.to_string()).err(),
                laid_out.as_ref().map_err(|e| e.to_string()).err(),
                "case {case}"
            );
            if handing.is_ok() {
                verify_trace_payload(&handing_out).unwrap_or_else(|e| panic!("case {case}: {e}"));
                let batch = flatbuffers::root::<RecordBatch>(&handing_out).unwrap();
                let tables = batch.records().map_or(0, |r| r.len());
                assert_eq!(tables + handed.len(), declared as usize, "case {case}");
            }
            match laid_out {
                Ok(()) => {
                    laid += 1;
                    verify_trace_payload(&out).unwrap_or_else(|e| panic!("case {case}: {e}"));
                    let opts = verifier_options(out.len());
                    assert!(
                        flatbuffers::root_with_opts::<RecordBatch>(&opts, &out).is_ok(),
                        "case {case}: flatbuffers rejects what was laid out"
                    );
                }
                Err(e) => {
                    refused += 1;
                    assert!(e.to_string().starts_with("stored record"), "{e}");
                }
            }
        }
    }
    assert!(
        laid > 500 && refused > 500,
        "{laid} laid out, {refused} refused"
    );
}

/// A deterministic xorshift generator, so that a failure names a reproducible case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `payload` changed in one of the ways a damaged or hostile file is: a byte flipped or
/// replaced, a word (often an offset) nudged or replaced, the end cut off.
fn mutate(payload: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut m = payload.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(m.len());
        let word = at & !3;
        match rng.below(6) {
            0 => m[at] ^= 1 << rng.below(8),
            1 => m[at] = rng.next() as u8,
            2 | 3 if word + 4 <= m.len() => {
                let old = u32::from_le_bytes(m[word..word + 4].try_into().unwrap());
                let delta = [4u32, 8, 2, 1, 0x100, 0x8000_0000][rng.below(6)];
                let new = if rng.below(2) == 0 {
                    old.wrapping_add(delta)
                } else {
                    old.wrapping_sub(delta)
                };
                m[word..word + 4].copy_from_slice(&new.to_le_bytes());
            }
            4 if word + 4 <= m.len() => {
                let value = [0u32, 1, 0xffff_ffff, 0x7fff_ffff, rng.next() as u32][rng.below(5)];
                m[word..word + 4].copy_from_slice(&value.to_le_bytes());
            }
            _ => m.truncate(at),
        }
        if m.is_empty() {
            break;
        }
    }
    m
}

#[test]
fn the_payload_verifier_accepts_exactly_what_flatbuffers_accepts() {
    use trace_format::generated::results::ResultsBatch;
    use trace_format::verify::{verifier_options, verify_results_payload, verify_trace_payload};
    use trace_format::Content;

    let dir = tempfile::tempdir().unwrap();
    // Every record type, the captures in samples/, and a results file with every table.
    let trace = dir.path().join("all.mscope");
    let mut writer = TraceWriter::create(&trace, &WriterOptions::default()).unwrap();
    for call in one_of_each() {
        writer.append(CallMeta::default(), &call).unwrap();
    }
    writer.finish().unwrap();
    let mut traces = payloads(&trace, Content::Trace);
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    for name in ["multiview", "indirect", "tessellation", "compute"] {
        let path = samples.join(format!("{name}-nvidia.mscope"));
        traces.extend(payloads(&path, Content::Trace));
    }
    // Payloads of many records sharing a few vtables: one chunk of the synthetic storm,
    // whose draws, binds and push constants are tables (a capture stores them compact).
    let storm = write_storm(dir.path(), 1, 10_000);
    traces.extend(payloads(&storm, Content::Trace).into_iter().take(1));
    // Payloads of generic records stored as format 1 did, a table a parameter, whose
    // vtables come in many shapes (more than the verifier keeps at once): the last chunk
    // of glxgears's through Zink, captured in that format.
    traces.extend(
        payloads(&format1_glxgears(), Content::Trace)
            .into_iter()
            .last(),
    );
    let results = dir.path().join("r.msr");
    let mut writer =
        ResultsWriter::create(&results, RunInfoT::default(), &WriterOptions::default()).unwrap();
    for seq in 0..50 {
        writer.push_draw(row(seq, 0, 1)).unwrap();
    }
    let skipped = [SkippedCall {
        name: "vkCmdDispatch".into(),
        count: 7,
        needed: true,
    }];
    writer.finish(&skipped).unwrap();
    let results = payloads(&results, Content::Results);

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut accepted, mut rejected) = (0, 0);
    for (payload, is_trace) in traces
        .iter()
        .map(|p| (p, true))
        .chain(results.iter().map(|p| (p, false)))
    {
        for case in 0..3_000 {
            let m = if case == 0 {
                payload.clone()
            } else {
                mutate(payload, &mut rng)
            };
            let opts = verifier_options(m.len());
            let (ours, theirs) = if is_trace {
                (
                    verify_trace_payload(&m).map_err(|e| e.to_string()),
                    flatbuffers::root_with_opts::<RecordBatch>(&opts, &m).map(drop),
                )
            } else {
                (
                    verify_results_payload(&m).map_err(|e| e.to_string()),
                    flatbuffers::root_with_opts::<ResultsBatch>(&opts, &m).map(drop),
                )
            };
            if case == 0 {
                assert!(ours.is_ok(), "an unchanged payload is rejected: {ours:?}");
            }
            assert_eq!(
                ours.is_ok(),
                theirs.is_ok(),
                "case {case} of a {}-byte payload: ours {ours:?}, flatbuffers {theirs:?}",
                payload.len()
            );
            if ours.is_ok() {
                accepted += 1;
            } else {
                rejected += 1;
            }
        }
    }
    // The mutations reach both verdicts often enough to compare them.
    assert!(
        accepted > 1_000 && rejected > 1_000,
        "{accepted} accepted, {rejected} rejected"
    );
}

/// The verifier counts a payload's apparent size as flatbuffers' does: at the smallest
/// limit flatbuffers accepts, and one byte under it, both give the same verdict.
#[test]
fn the_payload_verifier_counts_apparent_size_as_flatbuffers_does() {
    use trace_format::verify::{verifier_options, verify_trace_payload_with};
    use trace_format::Content;

    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let traces = ["storm-nvidia", "compute-nvidia", "glxgears-zink-lavapipe"]
        .map(|name| samples.join(format!("{name}.mscope")));
    for path in traces.into_iter().chain([format1_glxgears()]) {
        let name = path.display();
        for payload in payloads(&path, Content::Trace).into_iter().take(2) {
            let with = |limit: usize| flatbuffers::VerifierOptions {
                max_apparent_size: limit,
                ..verifier_options(payload.len())
            };
            let theirs = |limit: usize| {
                flatbuffers::root_with_opts::<RecordBatch>(&with(limit), &payload).is_ok()
            };
            // The smallest limit flatbuffers accepts.
            let (mut low, mut high) = (0usize, payload.len() * 4);
            assert!(theirs(high), "{name}");
            while low < high {
                let mid = (low + high) / 2;
                if theirs(mid) {
                    high = mid;
                } else {
                    low = mid + 1;
                }
            }
            assert!(
                verify_trace_payload_with(&payload, &with(low)).is_ok(),
                "{name}"
            );
            assert!(
                verify_trace_payload_with(&payload, &with(low - 1)).is_err(),
                "{name}: accepted under flatbuffers' limit {low}"
            );
        }
    }
}

#[test]
fn trace_digests_compare_only_within_their_kind() {
    use trace_format::results::same_trace;
    assert_eq!(
        same_trace("crc32:0a0b0c0d:100", "crc32:0a0b0c0d:100"),
        Some(true)
    );
    assert_eq!(
        same_trace("crc32:0a0b0c0d:100", "crc32:0a0b0c0d:101"),
        Some(false)
    );
    // A results file written before the digest changed says nothing either way.
    assert_eq!(
        same_trace("fnv1a64:0123456789abcdef", "crc32:0a0b0c0d:100"),
        None
    );
}
