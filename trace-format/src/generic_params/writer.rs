//! Writing a packed parameter string front to back, node by node, as a program's
//! structures are read: no tree of owned parameters built first, no allocation but the
//! output's. Each node's flags and each list's count and length are written as
//! placeholders and filled in when what they describe is done.

use super::{BYTES, CHAIN, NESTED, VALUE};

/// A list of parameters being written: a packed string's top level, a chain, or a
/// node's nested parameters.
pub struct ParamWriter<'o> {
    out: &'o mut Vec<u8>,
    count: u32,
}

impl<'o> ParamWriter<'o> {
    /// Appends to `out` a packed string of the parameters `write` writes: their count,
    /// then each node.
    pub fn params(out: &mut Vec<u8>, write: impl FnOnce(&mut ParamWriter<'_>)) {
        let count_at = out.len();
        out.extend_from_slice(&[0; 4]);
        let mut list = ParamWriter { out, count: 0 };
        write(&mut list);
        let count = list.count;
        out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    }

    /// Starts the next node with `value` (stored only when not 0, as readers take a
    /// missing value for 0). Its bytes, chain and nested parameters follow, in that
    /// order, through the [`NodeWriter`].
    pub fn node(&mut self, value: u64) -> NodeWriter<'_> {
        self.count += 1;
        let flags_at = self.out.len();
        if value != 0 {
            self.out.push(VALUE);
            self.out.extend_from_slice(&value.to_le_bytes());
        } else {
            self.out.push(0);
        }
        NodeWriter {
            out: self.out,
            flags_at,
        }
    }

    /// How many nodes this list holds so far.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether it holds none yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// A node being written; its parts go in the packed order (bytes, chain, nested).
pub struct NodeWriter<'w> {
    out: &'w mut Vec<u8>,
    flags_at: usize,
}

impl NodeWriter<'_> {
    /// The node's bytes: their length, then what `fill` appends. Returns them, for the
    /// caller to adjust in place.
    pub fn bytes_with(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> &mut [u8] {
        debug_assert!(
            self.flags() & (BYTES | CHAIN | NESTED) == 0,
            "bytes come first"
        );
        self.set(BYTES);
        let len_at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        fill(self.out);
        let start = len_at + 4;
        let len = (self.out.len() - start) as u32;
        self.out[len_at..start].copy_from_slice(&len.to_le_bytes());
        &mut self.out[start..]
    }

    /// The node's bytes, a copy of `bytes`; returns the copy.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut [u8] {
        self.bytes_with(|out| out.extend_from_slice(bytes))
    }

    /// The node's chain: the nodes `write` writes (a chain of none is still written).
    pub fn chain(&mut self, write: impl FnOnce(&mut ParamWriter<'_>)) {
        debug_assert!(
            self.flags() & (CHAIN | NESTED) == 0,
            "the chain comes before nested"
        );
        self.list(CHAIN, write);
    }

    /// The node's nested parameters: the nodes `write` writes (none is still a list).
    pub fn nested(&mut self, write: impl FnOnce(&mut ParamWriter<'_>)) {
        debug_assert!(self.flags() & NESTED == 0, "one nested list");
        self.list(NESTED, write);
    }

    fn list(&mut self, flag: u8, write: impl FnOnce(&mut ParamWriter<'_>)) {
        self.set(flag);
        let count_at = self.out.len();
        self.out.extend_from_slice(&[0; 8]);
        let mut list = ParamWriter {
            out: self.out,
            count: 0,
        };
        write(&mut list);
        let count = list.count;
        let len = (self.out.len() - count_at - 8) as u32;
        self.out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
        self.out[count_at + 4..count_at + 8].copy_from_slice(&len.to_le_bytes());
    }

    fn flags(&self) -> u8 {
        self.out[self.flags_at]
    }

    fn set(&mut self, flag: u8) {
        self.out[self.flags_at] |= flag;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generic_params::ParamList;

    #[test]
    fn parameters_written_node_by_node_read_back_as_written() {
        let mut packed = Vec::new();
        ParamWriter::params(&mut packed, |p| {
            p.node(0xdead_beef);
            let mut structure = p.node(0x1000);
            // Bytes adjusted in place after they are copied (a structure's padding).
            structure.bytes(&[1, 2, 3, 4])[1] = 0;
            structure.chain(|chain| {
                chain
                    .node(7)
                    .bytes_with(|out| out.extend_from_slice(b"link"));
            });
            structure.nested(|nested| {
                nested.node(0);
                nested.node(9).nested(|_| {});
                assert_eq!(nested.len(), 2);
            });
        });
        let list = ParamList::packed(&packed).expect("a well-formed string");
        let params: Vec<_> = list.iter().collect();
        assert_eq!(params.len(), 2);
        assert_eq!(params[0].value(), 0xdead_beef);
        assert!(params[0].bytes().is_none() && params[0].chain().is_none());
        let structure = params[1];
        assert_eq!(structure.bytes(), Some(&[1, 0, 3, 4][..]));
        let chain: Vec<_> = structure.chain().expect("a chain").iter().collect();
        assert_eq!((chain.len(), chain[0].value()), (1, 7));
        assert_eq!(chain[0].bytes(), Some(&b"link"[..]));
        let nested: Vec<_> = structure.nested().expect("nested").iter().collect();
        assert_eq!(nested.len(), 2);
        assert_eq!((nested[0].value(), nested[1].value()), (0, 9));
        assert!(nested[0].nested().is_none());
        assert_eq!(
            nested[1].nested().map(|l| l.len()),
            Some(0),
            "an empty list is kept"
        );
    }
}
