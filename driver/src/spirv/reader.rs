//! SPIR-V words read into rspirv's data representation in one pass: the module
//! [`rspirv::dr::load_words`] makes of them, made for a fraction of its parser's work.
//! That parser finds each instruction's grammar by a linear search of the grammar
//! table, gathers every operand into a vector of its own before appending it, and keeps
//! a SipHash map of every value's type: most of a replay's SPIR-V time (Neverball's 33
//! modules, glxgears' six).
//!
//! Here each instruction's grammar is found in a table indexed by opcode, its operands
//! are decoded straight into the instruction's one vector as the grammar
//! ([`CoreInstructionTable`]) lays them out, each enumerant with rspirv's own
//! [`Decoder`], and the instructions go to rspirv's own [`Loader`], which places them in
//! the module's sections as it places its parser's. An operand kind, or a decoration,
//! execution mode, or image, memory or loop operand whose parameters this reader does
//! not know, and every word the parser would refuse, make [`read`] answer `None`: the
//! module is then rspirv's parser's to read, so that what a caller gets is always what
//! rspirv makes of the words (a test compares the two on every module the project
//! holds).

use std::collections::HashMap;
use std::sync::OnceLock;

use rspirv::binary::{Consumer, DecodeError, Decoder, ParseAction};
use rspirv::dr::{Instruction, Loader, Module, ModuleHeader, Operand};
use rspirv::grammar::{self, CoreInstructionTable, OperandKind as Kind, OperandQuantifier};
use rspirv::spirv::{self, Decoration, ExecutionMode, Op, Word};

/// An instruction's grammar.
type Grammar = &'static grammar::Instruction<'static>;

/// The module `words` hold, as rspirv's loader reads it; `None` where this reader leaves
/// it to rspirv, words that do not frame as a module among it (no five-word header with
/// the magic, an instruction of no words or past the module's end).
pub fn read(words: &[u32]) -> Option<Module> {
    let mut loader = Loader::new();
    continues(loader.consume_header(header(words)?))?;
    let mut types = Types::default();
    let mut at = 5;
    while at < words.len() {
        let first = words[at];
        let count = (first >> 16) as usize;
        if count == 0 {
            return None;
        }
        let operands = words.get(at + 1..at + count)?;
        let inst = instruction(grammar_of((first & 0xffff) as u16)?, operands, &types)?;
        types.track(&inst);
        continues(loader.consume_instruction(inst))?;
        at += count;
    }
    continues(loader.finalize())?;
    Some(loader.module())
}

/// The module header as rspirv's parser makes it: the bound and the version read, the
/// rest its own.
fn header(words: &[u32]) -> Option<ModuleHeader> {
    let [magic, version, _, bound, _] = *words.get(..5)? else {
        return None;
    };
    if magic != spirv::MAGIC_NUMBER {
        return None;
    }
    let mut header = ModuleHeader::new(bound);
    let [_, minor, major, _] = version.to_le_bytes();
    header.set_version(major, minor);
    Some(header)
}

/// `Some` where the loader goes on.
fn continues(action: ParseAction) -> Option<()> {
    matches!(action, ParseAction::Continue).then_some(())
}

/// The grammar of `opcode`: the first of the table's entries for it, as rspirv's parser
/// finds it.
fn grammar_of(opcode: u16) -> Option<Grammar> {
    static TABLE: OnceLock<Vec<Option<Grammar>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table: Vec<Option<Grammar>> = Vec::new();
        for inst in CoreInstructionTable::iter() {
            let op = inst.opcode as usize;
            if table.len() <= op {
                table.resize(op + 1, None);
            }
            table[op].get_or_insert(inst);
        }
        table
    });
    table.get(usize::from(opcode)).copied().flatten()
}

/// The scalar types of values, by id, as rspirv's parser tracks them: what decides
/// the width of a constant's literal and of a switch's case literals.
#[derive(Default)]
struct Types(HashMap<Word, Scalar, foldhash::fast::RandomState>);

/// A scalar type: an integer's or a float's width in bits.
#[derive(Clone, Copy)]
enum Scalar {
    Int(u32),
    Float(u32),
}

impl Types {
    /// Notes the type `inst` declares, or the scalar type of the value it makes.
    fn track(&mut self, inst: &Instruction) {
        let Some(id) = inst.result_id else {
            return;
        };
        if grammar::reflect::is_type(inst.class.opcode) {
            let scalar = match (inst.class.opcode, inst.operands.first()) {
                (Op::TypeInt, Some(&Operand::LiteralBit32(bits))) => Scalar::Int(bits),
                (Op::TypeFloat, Some(&Operand::LiteralBit32(bits))) => Scalar::Float(bits),
                _ => return,
            };
            self.0.insert(id, scalar);
        } else if let Some(scalar) = inst.result_type.and_then(|t| self.of(t)) {
            self.0.insert(id, scalar);
        }
    }

    fn of(&self, id: Word) -> Option<Scalar> {
        self.0.get(&id).copied()
    }
}

/// An instruction's operand words, read front to back.
struct Words<'a> {
    words: &'a [u32],
    at: usize,
}

impl Words<'_> {
    fn next(&mut self) -> Option<u32> {
        let word = *self.words.get(self.at)?;
        self.at += 1;
        Some(word)
    }

    fn left(&self) -> bool {
        self.at < self.words.len()
    }

    /// A literal string: its bytes up to the NUL, in the words that hold them and it.
    fn string(&mut self) -> Option<String> {
        let mut bytes = Vec::new();
        for (n, word) in self.words.get(self.at..)?.iter().enumerate() {
            for byte in word.to_le_bytes() {
                if byte == 0 {
                    self.at += n + 1;
                    return String::from_utf8(bytes).ok();
                }
                bytes.push(byte);
            }
        }
        None
    }

    /// The next word decoded by `decode`, one of rspirv's enumerant decoders.
    fn decoded<T>(
        &mut self,
        decode: impl FnOnce(&mut Decoder<'_>) -> Result<T, DecodeError>,
    ) -> Option<T> {
        let bytes = self.next()?.to_le_bytes();
        decode(&mut Decoder::new(&bytes)).ok()
    }

    fn id(&mut self) -> Option<Operand> {
        self.next().map(Operand::IdRef)
    }

    fn literal(&mut self) -> Option<Operand> {
        self.next().map(Operand::LiteralBit32)
    }
}

/// The instruction of `grammar` whose operand words are `words`, as rspirv's parser
/// decodes it (`parse_operands`).
fn instruction(grammar: Grammar, words: &[u32], types: &Types) -> Option<Instruction> {
    let mut w = Words { words, at: 0 };
    let (mut result_type, mut result_id) = (None, None);
    let mut operands = Vec::with_capacity(words.len());
    let mut logical = 0;
    while let Some(operand) = grammar.operands.get(logical) {
        if !w.left() {
            match operand.quantifier {
                OperandQuantifier::One => return None,
                _ => break,
            }
        }
        match operand.kind {
            Kind::IdResultType => result_type = Some(w.next()?),
            Kind::IdResult => result_id = Some(w.next()?),
            Kind::LiteralContextDependentNumber => {
                if !matches!(grammar.opcode, Op::Constant | Op::SpecConstant) {
                    return None;
                }
                operands.push(number(types.of(result_type?), &mut w)?);
            }
            Kind::PairLiteralIntegerIdRef => {
                let Some(&Operand::IdRef(selector)) = operands.first() else {
                    return None;
                };
                if grammar.opcode != Op::Switch {
                    return None;
                }
                operands.push(number(types.of(selector), &mut w)?);
                operands.push(w.id()?);
            }
            kind => decode(kind, &mut w, &mut operands)?,
        }
        if operand.quantifier != OperandQuantifier::ZeroOrMore {
            logical += 1;
        }
    }
    if w.left() {
        return None;
    }
    Some(Instruction {
        class: grammar,
        result_type,
        result_id,
        operands,
    })
}

/// A literal number of a value of type `scalar`: one word up to 32 bits (or of a type
/// not known), two words (low first) for 64.
fn number(scalar: Option<Scalar>, w: &mut Words<'_>) -> Option<Operand> {
    match scalar {
        None | Some(Scalar::Int(8 | 16 | 32)) | Some(Scalar::Float(16 | 32)) => w.literal(),
        Some(Scalar::Int(64)) | Some(Scalar::Float(64)) => {
            let low = u64::from(w.next()?);
            let high = u64::from(w.next()?);
            Some(Operand::LiteralBit64(high << 32 | low))
        }
        Some(_) => None,
    }
}

/// Decodes one operand of `kind` (with the parameters its value takes) into `out`.
fn decode(kind: Kind, w: &mut Words<'_>, out: &mut Vec<Operand>) -> Option<()> {
    macro_rules! enumerant {
        ($variant:ident, $decoder:ident) => {
            Operand::$variant(w.decoded(|d| d.$decoder())?)
        };
    }
    // An enumerant and then the parameters its value takes.
    macro_rules! with_parameters {
        ($variant:ident, $decoder:ident, $parameters:ident) => {{
            let value = w.decoded(|d| d.$decoder())?;
            out.push(Operand::$variant(value));
            return $parameters(value, w, out);
        }};
    }
    let operand = match kind {
        Kind::IdRef => w.id()?,
        Kind::IdScope => Operand::IdScope(w.next()?),
        Kind::IdMemorySemantics => Operand::IdMemorySemantics(w.next()?),
        Kind::LiteralInteger | Kind::LiteralFloat => w.literal()?,
        Kind::LiteralExtInstInteger => Operand::LiteralExtInstInteger(w.next()?),
        Kind::LiteralString => Operand::LiteralString(w.string()?),
        Kind::PairIdRefLiteralInteger => {
            out.push(w.id()?);
            w.literal()?
        }
        Kind::PairIdRefIdRef => {
            out.push(w.id()?);
            w.id()?
        }
        Kind::StorageClass => enumerant!(StorageClass, storage_class),
        Kind::Dim => enumerant!(Dim, dim),
        Kind::ImageFormat => enumerant!(ImageFormat, image_format),
        Kind::ExecutionModel => enumerant!(ExecutionModel, execution_model),
        Kind::AddressingModel => enumerant!(AddressingModel, addressing_model),
        Kind::MemoryModel => enumerant!(MemoryModel, memory_model),
        Kind::Capability => enumerant!(Capability, capability),
        Kind::SourceLanguage => enumerant!(SourceLanguage, source_language),
        Kind::BuiltIn => enumerant!(BuiltIn, built_in),
        Kind::FunctionControl => enumerant!(FunctionControl, function_control),
        Kind::SelectionControl => enumerant!(SelectionControl, selection_control),
        Kind::FPFastMathMode => enumerant!(FPFastMathMode, fp_fast_math_mode),
        Kind::FPRoundingMode => enumerant!(FPRoundingMode, fp_rounding_mode),
        Kind::MemorySemantics => enumerant!(MemorySemantics, memory_semantics),
        Kind::Scope => enumerant!(Scope, scope),
        Kind::GroupOperation => enumerant!(GroupOperation, group_operation),
        Kind::AccessQualifier => enumerant!(AccessQualifier, access_qualifier),
        Kind::LinkageType => enumerant!(LinkageType, linkage_type),
        Kind::SamplerAddressingMode => enumerant!(SamplerAddressingMode, sampler_addressing_mode),
        Kind::SamplerFilterMode => enumerant!(SamplerFilterMode, sampler_filter_mode),
        Kind::FunctionParameterAttribute => {
            enumerant!(FunctionParameterAttribute, function_parameter_attribute)
        }
        Kind::ImageOperands => {
            with_parameters!(ImageOperands, image_operands, image_operand_parameters)
        }
        Kind::MemoryAccess => {
            with_parameters!(MemoryAccess, memory_access, memory_access_parameters)
        }
        Kind::LoopControl => with_parameters!(LoopControl, loop_control, loop_control_parameters),
        Kind::ExecutionMode => {
            with_parameters!(ExecutionMode, execution_mode, execution_mode_parameters)
        }
        Kind::Decoration => with_parameters!(Decoration, decoration, decoration_parameters),
        _ => return None,
    };
    out.push(operand);
    Some(())
}

/// What each set bit of an image operands mask takes, in the order of the bits: ids,
/// scope ids for the texel availability bits, nothing for the rest known.
fn image_operand_parameters(
    value: spirv::ImageOperands,
    w: &mut Words<'_>,
    out: &mut Vec<Operand>,
) -> Option<()> {
    use spirv::ImageOperands as I;
    let bare =
        I::NON_PRIVATE_TEXEL | I::VOLATILE_TEXEL | I::SIGN_EXTEND | I::ZERO_EXTEND | I::NONTEMPORAL;
    let taking = [
        (I::BIAS, 1, false),
        (I::LOD, 1, false),
        (I::GRAD, 2, false),
        (I::CONST_OFFSET, 1, false),
        (I::OFFSET, 1, false),
        (I::CONST_OFFSETS, 1, false),
        (I::SAMPLE, 1, false),
        (I::MIN_LOD, 1, false),
        (I::MAKE_TEXEL_AVAILABLE, 1, true),
        (I::MAKE_TEXEL_VISIBLE, 1, true),
        (I::OFFSETS, 1, false),
    ];
    let known = taking.iter().fold(bare, |known, &(bit, ..)| known | bit);
    if !known.contains(value) {
        return None;
    }
    for (bit, ids, scope) in taking {
        if value.contains(bit) {
            for _ in 0..ids {
                let id = w.next()?;
                out.push(match scope {
                    true => Operand::IdScope(id),
                    false => Operand::IdRef(id),
                });
            }
        }
    }
    Some(())
}

/// What a memory operands mask's bits take: the alignment a literal, the pointer
/// availability bits a scope id each.
fn memory_access_parameters(
    value: spirv::MemoryAccess,
    w: &mut Words<'_>,
    out: &mut Vec<Operand>,
) -> Option<()> {
    use spirv::MemoryAccess as M;
    let known = M::VOLATILE
        | M::ALIGNED
        | M::NONTEMPORAL
        | M::MAKE_POINTER_AVAILABLE
        | M::MAKE_POINTER_VISIBLE
        | M::NON_PRIVATE_POINTER;
    if !known.contains(value) {
        return None;
    }
    if value.contains(M::ALIGNED) {
        out.push(w.literal()?);
    }
    for bit in [M::MAKE_POINTER_AVAILABLE, M::MAKE_POINTER_VISIBLE] {
        if value.contains(bit) {
            out.push(Operand::IdScope(w.next()?));
        }
    }
    Some(())
}

/// What a loop control mask's bits take: a literal each for the counts.
fn loop_control_parameters(
    value: spirv::LoopControl,
    w: &mut Words<'_>,
    out: &mut Vec<Operand>,
) -> Option<()> {
    use spirv::LoopControl as L;
    let counts = [
        L::DEPENDENCY_LENGTH,
        L::MIN_ITERATIONS,
        L::MAX_ITERATIONS,
        L::ITERATION_MULTIPLE,
        L::PEEL_COUNT,
        L::PARTIAL_COUNT,
    ];
    let bare = L::UNROLL | L::DONT_UNROLL | L::DEPENDENCY_INFINITE;
    if !counts.iter().fold(bare, |k, &b| k | b).contains(value) {
        return None;
    }
    for bit in counts {
        if value.contains(bit) {
            out.push(w.literal()?);
        }
    }
    Some(())
}

/// What an execution mode takes: literals or ids, or nothing for the modes known to
/// take none.
fn execution_mode_parameters(
    mode: ExecutionMode,
    w: &mut Words<'_>,
    out: &mut Vec<Operand>,
) -> Option<()> {
    use ExecutionMode as E;
    let (literals, ids) = match mode {
        E::Invocations
        | E::OutputVertices
        | E::VecTypeHint
        | E::SubgroupSize
        | E::SubgroupsPerWorkgroup
        | E::DenormPreserve
        | E::DenormFlushToZero
        | E::SignedZeroInfNanPreserve
        | E::RoundingModeRTE
        | E::RoundingModeRTZ
        | E::OutputPrimitivesNV => (1, 0),
        E::LocalSize | E::LocalSizeHint => (3, 0),
        E::SubgroupsPerWorkgroupId => (0, 1),
        E::LocalSizeId | E::LocalSizeHintId => (0, 3),
        E::SpacingEqual
        | E::SpacingFractionalEven
        | E::SpacingFractionalOdd
        | E::VertexOrderCw
        | E::VertexOrderCcw
        | E::PixelCenterInteger
        | E::OriginUpperLeft
        | E::OriginLowerLeft
        | E::EarlyFragmentTests
        | E::PointMode
        | E::Xfb
        | E::DepthReplacing
        | E::DepthGreater
        | E::DepthLess
        | E::DepthUnchanged
        | E::InputPoints
        | E::InputLines
        | E::InputLinesAdjacency
        | E::Triangles
        | E::InputTrianglesAdjacency
        | E::Quads
        | E::Isolines
        | E::OutputPoints
        | E::OutputLineStrip
        | E::OutputTriangleStrip
        | E::ContractionOff
        | E::PostDepthCoverage
        | E::StencilRefReplacingEXT
        | E::OutputLinesNV
        | E::OutputTrianglesNV => (0, 0),
        _ => return None,
    };
    for _ in 0..literals {
        out.push(w.literal()?);
    }
    for _ in 0..ids {
        out.push(w.id()?);
    }
    Some(())
}

/// What a decoration takes: a literal, an id, a string or an enumerant, or nothing for
/// the decorations known to take none.
fn decoration_parameters(
    decoration: Decoration,
    w: &mut Words<'_>,
    out: &mut Vec<Operand>,
) -> Option<()> {
    use Decoration as D;
    let parameter = match decoration {
        D::SpecId
        | D::ArrayStride
        | D::MatrixStride
        | D::Stream
        | D::Location
        | D::Component
        | D::Index
        | D::Binding
        | D::DescriptorSet
        | D::Offset
        | D::XfbBuffer
        | D::XfbStride
        | D::InputAttachmentIndex
        | D::Alignment
        | D::MaxByteOffset
        | D::SecondaryViewportRelativeNV => w.literal()?,
        D::BuiltIn => Operand::BuiltIn(w.decoded(|d| d.built_in())?),
        D::UniformId => Operand::IdScope(w.next()?),
        D::AlignmentId | D::MaxByteOffsetId | D::CounterBuffer => w.id()?,
        D::UserSemantic | D::UserTypeGOOGLE => Operand::LiteralString(w.string()?),
        D::FuncParamAttr => {
            Operand::FunctionParameterAttribute(w.decoded(|d| d.function_parameter_attribute())?)
        }
        D::FPRoundingMode => Operand::FPRoundingMode(w.decoded(|d| d.fp_rounding_mode())?),
        D::FPFastMathMode => Operand::FPFastMathMode(w.decoded(|d| d.fp_fast_math_mode())?),
        D::LinkageAttributes => {
            out.push(Operand::LiteralString(w.string()?));
            Operand::LinkageType(w.decoded(|d| d.linkage_type())?)
        }
        D::RelaxedPrecision
        | D::Block
        | D::BufferBlock
        | D::RowMajor
        | D::ColMajor
        | D::GLSLShared
        | D::GLSLPacked
        | D::CPacked
        | D::NoPerspective
        | D::Flat
        | D::Patch
        | D::Centroid
        | D::Sample
        | D::Invariant
        | D::Restrict
        | D::Aliased
        | D::Volatile
        | D::Constant
        | D::Coherent
        | D::NonWritable
        | D::NonReadable
        | D::Uniform
        | D::SaturatedConversion
        | D::NoContraction
        | D::NoSignedWrap
        | D::NoUnsignedWrap
        | D::ExplicitInterpAMD
        | D::OverrideCoverageNV
        | D::PassthroughNV
        | D::ViewportRelativeNV
        | D::PerPrimitiveNV
        | D::PerViewNV
        | D::PerTaskNV
        | D::PerVertexKHR
        | D::NonUniform
        | D::RestrictPointer
        | D::AliasedPointer => return Some(()),
        _ => return None,
    };
    out.push(parameter);
    Some(())
}
