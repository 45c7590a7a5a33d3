//! A pass-through tessellation control shader (Zink's answer to GL's TCS-less
//! tessellation): for a vertex-output interface and a patch size, a TCS that copies each
//! invocation's input vertex to its output and writes the tessellation levels from push
//! constants (`float inner[2]` at offset 0, `float outer[4]` at offset 8), so a replay
//! can override the levels of a pipeline.

use rspirv::dr::{Builder, Module, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, MemoryModel, StorageClass, Word,
};

/// Vertices a patch may have in the input arrays (`gl_MaxPatchVertices`).
const MAX_PATCH_VERTICES: u32 = 32;

/// One user output of the stage before: its location and how many floats it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexOutput {
    /// The `Location` decoration.
    pub location: u32,
    /// Components, 1 to 4 (`float` to `vec4`).
    pub components: u32,
}

/// Why a TCS could not be made.
#[derive(Debug, thiserror::Error)]
#[error("pass-through TCS: {0}")]
pub struct TcsError(String);

/// A TCS for patches of `patch_size` vertices that passes `gl_Position` and `outputs`
/// through and takes its levels from push constants.
pub fn synthesize(patch_size: u32, outputs: &[VertexOutput]) -> Result<Module, TcsError> {
    if !(1..=MAX_PATCH_VERTICES).contains(&patch_size) {
        return Err(TcsError(format!("a patch of {patch_size} vertices")));
    }
    if let Some(o) = outputs.iter().find(|o| !(1..=4).contains(&o.components)) {
        return Err(TcsError(format!(
            "location {} has {} components",
            o.location, o.components
        )));
    }
    let err = |e: rspirv::dr::Error| TcsError(e.to_string());
    let mut b = Builder::new();
    b.set_version(1, 3);
    b.capability(Capability::Tessellation);
    b.capability(Capability::Shader);
    b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);

    let void = b.type_void();
    let float = b.type_float(32);
    let vec4 = b.type_vector(float, 4);
    let int = b.type_int(32, 1);
    let uint = b.type_int(32, 0);
    let constant = |b: &mut Builder, v: u32| b.constant_bit32(int, v);
    let uconstant = |b: &mut Builder, v: u32| b.constant_bit32(uint, v);

    // gl_in[32] and gl_out[N]: blocks holding gl_Position.
    let per_vertex = b.type_struct([vec4]);
    b.decorate(per_vertex, Decoration::Block, []);
    b.member_decorate(
        per_vertex,
        0,
        Decoration::BuiltIn,
        [Operand::BuiltIn(BuiltIn::Position)],
    );
    let max_vertices = uconstant(&mut b, MAX_PATCH_VERTICES);
    let patch = uconstant(&mut b, patch_size);
    let in_array = b.type_array(per_vertex, max_vertices);
    let out_array = b.type_array(per_vertex, patch);
    let ptr_in_array = b.type_pointer(None, StorageClass::Input, in_array);
    let ptr_out_array = b.type_pointer(None, StorageClass::Output, out_array);
    let gl_in = b.variable(ptr_in_array, None, StorageClass::Input, None);
    let gl_out = b.variable(ptr_out_array, None, StorageClass::Output, None);
    let ptr_in_vec4 = b.type_pointer(None, StorageClass::Input, vec4);
    let ptr_out_vec4 = b.type_pointer(None, StorageClass::Output, vec4);

    let ptr_in_int = b.type_pointer(None, StorageClass::Input, int);
    let invocation = b.variable(ptr_in_int, None, StorageClass::Input, None);
    b.decorate(
        invocation,
        Decoration::BuiltIn,
        [Operand::BuiltIn(BuiltIn::InvocationId)],
    );

    // The levels: patch outputs, and their push-constant source.
    let inner_len = uconstant(&mut b, 2);
    let outer_len = uconstant(&mut b, 4);
    let inner_array = b.type_array(float, inner_len);
    let outer_array = b.type_array(float, outer_len);
    let ptr_inner = b.type_pointer(None, StorageClass::Output, inner_array);
    let ptr_outer = b.type_pointer(None, StorageClass::Output, outer_array);
    let inner = b.variable(ptr_inner, None, StorageClass::Output, None);
    let outer = b.variable(ptr_outer, None, StorageClass::Output, None);
    b.decorate(
        inner,
        Decoration::BuiltIn,
        [Operand::BuiltIn(BuiltIn::TessLevelInner)],
    );
    b.decorate(inner, Decoration::Patch, []);
    b.decorate(
        outer,
        Decoration::BuiltIn,
        [Operand::BuiltIn(BuiltIn::TessLevelOuter)],
    );
    b.decorate(outer, Decoration::Patch, []);
    // The push constants as six floats (inner[2] at 0, outer[4] at 8): plain members
    // need no explicit array layout, which output arrays must not carry.
    let levels = b.type_struct_id(None, [float; 6]);
    b.decorate(levels, Decoration::Block, []);
    for m in 0..6u32 {
        b.member_decorate(
            levels,
            m,
            Decoration::Offset,
            [Operand::LiteralBit32(4 * m)],
        );
    }
    let ptr_levels = b.type_pointer(None, StorageClass::PushConstant, levels);
    let push = b.variable(ptr_levels, None, StorageClass::PushConstant, None);
    let ptr_pc_float = b.type_pointer(None, StorageClass::PushConstant, float);
    let ptr_out_float = b.type_pointer(None, StorageClass::Output, float);

    // The user outputs: `in T v[32]` and `out T v[N]` at each location.
    let mut user = Vec::new();
    for o in outputs {
        let ty = if o.components == 1 {
            float
        } else {
            b.type_vector(float, o.components)
        };
        let in_ty = b.type_array(ty, max_vertices);
        let out_ty = b.type_array(ty, patch);
        let ptr_in = b.type_pointer(None, StorageClass::Input, in_ty);
        let ptr_out = b.type_pointer(None, StorageClass::Output, out_ty);
        let v_in = b.variable(ptr_in, None, StorageClass::Input, None);
        let v_out = b.variable(ptr_out, None, StorageClass::Output, None);
        for v in [v_in, v_out] {
            b.decorate(v, Decoration::Location, [Operand::LiteralBit32(o.location)]);
        }
        let elem_in = b.type_pointer(None, StorageClass::Input, ty);
        let elem_out = b.type_pointer(None, StorageClass::Output, ty);
        user.push((ty, v_in, v_out, elem_in, elem_out));
    }

    let fn_type = b.type_function(void, []);
    let main = b
        .begin_function(void, None, FunctionControl::NONE, fn_type)
        .map_err(err)?;
    b.begin_block(None).map_err(err)?;
    let zero = constant(&mut b, 0);
    let id = b.load(int, None, invocation, None, []).map_err(err)?;
    let src = b
        .access_chain(ptr_in_vec4, None, gl_in, [id, zero])
        .map_err(err)?;
    let position = b.load(vec4, None, src, None, []).map_err(err)?;
    let dst = b
        .access_chain(ptr_out_vec4, None, gl_out, [id, zero])
        .map_err(err)?;
    b.store(dst, position, None, []).map_err(err)?;
    for (ty, v_in, v_out, elem_in, elem_out) in &user {
        let src = b.access_chain(*elem_in, None, *v_in, [id]).map_err(err)?;
        let value = b.load(*ty, None, src, None, []).map_err(err)?;
        let dst = b.access_chain(*elem_out, None, *v_out, [id]).map_err(err)?;
        b.store(dst, value, None, []).map_err(err)?;
    }
    // Every invocation writes the same levels.
    for (first, target, count) in [(0u32, inner, 2u32), (2, outer, 4)] {
        for i in 0..count {
            let index = constant(&mut b, i);
            let member = constant(&mut b, first + i);
            let src = b
                .access_chain(ptr_pc_float, None, push, [member])
                .map_err(err)?;
            let level = b.load(float, None, src, None, []).map_err(err)?;
            let dst = b
                .access_chain(ptr_out_float, None, target, [index])
                .map_err(err)?;
            b.store(dst, level, None, []).map_err(err)?;
        }
    }
    b.ret().map_err(err)?;
    b.end_function().map_err(err)?;

    let mut interface: Vec<Word> = vec![gl_in, gl_out, invocation, inner, outer];
    interface.extend(user.iter().flat_map(|(_, i, o, _, _)| [*i, *o]));
    b.entry_point(ExecutionModel::TessellationControl, main, "main", interface);
    b.execution_mode(main, ExecutionMode::OutputVertices, [patch_size]);
    Ok(b.module())
}
