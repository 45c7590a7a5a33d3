//! Shader modules and the graphics shaders pipelines are built from: each module's
//! entry points read once from its SPIR-V, and one [`Shader`] per distinct compile
//! (the stages linked with it, their modules, entry points and specialization data,
//! the state and layout they are compiled for), shared by every pipeline that
//! compiles the same — as NVK's shader cache shares them, so binding another
//! pipeline with the same shaders does not rebind them.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use driver::chipset::Chipset;
use driver::nvk::shader::{group_of, Shader, UniformBufferKind};
use driver::spirv::interface::{interfaces, Interface, Stage};
use driver::spirv::specialize::{specialize, Specialization, SpecializationEntry};

use crate::layouts::Layouts;

/// One entry point of a module.
type Entry = (String, Stage, Interface);

/// What one stage compiles from: the module's hash, the entry point, the stage bit
/// and the fingerprint of what its specialization made of the module
/// ([`driver::spirv::specialize::specialize`]).
type PrecompKey = (u64, String, u32, u64);

/// A module's entry points as one specialization reads them, and that
/// specialization's fingerprint.
type Specialized = (Arc<[Entry]>, u64);

/// What makes two shaders the same: the key of the stages linked together (see
/// [`Shaders::pipeline_shaders`]) and the stage bit.
type CompileKey = (u64, u32);

/// `VK_PIPELINE_CREATE_LIBRARY_BIT_KHR`.
const VK_PIPELINE_CREATE_LIBRARY_BIT: u32 = 0x800;
/// `VK_PIPELINE_CREATE_LINK_TIME_OPTIMIZATION_BIT_EXT`.
const VK_PIPELINE_CREATE_LINK_TIME_OPTIMIZATION_BIT: u32 = 0x400;
/// The pipeline flags that reach a shader's key (vk_pipeline_to_shader_flags, and the
/// view-index flag vk_pipeline_hash_shader_stage hashes): capture of internal
/// representations, view index from device index, and the fragment shading rate and
/// density map attachments.
const SHADER_FLAG_PIPELINE_BITS: u32 = 0x80 | 0x8 | 0x20_0000 | 0x40_0000;

/// One stage of a pipeline, read for compiling.
#[derive(Clone, Debug)]
struct Precompiled {
    /// Its constant-buffer group (vertex ... fragment).
    group: usize,
    stage: Stage,
    interface: Interface,
    key: PrecompKey,
}

/// What of a pipeline's creation decides which of its stages compile together and
/// what their shaders are keyed by, beside the stages.
#[derive(Clone, Debug, Default)]
pub struct PipelineCompile {
    /// Its handle.
    pub pipeline: u64,
    /// `VkGraphicsPipelineCreateInfo::flags`.
    pub flags: u32,
    /// The libraries it is linked from.
    pub libraries: Vec<u64>,
    /// What NVK hashes of the graphics state for a fragment shader.
    pub fragment_state: FragmentState,
}

/// The graphics state nvk_hash_graphics_state hashes into a fragment shader's key
/// (nvk_populate_fs_key's conservative-rasterization and feedback-loop bits, and
/// whether the render pass is multiview). Sample shading, which it hashes too, is not
/// in a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FragmentState {
    /// No rasterization state (a fragment shader library), or underestimating
    /// conservative rasterization.
    pub underestimate: bool,
    /// `VK_PIPELINE_CREATE_DEPTH_STENCIL_ATTACHMENT_FEEDBACK_LOOP_BIT_EXT`.
    pub depth_stencil_feedback_loop: bool,
    /// A view mask other than 0.
    pub multiview: bool,
}

/// A module as the replay keeps it.
#[derive(Debug)]
struct Module {
    /// Its words' hash: two modules with the same code compile alike.
    hash: u64,
    /// Its code, read again for a stage that specializes it.
    code: Arc<[u32]>,
    /// Its entry points with every specialization constant at its default.
    entries: Arc<[Entry]>,
    /// The fingerprint of that default specialization.
    fingerprint: u64,
}

/// A module's code read once, kept beside what was read from it: a program that
/// creates the same module again (Zink does for each pipeline variant: a game's 528
/// modules held 32 codes) finds its entry points without parsing it again.
#[derive(Debug)]
struct ReadCode {
    code: Arc<[u32]>,
    entries: Arc<[Entry]>,
    fingerprint: u64,
}

/// One stage of a graphics pipeline, as the trace records it.
pub struct StageInfo<'a> {
    /// `VkShaderStageFlagBits`.
    pub stage: u32,
    /// The module handle.
    pub module: u64,
    /// The entry point's name.
    pub entry: &'a str,
    /// The specialization constants' data.
    pub specialization: &'a [u8],
    /// The specialization map's entries: which constants the data gives values to.
    pub specialization_map: Vec<SpecializationEntry>,
}

/// The modules created and the shaders compiled from them.
#[derive(Debug, Default)]
pub struct Shaders {
    modules: HashMap<u64, Module>,
    /// Every distinct code seen, by its hash (codes that share a hash, each once).
    read: HashMap<u64, Vec<ReadCode>>,
    /// The shader objects alive, by compile, with how many live pipelines hold each.
    compiled: HashMap<CompileKey, Held>,
    /// How many objects of each compile were made before.
    made: HashMap<CompileKey, u32>,
    /// The compiles each live pipeline holds an object of, by its handle.
    holds: HashMap<u64, Vec<CompileKey>>,
    /// The stages each pipeline library was made with, for a pipeline linked from it
    /// with link-time optimisation.
    library_stages: HashMap<u64, Vec<Precompiled>>,
    /// The entry points of each code specialized otherwise than by its defaults, by
    /// the code's hash and the specialization's.
    specialized: HashMap<(u64, u64), Specialized>,
}

/// A shader object and the live pipelines that hold it.
#[derive(Debug)]
struct Held {
    shader: Arc<Shader>,
    pipelines: u32,
}

impl Shaders {
    /// vkCreateShaderModule: reads the module's entry points, or finds them where the
    /// same code was read before (compared word for word). A module that does not
    /// parse has none (its pipelines' stages compile to shaders that read only the
    /// root table).
    pub fn create_module(&mut self, handle: u64, code: &[u32]) {
        let mut hasher = DefaultHasher::new();
        code.hash(&mut hasher);
        let hash = hasher.finish();
        let same_hash = self.read.entry(hash).or_default();
        let (code, entries, fingerprint) = match same_hash.iter().find(|r| *r.code == *code) {
            Some(read) => (read.code.clone(), read.entries.clone(), read.fingerprint),
            None => {
                let (entries, fingerprint) = entry_points(code, &Specialization::default());
                let code: Arc<[u32]> = code.into();
                same_hash.push(ReadCode {
                    code: code.clone(),
                    entries: entries.clone(),
                    fingerprint,
                });
                (code, entries, fingerprint)
            }
        };
        self.modules.insert(
            handle,
            Module {
                hash,
                code,
                entries,
                fingerprint,
            },
        );
    }

    /// The workgroup size of `module`'s compute entry point, when its SPIR-V says it,
    /// with its specialization constants at their defaults.
    pub fn workgroup_size(&self, module: u64) -> Option<[u32; 3]> {
        compute_workgroup_size(&self.modules.get(&module)?.entries)
    }

    /// The workgroup size of `module`'s compute entry point as a compute pipeline's
    /// stage specializes it (`spec`): a `LocalSizeId` mode or a `WorkgroupSize`
    /// built-in made of specialization constants takes the stage's values, as
    /// spirv_to_nir gives them (ggml's Vulkan shaders size their workgroups so).
    pub fn specialized_workgroup_size(
        &mut self,
        module: u64,
        spec: &Specialization<'_>,
    ) -> Option<[u32; 3]> {
        if spec.entries.is_empty() {
            return self.workgroup_size(module);
        }
        compute_workgroup_size(&self.specialized(module, spec)?.0)
    }

    /// The graphics shaders pipeline `compile.pipeline` binds for its own `stages`
    /// (and, linked with link-time optimisation, its libraries' stages), by
    /// constant-buffer group (vertex ... fragment). A tessellation evaluation shader
    /// without tessellation modes takes the control shader's (SPIR-V lets either
    /// declare them).
    ///
    /// As NVK 25.0.7's vk_graphics_pipeline_compile_shaders: each stage is compiled
    /// alone (a partition of its own), all of them together only with
    /// `VK_PIPELINE_CREATE_LINK_TIME_OPTIMIZATION_BIT_EXT`, and a shader is keyed by
    /// its partition's stages (modules, entry points, specialization), the pipeline
    /// flags that reach shaders, NVK's hash of the graphics state where the fragment
    /// shader is in the partition (nvk_hash_graphics_state), the pipeline layout, the
    /// tessellation modes of a tessellation stage, and which geometry stages the
    /// pipeline has. A fragment shader drawn after a vertex shader alone and the same
    /// one after a geometry shader are two objects, as are two fragment shaders of
    /// pipelines whose feedback-loop flag differs.
    pub fn pipeline_shaders(
        &mut self,
        stages: &[StageInfo<'_>],
        compile: &PipelineCompile,
        chipset: Chipset,
        layout: u64,
        layouts: &Layouts,
    ) -> [Option<Arc<Shader>>; 5] {
        let mut found: [Option<Precompiled>; 5] = Default::default();
        for s in stages {
            if let Some(p) = self.precompile(s) {
                let group = p.group;
                found[group] = Some(p);
            }
        }
        if compile.flags & VK_PIPELINE_CREATE_LIBRARY_BIT != 0 {
            self.library_stages
                .insert(compile.pipeline, found.iter().flatten().cloned().collect());
        }
        let fragment = group_of(Stage::Fragment).unwrap_or(4);
        // The stages its libraries give: compiled again with the pipeline's own under
        // link-time optimisation, else their shaders kept (`Pipeline::link`); either
        // way among the geometry stages every stage's key names.
        let mut geometry_stages = 0u32;
        let optimize = compile.flags & VK_PIPELINE_CREATE_LINK_TIME_OPTIMIZATION_BIT != 0;
        for lib in &compile.libraries {
            for p in self.library_stages.get(lib).into_iter().flatten() {
                if p.group != fragment {
                    geometry_stages |= p.key.2;
                }
                if optimize && found[p.group].is_none() {
                    found[p.group] = Some(p.clone());
                }
            }
        }
        for (group, p) in found.iter().enumerate() {
            if let Some(p) = p.as_ref().filter(|_| group != fragment) {
                geometry_stages |= p.key.2;
            }
        }
        let control_tess = found[1].as_ref().and_then(|p| p.interface.tess);
        if let Some(tes) = found[2].as_mut() {
            tes.interface.tess = tes.interface.tess.or(control_tess);
        }
        let tess = found[2]
            .as_ref()
            .and_then(|p| p.interface.tess)
            .or(control_tess);
        let layout_hash = layouts.content_hash(layout);
        // Each stage's partition's key: stage groups 0..5 alone, or all in one (5).
        let partition_key = |groups: &mut dyn Iterator<Item = usize>| {
            let mut hasher = DefaultHasher::new();
            let (mut has_fragment, mut has_tess) = (false, false);
            for group in groups {
                let Some(p) = &found[group] else { continue };
                p.key.hash(&mut hasher);
                has_fragment |= group == fragment;
                has_tess |= group == 1 || group == 2;
            }
            (compile.flags & SHADER_FLAG_PIPELINE_BITS).hash(&mut hasher);
            if has_fragment {
                compile.fragment_state.hash(&mut hasher);
            }
            layout_hash.hash(&mut hasher);
            if has_tess {
                tess.hash(&mut hasher);
            }
            geometry_stages.hash(&mut hasher);
            hasher.finish()
        };
        let linked: [u64; 5] = match optimize {
            true => [partition_key(&mut (0..5)); 5],
            false => std::array::from_fn(|group| partition_key(&mut std::iter::once(group))),
        };
        // A handle made again with no destroy between: the pipeline it named is gone.
        let libraries_held: Vec<CompileKey> = compile
            .libraries
            .iter()
            .filter(|_| !optimize)
            .flat_map(|lib| self.holds.get(lib).cloned().unwrap_or_default())
            .collect();
        let library = self.library_stages.remove(&compile.pipeline);
        self.destroy_pipeline(compile.pipeline);
        if let Some(library) = library {
            self.library_stages.insert(compile.pipeline, library);
        }
        // A pipeline linked from libraries holds the shaders it takes from them.
        for key in &libraries_held {
            if let Some(held) = self.compiled.get_mut(key) {
                held.pipelines += 1;
            }
        }
        let mut held_now = libraries_held;
        let mut shaders: [Option<Arc<Shader>>; 5] = Default::default();
        for (group, p) in found.into_iter().enumerate() {
            let Some(p) = p else { continue };
            let key = (linked[group], p.key.2);
            if let Some(held) = self.compiled.get_mut(&key) {
                held.pipelines += 1;
                shaders[group] = Some(held.shader.clone());
                held_now.push(key);
                continue;
            }
            // Another object than any before of this compile: placed elsewhere.
            let made = self.made.entry(key).or_default();
            let mut identity = DefaultHasher::new();
            key.hash(&mut identity);
            if *made > 0 {
                made.hash(&mut identity);
            }
            *made += 1;
            let uniform_buffer = |set: u32, binding: u32| {
                layouts
                    .set(layout, set)
                    .map_or(UniformBufferKind::Descriptor, |l| {
                        l.uniform_buffer(
                            binding,
                            driver::nvk::Device::for_chipset(chipset).min_cbuf_alignment(),
                        )
                    })
            };
            let Some(shader) = Shader::new(
                p.stage,
                &p.interface,
                chipset,
                identity.finish(),
                &uniform_buffer,
            ) else {
                continue;
            };
            let shader = Arc::new(shader);
            self.compiled.insert(
                key,
                Held {
                    shader: shader.clone(),
                    pipelines: 1,
                },
            );
            held_now.push(key);
            shaders[group] = Some(shader);
        }
        self.holds.insert(compile.pipeline, held_now);
        shaders
    }

    /// vkDestroyPipeline: pipeline `handle` lets go of its shaders. NVK keeps a
    /// pipeline's shaders in its device's cache by weak reference (the replay creates
    /// pipelines with no cache of the program's, so in `mem_cache`): a shader no live
    /// pipeline holds is freed, and the next pipeline to compile the same makes
    /// another object, which NVK places where its heap has room.
    pub fn destroy_pipeline(&mut self, handle: u64) {
        for key in self.holds.remove(&handle).unwrap_or_default() {
            if let Some(held) = self.compiled.get_mut(&key) {
                held.pipelines -= 1;
                if held.pipelines == 0 {
                    self.compiled.remove(&key);
                }
            }
        }
        self.library_stages.remove(&handle);
    }

    /// What one stage compiles from (vk_pipeline_hash_precomp_shader_stage's part of
    /// the key), with its constant-buffer group and interface; `None` for a stage
    /// that is not a graphics stage the model knows.
    fn precompile(&mut self, s: &StageInfo<'_>) -> Option<Precompiled> {
        let stage = Stage::from_vk(s.stage)?;
        let group = group_of(stage)?;
        let specialized = self.specialized_entries(s);
        let module = self.modules.get(&s.module);
        let fingerprint = specialized
            .as_ref()
            .map(|(_, f)| *f)
            .or(module.map(|m| m.fingerprint))
            .unwrap_or_default();
        let interface = specialized
            .as_ref()
            .map(|(entries, _)| &**entries)
            .or(module.map(|m| &*m.entries))
            .and_then(|entries| {
                entries
                    .iter()
                    .find(|(name, st, _)| name == s.entry && *st == stage)
                    .or_else(|| entries.iter().find(|(_, st, _)| *st == stage))
            })
            .map(|(_, _, i)| i.clone())
            .unwrap_or_default();
        Some(Precompiled {
            group,
            stage,
            interface,
            key: (
                module.map_or(s.module, |m| m.hash),
                s.entry.to_string(),
                s.stage,
                fingerprint,
            ),
        })
    }

    /// The entry points of stage `s`'s module as `s` specializes it, and the
    /// specialization's fingerprint, read once for each code and specialization;
    /// `None` for a stage that gives no constant a value (its module's entries hold) or
    /// an unknown module.
    fn specialized_entries(&mut self, s: &StageInfo<'_>) -> Option<Specialized> {
        if s.specialization_map.is_empty() {
            return None;
        }
        let spec = Specialization {
            entries: &s.specialization_map,
            data: s.specialization,
        };
        self.specialized(s.module, &spec)
    }

    /// The entry points of `module` as `spec` specializes it, and the specialization's
    /// fingerprint: read once for each code and specialization, kept after.
    fn specialized(&mut self, module: u64, spec: &Specialization<'_>) -> Option<Specialized> {
        let m = self.modules.get(&module)?;
        let mut hasher = DefaultHasher::new();
        spec.data.hash(&mut hasher);
        spec.entries.hash(&mut hasher);
        let key = (m.hash, hasher.finish());
        let code = m.code.clone();
        let read = self
            .specialized
            .entry(key)
            .or_insert_with(|| entry_points(&code, spec));
        Some(read.clone())
    }
}

/// The workgroup size `entries` give their compute entry point.
fn compute_workgroup_size(entries: &[Entry]) -> Option<[u32; 3]> {
    entries
        .iter()
        .find(|(_, stage, _)| *stage == Stage::Compute)
        .and_then(|(_, _, interface)| interface.workgroup_size)
}

/// The entry points of `code` as `spec` specializes it, and the specialization's
/// fingerprint (see [`driver::spirv::specialize`]); none for code that does not parse
/// (its pipelines' stages compile to shaders that read only the root table), its
/// fingerprint the specialization data's.
fn entry_points(code: &[u32], spec: &Specialization<'_>) -> Specialized {
    match driver::spirv::load(code) {
        Ok(mut m) => {
            let fingerprint = specialize(&mut m, spec);
            (interfaces(&m).into(), fingerprint)
        }
        Err(_) => {
            let mut hasher = DefaultHasher::new();
            spec.entries.hash(&mut hasher);
            spec.data.hash(&mut hasher);
            (Arc::from([]), hasher.finish())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SPIR-V file's words.
    fn words(bytes: &[u8]) -> Vec<u32> {
        crate::commands::words_of(bytes).to_vec()
    }

    #[test]
    fn a_module_created_again_is_read_once_and_found_alike() {
        let kernel = words(include_bytes!("../../benches/shaders/double.comp.spv"));
        let fragment = words(include_bytes!("../../benches/shaders/color.frag.spv"));
        let mut shaders = Shaders::default();
        shaders.create_module(1, &kernel);
        shaders.create_module(2, &kernel);
        shaders.create_module(3, &fragment);
        assert_eq!(shaders.workgroup_size(1), Some([64, 1, 1]));
        assert_eq!(shaders.workgroup_size(2), Some([64, 1, 1]));
        assert_eq!(shaders.workgroup_size(3), None);
        // Two codes read, the kernel's once, its entries shared by both handles.
        assert_eq!(shaders.read.values().map(Vec::len).sum::<usize>(), 2);
        assert!(Arc::ptr_eq(
            &shaders.modules[&1].entries,
            &shaders.modules[&2].entries
        ));
        // A handle made again with other code takes that code's entry points.
        shaders.create_module(1, &fragment);
        assert_eq!(shaders.workgroup_size(1), None);
        assert_eq!(shaders.workgroup_size(2), Some([64, 1, 1]));
    }

    /// Shaders with vertex and fragment modules 1 and 2 (and geometry module 3 where
    /// `geometry`), for pipeline `pipeline`.
    fn pipeline(
        shaders: &mut Shaders,
        pipeline: u64,
        geometry: bool,
        flags: u32,
    ) -> [Option<Arc<Shader>>; 5] {
        let stage = |stage, module| StageInfo {
            stage,
            module,
            entry: "main",
            specialization: &[],
            specialization_map: Vec::new(),
        };
        let mut stages = vec![stage(0x1, 1), stage(0x10, 2)];
        if geometry {
            stages.push(stage(0x8, 3));
        }
        let compile = PipelineCompile {
            pipeline,
            flags,
            ..Default::default()
        };
        let chipset = Chipset::for_arch(driver::mme::Arch::Turing);
        shaders.pipeline_shaders(&stages, &compile, chipset, 0, &Layouts::default())
    }

    /// The fragment shader of `shaders`.
    fn fragment(shaders: &[Option<Arc<Shader>>; 5]) -> &Arc<Shader> {
        shaders[4].as_ref().expect("a fragment shader")
    }

    fn scene_shaders() -> Shaders {
        let mut shaders = Shaders::default();
        shaders.create_module(
            1,
            &words(include_bytes!("../../benches/shaders/tri.vert.spv")),
        );
        shaders.create_module(
            2,
            &words(include_bytes!("../../benches/shaders/color.frag.spv")),
        );
        shaders.create_module(
            3,
            &words(include_bytes!("../../benches/shaders/shrink.geom.spv")),
        );
        shaders
    }

    #[test]
    fn a_shader_no_live_pipeline_holds_is_made_again_as_another_object() {
        let mut shaders = scene_shaders();
        let first = pipeline(&mut shaders, 10, false, 0);
        // A second pipeline of the same shaders, while the first lives: NVK finds
        // them in its device's cache, and binding it rebinds nothing.
        let second = pipeline(&mut shaders, 11, false, 0);
        assert!(Arc::ptr_eq(fragment(&first), fragment(&second)));
        shaders.destroy_pipeline(10);
        let third = pipeline(&mut shaders, 12, false, 0);
        assert!(Arc::ptr_eq(fragment(&first), fragment(&third)));
        // Both gone: the cache held them by weak reference, so the next pipeline
        // compiles them again into other objects, uploaded elsewhere.
        shaders.destroy_pipeline(11);
        shaders.destroy_pipeline(12);
        let fourth = pipeline(&mut shaders, 13, false, 0);
        assert!(!Arc::ptr_eq(fragment(&first), fragment(&fourth)));
        assert_ne!(fragment(&first).push, fragment(&fourth).push);
    }

    #[test]
    fn a_fragment_shader_is_keyed_by_the_geometry_stages_and_the_feedback_loop_flag() {
        let mut shaders = scene_shaders();
        let plain = pipeline(&mut shaders, 10, false, 0);
        let with_geometry = pipeline(&mut shaders, 11, true, 0);
        // VK_PIPELINE_CREATE_DEPTH_STENCIL_ATTACHMENT_FEEDBACK_LOOP_BIT_EXT.
        let feedback_loop = PipelineCompile {
            pipeline: 12,
            flags: 0x0400_0000,
            fragment_state: FragmentState {
                depth_stencil_feedback_loop: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let stages = [
            StageInfo {
                stage: 0x1,
                module: 1,
                entry: "main",
                specialization: &[],
                specialization_map: Vec::new(),
            },
            StageInfo {
                stage: 0x10,
                module: 2,
                entry: "main",
                specialization: &[],
                specialization_map: Vec::new(),
            },
        ];
        let chipset = Chipset::for_arch(driver::mme::Arch::Turing);
        let looped =
            shaders.pipeline_shaders(&stages, &feedback_loop, chipset, 0, &Layouts::default());
        assert!(!Arc::ptr_eq(fragment(&plain), fragment(&with_geometry)));
        assert!(!Arc::ptr_eq(fragment(&plain), fragment(&looped)));
        // Each stage is compiled alone without link-time optimisation: the vertex
        // shader is shared by all three.
        let vertex = |s: &[Option<Arc<Shader>>; 5]| s[0].clone().expect("a vertex shader");
        assert!(Arc::ptr_eq(&vertex(&plain), &vertex(&looped)));
        assert!(!Arc::ptr_eq(&vertex(&plain), &vertex(&with_geometry)));
    }
}
