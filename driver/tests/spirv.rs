//! The SPIR-V analysis and the ViewIndex pass on shaders compiled from GLSL (the scenes'
//! and the test shaders beside this file) and on every module of the traces captured on
//! NVIDIA's driver; every output is checked by spirv-val.
//!
//! Needs glslangValidator and spirv-val; without them the tests say so and pass, unless
//! MACROSCOPE_REQUIRE_VULKAN is set (scripts/test sets it, after installing them).

use std::path::{Path, PathBuf};
use std::process::Command;

use driver::spirv::view_index::{lower, Outcome};
use driver::spirv::{analyze, load, words, GsVertexCount};

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

fn ready() -> bool {
    if have("spirv-val") && have("glslangValidator") {
        return true;
    }
    assert!(
        std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
        "spirv-val and glslangValidator are required here"
    );
    eprintln!("skipping: spirv-val or glslangValidator is missing");
    false
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// SPIR-V compiled from GLSL by glslangValidator.
fn compile(source: &Path) -> Vec<u32> {
    spirv_from("glslangValidator", &["-V"], source)
}

/// SPIR-V assembled by spirv-as from its text (the shapes glslang does not write).
fn assemble(source: &Path) -> Vec<u32> {
    spirv_from("spirv-as", &[], source)
}

/// The SPIR-V `tool` (with `args`, for Vulkan 1.1) makes of `source`.
fn spirv_from(tool: &str, args: &[&str], source: &Path) -> Vec<u32> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.spv");
    let status = Command::new(tool)
        .args(args)
        .args(["--target-env", "vulkan1.1", "-o"])
        .arg(&out)
        .arg(source)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    spv(&std::fs::read(out).unwrap())
}

fn spv(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

/// spirv-val's verdict on `words` (Vulkan 1.1 rules).
fn valid(words: &[u32]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.spv");
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1"])
        .arg(&path)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn view_index_loads_become_root_table_loads_and_validate() {
    if !ready() {
        return;
    }
    let original = spv(&std::fs::read(repo("benches/shaders/view.frag.spv")).unwrap());
    let mut module = load(&original).unwrap();
    let before = analyze(&module);
    assert_eq!(before.stages, ["Fragment"]);
    assert!(before.view_index);
    let ubo_before = before.ubo_loads_constant;
    assert_eq!(lower(&mut module), Outcome::Lowered(1));
    let lowered = words(&module);
    valid(&lowered).unwrap();
    let after = analyze(&load(&lowered).unwrap());
    assert!(!after.view_index);
    // The view index now comes from the root table: one more constant uniform load.
    assert_eq!(after.ubo_loads_constant, ubo_before + 1);
    let text = format!("{:?}", load(&lowered).unwrap().capabilities);
    assert!(!text.contains("MultiView"), "{text}");
    // A module without ViewIndex is left as it is.
    let color = spv(&std::fs::read(repo("benches/shaders/color.frag.spv")).unwrap());
    let mut m = load(&color).unwrap();
    assert_eq!(lower(&mut m), Outcome::Unchanged("no ViewIndex"));
    // Word for word, but for the header's generator id (rspirv writes its own).
    assert_eq!(words(&m)[3..], color[3..]);
}

#[test]
fn uniform_loads_are_told_constant_or_dynamic() {
    if !ready() {
        return;
    }
    let f = analyze(&load(&compile(&repo("driver/tests/shaders/dynamic_ubo.frag"))).unwrap());
    assert!(f.ubo_loads_dynamic >= 1, "{f:?}");
    assert!(f.ubo_loads_constant >= 1, "{f:?}");
    let color = analyze(
        &load(&spv(
            &std::fs::read(repo("benches/shaders/color.frag.spv")).unwrap()
        ))
        .unwrap(),
    );
    assert_eq!((color.ubo_loads_constant, color.ubo_loads_dynamic), (1, 0));
}

#[test]
fn geometry_vertex_counts_are_static_only_on_one_path() {
    if !ready() {
        return;
    }
    let count = |path: &str| analyze(&load(&compile(&repo(path))).unwrap()).gs_vertex_count;
    assert_eq!(
        count("driver/tests/shaders/straight.geom"),
        Some(GsVertexCount::Static(4))
    );
    assert!(matches!(
        count("driver/tests/shaders/data_loop.geom"),
        Some(GsVertexCount::Unknown(_))
    ));
    assert_eq!(count("benches/shaders/tri.vert"), None);
    // The scene's shrink shader: `for (int i = 0; i < 3; i++) EmitVertex();`.
    let shrink = analyze(
        &load(&spv(&std::fs::read(repo(
            "benches/shaders/shrink.geom.spv",
        ))
        .unwrap()))
        .unwrap(),
    );
    assert_eq!(shrink.gs_vertex_count, Some(GsVertexCount::Static(3)));
    assert_eq!(
        count("driver/tests/shaders/counted_loop.geom"),
        Some(GsVertexCount::Static(2 + 3 * 5))
    );
}

#[test]
fn every_module_of_the_nvidia_traces_goes_through_the_passes_to_valid_spirv() {
    if !ready() {
        return;
    }
    let mut modules = 0;
    let mut lowered = 0;
    for name in ["multiview", "indirect", "storm", "tessellation"] {
        let trace = repo(&format!("samples/{name}-nvidia.mscope"));
        for chunk in trace_format::TraceReader::open(&trace).unwrap() {
            for r in chunk.unwrap().records() {
                let Some(m) = r.call_as_create_shader_module() else {
                    continue;
                };
                let code: Vec<u32> = m.code().unwrap().iter().collect();
                let mut module = load(&code).unwrap();
                assert!(!analyze(&module).stages.is_empty());
                if let Outcome::Lowered(_) = lower(&mut module) {
                    lowered += 1;
                }
                valid(&words(&module)).unwrap();
                // And the UBO pass over the result: still valid.
                driver::spirv::ubo_chains::lower(&mut module);
                valid(&words(&module)).unwrap();
                modules += 1;
            }
        }
    }
    assert!(modules >= 8, "{modules}");
    assert_eq!(
        lowered, 1,
        "the multiview scene's fragment shader reads ViewIndex"
    );
}

#[test]
fn geometry_emits_become_counted_and_validate() {
    use driver::spirv::gs_count;
    if !ready() {
        return;
    }
    for (path, emits) in [
        ("driver/tests/shaders/straight.geom", 4),
        ("driver/tests/shaders/counted_loop.geom", 5),
        ("driver/tests/shaders/data_loop.geom", 1),
        ("driver/tests/shaders/overflow.geom", 1),
        ("benches/shaders/shrink.geom", 1),
    ] {
        let mut module = load(&compile(&repo(path))).unwrap();
        match gs_count::lower(&mut module) {
            gs_count::Outcome::Counted { emits: n, .. } => assert_eq!(n, emits, "{path}"),
            other => panic!("{path}: {other:?}"),
        }
        let lowered = words(&module);
        valid(&lowered).unwrap_or_else(|e| panic!("{path}: {e}"));
        // Every emit now sits behind the counter's test.
        let text = format!("{:?}", load(&lowered).unwrap().debug_names);
        assert!(text.contains("gs_vertex_count"), "{path}");
    }
    let mut fragment = load(&spv(
        &std::fs::read(repo("benches/shaders/color.frag.spv")).unwrap()
    ))
    .unwrap();
    assert_eq!(
        gs_count::lower(&mut fragment),
        gs_count::Outcome::Unchanged("not a geometry shader")
    );
}

#[test]
fn a_synthesized_pass_through_tcs_validates() {
    use driver::spirv::passthrough_tcs::{synthesize, VertexOutput};
    if !ready() {
        return;
    }
    for (patch, outputs) in [
        (3, vec![]),
        (
            4,
            vec![
                VertexOutput {
                    location: 0,
                    components: 4,
                },
                VertexOutput {
                    location: 2,
                    components: 1,
                },
            ],
        ),
        (
            1,
            vec![VertexOutput {
                location: 1,
                components: 3,
            }],
        ),
    ] {
        let module = synthesize(patch, &outputs).unwrap();
        valid(&words(&module)).unwrap_or_else(|e| panic!("patch {patch}: {e}"));
        assert_eq!(analyze(&module).stages, ["TessellationControl"]);
    }
    assert!(synthesize(0, &[]).is_err());
    assert!(synthesize(
        3,
        &[VertexOutput {
            location: 0,
            components: 5
        }]
    )
    .is_err());
}

#[test]
fn ubo_loads_become_per_component_chains_and_validate() {
    use driver::spirv::ubo_chains;
    if !ready() {
        return;
    }
    let sources = [
        compile(&repo("driver/tests/shaders/dynamic_ubo.frag")),
        spv(&std::fs::read(repo("benches/shaders/color.frag.spv")).unwrap()),
        spv(&std::fs::read(repo("benches/shaders/view.frag.spv")).unwrap()),
        compile(&repo("driver/tests/shaders/data_loop.geom")),
    ];
    for (n, code) in sources.iter().enumerate() {
        let mut module = load(code).unwrap();
        let before = analyze(&module);
        let loads = before.ubo_loads_constant + before.ubo_loads_dynamic;
        assert_eq!(
            ubo_chains::lower(&mut module),
            ubo_chains::Outcome::Lowered(loads),
            "shader {n}"
        );
        let lowered = words(&module);
        valid(&lowered).unwrap_or_else(|e| panic!("shader {n}: {e}"));
        // Every load now reads one scalar through a constant-free chain of the view.
        let after = analyze(&load(&lowered).unwrap());
        assert!(
            after.ubo_loads_constant + after.ubo_loads_dynamic >= loads,
            "shader {n}"
        );
    }
}

#[test]
fn an_entry_points_interface_is_what_nvk_compiles_into_its_command_stream() {
    use driver::spirv::interface::{interfaces, DescriptorUse, Stage, TessParams, XfbBuffer};
    if !ready() {
        return;
    }
    let read = |name: &str| {
        let code = compile(&repo(&format!("driver/tests/shaders/{name}")));
        let found = interfaces(&load(&code).unwrap());
        assert_eq!(found.len(), 1, "{name}");
        found.into_iter().next().unwrap()
    };

    let (entry, stage, fs) = read("interface.frag");
    assert_eq!((entry.as_str(), stage), ("main", Stage::Fragment));
    assert_eq!(
        fs.descriptors,
        [
            DescriptorUse::UniformBuffer {
                set: 0,
                binding: 2,
                element: 0
            },
            DescriptorUse::DescriptorSet { set: 1 },
        ]
    );
    assert!(fs.early_fragment_tests && fs.writes_depth && fs.uses_sample_shading);
    assert!(!fs.post_depth_coverage);

    let (_, stage, vs) = read("captured.vert");
    assert_eq!(stage, Stage::Vertex);
    assert!(vs.writes_layer);
    assert_eq!((vs.clip_distances, vs.cull_distances), (2, 1));
    // Declared but never written: none.
    let (_, _, declared) = read("declared_clip.vert");
    assert_eq!((declared.clip_distances, declared.cull_distances), (0, 0));
    // Position at dword 0..4 and the colour at 4..8 of buffer 1, each dword the
    // attribute nak_xfb_from_nir gives it (address / 4): the position's at 0x70, the
    // colour's, location 0, at 0x80.
    assert_eq!(
        vs.xfb[1],
        XfbBuffer {
            stream: 0,
            attr_count: 8,
            stride: 32,
            attr_index: vec![0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23],
        }
    );
    assert_eq!(vs.xfb[0], XfbBuffer::default());
    // A dword no output fills is skipped (0xff); an output at a component past the
    // first takes that component's attribute.
    let (_, _, gaps) = read("xfb_gaps.vert");
    assert_eq!(
        gaps.xfb[0],
        XfbBuffer {
            stream: 0,
            attr_count: 4,
            stride: 16,
            attr_index: vec![0x24, 0xff, 0x2a, 0x2b],
        }
    );

    let (_, stage, tes) = read("isolines.tese");
    assert_eq!(stage, Stage::TessEval);
    assert_eq!(
        tes.tess,
        Some(TessParams {
            domain: 0,
            spacing: 1,
            prims: 1
        })
    );

    // What the storm scene's shaders read: the colour from set 0's uniform buffer.
    let (_, _, color) = read("../../../benches/shaders/color.frag");
    assert_eq!(
        color.descriptors,
        [DescriptorUse::UniformBuffer {
            set: 0,
            binding: 0,
            element: 0
        }]
    );
    let (_, _, white) = read("white.frag");
    assert!(white.descriptors.is_empty());
}

#[test]
fn constant_buffer_uses_are_counted_as_nak_unrolls_and_merges_them() {
    use driver::spirv::interface::{interfaces, DescriptorUse};
    if !ready() {
        return;
    }
    let code = compile(&repo("driver/tests/shaders/blur.frag"));
    let (_, _, blur) = interfaces(&load(&code).unwrap()).remove(0);
    assert_eq!(
        blur.descriptors,
        [
            DescriptorUse::UniformBuffer {
                set: 0,
                binding: 0,
                element: 0
            },
            DescriptorUse::DescriptorSet { set: 1 },
        ]
    );
    // The loop of eight unrolled: the kernel read at each index (8), the matrix's three
    // columns, the offset and the bounds merged into one load each (5); two texture
    // instructions an iteration, each naming the texture and the sampler (32). So NVK
    // binds the set's descriptors before the uniform buffer, where the SPIR-V's own
    // loads (7 and 2) say the opposite.
    assert_eq!(blur.descriptor_loads, [13, 32]);

    // interface.frag reads its uniform buffer once and samples once: 1 and 2.
    let code = compile(&repo("driver/tests/shaders/interface.frag"));
    let (_, _, once) = interfaces(&load(&code).unwrap()).remove(0);
    assert_eq!(once.descriptor_loads, [1, 2]);
}

/// A texture instruction in a loop of unknown trip count that runs to a uniform counts
/// one use more than its texture and sampler; one in a loop that runs to a fragment
/// input does not, nor one in a counted loop too long to unroll: the order in which NVK
/// 25.0.7 binds Godot's scene shaders' constant buffers (through Zink, its shadow maps
/// sampled in loops over a uniform light count), its glow pass's (a loop of 512) and
/// GTK 4's blur shader's (a loop to a fragment input: its uniform buffer, 8 uses, ahead
/// of its sampled set, 6).
#[test]
fn a_sample_in_a_loop_to_a_uniform_count_counts_once_more() {
    use driver::spirv::interface::{interfaces, DescriptorUse};
    if !ready() {
        return;
    }
    let code = compile(&repo("driver/tests/shaders/loop_samples.frag"));
    valid(&code).unwrap();
    let (_, _, shader) = interfaces(&load(&code).unwrap()).remove(0);
    assert_eq!(
        shader.descriptors,
        [
            DescriptorUse::UniformBuffer {
                set: 0,
                binding: 1,
                element: 0
            },
            DescriptorUse::DescriptorSet { set: 0 },
        ]
    );
    // The uniform buffer: its count, loaded at one place. The set: 3 for the sample in
    // the loop to the uniform, 2 for the one in the loop to the input, 2 for the one in
    // the loop of 100.
    assert_eq!(shader.descriptor_loads, [1, 7]);
}

/// A uniform-buffer load whose value nothing live reads is dead code, gone from NIR
/// before NVK counts uses: Zink loads a `vec4` uniform as four scalars, and a shader
/// that uses three of its components counts three (Scorched3D's fog colour, which made
/// NVK bind its textures' descriptor set ahead of the uniform buffer).
#[test]
fn a_uniform_load_nothing_reads_is_no_use() {
    use driver::spirv::interface::interfaces;
    if !ready() || !have("spirv-as") {
        return;
    }
    let code = assemble(&repo("driver/tests/shaders/dead_component.spvasm"));
    valid(&code).unwrap();
    let (_, _, shader) = interfaces(&load(&code).unwrap()).remove(0);
    assert_eq!(shader.descriptor_loads, [3]);
}

/// An array of uniform buffers (Zink declares each stage's so, `ubos[N]`): NVK binds
/// each element read at a constant index as a constant buffer of its own
/// (`ubo_deref_to_cbuf`'s descriptor offset), and none read at an index chosen at run
/// time or only in a loop that never runs (gone from NIR before the uses are counted).
/// Godot's scene shader through Zink reads six elements so, two of them only in such
/// loops: NVK binds four.
#[test]
fn each_element_of_a_uniform_buffer_array_is_a_constant_buffer_of_its_own() {
    use driver::spirv::interface::{interfaces, DescriptorUse};
    if !ready() {
        return;
    }
    let element = |element| DescriptorUse::UniformBuffer {
        set: 1,
        binding: 9,
        element,
    };
    let code = compile(&repo("driver/tests/shaders/ubo_array.frag"));
    valid(&code).unwrap();
    let (_, _, shader) = interfaces(&load(&code).unwrap()).remove(0);
    assert_eq!(shader.descriptors, [element(0), element(2)]);
    // Element 2: two constant places and one chosen at run time.
    assert_eq!(shader.descriptor_loads, [1, 3]);

    // The same in a loop as Zink writes one: the counter compared through bitcasts,
    // the exit a block that only breaks.
    if !have("spirv-as") {
        return;
    }
    let code = assemble(&repo("driver/tests/shaders/break_loop.spvasm"));
    valid(&code).unwrap();
    let (_, _, shader) = interfaces(&load(&code).unwrap()).remove(0);
    assert_eq!(shader.descriptors, [element(0)]);
    assert_eq!(shader.descriptor_loads, [1]);
}

#[test]
fn a_specialization_constant_keeps_only_the_variant_it_chooses() {
    use driver::spirv::interface::{interfaces, DescriptorUse, Interface};
    use driver::spirv::specialize::{specialize, Specialization, SpecializationEntry};
    if !ready() {
        return;
    }
    let code = compile(&repo("driver/tests/shaders/clip_variants.frag"));
    let specialized = |data: &[u8], offset: u32| -> Interface {
        let mut module = load(&code).unwrap();
        let entries = [SpecializationEntry {
            constant_id: 0,
            offset,
            size: 4,
        }];
        specialize(
            &mut module,
            &Specialization {
                entries: &entries,
                data,
            },
        );
        interfaces(&module).remove(0).2
    };
    let ubo = DescriptorUse::UniformBuffer {
        set: 0,
        binding: 0,
        element: 0,
    };
    let set = DescriptorUse::DescriptorSet { set: 1 };
    // At its default (0) neither variant runs: the shader samples and reads no uniform.
    let mut module = load(&code).unwrap();
    specialize(&mut module, &Specialization::default());
    let none = interfaces(&module).remove(0).2;
    assert_eq!(none.descriptors, [set]);
    assert_eq!(none.descriptor_loads, [2]);
    // 1: the rectangle clip, whose function reads two of the buffer's values.
    // (Descriptors are listed in first-use order as the module lays its functions out.)
    let rect = specialized(&1u32.to_le_bytes(), 0);
    assert_eq!(rect.descriptors, [ubo, set]);
    assert_eq!(rect.descriptor_loads, [2, 2]);
    // 4: the switch's case, one value.
    let scaled = specialized(&4u32.to_le_bytes(), 0);
    assert_eq!(scaled.descriptors, [ubo, set]);
    assert_eq!(scaled.descriptor_loads, [1, 2]);
    // 5: both.
    assert_eq!(specialized(&5u32.to_le_bytes(), 0).descriptor_loads, [3, 2]);
    // An entry whose bytes lie outside the data leaves the default.
    assert_eq!(specialized(&5u32.to_le_bytes(), 2).descriptors, [set]);
    // NVK keys a compiled shader by its NIR: specializations that choose the same
    // variant are one shader, whatever else their data holds (here a constant the
    // shader does not declare, and another the entry points to beyond the data).
    let fingerprint = |data: &[u8], entries: &[SpecializationEntry]| {
        let mut module = load(&code).unwrap();
        specialize(&mut module, &Specialization { entries, data })
    };
    let clip = |id: u32, offset: u32| SpecializationEntry {
        constant_id: id,
        offset,
        size: 4,
    };
    let data: Vec<u8> = [1u32, 7, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
    let rect = fingerprint(&data[..4], &[clip(0, 0)]);
    assert_eq!(rect, fingerprint(&data, &[clip(0, 0), clip(3, 4)]));
    assert_ne!(rect, fingerprint(&data[4..], &[clip(0, 0)]));
    assert_ne!(rect, fingerprint(&[], &[]));
    // Unspecialized, every branch stays: what the model read before it specialized.
    let (_, _, unspecialized) = interfaces(&load(&code).unwrap()).remove(0);
    assert_eq!(unspecialized.descriptor_loads, [3, 2]);
}

#[test]
fn a_workgroup_size_made_of_specialization_constants_takes_the_stage_values() {
    use driver::spirv::interface::interfaces;
    use driver::spirv::specialize::{specialize, Specialization, SpecializationEntry};
    if !ready() {
        return;
    }
    let code = compile(&repo("driver/tests/shaders/sized_by_constant.comp"));
    let size = |data: &[u8]| {
        let mut module = load(&code).unwrap();
        let entries = [SpecializationEntry {
            constant_id: 0,
            offset: 0,
            size: 4,
        }];
        let entries = if data.is_empty() {
            &[][..]
        } else {
            &entries[..]
        };
        specialize(&mut module, &Specialization { entries, data });
        interfaces(&module).remove(0).2.workgroup_size
    };
    // glslang's default for a constant-sized dimension is 1.
    assert_eq!(size(&[]), Some([1, 2, 1]));
    assert_eq!(size(&128u32.to_le_bytes()), Some([128, 2, 1]));
}

/// Constant tables a shader reads at an index known only when it runs are moved into
/// the shader's constant data (`nir_opt_large_constants`), which NVK binds as constant
/// buffer 1 ahead of the descriptors, padded to the constant-buffer alignment. What
/// NVK 25.0.7 moves was measured against it, vertex shader by vertex shader in SDL 3's
/// GPU test (`testgpu_spinning_cube`): arrays of scalars only, larger than 32 bytes or
/// small integers NIR packs into an immediate; no table of vectors; no table whose
/// every read a counted loop unrolls into a constant index.
#[test]
fn a_constant_table_read_at_a_run_time_index_is_constant_data_nvk_binds_first() {
    use driver::chipset::Chipset;
    use driver::mme::Arch;
    use driver::nvk::shader::{Cbuf, Shader, UniformBufferKind};
    use driver::spirv::interface::{interfaces, Stage};
    if !ready() {
        return;
    }
    let bytes = |name: &str| {
        let code = compile(&repo(&format!("driver/tests/shaders/{name}.vert")));
        valid(&code).unwrap();
        interfaces(&load(&code).unwrap()).remove(0).2
    };
    let lut = bytes("table_lut");
    assert_eq!(lut.constant_data_bytes, 24);
    assert_eq!(bytes("table_vec2").constant_data_bytes, 0);
    assert_eq!(bytes("table_loop_counted").constant_data_bytes, 0);
    assert_eq!(bytes("table_loop_input").constant_data_bytes, 160);
    assert_eq!(bytes("table_small_floats").constant_data_bytes, 0);

    let declared = |_, _| UniformBufferKind::Descriptor;
    for (arch, padded) in [(Arch::Turing, 64), (Arch::Fermi, 256)] {
        let shader = Shader::new(
            Stage::Vertex,
            &lut,
            Chipset::for_arch(arch),
            0x100,
            &declared,
        )
        .unwrap();
        assert_eq!(shader.cbufs, [Cbuf::Root, Cbuf::ShaderData], "{arch:?}");
        assert_eq!(shader.data.map(|(_, size)| size), Some(padded), "{arch:?}");
    }
}
