//! Shader modules and the graphics shaders pipelines are built from: each module's
//! entry points read once from its SPIR-V, and one [`Shader`] per distinct compile
//! (module contents, entry point, stage, specialization data), shared by every
//! pipeline that compiles the same — as NVK's shader cache shares them, so binding
//! another pipeline with the same vertex shader does not rebind it.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use driver::chipset::Chipset;
use driver::nvk::shader::{group_of, Shader, UniformBufferKind};
use driver::spirv::interface::{interfaces, Interface, Stage};

use crate::layouts::Layouts;

/// One entry point of a module.
type Entry = (String, Stage, Interface);

/// What makes two compiles the same: the module's hash, the entry point, the stage
/// bit, the specialization data's hash and the pipeline layout's (its set layouts
/// decide how uniform buffers are bound).
type CompileKey = (u64, String, u32, u64, u64);

/// A module as the replay keeps it.
#[derive(Debug)]
struct Module {
    /// Its words' hash: two modules with the same code compile alike.
    hash: u64,
    entries: Arc<[Entry]>,
}

/// A module's code read once, kept beside what was read from it: a program that
/// creates the same module again (Zink does for each pipeline variant: a game's 528
/// modules held 32 codes) finds its entry points without parsing it again.
#[derive(Debug)]
struct ReadCode {
    code: Arc<[u32]>,
    entries: Arc<[Entry]>,
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
}

/// The modules created and the shaders compiled from them.
#[derive(Debug, Default)]
pub struct Shaders {
    modules: HashMap<u64, Module>,
    /// Every distinct code seen, by its hash (codes that share a hash, each once).
    read: HashMap<u64, Vec<ReadCode>>,
    compiled: HashMap<CompileKey, Arc<Shader>>,
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
        let entries = match same_hash.iter().find(|r| *r.code == *code) {
            Some(read) => read.entries.clone(),
            None => {
                let entries: Arc<[Entry]> = driver::spirv::load(code)
                    .map(|m| interfaces(&m))
                    .unwrap_or_default()
                    .into();
                same_hash.push(ReadCode {
                    code: code.into(),
                    entries: entries.clone(),
                });
                entries
            }
        };
        self.modules.insert(handle, Module { hash, entries });
    }

    /// The workgroup size of `module`'s compute entry point, when its SPIR-V says it.
    pub fn workgroup_size(&self, module: u64) -> Option<[u32; 3]> {
        self.modules
            .get(&module)?
            .entries
            .iter()
            .find(|(_, stage, _)| *stage == Stage::Compute)
            .and_then(|(_, _, interface)| interface.workgroup_size)
    }

    /// The graphics shaders a pipeline of `stages` binds, by constant-buffer group
    /// (vertex ... fragment). A tessellation evaluation shader without tessellation
    /// modes takes the control shader's (SPIR-V lets either declare them).
    pub fn pipeline_shaders(
        &mut self,
        stages: &[StageInfo<'_>],
        chipset: Chipset,
        layout: u64,
        layouts: &Layouts,
    ) -> [Option<Arc<Shader>>; 5] {
        let mut found: [Option<(Stage, Interface, CompileKey)>; 5] = Default::default();
        for s in stages {
            let Some(stage) = Stage::from_vk(s.stage) else {
                continue;
            };
            let Some(group) = group_of(stage) else {
                continue;
            };
            let module = self.modules.get(&s.module);
            let interface = module
                .and_then(|m| {
                    m.entries
                        .iter()
                        .find(|(name, st, _)| name == s.entry && *st == stage)
                        .or_else(|| m.entries.iter().find(|(_, st, _)| *st == stage))
                })
                .map(|(_, _, i)| i.clone())
                .unwrap_or_default();
            let mut spec = DefaultHasher::new();
            s.specialization.hash(&mut spec);
            let key = (
                module.map_or(s.module, |m| m.hash),
                s.entry.to_string(),
                s.stage,
                spec.finish(),
                layouts.content_hash(layout),
            );
            found[group] = Some((stage, interface, key));
        }
        let control_tess = found[1].as_ref().and_then(|(_, tcs, _)| tcs.tess);
        if let Some((_, tes, _)) = found[2].as_mut() {
            tes.tess = tes.tess.or(control_tess);
        }
        found.map(|f| {
            let (stage, interface, key) = f?;
            if let Some(shader) = self.compiled.get(&key) {
                return Some(shader.clone());
            }
            let mut identity = DefaultHasher::new();
            key.hash(&mut identity);
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
            let shader = Arc::new(Shader::new(
                stage,
                &interface,
                chipset,
                identity.finish(),
                &uniform_buffer,
            )?);
            self.compiled.insert(key, shader.clone());
            Some(shader)
        })
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
}
