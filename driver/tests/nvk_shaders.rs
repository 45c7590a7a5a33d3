//! Shader and constant-buffer binds through the encoder, on both MME generations: what
//! a draw pushes after a pipeline bind (`nvk_cmd_flush_gfx_shaders`: each changed
//! stage's words, disabled slots, the last vertex-pipeline stage's clip and
//! transform-feedback state) and after descriptor changes (`nvk_cmd_flush_gfx_cbufs`:
//! direct binds, `BIND_CBUF_DESC`, `SELECT_CB0`), counted in their state groups.

use std::sync::Arc;

use driver::chipset::Chipset;
use driver::class;
use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::root;
use driver::nvk::shader::{Shader, UniformBufferKind};
use driver::nvk::state::StateGroup;
use driver::nvk::{CommandEncoder, Device, Macro, Recorded};
use driver::push::{self, MethodWrite};
use driver::spirv::interface::{DescriptorUse, Interface, Stage, XfbBuffer};

const ARCHES: [Arch; 2] = [Arch::Turing, Arch::Fermi];

fn methods(words: &[u32]) -> Vec<(u16, u32)> {
    push::parse(words)
        .map(|w| {
            let MethodWrite { mthd, data, .. } = w.expect("the encoder's words parse");
            (mthd, data)
        })
        .collect()
}

/// A shader whose uniform buffers the pipeline layout declares `UNIFORM_BUFFER`.
fn shader(stage: Stage, interface: Interface, arch: Arch, id: u64) -> Option<Arc<Shader>> {
    let declared = |_, _| UniformBufferKind::Descriptor;
    Some(Arc::new(
        Shader::new(
            stage,
            &interface,
            Chipset::for_arch(arch),
            id << 8,
            &declared,
        )
        .unwrap(),
    ))
}

/// A vertex shader and a fragment shader reading a uniform buffer at set 0 binding 1
/// (three loads) and textures of set 1 (two).
fn pipeline(arch: Arch, fragment_id: u64) -> [Option<Arc<Shader>>; 5] {
    let fs = Interface {
        descriptors: vec![
            DescriptorUse::UniformBuffer {
                set: 0,
                binding: 1,
                element: 0,
            },
            DescriptorUse::DescriptorSet { set: 1 },
        ],
        descriptor_loads: vec![3, 2],
        ..Interface::default()
    };
    [
        shader(Stage::Vertex, Interface::default(), arch, 1),
        None,
        None,
        None,
        shader(Stage::Fragment, fs, arch, fragment_id),
    ]
}

/// The draw's words and what it recorded.
fn draw(enc: &mut CommandEncoder<'_>) -> (Vec<(u16, u32)>, Recorded) {
    let recorded = enc.draw(3, 1, 0, 0);
    let words = enc.take_push();
    (methods(words.words()), recorded)
}

fn group(r: &Recorded, g: StateGroup) -> (u32, u32) {
    let i = StateGroup::ALL.iter().position(|x| *x == g).unwrap();
    (r.state.methods[i], r.state.dwords[i])
}

fn slot(ty: u16) -> u16 {
    class::SET_PIPELINE_SHADER + class::PIPELINE_SLOT_STRIDE * ty
}

#[test]
fn binding_a_pipeline_pushes_its_shaders_once() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        enc.bind_graphics_shaders(&pipeline(arch, 2));
        let (m, r) = draw(&mut enc);
        // Vertex in slot 1 and pixel in slot 5, enabled, each with its program address,
        // register count and binding group.
        assert!(m.contains(&(slot(1), 1 | 1 << 4)), "{arch:?} {m:x?}");
        assert!(m.contains(&(slot(5), 1 | 5 << 4)), "{arch:?}");
        assert!(m.contains(&(class::SET_PIPELINE_BINDING + 64 * 5, 4)));
        assert!(m
            .iter()
            .any(|(mt, _)| *mt == class::SET_PIPELINE_PROGRAM_ADDRESS_A + 64));
        // The fragment shader's state; the vertex shader's clip and stream-out layout.
        assert!(m.contains(&(class::SET_API_MANDATED_EARLY_Z, 0)));
        assert!(m.iter().any(|(mt, _)| *mt == class::SET_ZCULL_BOUNDS));
        assert!(m.contains(&(class::SET_USER_CLIP_ENABLE, 0)));
        let stream_out = m
            .iter()
            .filter(|(mt, _)| (0x0700..0x0740).contains(mt))
            .count();
        assert_eq!(stream_out, 12, "four buffers, three methods each");
        let shaders = group(&r, StateGroup::Shaders);
        assert!(shaders.0 > 20, "{arch:?} {shaders:?}");

        // The same shaders again: nothing.
        enc.bind_graphics_shaders(&pipeline(arch, 2));
        let (m, r) = draw(&mut enc);
        assert_eq!(group(&r, StateGroup::Shaders), (0, 0));
        assert!(!m.iter().any(|(mt, _)| *mt == slot(1) || *mt == slot(5)));
    }
}

#[test]
fn a_pipeline_sharing_the_vertex_shader_pushes_only_the_fragment_shader() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        let first = pipeline(arch, 2);
        enc.bind_graphics_shaders(&first);
        draw(&mut enc);
        let mut second = pipeline(arch, 3);
        second[0] = first[0].clone();
        enc.bind_graphics_shaders(&second);
        let (m, _) = draw(&mut enc);
        assert!(m.iter().any(|(mt, _)| *mt == slot(5)), "{arch:?}");
        assert!(!m.iter().any(|(mt, _)| *mt == slot(1)), "{arch:?}");
        // No vertex-pipeline stage changed: no clip or stream-out state.
        assert!(!m.iter().any(|(mt, _)| *mt == class::SET_USER_CLIP_ENABLE));
    }
}

#[test]
fn dropping_a_geometry_shader_disables_its_slot_and_the_vertex_shader_takes_over() {
    let arch = Arch::Turing;
    let device = Device::for_arch(arch);
    let mut enc = CommandEncoder::new(&device);
    let mut with_gs = pipeline(arch, 2);
    let gs = Interface {
        writes_layer: true,
        xfb: [
            XfbBuffer {
                stream: 0,
                attr_count: 6,
                stride: 24,
                attr_index: vec![0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21],
            },
            XfbBuffer::default(),
            XfbBuffer::default(),
            XfbBuffer::default(),
        ],
        ..Interface::default()
    };
    with_gs[3] = shader(Stage::Geometry, gs, arch, 9);
    enc.bind_graphics_shaders(&with_gs);
    let (m, _) = draw(&mut enc);
    // The geometry shader is the last vertex-pipeline stage: it selects the layer and
    // captures six dwords into buffer 0: two layout words, each dword's attribute a
    // byte, the two past the sixth skipped.
    assert!(m.contains(&(class::SET_RT_LAYER, 1 << 16)), "{m:x?}");
    assert!(m.contains(&(0x0704, 6)));
    let layout: Vec<u32> = m
        .iter()
        .filter(|(mt, _)| (0x2800..0x2880).contains(mt))
        .map(|(_, d)| *d)
        .collect();
    assert_eq!(layout, [0x1f1e_1d1c, 0xffff_2120], "{layout:x?}");
    enc.bind_graphics_shaders(&pipeline(arch, 2));
    let (m, _) = draw(&mut enc);
    assert!(m.contains(&(slot(4), 4 << 4)), "slot 4 disabled: {m:x?}");
    assert!(m.contains(&(class::SET_RT_LAYER, 0)));
}

#[test]
fn a_push_descriptor_set_rebinds_the_uniform_buffer_read_from_it() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        enc.bind_graphics_shaders(&pipeline(arch, 2));
        draw(&mut enc);
        enc.push_descriptor_set(0);
        let (m, r) = draw(&mut enc);
        let selects = m
            .iter()
            .filter(|(mt, _)| *mt == class::SET_CONSTANT_BUFFER_SELECTOR_A)
            .count();
        let binds: Vec<u32> = m
            .iter()
            .filter(|(mt, _)| *mt == class::BIND_GROUP_CONSTANT_BUFFER + 32 * 4)
            .map(|(_, d)| *d)
            .collect();
        let select_cb0 = class::call_mme_macro(Macro::SelectCb0.id());
        match arch {
            // Slot 1 of the fragment group, valid, from the push set's copy.
            Arch::Turing => {
                assert_eq!(binds, [1 | 1 << 4], "{m:x?}");
                assert_eq!(selects, 1);
                assert!(m.iter().any(|(mt, _)| *mt == select_cb0));
                assert!(group(&r, StateGroup::ConstantBuffers).0 >= 4);
            }
            // Before Turing NVK maps no uniform buffer: nothing to rebind.
            Arch::Fermi => {
                assert!(binds.is_empty(), "{m:x?}");
                assert_eq!(group(&r, StateGroup::ConstantBuffers), (0, 0));
            }
        }
        // Unchanged since: nothing.
        let (_, r) = draw(&mut enc);
        assert_eq!(group(&r, StateGroup::ConstantBuffers), (0, 0), "{arch:?}");
    }
}

#[test]
fn a_bound_set_rebinds_its_descriptors_and_on_turing_its_uniform_buffer_through_the_macro() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        enc.bind_graphics_shaders(&pipeline(arch, 2));
        draw(&mut enc);
        enc.bind_descriptor_sets(0, &[0x10_0000_0000, 0x10_0001_0000], &[], None, None, None);
        let (m, _) = draw(&mut enc);
        let bind_cbuf_desc = class::call_mme_macro(Macro::BindCbufDesc.id());
        let macro_calls = m.iter().filter(|(mt, _)| *mt == bind_cbuf_desc).count();
        // Set 1's descriptors, bound directly.
        let slot_of_set_1 = if arch == Arch::Turing { 2 } else { 1 };
        assert!(
            m.contains(&(
                class::BIND_GROUP_CONSTANT_BUFFER + 32 * 4,
                1 | slot_of_set_1 << 4
            )),
            "{arch:?} {m:x?}"
        );
        assert_eq!(macro_calls, usize::from(arch == Arch::Turing), "{arch:?}");
    }
}

#[test]
fn the_gpu_model_runs_the_new_macros() {
    let arch = Arch::Turing;
    let device = Device::for_arch(arch);
    let mut gpu = Gpu::new(arch);
    gpu.execute(device.init_push().unwrap().words()).unwrap();
    let mut enc = CommandEncoder::new(&device);
    enc.bind_graphics_shaders(&pipeline(arch, 2));
    enc.bind_descriptor_sets(0, &[0x10_0000_0000, 0x10_0001_0000], &[], None, None, None);
    enc.draw(3, 1, 0, 0);
    let words = enc.take_push();
    gpu.state.method_log = Some(Vec::new());
    gpu.execute(words.words()).unwrap();
    // BIND_CBUF_DESC read a zero descriptor: slot 1 bound as invalid, and the
    // fragment shader's shading-rate control wrote all sixteen viewports.
    let writes: Vec<(u16, u32)> = gpu
        .state
        .method_log
        .take()
        .unwrap()
        .into_iter()
        .map(|w| (w.mthd, w.data))
        .collect();
    assert!(writes.contains(&(class::BIND_GROUP_CONSTANT_BUFFER + 32 * 4, 1 << 4)));
    assert_eq!(
        writes
            .iter()
            .filter(|(m, _)| (0x2a00..0x2b00).contains(m))
            .count(),
        16
    );
}

/// A vertex shader and a fragment shader reading set 0 binding 1, which the pipeline
/// layout declares `UNIFORM_BUFFER_DYNAMIC` (the set's first dynamic buffer).
fn dynamic_uniform_buffer_pipeline(arch: Arch) -> [Option<Arc<Shader>>; 5] {
    let fs = Interface {
        descriptors: vec![DescriptorUse::UniformBuffer {
            set: 0,
            binding: 1,
            element: 0,
        }],
        ..Interface::default()
    };
    let declared = |set, binding| match (set, binding) {
        (0, 1) => UniformBufferKind::Dynamic { index: 0 },
        _ => UniformBufferKind::Descriptor,
    };
    let fragment = Shader::new(
        Stage::Fragment,
        &fs,
        Chipset::for_arch(arch),
        7 << 8,
        &declared,
    )
    .unwrap();
    let vertex = shader(Stage::Vertex, Interface::default(), arch, 1);
    [vertex, None, None, None, Some(Arc::new(fragment))]
}

#[test]
fn a_dynamic_uniform_buffer_is_bound_from_the_root_table_on_both_generations() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        enc.bind_graphics_shaders(&dynamic_uniform_buffer_pipeline(arch));
        draw(&mut enc);
        enc.bind_descriptor_sets(0, &[0x10_0000_0000], &[256], Some(&[1]), None, None);
        let (m, _) = draw(&mut enc);
        // Bound directly (the CPU knows the dynamic buffer), no macro, then SELECT_CB0.
        assert!(
            m.contains(&(class::BIND_GROUP_CONSTANT_BUFFER + 32 * 4, 1 | 1 << 4)),
            "{arch:?} {m:x?}"
        );
        let bind_cbuf_desc = class::call_mme_macro(Macro::BindCbufDesc.id());
        assert!(!m.iter().any(|(mt, _)| *mt == bind_cbuf_desc), "{arch:?}");
        assert!(m
            .iter()
            .any(|(mt, _)| *mt == class::call_mme_macro(Macro::SelectCb0.id())));
    }
}

#[test]
fn each_bound_set_starts_after_the_previous_sets_dynamic_buffers() {
    let device = Device::for_arch(Arch::Turing);
    let mut enc = CommandEncoder::new(&device);
    // Set 0 has two dynamic buffers, set 1 one (their layouts say so).
    let r = enc.bind_descriptor_sets(
        0,
        &[0x10_0000_0000, 0x10_0001_0000],
        &[0, 64, 128],
        Some(&[2, 1]),
        None,
        None,
    );
    assert!(r.dwords > 0);
    let words = enc.take_push();
    let m = methods(words.words());
    // The root table's set_dynamic_buffer_start: 0, 2, then 3 for every later set.
    let at = m
        .iter()
        .position(|w| {
            *w == (
                class::LOAD_CONSTANT_BUFFER_OFFSET,
                root::SET_DYNAMIC_BUFFER_START,
            )
        })
        .unwrap_or_else(|| panic!("{m:x?}"));
    assert_eq!(m[at + 1].1, u32::from_le_bytes([0, 2, 3, 3]), "{m:x?}");
    assert_eq!(m[at + 2].1, u32::from_le_bytes([3, 3, 3, 3]));
}

/// A dynamic uniform buffer whose set update named a buffer: the root table holds the
/// buffer's descriptor moved by the dynamic offset (from TURING_A on the bindless
/// form, the address and size in 16-byte units; before it the address, the size and a
/// zero), and the draw binds that buffer at the offset with the size the update gave,
/// aligned to the device's constant-buffer alignment (as NVK's ubo_desc,
/// nvk_bind_descriptor_sets and nvk_ubo_descriptor_addr do).
#[test]
fn a_dynamic_uniform_buffer_binds_what_its_set_update_wrote_at_its_offset() {
    use driver::nvk::DynamicBuffer;
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        enc.bind_graphics_shaders(&dynamic_uniform_buffer_pipeline(arch));
        draw(&mut enc);
        // 100 bytes at 0x12_3456_7800, bound at offset 256.
        let buffer = DynamicBuffer {
            descriptor: device.uniform_buffer_descriptor(0x12_3456_7800, 100),
            uniform: true,
        };
        enc.bind_descriptor_sets(
            0,
            &[0x10_0000_0000],
            &[256],
            Some(&[1]),
            None,
            Some(&[buffer]),
        );
        let (m, _) = draw(&mut enc);
        let (root_words, size) = match arch {
            Arch::Turing => {
                let units = (0x12_3456_7800u64 + 256) >> 4;
                (
                    [units as u32, (units >> 32) as u32 | (128 >> 4) << 13, 0, 0],
                    128,
                )
            }
            Arch::Fermi => ([0x3456_7900, 0x12, 256, 0], 256),
        };
        let at = m
            .iter()
            .position(|w| *w == (class::LOAD_CONSTANT_BUFFER_OFFSET, root::DYNAMIC_BUFFERS))
            .unwrap_or_else(|| panic!("{arch:?} {m:x?}"));
        let written: Vec<u32> = m[at + 1..at + 5].iter().map(|w| w.1).collect();
        assert_eq!(written, root_words, "{arch:?} {m:x?}");
        let selector = m
            .iter()
            .position(|w| w.0 == class::SET_CONSTANT_BUFFER_SELECTOR_A)
            .unwrap_or_else(|| panic!("{arch:?} {m:x?}"));
        let bound: Vec<u32> = m[selector..selector + 3].iter().map(|w| w.1).collect();
        assert_eq!(bound, [size, 0x12, 0x3456_7900], "{arch:?} {m:x?}");
    }
}

#[test]
fn constant_buffers_go_most_used_first_then_by_type_set_and_place() {
    use driver::nvk::shader::Cbuf;
    let uniform_buffers = |_set, binding| UniformBufferKind::Placed {
        offset: 16 * binding,
        stride: 16,
    };
    let fs = |loads: Vec<u32>| Interface {
        descriptors: vec![
            DescriptorUse::UniformBuffer {
                set: 0,
                binding: 2,
                element: 0,
            },
            DescriptorUse::UniformBuffer {
                set: 0,
                binding: 1,
                element: 0,
            },
            DescriptorUse::DescriptorSet { set: 1 },
        ],
        descriptor_loads: loads,
        ..Interface::default()
    };
    let slots = |loads| {
        Shader::new(
            Stage::Fragment,
            &fs(loads),
            Chipset::for_arch(Arch::Turing),
            0x2000,
            &uniform_buffers,
        )
        .unwrap()
        .cbufs
    };
    // compar_cbufs: the most used first.
    assert_eq!(
        slots(vec![1, 5, 2])[1..],
        [
            Cbuf::UniformBuffer { set: 0, offset: 16 },
            Cbuf::DescriptorSet { set: 1 },
            Cbuf::UniformBuffer { set: 0, offset: 32 },
        ]
    );
    // Equally used: a set's descriptors before uniform buffers, then by place.
    assert_eq!(
        slots(vec![1, 1, 1])[1..],
        [
            Cbuf::DescriptorSet { set: 1 },
            Cbuf::UniformBuffer { set: 0, offset: 16 },
            Cbuf::UniformBuffer { set: 0, offset: 32 },
        ]
    );
}
