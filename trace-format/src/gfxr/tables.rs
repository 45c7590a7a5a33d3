//! The shapes of the generated tables ([`super::generated`]): how GFXReconstruct encodes
//! each structure member and command parameter, where the member lies in C, and how the
//! capture layer records the command.

/// How GFXReconstruct encodes one member or parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A scalar, enum, flags or handle of `size` bytes (handles as 64-bit ids).
    Value {
        /// Its size in the file and in C.
        size: u8,
        /// A `float` or `double`.
        float: bool,
    },
    /// A `void*` or function pointer: a bare 64-bit address.
    Address,
    /// A structure embedded by value, by index into [`super::generated::STRUCTS`].
    Embedded(u16),
    /// `VkClearValue` or `VkClearColorValue`: an array of four 32-bit words.
    ClearColor,
    /// A union of 64-bit addresses or values, encoded as one 64-bit word.
    Word,
    /// A fixed `char` array, encoded as a string.
    FixedString(u32),
    /// A fixed array of scalars or handles, encoded as an array.
    FixedArray {
        /// The size of one element.
        size: u8,
        /// How many elements C holds.
        count: u32,
    },
    /// A fixed array of structures, encoded as an array of structures.
    FixedStructs {
        /// The element's structure.
        ty: u16,
        /// How many elements C holds.
        count: u32,
    },
    /// The `pNext` chain: a pointer to the structure its `sType` names.
    PNext,
    /// A pointer, with attributes, address, length and data.
    Pointer {
        /// What it points to.
        to: Target,
        /// An array (with a length) rather than one element.
        array: bool,
    },
    /// `const char* const*`: an array of strings.
    Strings,
    /// `void**`: a pointer to an address.
    PointerToAddress,
    /// Something this reader does not decode.
    Unsupported,
}

/// What a [`Kind::Pointer`] points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Scalars of this size.
    Value(u8),
    /// Handles (64-bit ids).
    Handle,
    /// Structures, by index.
    Struct(u16),
    /// A UTF-8 string.
    String,
    /// Bytes (`void*` with a length).
    Bytes,
    /// Clear values, each encoded as an array of four 32-bit words.
    ClearColor,
    /// Something this reader does not decode.
    Unsupported,
}

/// How the capture layer's generated `member_encoding` records a member in `nested`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nested {
    /// Plain data: only in the structure's bytes.
    Plain,
    /// An embedded structure with pointers: what they point to, as one group.
    Group,
    /// Elements pointed to, as bytes (with their own nested pointers when `nested`).
    Elements {
        /// Whether the pointee's pointers are followed.
        nested: bool,
    },
    /// Strings, each followed by a NUL.
    Strings,
    /// One string.
    String,
    /// `void*` bytes of a counted length.
    Bytes,
    /// The address only.
    Address,
}

/// How the capture layer's generated hook records a command parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// A scalar or handle as `value` (a pointer: its address).
    Value,
    /// A float, as the bits of an `f64`.
    Float,
    /// Nothing but zero (function pointers).
    Address,
    /// A structure passed by value, as its bytes.
    StructBytes,
    /// Bytes: a fixed array or a counted `void*`.
    Bytes,
    /// Elements pointed to, as bytes in C layout.
    Elements {
        /// With each structure's `pNext` chain.
        chained: bool,
        /// With what each structure's pointer members point to.
        nested: bool,
    },
    /// One string.
    String,
    /// Strings, each followed by a NUL.
    Strings,
    /// Descriptor update template data.
    TemplateData,
}

/// What a command returns, encoded after its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    /// Nothing.
    Void,
    /// A 32-bit value (`VkResult`, `VkBool32`, `uint32_t`).
    Word32,
    /// A 64-bit value.
    Word64,
}

/// One structure member.
#[derive(Debug)]
pub struct MemberDesc {
    /// Its registry name.
    pub name: &'static str,
    /// Its offset in C.
    pub offset: u32,
    /// How GFXReconstruct encodes it.
    pub kind: Kind,
    /// How the capture layer records it among a structure's nested pointers.
    pub nested: Nested,
}

/// One structure or union.
#[derive(Debug)]
pub struct StructDesc {
    /// Its registry name.
    pub name: &'static str,
    /// Its size in C.
    pub size: u32,
    /// Its `sType` value (0: none).
    pub s_type: u32,
    /// Whether every member can be decoded.
    pub supported: bool,
    /// Its members in declaration order.
    pub members: &'static [MemberDesc],
}

/// One command parameter.
#[derive(Debug)]
pub struct ParamDesc {
    /// Its registry name.
    pub name: &'static str,
    /// How GFXReconstruct encodes it.
    pub kind: Kind,
    /// How the capture layer records it.
    pub rule: Rule,
}

/// One command.
#[derive(Debug)]
pub struct CommandDesc {
    /// GFXReconstruct's call id.
    pub id: u32,
    /// Its registry name.
    pub name: &'static str,
    /// Whether the capture layer records it generically (a `VulkanCall`).
    pub generic: bool,
    /// What it returns.
    pub ret: Ret,
    /// Its parameters in order.
    pub params: &'static [ParamDesc],
}

impl StructDesc {
    /// The index of member `name`.
    pub fn member(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name == name)
    }
}

/// The command with GFXReconstruct call id `id`.
pub fn command(id: u32) -> Option<&'static CommandDesc> {
    let all = &super::generated::COMMANDS;
    all.binary_search_by_key(&id, |c| c.id)
        .ok()
        .map(|i| &all[i])
}

/// The structure at `index`.
pub fn structure(index: u16) -> &'static StructDesc {
    &super::generated::STRUCTS[usize::from(index)]
}

/// The `sType` of the structure named `name` (0 when it has none).
pub fn s_type_of(name: &str) -> u32 {
    super::generated::STRUCTS
        .iter()
        .find(|s| s.name == name)
        .map_or(0, |s| s.s_type)
}
