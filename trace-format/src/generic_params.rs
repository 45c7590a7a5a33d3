//! A generic record's parameters (`VulkanCall`), read alike whichever way they were
//! stored: as `VulkanParam` tables (traces of format version 3 and older, imports) or
//! packed into one byte string (`VulkanCall.packed`, version 4 on).
//!
//! A parameter is a tree: a value, the bytes a pointer points to, the structures
//! chained to it and the parameters its structures' pointer members point to. As
//! tables, every node is a flatbuffers table the payload verifier walks and every read
//! goes through a vtable; packed, the tree is written front to back, each node a flags
//! byte and what the flags say follows:
//!
//! ```text
//! node   := flags:u8 [value:u64] [len:u32 bytes] [count:u32 len:u32 node*] [count:u32 len:u32 node*]
//!           (value if bit 0, bytes if bit 1, the chain if bit 2, nested parameters if bit 3)
//! ```
//!
//! all little-endian and unaligned. A list's byte length lets a reader step over it
//! without reading it. [`ParamList::of`] checks a packed string whole, once (every
//! length within the bytes, every flag known, the nesting bounded, nothing left over),
//! so that reading it after never meets a malformed node; a damaged string is an error
//! naming what was wrong and where, and the record does not decode.

use flatbuffers::{ForwardsUOffset, Vector};

use crate::generated::trace::{VulkanCall, VulkanCallT, VulkanParam, VulkanParamT};

mod writer;

pub use writer::{NodeWriter, ParamWriter};

/// A value follows the flags.
const VALUE: u8 = 1;
/// Bytes follow (their length, then themselves).
const BYTES: u8 = 1 << 1;
/// A chain follows (its count, its byte length, its nodes).
const CHAIN: u8 = 1 << 2;
/// Nested parameters follow (as a chain does).
const NESTED: u8 = 1 << 3;
/// The flags a node may carry.
const KNOWN: u8 = VALUE | BYTES | CHAIN | NESTED;
/// The deepest nesting a packed string may hold (a parameter's structure, its chained
/// structures, what their pointer members point to, …: a handful in the registry).
pub const MAX_DEPTH: usize = 16;

/// Why a packed parameter string cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("packed parameters: {what} at byte {offset}")]
pub struct PackedError {
    /// Byte offset in the packed string.
    pub offset: usize,
    /// What was wrong.
    pub what: &'static str,
}

/// One parameter of a generic record.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// Stored as a flatbuffers table.
    Table(VulkanParam<'a>),
    /// Read from a packed string.
    Packed(PackedParam<'a>),
}

/// A parameter of a packed string: its node's bytes (checked), read when asked, so
/// that a record's parameters gathered by position stay small.
#[derive(Clone, Copy, Debug)]
pub struct PackedParam<'a> {
    node: &'a [u8],
}

impl<'a> PackedParam<'a> {
    /// The node's parts (none, for bytes that do not read: a checked node always does).
    #[inline]
    fn parts(&self) -> Node<'a> {
        Reader {
            bytes: self.node,
            pos: 0,
        }
        .node()
        .unwrap_or_default()
    }
}

/// A packed node's parts.
#[derive(Clone, Copy, Debug, Default)]
struct Node<'a> {
    value: u64,
    bytes: Option<&'a [u8]>,
    chain: Option<PackedList<'a>>,
    nested: Option<PackedList<'a>>,
}

/// A list of packed nodes: how many, and their bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct PackedList<'a> {
    count: u32,
    bytes: &'a [u8],
}

impl<'a> Param<'a> {
    /// The scalar or handle; for a pointer, its address as the program passed it.
    pub fn value(&self) -> u64 {
        match self {
            Param::Table(p) => p.value(),
            Param::Packed(p) => p.parts().value,
        }
    }

    /// What the pointer points to, if anything was recorded.
    pub fn bytes(&self) -> Option<&'a [u8]> {
        match self {
            Param::Table(p) => p.bytes().map(|b| b.bytes()),
            Param::Packed(p) => p.parts().bytes,
        }
    }

    /// [`value`](Self::value) and [`bytes`](Self::bytes) together: a packed
    /// parameter's node read once for both.
    pub fn value_and_bytes(&self) -> (u64, Option<&'a [u8]>) {
        match self {
            Param::Table(p) => (p.value(), p.bytes().map(|b| b.bytes())),
            Param::Packed(p) => {
                let parts = p.parts();
                (parts.value, parts.bytes)
            }
        }
    }

    /// The structures chained to the parameter's, if any were recorded.
    pub fn chain(&self) -> Option<ParamList<'a>> {
        match self {
            Param::Table(p) => p.chain().map(ParamList::Table),
            Param::Packed(p) => p.parts().chain.map(ParamList::Packed),
        }
    }

    /// What the parameter's structures' pointer members point to, if recorded.
    pub fn nested(&self) -> Option<ParamList<'a>> {
        match self {
            Param::Table(p) => p.nested().map(ParamList::Table),
            Param::Packed(p) => p.parts().nested.map(ParamList::Packed),
        }
    }

    /// The parameter as an owned tree, as the layer builds it.
    pub fn to_owned_param(&self) -> VulkanParamT {
        let list =
            |l: Option<ParamList<'_>>| l.map(|l| l.iter().map(|p| p.to_owned_param()).collect());
        VulkanParamT {
            value: self.value(),
            bytes: self.bytes().map(<[u8]>::to_vec),
            chain: list(self.chain()),
            nested: list(self.nested()),
        }
    }
}

/// A record's parameters, or a parameter's chain or nested parameters.
#[derive(Clone, Copy, Debug)]
pub enum ParamList<'a> {
    /// Flatbuffers tables.
    Table(Vector<'a, ForwardsUOffset<VulkanParam<'a>>>),
    /// Packed nodes.
    Packed(PackedList<'a>),
}

impl<'a> ParamList<'a> {
    /// The parameters of `call`, packed (checked whole first) or as tables; none when
    /// the record holds neither.
    pub fn of(call: &VulkanCall<'a>) -> Result<Self, PackedError> {
        if let Some(packed) = call.packed() {
            return Self::packed(packed.bytes());
        }
        Ok(match call.params() {
            Some(tables) => ParamList::Table(tables),
            None => ParamList::Packed(PackedList::default()),
        })
    }

    /// The parameters packed in `bytes`, checked whole first.
    pub fn packed(bytes: &'a [u8]) -> Result<Self, PackedError> {
        let count = check_top(bytes)?;
        Ok(ParamList::Packed(PackedList {
            count,
            bytes: bytes.get(4..).unwrap_or_default(),
        }))
    }

    /// The parameters packed in `bytes`, each given to `each` in order as the check
    /// of the whole (the one [`packed`](Self::packed) makes) steps over it: a record's
    /// parameters gathered without reading their nodes a second time. Where the
    /// bytes are damaged, the error [`packed`](Self::packed) gives: what was given
    /// before it is to be dropped.
    pub fn packed_each(bytes: &'a [u8], each: impl FnMut(Param<'a>)) -> Result<(), PackedError> {
        let mut each = each;
        check_top_with(bytes, &mut |node| each(Param::Packed(PackedParam { node }))).map(drop)
    }

    /// How many parameters.
    pub fn len(&self) -> usize {
        match self {
            ParamList::Table(v) => v.len(),
            ParamList::Packed(l) => l.count as usize,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parameters in order.
    pub fn iter(&self) -> ParamIter<'a> {
        match *self {
            ParamList::Table(v) => ParamIter::Table(v.iter()),
            ParamList::Packed(l) => ParamIter::Packed {
                left: l.count,
                bytes: l.bytes,
            },
        }
    }

    /// Parameter `index` (for packed parameters, found by stepping over those before).
    pub fn get(&self, index: usize) -> Option<Param<'a>> {
        self.iter().nth(index)
    }
}

impl<'a> IntoIterator for ParamList<'a> {
    type Item = Param<'a>;
    type IntoIter = ParamIter<'a>;

    fn into_iter(self) -> ParamIter<'a> {
        self.iter()
    }
}

/// The parameters of a [`ParamList`], in order.
#[derive(Clone)]
pub enum ParamIter<'a> {
    /// Over flatbuffers tables.
    Table(flatbuffers::VectorIter<'a, ForwardsUOffset<VulkanParam<'a>>>),
    /// Over packed nodes: how many are left, and the bytes from the next one on.
    Packed {
        /// Nodes left.
        left: u32,
        /// The bytes from the next node on.
        bytes: &'a [u8],
    },
}

impl<'a> Iterator for ParamIter<'a> {
    type Item = Param<'a>;

    #[inline]
    fn next(&mut self) -> Option<Param<'a>> {
        match self {
            ParamIter::Table(it) => it.next().map(Param::Table),
            ParamIter::Packed { left, bytes } => next_packed(left, bytes),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self {
            ParamIter::Table(it) => it.len(),
            ParamIter::Packed { left, .. } => *left as usize,
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for ParamIter<'_> {}

/// The next of `left` packed nodes at the start of `bytes`, stepped over. Apart from
/// [`ParamIter::next`], so that a table's iteration stays small enough to inline.
fn next_packed<'a>(left: &mut u32, bytes: &mut &'a [u8]) -> Option<Param<'a>> {
    if *left == 0 {
        return None;
    }
    // The list was checked whole: a node that does not read means the bytes were not
    // (no such list is made), and ends the iteration.
    let mut reader = Reader { bytes, pos: 0 };
    reader.node().ok()?;
    let (node, rest) = bytes.split_at(reader.pos);
    *bytes = rest;
    *left -= 1;
    Some(Param::Packed(PackedParam { node }))
}

/// As a `VulkanParam` table serializes: its value, then its bytes, chain and nested
/// parameters where recorded; so a packed record prints as a table record does.
impl serde::Serialize for Param<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("VulkanParam", 4)?;
        s.serialize_field("value", &self.value())?;
        match self.bytes() {
            Some(bytes) => s.serialize_field("bytes", bytes)?,
            None => s.skip_field("bytes")?,
        }
        match self.chain() {
            Some(chain) => s.serialize_field("chain", &chain)?,
            None => s.skip_field("chain")?,
        }
        match self.nested() {
            Some(nested) => s.serialize_field("nested", &nested)?,
            None => s.skip_field("nested")?,
        }
        s.end()
    }
}

impl serde::Serialize for ParamList<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// Reads nodes from a packed string, every read bounded by its bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, what: &'static str) -> PackedError {
        PackedError {
            offset: self.pos,
            what,
        }
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], PackedError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.error(what));
        };
        let taken = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(taken)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, PackedError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, PackedError> {
        let b = self.take(8, what)?;
        let mut word = [0; 8];
        word.copy_from_slice(b);
        Ok(u64::from_le_bytes(word))
    }

    fn list(&mut self) -> Result<PackedList<'a>, PackedError> {
        let count = self.u32("a list's count cut off")?;
        let len = self.u32("a list's length cut off")? as usize;
        let bytes = self.take(len, "a list longer than the bytes left")?;
        Ok(PackedList { count, bytes })
    }

    /// The next node, its lists taken whole (not looked into).
    #[inline]
    fn node(&mut self) -> Result<Node<'a>, PackedError> {
        let start = self.pos;
        let flags = self.take(1, "a node cut off")?[0];
        if flags & !KNOWN != 0 {
            return Err(PackedError {
                offset: start,
                what: "unknown flags",
            });
        }
        let mut param = Node::default();
        if flags & VALUE != 0 {
            param.value = self.u64("a value cut off")?;
        }
        if flags & BYTES != 0 {
            let len = self.u32("a byte length cut off")? as usize;
            param.bytes = Some(self.take(len, "bytes longer than the bytes left")?);
        }
        if flags & CHAIN != 0 {
            param.chain = Some(self.list()?);
        }
        if flags & NESTED != 0 {
            param.nested = Some(self.list()?);
        }
        Ok(param)
    }
}

/// Checks a record's packed string: a `u32` count, then that many nodes, each whole.
fn check_top(bytes: &[u8]) -> Result<u32, PackedError> {
    check_top_with(bytes, &mut ignore_node)
}

/// A node's bytes, not wanted.
fn ignore_node(_: &[u8]) {}

/// [`check_top`], giving each top-level node's bytes to `each` once checked.
fn check_top_with<'a>(
    bytes: &'a [u8],
    each: &mut impl FnMut(&'a [u8]),
) -> Result<u32, PackedError> {
    let mut reader = Reader { bytes, pos: 0 };
    let count = reader.u32("the parameter count cut off")?;
    let rest = &bytes[reader.pos..];
    check_list(rest, count, 0, each).map_err(|e| PackedError {
        offset: e.offset + reader.pos,
        ..e
    })?;
    Ok(count)
}

/// Checks that `bytes` holds exactly `count` well-formed nodes, `depth` lists deep,
/// giving each node's bytes to `each` once checked.
fn check_list<'a>(
    bytes: &'a [u8],
    count: u32,
    depth: usize,
    each: &mut impl FnMut(&'a [u8]),
) -> Result<(), PackedError> {
    let mut reader = Reader { bytes, pos: 0 };
    if depth > MAX_DEPTH {
        return Err(reader.error("parameters nested too deep"));
    }
    // Every node takes a byte at least: a count above the bytes is wrong before any is read.
    if count as usize > bytes.len() {
        return Err(reader.error("more nodes counted than bytes"));
    }
    for _ in 0..count {
        let start = reader.pos;
        let node = reader.node()?;
        for list in [node.chain, node.nested].into_iter().flatten() {
            // Where the list's bytes start within `bytes`, for an error's offset.
            let at = list.bytes.as_ptr() as usize - bytes.as_ptr() as usize;
            check_list(list.bytes, list.count, depth + 1, &mut ignore_node).map_err(|e| {
                PackedError {
                    offset: e.offset + at,
                    ..e
                }
            })?;
        }
        debug_assert!(reader.pos > start);
        each(&bytes[start..reader.pos]);
    }
    if reader.pos != bytes.len() {
        return Err(reader.error("bytes left over after the last node"));
    }
    Ok(())
}

/// The parameters packed in `bytes`, as owned trees (checked whole first).
pub fn unpack(bytes: &[u8]) -> Result<Vec<VulkanParamT>, PackedError> {
    Ok(ParamList::packed(bytes)?
        .iter()
        .map(|p| p.to_owned_param())
        .collect())
}

/// The generic record of `command` with `params` packed, naming the command by its
/// number where the list of numbered commands holds it ([`crate::names::command_id`]),
/// as the layer does, else by its name.
pub fn packed_call(command: &str, params: &[VulkanParamT]) -> VulkanCallT {
    let id = crate::names::command_id(command);
    VulkanCallT {
        command: id.is_none().then(|| command.to_string()),
        params: None,
        packed: Some(packed(params)),
        command_id: id.unwrap_or(0),
    }
}

/// Packs `params` into `out`: a `u32` count, then each parameter's tree.
pub fn pack(params: &[VulkanParamT], out: &mut Vec<u8>) {
    ParamWriter::params(out, |list| {
        for p in params {
            write_tree(list, p);
        }
    });
}

/// Writes the tree `p` as the next node of `list`.
fn write_tree(list: &mut ParamWriter<'_>, p: &VulkanParamT) {
    let mut node = list.node(p.value);
    if let Some(bytes) = &p.bytes {
        node.bytes(bytes);
    }
    if let Some(chain) = &p.chain {
        node.chain(|list| chain.iter().for_each(|child| write_tree(list, child)));
    }
    if let Some(nested) = &p.nested {
        node.nested(|list| nested.iter().for_each(|child| write_tree(list, child)));
    }
}

/// The packed string of `params`.
pub fn packed(params: &[VulkanParamT]) -> Vec<u8> {
    let mut out = Vec::with_capacity(packed_len(params));
    pack(params, &mut out);
    out
}

/// How many bytes [`pack`] writes for `params`.
pub fn packed_len(params: &[VulkanParamT]) -> usize {
    4 + params.iter().map(node_len).sum::<usize>()
}

fn node_len(p: &VulkanParamT) -> usize {
    let list = |l: &Option<Vec<VulkanParamT>>| {
        l.as_ref()
            .map_or(0, |l| 8 + l.iter().map(node_len).sum::<usize>())
    };
    1 + if p.value != 0 { 8 } else { 0 }
        + p.bytes.as_ref().map_or(0, |b| 4 + b.len())
        + list(&p.chain)
        + list(&p.nested)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(value: u64, bytes: Option<&[u8]>) -> VulkanParamT {
        VulkanParamT {
            value,
            bytes: bytes.map(<[u8]>::to_vec),
            chain: None,
            nested: None,
        }
    }

    /// A barrier-like call: a handle, a structure with a chained structure and a nested
    /// array, a null pointer, an empty array.
    fn sample() -> Vec<VulkanParamT> {
        let mut structure = leaf(0x7fff_0000_1000, Some(&[1, 2, 3, 4, 5, 6, 7, 8]));
        let mut link = leaf(1_000_314_000, Some(&[9; 24]));
        link.nested = Some(vec![leaf(0x55, Some(&[7; 16]))]);
        structure.chain = Some(vec![link]);
        structure.nested = Some(vec![leaf(0, None), leaf(0x99, Some(&[]))]);
        vec![
            leaf(0xdead_beef, None),
            structure,
            leaf(0, None),
            VulkanParamT {
                nested: Some(Vec::new()),
                ..leaf(3, Some(&[]))
            },
        ]
    }

    #[test]
    fn a_packed_tree_reads_back_as_the_tree_it_was() {
        let params = sample();
        let bytes = packed(&params);
        assert_eq!(bytes.len(), packed_len(&params));
        assert_eq!(unpack(&bytes).unwrap(), params);
        let list = ParamList::packed(&bytes).unwrap();
        assert_eq!(list.len(), 4);
        assert_eq!(list.get(3).map(|p| p.value()), Some(3));
        let structure = list.get(1).unwrap();
        let chain: Vec<_> = structure.chain().unwrap().iter().collect();
        assert_eq!(chain.len(), 1);
        assert_eq!(chain[0].value(), 1_000_314_000);
        assert_eq!(
            chain[0].nested().unwrap().get(0).unwrap().bytes(),
            Some(&[7u8; 16][..])
        );
        assert!(list.get(2).unwrap().bytes().is_none());
    }

    #[test]
    fn a_parameter_is_small_enough_to_gather_sixteen_on_the_stack() {
        assert!(std::mem::size_of::<Param<'_>>() <= 32);
    }

    #[test]
    fn no_parameters_pack_to_a_count_of_zero() {
        let bytes = packed(&[]);
        assert_eq!(bytes, [0, 0, 0, 0]);
        assert!(ParamList::packed(&bytes).unwrap().is_empty());
    }

    #[test]
    fn every_cut_of_a_packed_string_is_an_error_with_its_place() {
        let bytes = packed(&sample());
        for len in 0..bytes.len() {
            let err = ParamList::packed(&bytes[..len]).unwrap_err();
            assert!(err.offset <= len, "{len}: {err}");
        }
    }

    #[test]
    fn damaged_packed_strings_are_errors_never_panics() {
        let bytes = packed(&sample());
        let mut errors = 0;
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x10, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                match ParamList::packed(&damaged) {
                    // What checks whole reads whole, however wrong its values.
                    Ok(list) => {
                        list.iter().for_each(|p| drop(p.to_owned_param()));
                    }
                    Err(e) => {
                        assert!(e.offset <= damaged.len());
                        errors += 1;
                    }
                }
            }
        }
        assert!(
            errors > bytes.len(),
            "{errors} of {} damaged strings refused",
            bytes.len() * 4
        );
    }

    #[test]
    fn parameters_given_as_checked_are_those_the_checked_list_holds() {
        let bytes = packed(&sample());
        let owned = |p: Param<'_>| p.to_owned_param();
        let mut given = Vec::new();
        ParamList::packed_each(&bytes, |p| given.push(owned(p))).unwrap();
        assert_eq!(given, sample());
        // Damaged: the same verdict as the whole check, and the same reason.
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x80] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                let mut given = Vec::new();
                let each = ParamList::packed_each(&damaged, |p| given.push(owned(p)));
                match ParamList::packed(&damaged) {
                    Ok(list) => {
                        assert_eq!(each, Ok(()));
                        assert_eq!(given, list.iter().map(owned).collect::<Vec<_>>());
                    }
                    Err(e) => {
                        assert_eq!(each, Err(e), "{at}");
                    }
                }
            }
        }
    }

    #[test]
    fn hostile_counts_and_depths_are_refused() {
        // A count of 4 billion nodes in 4 bytes.
        assert_eq!(
            ParamList::packed(&[0xff, 0xff, 0xff, 0xff])
                .unwrap_err()
                .what,
            "more nodes counted than bytes"
        );
        // One node nesting one node nesting … past the bound.
        let mut node = leaf(1, None);
        for _ in 0..=MAX_DEPTH + 1 {
            node = VulkanParamT {
                nested: Some(vec![node]),
                ..leaf(0, None)
            };
        }
        let err = ParamList::packed(&packed(&[node])).unwrap_err();
        assert_eq!(err.what, "parameters nested too deep");
        // Unknown flags.
        let err = ParamList::packed(&[1, 0, 0, 0, 0x10]).unwrap_err();
        assert_eq!((err.offset, err.what), (4, "unknown flags"));
    }
}
