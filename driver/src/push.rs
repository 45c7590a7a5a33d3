//! NV push buffers: method headers and the data words after them.
//!
//! A header (GPFIFO class 0x906F) holds the method in dwords (bits 11:0), the
//! subchannel (15:13), a count or immediate (28:16) and the kind (31:29). The
//! [`PushBuffer`] writer merges a method into the previous header when it continues it;
//! [`parse`] walks a buffer back into `(subchannel, method, data)` writes with the same
//! [`MethodHeader`] type.

use std::fmt;

/// NVK's subchannel for the 3D class.
pub const SUBC_3D: u8 = 0;
/// The compute class's subchannel in NVK's channels.
pub const SUBC_COMPUTE: u8 = 1;
/// The copy engine's subchannel in NVK's channels.
pub const SUBC_COPY: u8 = 4;
/// The largest count (or immediate) a header holds.
pub const MAX_COUNT: u32 = 0x1fff;
/// Where a header's count (or immediate data) starts.
const COUNT_SHIFT: u32 = 16;

/// What a header does with the words after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderKind {
    /// `count` words to consecutive methods (SEC_OP 1).
    Incrementing,
    /// `count` words all to the same method (SEC_OP 3).
    NonIncrementing,
    /// The 13-bit data sits in the header itself; no words follow (SEC_OP 4).
    Immediate,
    /// The first word to the method, the rest to the next method (SEC_OP 5).
    IncrementOnce,
}

impl HeaderKind {
    fn sec_op(self) -> u32 {
        match self {
            HeaderKind::Incrementing => 1,
            HeaderKind::NonIncrementing => 3,
            HeaderKind::Immediate => 4,
            HeaderKind::IncrementOnce => 5,
        }
    }
}

/// A method header word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MethodHeader(pub u32);

impl MethodHeader {
    /// A header of `kind` for method `mthd` (a byte address) on `subc`.
    pub fn new(kind: HeaderKind, subc: u8, mthd: u16, count: u32) -> Self {
        debug_assert!(count <= MAX_COUNT && mthd % 4 == 0 && mthd < 0x4000 && subc < 8);
        MethodHeader(
            (kind.sec_op() << 29)
                | (count << COUNT_SHIFT)
                | (u32::from(subc) << 13)
                | u32::from(mthd >> 2),
        )
    }

    /// The kind, or the SEC_OP this model does not handle.
    pub fn kind(self) -> Result<HeaderKind, u32> {
        // By SEC_OP, looked up (a push buffer walk asks once a header).
        const KINDS: [Option<HeaderKind>; 8] = [
            None,
            Some(HeaderKind::Incrementing),
            None,
            Some(HeaderKind::NonIncrementing),
            Some(HeaderKind::Immediate),
            Some(HeaderKind::IncrementOnce),
            None,
            None,
        ];
        let sec_op = self.0 >> 29;
        KINDS[sec_op as usize].ok_or(sec_op)
    }

    /// The method, as a byte address.
    pub fn mthd(self) -> u16 {
        ((self.0 & 0xfff) << 2) as u16
    }

    /// The subchannel.
    pub fn subc(self) -> u8 {
        ((self.0 >> 13) & 7) as u8
    }

    /// The count of words that follow (or the immediate data).
    pub fn count(self) -> u32 {
        (self.0 >> COUNT_SHIFT) & MAX_COUNT
    }
}

impl fmt::Debug for MethodHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} subc {} mthd {:#06x} count {}",
            self.kind(),
            self.subc(),
            self.mthd(),
            self.count()
        )
    }
}

/// How far a [`PushBuffer`] was written: its dwords and the method writes they make.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    /// Dwords written.
    pub dwords: usize,
    /// Method writes they make.
    pub methods: usize,
}

/// A push buffer being written.
#[derive(Clone, Debug, Default)]
pub struct PushBuffer {
    words: Vec<u32>,
    /// The open incrementing header: its index, and the method its next word goes to.
    open: Option<(usize, u8, u16)>,
    /// Method writes the words make ([`method_count`] of them), counted as they are
    /// written: what a state group's flush cost is measured by, without walking the
    /// words again.
    methods: usize,
}

impl PushBuffer {
    /// An empty push buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The words written.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Dwords written so far.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Where the buffer stands: what the words written after it take is the
    /// difference of two marks. Its methods are the method writes the words make, as
    /// [`method_count`] counts them (words another writer made, added by
    /// [`extend`](Self::extend), are counted so when they are added).
    pub fn mark(&self) -> Mark {
        Mark {
            dwords: self.words.len(),
            methods: self.methods,
        }
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Writes `data` to `mthd`, merging into the open incrementing header when it
    /// continues it.
    pub fn mthd(&mut self, subc: u8, mthd: u16, data: u32) {
        if let Some((at, open_subc, next)) = self.open {
            if open_subc == subc && next == mthd {
                if let Some(header) = self.words.get_mut(at) {
                    if MethodHeader(*header).count() < MAX_COUNT {
                        // One more word under the open header: its count, in place
                        // (below MAX_COUNT, so the field does not carry into the kind).
                        *header += 1 << COUNT_SHIFT;
                        self.words.push(data);
                        self.methods += 1;
                        self.open = Some((at, subc, mthd + 4));
                        return;
                    }
                }
            }
        }
        self.open = Some((self.words.len(), subc, mthd + 4));
        self.words
            .push(MethodHeader::new(HeaderKind::Incrementing, subc, mthd, 1).0);
        self.words.push(data);
        self.methods += 1;
    }

    /// Writes consecutive methods from `mthd`.
    pub fn mthds(&mut self, subc: u8, mthd: u16, data: &[u32]) {
        for (i, d) in data.iter().enumerate() {
            self.mthd(subc, mthd + 4 * i as u16, *d);
        }
    }

    /// Writes `data` (at most 13 bits) inside the header itself.
    pub fn immd(&mut self, subc: u8, mthd: u16, data: u32) {
        debug_assert!(data <= MAX_COUNT);
        self.open = None;
        self.words
            .push(MethodHeader::new(HeaderKind::Immediate, subc, mthd, data).0);
        self.methods += 1;
    }

    /// Writes `data` to consecutive methods from `mthd` under a header of its own, as
    /// NVK's `P_MTHD` followed by its data words does.
    /// The words are those [`mthds`](Self::mthds) writes after a closed header (a header
    /// of at most [`MAX_COUNT`] words, then the next), the last header left open as it
    /// leaves it; written a header and a copy at a time.
    pub fn inc(&mut self, subc: u8, mthd: u16, data: &[u32]) {
        self.open = None;
        let mut next = mthd;
        for chunk in data.chunks(MAX_COUNT as usize) {
            let at = self.words.len();
            self.words.push(
                MethodHeader::new(HeaderKind::Incrementing, subc, next, chunk.len() as u32).0,
            );
            self.words.extend_from_slice(chunk);
            next = next.wrapping_add(4 * chunk.len() as u16);
            self.open = Some((at, subc, next));
        }
        self.methods += data.len();
    }

    /// Writes one value the way NVK's `P_IMMD` does: inside the header when it fits in
    /// 13 bits, else as a one-word method.
    pub fn immd_or_mthd(&mut self, subc: u8, mthd: u16, data: u32) {
        if data <= MAX_COUNT {
            self.immd(subc, mthd, data);
        } else {
            self.open = None;
            self.mthd(subc, mthd, data);
        }
    }

    /// Writes every word of `data` to the same method.
    pub fn non_inc(&mut self, subc: u8, mthd: u16, data: &[u32]) {
        self.open = None;
        for chunk in data.chunks(MAX_COUNT as usize) {
            self.words.push(
                MethodHeader::new(HeaderKind::NonIncrementing, subc, mthd, chunk.len() as u32).0,
            );
            self.words.extend_from_slice(chunk);
        }
        self.methods += data.len();
    }

    /// Writes `first` to `mthd` and `rest` to the method after it under one
    /// increment-once header, as [`inc_once`](Self::inc_once) does with `first` prepended.
    pub fn inc_once_with(&mut self, subc: u8, mthd: u16, first: u32, rest: &[u32]) {
        self.open = None;
        let take = rest.len().min(MAX_COUNT as usize - 1);
        self.words
            .push(MethodHeader::new(HeaderKind::IncrementOnce, subc, mthd, 1 + take as u32).0);
        self.words.push(first);
        self.words.extend_from_slice(&rest[..take]);
        self.methods += 1 + take;
        if take < rest.len() {
            self.non_inc(subc, mthd + 4, &rest[take..]);
        }
    }

    /// Writes the first word to `mthd` and the rest to the method after it, as a call of
    /// MME macro `j` does (`CALL_MME_MACRO(j)` then `CALL_MME_DATA(j)`).
    pub fn inc_once(&mut self, subc: u8, mthd: u16, data: &[u32]) {
        self.open = None;
        if data.is_empty() {
            return;
        }
        let (first, rest) = data.split_at(1);
        self.words.push(
            MethodHeader::new(
                HeaderKind::IncrementOnce,
                subc,
                mthd,
                (1 + rest.len().min(MAX_COUNT as usize - 1)) as u32,
            )
            .0,
        );
        self.words.push(first[0]);
        let mut rest = rest;
        let take = rest.len().min(MAX_COUNT as usize - 1);
        self.words.extend_from_slice(&rest[..take]);
        self.methods += 1 + take;
        rest = &rest[take..];
        if !rest.is_empty() {
            self.non_inc(subc, mthd + 4, rest);
        }
    }

    /// Empties the buffer, keeping its allocation.
    pub fn clear(&mut self) {
        self.words.clear();
        self.open = None;
        self.methods = 0;
    }

    /// Closes the open incrementing header: the next write starts a header of its own,
    /// as every NVK function that pushes starts its own (so what one state group pushes
    /// never continues another's header).
    pub fn close_header(&mut self) {
        self.open = None;
    }

    /// Appends words already encoded (another buffer's).
    pub fn extend(&mut self, words: &[u32]) {
        self.open = None;
        self.words.extend_from_slice(words);
        self.methods += method_count(words);
    }
}

/// One method write found in a push buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodWrite {
    /// The subchannel.
    pub subc: u8,
    /// The method (byte address).
    pub mthd: u16,
    /// The data.
    pub data: u32,
}

/// Why a push buffer could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A header announces more words than the buffer holds.
    #[error("header at dword {at} ({header:#010x}) announces {count} words, {left} remain")]
    Truncated {
        /// Where the header is.
        at: usize,
        /// The header.
        header: u32,
        /// Words it announces.
        count: u32,
        /// Words left.
        left: usize,
    },
    /// A header of a kind this model does not handle.
    #[error("header at dword {at} ({header:#010x}) has SEC_OP {sec_op}, which this model does not handle")]
    UnknownKind {
        /// Where the header is.
        at: usize,
        /// The header.
        header: u32,
        /// Its SEC_OP.
        sec_op: u32,
    },
}

/// One header of a push buffer and the data words it covers.
#[derive(Clone, Copy, Debug)]
pub struct MethodRun<'a> {
    /// The header.
    pub header: MethodHeader,
    /// Its kind.
    pub kind: HeaderKind,
    /// The words that follow it (none for an immediate header: its data is its count).
    pub data: &'a [u32],
}

impl MethodRun<'_> {
    /// How many method writes it makes.
    pub fn len(&self) -> usize {
        match self.kind {
            HeaderKind::Immediate => 1,
            _ => self.data.len(),
        }
    }

    /// Whether it makes none (a header with a count of 0).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its `i`-th method write: the method each kind of header sends that word to.
    pub fn write(&self, i: usize) -> Option<MethodWrite> {
        let header = self.header;
        let (mthd, data) = match self.kind {
            HeaderKind::Immediate if i == 0 => (header.mthd(), header.count()),
            HeaderKind::Immediate => return None,
            HeaderKind::Incrementing => (header.mthd() + 4 * i as u16, *self.data.get(i)?),
            HeaderKind::IncrementOnce if i > 0 => (header.mthd() + 4, *self.data.get(i)?),
            HeaderKind::IncrementOnce | HeaderKind::NonIncrementing => {
                (header.mthd(), *self.data.get(i)?)
            }
        };
        Some(MethodWrite {
            subc: header.subc(),
            mthd: mthd & 0x3ffc,
            data,
        })
    }

    /// Calls `f` with each of its method writes' method and data, in order ([`write`]'s
    /// rule, a loop per kind of header); stops at the first error `f` returns. The
    /// subchannel is the header's.
    ///
    /// [`write`]: MethodRun::write
    #[inline(always)]
    pub fn try_for_each_write<E>(
        &self,
        mut f: impl FnMut(u16, u32) -> Result<(), E>,
    ) -> Result<(), E> {
        // The header's method is at most 0x3ffc; incrementing past it wraps to 0.
        let mthd = self.header.mthd();
        match self.kind {
            HeaderKind::Immediate => f(mthd, self.header.count()),
            HeaderKind::Incrementing => self
                .data
                .iter()
                .enumerate()
                .try_for_each(|(i, &data)| f((mthd + 4 * i as u16) & 0x3ffc, data)),
            HeaderKind::NonIncrementing => self.data.iter().try_for_each(|&data| f(mthd, data)),
            HeaderKind::IncrementOnce => match self.data.split_first() {
                Some((&first, rest)) => {
                    f(mthd, first)?;
                    rest.iter()
                        .try_for_each(|&data| f((mthd + 4) & 0x3ffc, data))
                }
                None => Ok(()),
            },
        }
    }
}

/// Walks `words` header by header, in order; stops after the first bad header.
pub fn runs(words: &[u32]) -> impl Iterator<Item = Result<MethodRun<'_>, ParseError>> + '_ {
    let mut at = 0usize;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let header = MethodHeader(*words.get(at)?);
        let kind = match header.kind() {
            Ok(kind) => kind,
            Err(sec_op) => {
                failed = true;
                return Some(Err(ParseError::UnknownKind {
                    at,
                    header: header.0,
                    sec_op,
                }));
            }
        };
        let count = match kind {
            HeaderKind::Immediate => 0,
            _ => header.count() as usize,
        };
        let left = words.len() - at - 1;
        if count > left {
            failed = true;
            return Some(Err(ParseError::Truncated {
                at,
                header: header.0,
                count: header.count(),
                left,
            }));
        }
        let data = &words[at + 1..at + 1 + count];
        at += 1 + count;
        Some(Ok(MethodRun { header, kind, data }))
    })
}

/// How many method writes `words` makes: those [`parse`] yields before its first bad
/// header, counted a header at a time.
pub fn method_count(words: &[u32]) -> usize {
    runs(words).map_while(Result::ok).map(|run| run.len()).sum()
}

/// Walks `words` as method writes, in order.
pub fn parse(words: &[u32]) -> impl Iterator<Item = Result<MethodWrite, ParseError>> + '_ {
    let mut runs = runs(words);
    let mut current: Option<(MethodRun<'_>, usize)> = None;
    std::iter::from_fn(move || loop {
        if let Some((run, i)) = &mut current {
            if let Some(write) = run.write(*i) {
                *i += 1;
                return Some(Ok(write));
            }
            current = None;
        }
        match runs.next()? {
            Ok(run) => current = Some((run, 0)),
            Err(e) => return Some(Err(e)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class;
    use proptest::prelude::*;

    /// One of the writer's calls, with its arguments.
    #[derive(Clone, Debug)]
    enum Write {
        Mthd(u8, u16, u32),
        Mthds(u16, Vec<u32>),
        Immd(u16, u32),
        Inc(u16, Vec<u32>),
        ImmdOrMthd(u16, u32),
        NonInc(u16, Vec<u32>),
        IncOnceWith(u16, u32, Vec<u32>),
        IncOnce(u16, Vec<u32>),
        Close,
        Extend(Vec<Write>),
        Clear,
    }

    fn apply(p: &mut PushBuffer, w: &Write) {
        match w {
            Write::Mthd(subc, m, d) => p.mthd(*subc, *m, *d),
            Write::Mthds(m, d) => p.mthds(SUBC_3D, *m, d),
            Write::Immd(m, d) => p.immd(SUBC_3D, *m, *d),
            Write::Inc(m, d) => p.inc(SUBC_3D, *m, d),
            Write::ImmdOrMthd(m, d) => p.immd_or_mthd(SUBC_3D, *m, *d),
            Write::NonInc(m, d) => p.non_inc(SUBC_3D, *m, d),
            Write::IncOnceWith(m, first, rest) => p.inc_once_with(SUBC_3D, *m, *first, rest),
            Write::IncOnce(m, d) => p.inc_once(SUBC_3D, *m, d),
            Write::Close => p.close_header(),
            Write::Extend(writes) => {
                let mut other = PushBuffer::new();
                writes.iter().for_each(|w| apply(&mut other, w));
                p.extend(other.words());
            }
            Write::Clear => p.clear(),
        }
    }

    fn write() -> impl Strategy<Value = Write> {
        // Few methods, so that writes continue each other's headers.
        let mthd = (0u16..6).prop_map(|i| 0x200 + 4 * i);
        let short = proptest::collection::vec(any::<u32>(), 0..5);
        // Words to one or two methods may run past a header's count.
        let data = prop_oneof![
            4 => short.clone(),
            1 => proptest::collection::vec(any::<u32>(), 8190..8196),
        ];
        let leaf = prop_oneof![
            (0u8..2, mthd.clone(), any::<u32>()).prop_map(|(s, m, d)| Write::Mthd(s, m, d)),
            (mthd.clone(), short.clone()).prop_map(|(m, d)| Write::Mthds(m, d)),
            (mthd.clone(), 0..=MAX_COUNT).prop_map(|(m, d)| Write::Immd(m, d)),
            (mthd.clone(), short).prop_map(|(m, d)| Write::Inc(m, d)),
            (mthd.clone(), any::<u32>()).prop_map(|(m, d)| Write::ImmdOrMthd(m, d)),
            (mthd.clone(), data.clone()).prop_map(|(m, d)| Write::NonInc(m, d)),
            (mthd.clone(), any::<u32>(), data.clone())
                .prop_map(|(m, f, r)| Write::IncOnceWith(m, f, r)),
            (mthd, data).prop_map(|(m, d)| Write::IncOnce(m, d)),
            Just(Write::Close),
            Just(Write::Clear),
        ];
        leaf.prop_recursive(1, 16, 8, |inner| {
            proptest::collection::vec(inner, 0..8).prop_map(Write::Extend)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_writer_counts_the_method_writes_its_words_make(
            writes in proptest::collection::vec(write(), 0..24)
        ) {
            let mut p = PushBuffer::new();
            for (i, w) in writes.iter().enumerate() {
                // Every other write after a closed header: its words are whole headers
                // of their own, counted alone as a state group's flush counts them.
                let closed = i % 2 == 0;
                if closed {
                    p.close_header();
                }
                let before = p.mark();
                apply(&mut p, w);
                prop_assert_eq!(p.mark().methods, method_count(p.words()), "after {:?}", w);
                if closed && !matches!(w, Write::Clear) {
                    let mark = p.mark();
                    let since = &p.words()[before.dwords..];
                    prop_assert_eq!(mark.dwords - before.dwords, since.len());
                    prop_assert_eq!(mark.methods - before.methods, method_count(since));
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// `inc` writes a header and copies its words: the words, and how the writes
        /// after it continue its header, are those of closing the header and writing
        /// the words one method at a time.
        #[test]
        fn an_incrementing_run_writes_what_its_methods_one_by_one_write(
            before in proptest::collection::vec(write(), 0..6),
            mthd in (0u16..6).prop_map(|i| 0x200 + 4 * i),
            data in prop_oneof![
                4 => proptest::collection::vec(any::<u32>(), 0..12),
                // Runs as long as the class's methods go (a header holds more words
                // than there are methods).
                1 => proptest::collection::vec(any::<u32>(), 3900..3960),
            ],
            after in proptest::collection::vec(write(), 0..6),
        ) {
            let (mut run, mut one_by_one) = (PushBuffer::new(), PushBuffer::new());
            for w in &before {
                apply(&mut run, w);
                apply(&mut one_by_one, w);
            }
            run.inc(SUBC_3D, mthd, &data);
            one_by_one.close_header();
            one_by_one.mthds(SUBC_3D, mthd, &data);
            prop_assert_eq!(run.words(), one_by_one.words());
            prop_assert_eq!(run.mark(), one_by_one.mark());
            // The method after the run's last continues its header.
            let next = mthd + 4 * data.len() as u16;
            run.mthd(SUBC_3D, next, 7);
            one_by_one.mthd(SUBC_3D, next, 7);
            for w in &after {
                apply(&mut run, w);
                apply(&mut one_by_one, w);
            }
            prop_assert_eq!(run.words(), one_by_one.words());
            prop_assert_eq!(run.mark(), one_by_one.mark());
        }
    }

    #[test]
    fn the_method_count_is_the_writes_parse_yields_before_a_bad_header() {
        let mut p = PushBuffer::new();
        p.inc_once(SUBC_3D, class::call_mme_macro(2), &[1, 2, 3]);
        p.mthd(SUBC_3D, class::SET_RT_LAYER, 4);
        p.mthd(SUBC_3D, class::SET_RT_LAYER + 4, 5);
        let mut words = p.words().to_vec();
        words.push(MethodHeader::new(HeaderKind::Immediate, SUBC_3D, class::BEGIN, 7).0);
        let writes = |w: &[u32]| parse(w).filter(Result::is_ok).count();
        assert_eq!(method_count(&words), 6);
        assert_eq!(method_count(&words), writes(&words));
        // A header of an unknown kind, and one announcing more words than follow.
        for bad in [
            0xe000_0000,
            MethodHeader::new(HeaderKind::Incrementing, 0, 0, 9).0,
        ] {
            let mut broken = words.clone();
            broken.push(bad);
            broken.push(1);
            assert_eq!(method_count(&broken), 6);
            assert_eq!(method_count(&broken), writes(&broken));
        }
    }

    #[test]
    fn each_write_of_a_run_is_the_write_at_its_index() {
        // Every kind of header, two reaching the top of the method space (where the
        // addresses wrap), and one of no data.
        let mut p = PushBuffer::new();
        p.inc_once(SUBC_3D, class::call_mme_macro(2), &[1, 2, 3]);
        p.mthd(SUBC_3D, class::SET_RT_LAYER, 4);
        let mut words = p.words().to_vec();
        let mut push_run = |kind, subc, mthd, data: &[u32]| {
            words.push(MethodHeader::new(kind, subc, mthd, data.len() as u32).0);
            words.extend_from_slice(data);
        };
        push_run(HeaderKind::Incrementing, 2, 0x3ff4, &[5, 6, 7, 8]);
        push_run(HeaderKind::NonIncrementing, SUBC_3D, 0x0100, &[9, 10]);
        push_run(HeaderKind::IncrementOnce, SUBC_3D, 0x3ffc, &[11, 12]);
        push_run(HeaderKind::Incrementing, SUBC_3D, 0x0200, &[]);
        words.push(MethodHeader::new(HeaderKind::Immediate, SUBC_3D, class::BEGIN, 7).0);
        let mut runs_seen = 0;
        for run in runs(&words) {
            let run = run.unwrap();
            let mut each = Vec::new();
            run.try_for_each_write(|mthd, data| {
                each.push(MethodWrite {
                    subc: run.header.subc(),
                    mthd,
                    data,
                });
                Ok::<(), ()>(())
            })
            .unwrap();
            let indexed: Vec<_> = (0..run.len()).map_while(|i| run.write(i)).collect();
            assert_eq!(each, indexed, "{run:?}");
            assert_eq!(each.len(), run.len());
            runs_seen += 1;
        }
        assert_eq!(runs_seen, 7);
        // The first error stops the walk.
        let run = runs(&words).nth(2).unwrap().unwrap();
        let mut calls = 0;
        let stopped = run.try_for_each_write(|_, data| {
            calls += 1;
            if data == 6 {
                Err(data)
            } else {
                Ok(())
            }
        });
        assert_eq!((stopped, calls), (Err(6), 2));
    }

    #[test]
    fn a_macro_call_is_one_increment_once_header() {
        // nv-facts §1: ONE_INC CALL_MME_MACRO(2) with 6 data words on subchannel 0.
        let mut p = PushBuffer::new();
        p.inc_once(SUBC_3D, class::call_mme_macro(2), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(p.words()[0], 0xa006_0e04);
        let writes: Vec<_> = parse(p.words()).map(Result::unwrap).collect();
        assert_eq!(writes[0].mthd, 0x3810);
        assert!(writes[1..].iter().all(|w| w.mthd == 0x3814));
        assert_eq!(
            writes.iter().map(|w| w.data).collect::<Vec<_>>(),
            vec![1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn consecutive_methods_share_a_header_and_others_do_not() {
        let mut p = PushBuffer::new();
        p.mthd(SUBC_3D, class::SET_REPORT_SEMAPHORE_A, 1);
        p.mthd(SUBC_3D, class::SET_REPORT_SEMAPHORE_B, 2);
        p.mthd(SUBC_3D, class::SET_REPORT_SEMAPHORE_C, 3);
        p.mthd(SUBC_3D, class::SET_RT_LAYER, 4);
        p.immd(SUBC_3D, class::SET_RT_LAYER, 5);
        p.non_inc(1, class::LOAD_MME_INSTRUCTION_RAM, &[7, 8]);
        assert_eq!(p.len(), 4 + 2 + 1 + 3);
        assert_eq!(MethodHeader(p.words()[0]).count(), 3);
        let writes: Vec<_> = parse(p.words()).map(Result::unwrap).collect();
        let got: Vec<_> = writes.iter().map(|w| (w.subc, w.mthd, w.data)).collect();
        assert_eq!(
            got,
            vec![
                (0, 0x1b00, 1),
                (0, 0x1b04, 2),
                (0, 0x1b08, 3),
                (0, 0x15cc, 4),
                (0, 0x15cc, 5),
                (1, 0x0118, 7),
                (1, 0x0118, 8)
            ]
        );
    }

    #[test]
    fn headers_split_at_the_count_limit() {
        let mut p = PushBuffer::new();
        let data: Vec<u32> = (0..MAX_COUNT + 5).collect();
        p.non_inc(SUBC_3D, class::LOAD_MME_INSTRUCTION_RAM, &data);
        let writes: Vec<u32> = parse(p.words()).map(|w| w.unwrap().data).collect();
        assert_eq!(writes, data);
        assert_eq!(MethodHeader(p.words()[0]).count(), MAX_COUNT);
    }

    #[test]
    fn truncated_and_unknown_headers_are_errors() {
        let mut p = PushBuffer::new();
        p.mthds(SUBC_3D, 0x1000, &[1, 2, 3]);
        let words = &p.words()[..3];
        let last = parse(words).last().unwrap();
        assert!(matches!(
            last,
            Err(ParseError::Truncated {
                at: 0,
                count: 3,
                left: 2,
                ..
            })
        ));
        let bad = [0xe000_0000u32];
        assert!(matches!(
            parse(&bad).next(),
            Some(Err(ParseError::UnknownKind { sec_op: 7, .. }))
        ));
    }
}
