//! How often NVK's `build_cbuf_map` (`nvk_nir_lower_descriptors.c`) counts a use of
//! each descriptor variable, read from the SPIR-V: NVK orders a shader's constant
//! buffers by that count, and it counts in NIR after NAK's preprocessing, not in the
//! SPIR-V the program handed over.
//!
//! What of that preprocessing changes the counts, and so what this module follows:
//! - `record_cbuf_uses_instr` counts a uniform buffer once per `load_deref`, and
//!   spirv_to_nir loads a whole struct, array or matrix one vector or scalar at a time
//!   (`_vtn_variable_load_store`): a `mat3` loaded is three uses;
//! - NIR's CSE merges loads of the same uniform-buffer element (uniform buffers are
//!   read-only, so their loads may be reordered): an element at constant indices
//!   counts once however often it is loaded;
//! - a texture instruction counts its texture and its sampler, each a use
//!   (`record_tex_descriptor_cbuf_use`); a fetch or a size query names no sampler
//!   (`nir_tex_instr_need_sampler`), and a sampled image loaded but never sampled is
//!   dead code, no use at all;
//! - `nir_opt_loop_unroll` unrolls a loop whose trip count it knows, up to NAK's
//!   `max_unroll_iterations` (32) and a size bound: every texture instruction and every
//!   uniform-buffer load at an index the loop varies is then there once an iteration,
//!   while loads at constant indices merge across the iterations.
//!
//! - a texture instruction inside a loop whose trip count is not known and whose exit
//!   test reads a uniform buffer (it runs until a uniform light count) counts one use
//!   more than its texture and sampler; one inside a loop that runs to anything else (a
//!   fragment input), or inside a counted loop too long to unroll, does not. This was
//!   found against NVK 25.0.7, not read in its source: Godot 3's scene shaders through
//!   Zink sample shadow maps in light loops that run to a uniform light count, and NVK
//!   binds their set's descriptors ahead of a uniform buffer read at 47 constant places
//!   only when each such sample counts three (every one of the 174 draws of its three
//!   variants then binds as NVK does), while its glow pass samples in a loop of 512
//!   iterations counted as usual. GTK 4's blur shader samples in a loop that runs to a
//!   fragment input, and NVK binds its uniform buffer (8 uses) ahead of the sampled
//!   set, which it can only when those samples count two each (6 uses; three each
//!   would tie at 8, and a tie puts the set first). No other trace of the corpus
//!   changes. The NIR pass that adds the use is not yet identified.
//!
//! - a uniform-buffer load whose value nothing live reads is gone (`nir_opt_dce`, after
//!   copy propagation looked through the vectors it was built into; Zink loads a `vec4`
//!   uniform as four scalars and a shader may use three): [`super::liveness`].
//!
//! Storage buffers, storage images' texel pointers and other descriptors are counted
//! once per load, store or atomic through them, times the unrolled iterations.
//!
//! Each element of an array of uniform buffers is a constant buffer of its own
//! (`ubo_deref_to_cbuf`'s descriptor offset, binding offset plus index times stride),
//! counted apart; a load through an element chosen at run time is counted for none
//! (NVK records no constant-buffer use for a uniform buffer whose resource index is not
//! a constant: `record_vulkan_resource_cbuf_use` leaves uniform buffers out).

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Function, Instruction, Module, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

use super::id;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type Set<K> = HashSet<K, foldhash::fast::RandomState>;

/// NAK's `max_unroll_iterations`: longer loops stay loops.
const MAX_UNROLL_ITERATIONS: i64 = 32;
/// nir_opt_loop_unroll's `LOOP_UNROLL_LIMIT`: a loop unrolls while its cost (NIR's
/// `instr_cost`: an ALU, intrinsic or texture instruction 1) times its trip count stays
/// within this times [`MAX_UNROLL_ITERATIONS`]; the model costs the SPIR-V as NIR
/// would see it once its locals are SSA values ([`nir_cost`]).
const LOOP_UNROLL_LIMIT: i64 = 26;

/// What the module's declarations say, as the interface analysis reads them.
pub(super) struct Declarations<'a> {
    /// Types by id.
    pub types: &'a Map<Word, &'a Instruction>,
    /// 32-bit constants by id.
    pub constants: &'a Map<Word, u32>,
    /// Global variables: storage class and pointee type.
    pub variables: &'a Map<Word, (StorageClass, Word)>,
    /// Whether a variable is a uniform buffer (a `Block` in `Uniform` storage).
    pub is_uniform_buffer: &'a dyn Fn(Word) -> bool,
}

/// The uses of each descriptor variable that `build_cbuf_map` counts, over every
/// function of `module` (NIR inlines them all into the entry point), by variable and
/// array element (0 for a variable that is not an array of uniform buffers).
pub(super) fn cbuf_uses(module: &Module, d: &Declarations<'_>) -> Map<(Word, u32), u32> {
    let mut uses = Uses {
        d,
        counts: Map::default(),
        merged: Set::default(),
        live: super::liveness::live_values(module),
    };
    for function in &module.functions {
        uses.function(function);
    }
    uses.counts
}

/// What an image-valued id holds: the descriptor variables it came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ImageSource {
    /// A combined image sampler: a texture and a sampler both.
    Combined(Word),
    /// An image alone (or the image of a combined one, through `OpImage`).
    Texture(Word),
    /// A sampler alone.
    Sampler(Word),
}

/// Where a pointer points: its variable, and its indices when all are constants.
#[derive(Clone)]
struct Place {
    var: Word,
    /// The element of an array of uniform buffers it is in: `None` when chosen at run
    /// time; 0 for any other variable.
    element: Option<u32>,
    /// Whether the next index chooses the element (a pointer to the whole array).
    element_next: bool,
    constant_path: Option<Vec<u32>>,
}

struct Uses<'a, 'd> {
    d: &'a Declarations<'d>,
    counts: Map<(Word, u32), u32>,
    /// Uniform-buffer elements at constant indices counted already (CSE merges the rest).
    merged: Set<(Word, Vec<u32>)>,
    /// The values NIR keeps ([`super::liveness`]): a uniform-buffer load nothing live
    /// reads is gone before NVK counts.
    live: Set<Word>,
}

impl Uses<'_, '_> {
    fn add(&mut self, var: Word, element: u32, n: u32) {
        let c = self.counts.entry((var, element)).or_default();
        *c = c.saturating_add(n);
    }

    /// Whether `var` is an array of uniform buffers (each element a buffer of its own).
    fn is_uniform_buffer_array(&self, var: Word) -> bool {
        (self.d.is_uniform_buffer)(var)
            && self
                .d
                .variables
                .get(&var)
                .and_then(|(_, pointee)| self.d.types.get(pointee))
                .is_some_and(|t| matches!(t.class.opcode, Op::TypeArray | Op::TypeRuntimeArray))
    }

    fn function(&mut self, function: &Function) {
        let repeats = unrolled_iterations(function, self.d);
        let mut places: Map<Word, Place> = Map::default();
        let mut images: Map<Word, Vec<ImageSource>> = Map::default();
        for (block, repeat) in function.blocks.iter().zip(repeats) {
            // A loop that never runs is gone from NIR, and every use in it.
            if repeat.times == 0 {
                continue;
            }
            for i in &block.instructions {
                self.instruction(i, repeat, &mut places, &mut images);
            }
        }
    }

    fn place_of(&self, places: &Map<Word, Place>, pointer: Word) -> Option<Place> {
        if self.d.variables.contains_key(&pointer) {
            return Some(Place {
                var: pointer,
                element: Some(0),
                element_next: self.is_uniform_buffer_array(pointer),
                constant_path: Some(Vec::new()),
            });
        }
        places.get(&pointer).cloned()
    }

    fn instruction(
        &mut self,
        i: &Instruction,
        repeat: Repeat,
        places: &mut Map<Word, Place>,
        images: &mut Map<Word, Vec<ImageSource>>,
    ) {
        let times = repeat.times;
        let operand = |n: usize| id(i, n);
        match i.class.opcode {
            Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain => {
                let (Some(result), Some(base)) = (i.result_id, operand(0)) else {
                    return;
                };
                let Some(mut place) = self.place_of(places, base) else {
                    return;
                };
                // PtrAccessChain's first index steps the base pointer itself.
                let skip = usize::from(i.class.opcode == Op::PtrAccessChain);
                let indices = i.operands.iter().skip(1 + skip);
                if place.element_next {
                    if let Some(first) = indices.clone().next() {
                        place.element = match first {
                            Operand::IdRef(c) => self.d.constants.get(c).copied(),
                            _ => None,
                        };
                        place.element_next = false;
                    }
                }
                place.constant_path = match place.constant_path {
                    Some(mut path) => indices
                        .map(|o| match o {
                            Operand::IdRef(c) => self.d.constants.get(c).copied(),
                            _ => None,
                        })
                        .collect::<Option<Vec<u32>>>()
                        .map(|more| {
                            path.extend(more);
                            path
                        }),
                    None => None,
                };
                places.insert(result, place);
            }
            Op::Load => {
                let Some(place) = operand(0).and_then(|p| self.place_of(places, p)) else {
                    return;
                };
                let var = place.var;
                if (self.d.is_uniform_buffer)(var) {
                    // A load nothing live reads is dead code, gone from NIR.
                    if i.result_id.is_some_and(|r| !self.live.contains(&r)) {
                        return;
                    }
                    // An element chosen at run time (or the whole array) is no
                    // constant buffer NVK counts.
                    let (Some(element), false) = (place.element, place.element_next) else {
                        return;
                    };
                    let leaves = i.result_type.map_or(1, |t| self.leaves(t, 0));
                    match place.constant_path {
                        Some(path) => {
                            if self.merged.insert((var, path)) {
                                self.add(var, element, leaves);
                            }
                        }
                        None => self.add(var, element, leaves.saturating_mul(times)),
                    }
                } else if let Some(source) = self.image_source(var, i.result_type) {
                    if let Some(result) = i.result_id {
                        images.insert(result, vec![source]);
                    }
                } else {
                    self.add(var, 0, times);
                }
            }
            Op::SampledImage => {
                let (Some(result), Some(image), Some(sampler)) =
                    (i.result_id, operand(0), operand(1))
                else {
                    return;
                };
                let mut sources = images.get(&image).cloned().unwrap_or_default();
                sources.extend(images.get(&sampler).into_iter().flatten().copied());
                images.insert(result, sources);
            }
            Op::Image => {
                let (Some(result), Some(sampled)) = (i.result_id, operand(0)) else {
                    return;
                };
                let textures = images
                    .get(&sampled)
                    .into_iter()
                    .flatten()
                    .filter_map(|s| match *s {
                        ImageSource::Combined(v) | ImageSource::Texture(v) => {
                            Some(ImageSource::Texture(v))
                        }
                        ImageSource::Sampler(_) => None,
                    })
                    .collect();
                images.insert(result, textures);
            }
            Op::CopyObject => {
                if let (Some(result), Some(from)) = (i.result_id, operand(0)) {
                    if let Some(s) = images.get(&from).cloned() {
                        images.insert(result, s);
                    }
                }
            }
            op if op == Op::Store
                || op == Op::ImageTexelPointer
                || super::liveness::is_atomic(op) =>
            {
                if let Some(place) = operand(0).and_then(|p| self.place_of(places, p)) {
                    self.add(place.var, 0, times);
                }
            }
            op => {
                let Some(needs_sampler) = texture_op(op) else {
                    return;
                };
                let Some(sources) = operand(0).and_then(|image| images.get(&image)) else {
                    return;
                };
                // One use more inside a loop of unknown trip count that runs to a uniform
                // (the module's notes).
                let mut loop_to_a_uniform_use = u32::from(repeat.in_loop_to_a_uniform);
                let mut found: Vec<(Word, u32)> = Vec::new();
                for source in sources {
                    let (var, n) = match (*source, needs_sampler) {
                        (ImageSource::Combined(v), true) => (v, 2),
                        (ImageSource::Combined(v) | ImageSource::Texture(v), _) => (v, 1),
                        (ImageSource::Sampler(v), true) => (v, 1),
                        (ImageSource::Sampler(_), false) => continue,
                    };
                    found.push((var, n + std::mem::take(&mut loop_to_a_uniform_use)));
                }
                for (var, n) in found {
                    self.add(var, 0, n.saturating_mul(times));
                }
            }
        }
    }

    /// What loading `var` as `loaded` gives a texture instruction, if it is an image,
    /// a sampler or both.
    fn image_source(&self, var: Word, loaded: Option<Word>) -> Option<ImageSource> {
        let (class, _) = self.d.variables.get(&var)?;
        if *class != StorageClass::UniformConstant {
            return None;
        }
        let ty = self.d.types.get(&loaded?)?;
        match ty.class.opcode {
            Op::TypeSampledImage => Some(ImageSource::Combined(var)),
            Op::TypeImage => Some(ImageSource::Texture(var)),
            Op::TypeSampler => Some(ImageSource::Sampler(var)),
            _ => None,
        }
    }

    /// The vectors and scalars a value of `ty` is loaded as, one `load_deref` each.
    fn leaves(&self, ty: Word, depth: u32) -> u32 {
        let Some(t) = self.d.types.get(&ty) else {
            return 1;
        };
        if depth > 8 {
            return 1;
        }
        match t.class.opcode {
            Op::TypeMatrix => match t.operands.get(1) {
                Some(Operand::LiteralBit32(columns)) => *columns,
                _ => 1,
            },
            Op::TypeArray => {
                let length = id(t, 1)
                    .and_then(|c| self.d.constants.get(&c).copied())
                    .unwrap_or(1);
                length.saturating_mul(id(t, 0).map_or(1, |e| self.leaves(e, depth + 1)))
            }
            Op::TypeStruct => t
                .operands
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(m) => Some(self.leaves(*m, depth + 1)),
                    _ => None,
                })
                .fold(0u32, u32::saturating_add),
            _ => 1,
        }
    }
}

/// Whether `op` is a texture instruction, and if so whether NIR's instruction for it
/// names a sampler (`nir_tex_instr_need_sampler`): sampling, gathers and LOD queries
/// do; fetches, size, level and sample queries, reads and writes do not.
pub(super) fn texture_op(op: Op) -> Option<bool> {
    match op {
        Op::ImageSampleImplicitLod
        | Op::ImageSampleExplicitLod
        | Op::ImageSampleDrefImplicitLod
        | Op::ImageSampleDrefExplicitLod
        | Op::ImageSampleProjImplicitLod
        | Op::ImageSampleProjExplicitLod
        | Op::ImageSampleProjDrefImplicitLod
        | Op::ImageSampleProjDrefExplicitLod
        | Op::ImageGather
        | Op::ImageDrefGather
        | Op::ImageQueryLod
        | Op::ImageSparseSampleImplicitLod
        | Op::ImageSparseSampleExplicitLod
        | Op::ImageSparseSampleDrefImplicitLod
        | Op::ImageSparseSampleDrefExplicitLod
        | Op::ImageSparseGather
        | Op::ImageSparseDrefGather => Some(true),
        Op::ImageFetch
        | Op::ImageSparseFetch
        | Op::ImageQuerySizeLod
        | Op::ImageQuerySize
        | Op::ImageQueryLevels
        | Op::ImageQuerySamples
        | Op::ImageRead
        | Op::ImageSparseRead
        | Op::ImageWrite => Some(false),
        _ => None,
    }
}

/// What NIR makes of a block once it has unrolled the loops it can.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Repeat {
    /// How many times the block is there: the product of the trip counts of the
    /// unrolled loops around it (0 in a loop that never runs).
    times: u32,
    /// Whether a loop whose trip count is not known, and whose exit test reads a
    /// uniform buffer, holds it.
    in_loop_to_a_uniform: bool,
}

/// How many times each block of `function` is there once NIR has unrolled the loops
/// it can, and whether it is in a loop of unknown trip count that runs to a uniform.
fn unrolled_iterations(function: &Function, d: &Declarations<'_>) -> Vec<Repeat> {
    let mut repeats = vec![
        Repeat {
            times: 1,
            in_loop_to_a_uniform: false,
        };
        function.blocks.len()
    ];
    let defs = definitions(function);
    for shape in loop_shapes(function, d) {
        let body = shape.body;
        match shape.unrolled {
            Some(trips) => {
                for r in &mut repeats[body] {
                    r.times = r.times.saturating_mul(trips as u32);
                }
            }
            None if shape.trips.is_none()
                && exit_test_reads_a_uniform(function, body.clone(), &defs, d) =>
            {
                for r in &mut repeats[body] {
                    r.in_loop_to_a_uniform = true;
                }
            }
            None => {}
        }
    }
    repeats
}

/// One loop of a function as `nir_opt_loop_unroll` sees it.
pub(super) struct LoopShape {
    /// Its blocks, in the function's order: from its header (the block with
    /// `OpLoopMerge`) up to its merge block, as structured SPIR-V lays them out.
    pub body: std::ops::Range<usize>,
    /// Its trip count, where it is a counted loop.
    trips: Option<i64>,
    /// The trip count where NIR unrolls it: counted, at most NAK's
    /// `max_unroll_iterations`, and small enough.
    pub unrolled: Option<i64>,
}

/// The loops of `function`, each with whether NIR unrolls it.
pub(super) fn loop_shapes(function: &Function, d: &Declarations<'_>) -> Vec<LoopShape> {
    let blocks = &function.blocks;
    let label_at: Map<Word, usize> = blocks
        .iter()
        .enumerate()
        .filter_map(|(n, b)| b.label.as_ref().and_then(|l| l.result_id).map(|l| (l, n)))
        .collect();
    let defs = definitions(function);
    let locals = local_pointers(function);
    let mut shapes = Vec::new();
    for (header, block) in blocks.iter().enumerate() {
        let Some(merge) = block
            .instructions
            .iter()
            .find(|i| i.class.opcode == Op::LoopMerge)
            .and_then(|m| id(m, 0))
            .and_then(|m| label_at.get(&m).copied())
        else {
            continue;
        };
        if merge <= header {
            continue;
        }
        let body = header..merge;
        let trips = trip_count(function, body.clone(), merge, &defs, d.constants);
        let unrolled = trips.filter(|&trips| {
            let size: i64 = blocks[body.clone()]
                .iter()
                .flat_map(|b| b.instructions.iter())
                .map(|i| nir_cost(i, &locals))
                .sum();
            trips <= MAX_UNROLL_ITERATIONS
                && size * trips <= MAX_UNROLL_ITERATIONS * LOOP_UNROLL_LIMIT
        });
        shapes.push(LoopShape {
            body,
            trips,
            unrolled,
        });
    }
    shapes
}

/// The instructions of `function` by result id.
fn definitions(function: &Function) -> Map<Word, &Instruction> {
    function
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter_map(|i| i.result_id.map(|r| (r, i)))
        .collect()
}

/// The function's own variables and the pointers into them: what NIR turns into SSA
/// values before it looks at loops.
fn local_pointers(function: &Function) -> Set<Word> {
    let mut locals = Set::default();
    for i in function.blocks.iter().flat_map(|b| b.instructions.iter()) {
        let Some(result) = i.result_id else { continue };
        let local = match i.class.opcode {
            Op::Variable => true,
            Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain => {
                id(i, 0).is_some_and(|base| locals.contains(&base))
            }
            _ => false,
        };
        if local {
            locals.insert(result);
        }
    }
    locals
}

/// What `i` costs NIR's loop analysis (`instr_cost`): 1 for what becomes an ALU,
/// intrinsic or texture instruction; nothing for control flow, pointers, loads and
/// stores of the function's own variables (SSA values by then), and the composite
/// moves copy propagation folds into swizzles.
fn nir_cost(i: &Instruction, locals: &Set<Word>) -> i64 {
    match i.class.opcode {
        Op::Load | Op::Store => i64::from(!id(i, 0).is_some_and(|p| locals.contains(&p))),
        Op::Label
        | Op::Branch
        | Op::BranchConditional
        | Op::Switch
        | Op::SelectionMerge
        | Op::LoopMerge
        | Op::AccessChain
        | Op::InBoundsAccessChain
        | Op::PtrAccessChain
        | Op::CompositeExtract
        | Op::CompositeConstruct
        | Op::CompositeInsert
        | Op::VectorShuffle
        | Op::CopyObject
        | Op::Phi
        | Op::Variable
        | Op::SampledImage
        | Op::Image
        | Op::Undef
        | Op::Line
        | Op::NoLine
        | Op::Nop => 0,
        _ => i64::from(i.result_id.is_some()),
    }
}

/// The iterations of the loop whose blocks are `body` (header first) and whose merge
/// block is `merge`, where it is a counted loop: an integer counter started at a
/// constant, stepped by a constant once an iteration, and compared with a constant by
/// the branch that leaves the loop — the first conditional branch the loop's first
/// blocks lead to, one of whose targets is the merge block or a block that only
/// branches there (a `break`, as Zink writes its loops). Bitcasts between signed and
/// unsigned integers are looked through. `None` where it is not such a loop.
fn trip_count(
    function: &Function,
    body: std::ops::Range<usize>,
    merge: usize,
    defs: &Map<Word, &Instruction>,
    constants: &Map<Word, u32>,
) -> Option<i64> {
    let blocks = &function.blocks;
    let merge_label = blocks[merge].label.as_ref()?.result_id?;
    // A target that leaves the loop: its merge block, or a block that only goes there.
    let leaves = |label: Word| {
        label == merge_label
            || block_in(function, body.clone(), label).is_some_and(|n| {
                matches!(blocks[n].instructions.as_slice(),
                    [only] if only.class.opcode == Op::Branch && id(only, 0) == Some(merge_label))
            })
    };
    let branch = exit_test(function, body.clone())?;
    let (condition, when_true, when_false) = (id(branch, 0)?, id(branch, 1)?, id(branch, 2)?);
    // Whether the loop goes on while the condition fails (it leaves when it holds).
    let negated = match (leaves(when_true), leaves(when_false)) {
        (false, true) => false,
        (true, false) => true,
        _ => return None,
    };
    let peel = |w: Word| through_bitcasts(w, defs);
    let constant = |w: Word| constants.get(&peel(w)).map(|v| i64::from(*v as i32));
    let compare = defs.get(&peel(condition))?;
    let (counter, limit) = (peel(id(compare, 0)?), constant(id(compare, 1)?)?);
    let (start, step) = counter_steps(function, body, defs, constants, counter)?;
    if step == 0 {
        return None;
    }
    // The comparison the loop goes on while.
    let stays = match (compare.class.opcode, negated) {
        (op, false) => op,
        (Op::SLessThan, true) => Op::SGreaterThanEqual,
        (Op::ULessThan, true) => Op::UGreaterThanEqual,
        (Op::SLessThanEqual, true) => Op::SGreaterThan,
        (Op::ULessThanEqual, true) => Op::UGreaterThan,
        (Op::SGreaterThan, true) => Op::SLessThanEqual,
        (Op::UGreaterThan, true) => Op::ULessThanEqual,
        (Op::SGreaterThanEqual, true) => Op::SLessThan,
        (Op::UGreaterThanEqual, true) => Op::ULessThan,
        (Op::IEqual, true) => Op::INotEqual,
        _ => return None,
    };
    // Iterations while `start + k * step` satisfies the comparison.
    let span = match stays {
        Op::SLessThan | Op::ULessThan if step > 0 => limit - start,
        Op::SLessThanEqual | Op::ULessThanEqual if step > 0 => limit - start + 1,
        Op::SGreaterThan | Op::UGreaterThan if step < 0 => start - limit,
        Op::SGreaterThanEqual | Op::UGreaterThanEqual if step < 0 => start - limit + 1,
        Op::INotEqual if (limit - start) % step == 0 && (limit - start) / step >= 0 => {
            return Some((limit - start) / step);
        }
        _ => return None,
    };
    let step = step.abs();
    Some(if span <= 0 {
        0
    } else {
        (span + step - 1) / step
    })
}

/// The block of `body` (a loop's blocks, by their place in `function`) whose label is
/// `label`.
fn block_in(function: &Function, body: std::ops::Range<usize>, label: Word) -> Option<usize> {
    body.into_iter()
        .find(|&n| function.blocks[n].label.as_ref().and_then(|l| l.result_id) == Some(label))
}

/// A loop's exit test: straight on from its header (the first block of `body`) to the
/// first conditional branch.
fn exit_test(function: &Function, body: std::ops::Range<usize>) -> Option<&Instruction> {
    let blocks = &function.blocks;
    let mut at = body.start;
    loop {
        let last = blocks.get(at)?.instructions.last()?;
        match last.class.opcode {
            Op::BranchConditional => return Some(last),
            Op::Branch if at + 1 < body.end && at < body.start + 4 => {
                at = block_in(function, body.clone(), id(last, 0)?)?;
            }
            _ => return None,
        }
    }
}

/// Whether the exit test of the loop `body` reads a value loaded from a uniform buffer
/// (a light count, say), through at most a few instructions: the loops whose texture
/// instructions count one use more (the module's notes). Found against NVK 25.0.7:
/// Godot 3's light loops run to a uniform and count the extra use; GTK 4's blur
/// shader's loop runs to a fragment input, and NVK binds its uniform buffer ahead of
/// its sampled set only when its samples count no extra use.
fn exit_test_reads_a_uniform(
    function: &Function,
    body: std::ops::Range<usize>,
    defs: &Map<Word, &Instruction>,
    d: &Declarations<'_>,
) -> bool {
    let Some(condition) = exit_test(function, body).and_then(|b| id(b, 0)) else {
        return false;
    };
    let mut pending = vec![(condition, 0u32)];
    let mut seen: Set<Word> = Set::default();
    while let Some((value, depth)) = pending.pop() {
        if depth > 12 || !seen.insert(value) {
            continue;
        }
        let Some(def) = defs.get(&value) else {
            continue;
        };
        if def.class.opcode == Op::Load {
            if id(def, 0).is_some_and(|pointer| points_into_a_uniform(pointer, defs, d)) {
                return true;
            }
            continue;
        }
        pending.extend(def.operands.iter().filter_map(|o| match o {
            Operand::IdRef(w) => Some((*w, depth + 1)),
            _ => None,
        }));
    }
    false
}

/// Whether `pointer` points into a uniform buffer: a variable of one, or an access
/// chain into one.
fn points_into_a_uniform(
    mut pointer: Word,
    defs: &Map<Word, &Instruction>,
    d: &Declarations<'_>,
) -> bool {
    for _ in 0..8 {
        if (d.is_uniform_buffer)(pointer) {
            return true;
        }
        match defs.get(&pointer) {
            Some(i) if matches!(i.class.opcode, Op::AccessChain | Op::InBoundsAccessChain) => {
                match id(i, 0) {
                    Some(base) => pointer = base,
                    None => return false,
                }
            }
            _ => return false,
        }
    }
    false
}

/// `w`, or what the bitcasts that make it were made from.
fn through_bitcasts(mut w: Word, defs: &Map<Word, &Instruction>) -> Word {
    for _ in 0..8 {
        match defs.get(&w) {
            Some(i) if i.class.opcode == Op::Bitcast => match id(i, 0) {
                Some(from) => w = from,
                None => break,
            },
            _ => break,
        }
    }
    w
}

/// Where the loop counter `counter` (a load of a function variable, or a phi) starts
/// and how much each iteration adds to it.
fn counter_steps(
    function: &Function,
    body: std::ops::Range<usize>,
    defs: &Map<Word, &Instruction>,
    constants: &Map<Word, u32>,
    counter: Word,
) -> Option<(i64, i64)> {
    let blocks = &function.blocks;
    let peel = |w: Word| through_bitcasts(w, defs);
    let constant = |w: Word| constants.get(&peel(w)).map(|v| i64::from(*v as i32));
    // The step of `next` over `value`: `value + c`, `c + value` or `value - c`.
    let step_of = |next: Word, is_value: &dyn Fn(Word) -> bool| -> Option<i64> {
        let add = defs.get(&peel(next))?;
        let (a, b) = (peel(id(add, 0)?), peel(id(add, 1)?));
        match add.class.opcode {
            Op::IAdd if is_value(a) => constant(b),
            Op::IAdd if is_value(b) => constant(a),
            Op::ISub if is_value(a) => constant(b).map(|c| -c),
            _ => None,
        }
    };
    let def = defs.get(&counter)?;
    match def.class.opcode {
        // A phi in the header: the constant from before the loop, the stepped value
        // from its back edge.
        Op::Phi => {
            let pairs: Vec<Word> = def
                .operands
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(w) => Some(*w),
                    _ => None,
                })
                .collect();
            let (mut start, mut step) = (None, None);
            for pair in pairs.chunks(2) {
                let value = pair.first().copied()?;
                match constant(value) {
                    Some(c) => start = Some(c),
                    None => step = step_of(value, &|w| w == counter),
                }
            }
            Some((start?, step?))
        }
        // A load of a function variable: its last store of a constant before the loop,
        // and the one store inside the loop of itself stepped.
        Op::Load => {
            let var = id(def, 0)?;
            let loaded = |w: Word| {
                defs.get(&w)
                    .is_some_and(|l| l.class.opcode == Op::Load && id(l, 0) == Some(var))
            };
            let stores = |range: std::ops::Range<usize>| {
                blocks[range]
                    .iter()
                    .flat_map(|b| b.instructions.iter())
                    .filter(|i| i.class.opcode == Op::Store && id(i, 0) == Some(var))
                    .filter_map(|i| id(i, 1))
                    .collect::<Vec<Word>>()
            };
            let start = stores(0..body.start).last().copied().and_then(constant)?;
            let inside = stores(body);
            let [stepped] = inside.as_slice() else {
                return None;
            };
            Some((start, step_of(*stepped, &loaded)?))
        }
        _ => None,
    }
}
