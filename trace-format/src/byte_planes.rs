//! Bytes stored as byte planes of 4-byte words: every word's first byte, then every
//! word's second byte, then the third, then the fourth; a tail of fewer than four bytes
//! follows as it is. The same bytes in another order, so a vector stored so takes the
//! same room.
//!
//! Memory a program writes through a mapping is mostly arrays of 4-byte values (vertex
//! positions and colours, uniforms, indices): neighbouring words share their high bytes
//! and differ in their low ones, which a byte-oriented compressor finds only when the
//! bytes of one significance lie together (the shuffle filter of HDF5 and Blosc). Where
//! the bytes are not words (text, packed structures, compressed textures) the planes
//! compress about as well or a little worse; [`worth_it`] guesses from a sample which
//! way a vector goes.

/// The bytes of a word.
const WORD: usize = 4;

/// Bytes [`worth_it`] looks at, from the start.
const SAMPLE: usize = 4096;

/// Vectors shorter than this stay as they are (too short for the planes to pay).
pub const MIN_LEN: usize = 64;

/// Appends `bytes` to `out` as byte planes.
pub fn split_into(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len());
    let start = out.len();
    // SAFETY: `out` has room for `bytes.len()` more bytes, every one of which
    // `split_to` writes.
    unsafe {
        split_to(bytes, out.as_mut_ptr().add(start));
        out.set_len(start + bytes.len());
    }
}

/// Writes `bytes` as byte planes at `out`, every one of `bytes.len()` bytes there (the
/// room may be uninitialised: nothing is read from it). For an encoder that lays a
/// record out in place, without a buffer of planes in between.
///
/// # Safety
/// `out` must be writable for `bytes.len()` bytes and not overlap `bytes`.
pub unsafe fn split_to(bytes: &[u8], out: *mut u8) {
    let words = bytes.len() / WORD;
    let planes = [0, 1, 2, 3].map(|i| out.add(i * words));
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: the CPU has SSSE3; the planes are `words` bytes each and `bytes`
        // holds `words` words.
        done = simd::split(bytes, planes, words);
    }
    for (w, word) in bytes.chunks_exact(WORD).enumerate().skip(done) {
        for (plane, &byte) in planes.iter().zip(word) {
            plane.add(w).write(byte);
        }
    }
    let tail = &bytes[words * WORD..];
    std::ptr::copy_nonoverlapping(tail.as_ptr(), out.add(words * WORD), tail.len());
}

/// Appends the bytes that byte `planes` hold to `out`.
pub fn join_into(planes: &[u8], out: &mut Vec<u8>) {
    out.reserve(planes.len());
    let start = out.len();
    // SAFETY: `out` has room for `planes.len()` more bytes, every one of which
    // `join_to` writes.
    unsafe {
        join_to(planes, out.as_mut_ptr().add(start));
        out.set_len(start + planes.len());
    }
}

/// Writes the bytes that byte `planes` hold at `out`, every one of `planes.len()`
/// bytes there.
///
/// # Safety
/// `out` must be writable for `planes.len()` bytes and not overlap `planes`.
pub unsafe fn join_to(planes: &[u8], out: *mut u8) {
    let words = planes.len() / WORD;
    let plane = |i: usize| &planes[i * words..(i + 1) * words];
    let (p0, p1, p2, p3) = (plane(0), plane(1), plane(2), plane(3));
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: the CPU has SSSE3; the planes are `words` bytes each and `out` has
        // room for `words` words.
        done = simd::join([p0, p1, p2, p3].map(<[u8]>::as_ptr), out, words);
    }
    for w in done..words {
        let word = [p0[w], p1[w], p2[w], p3[w]];
        std::ptr::copy_nonoverlapping(word.as_ptr(), out.add(w * WORD), WORD);
    }
    let tail = &planes[words * WORD..];
    std::ptr::copy_nonoverlapping(tail.as_ptr(), out.add(words * WORD), tail.len());
}

/// Sixteen words at a time with SSSE3: each 16-byte block's bytes gathered by
/// significance (a byte shuffle), then the four blocks' 4-byte groups transposed, so
/// each register holds one plane's sixteen bytes; joining is the same steps backwards.
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    /// Bytes 0, 4, 8, 12, then 1, 5, 9, 13, and so on: a block of four words with its
    /// bytes by significance, and back again (the shuffle is its own inverse).
    const BY_SIGNIFICANCE: [u8; 16] = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];

    /// Transposes four registers of four 32-bit lanes each.
    #[inline(always)]
    unsafe fn transpose(r: [__m128i; 4]) -> [__m128i; 4] {
        let t0 = _mm_unpacklo_epi32(r[0], r[1]);
        let t1 = _mm_unpacklo_epi32(r[2], r[3]);
        let t2 = _mm_unpackhi_epi32(r[0], r[1]);
        let t3 = _mm_unpackhi_epi32(r[2], r[3]);
        [
            _mm_unpacklo_epi64(t0, t1),
            _mm_unpackhi_epi64(t0, t1),
            _mm_unpacklo_epi64(t2, t3),
            _mm_unpackhi_epi64(t2, t3),
        ]
    }

    /// Splits the first `words` words of `bytes`, sixteen at a time, into the four
    /// planes; returns how many words it split.
    ///
    /// # Safety
    /// The CPU must have SSSE3; `bytes` must hold `words` words and each plane have
    /// room for `words` bytes.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn split(bytes: &[u8], planes: [*mut u8; 4], words: usize) -> usize {
        let order = _mm_loadu_si128(BY_SIGNIFICANCE.as_ptr().cast());
        let blocks = words / 16;
        let src = bytes.as_ptr();
        for block in 0..blocks {
            let at = src.add(64 * block);
            let gathered = [0, 1, 2, 3]
                .map(|i| _mm_shuffle_epi8(_mm_loadu_si128(at.add(16 * i).cast()), order));
            for (plane, register) in planes.iter().zip(transpose(gathered)) {
                _mm_storeu_si128(plane.add(16 * block).cast(), register);
            }
        }
        blocks * 16
    }

    /// Joins the first `words` bytes of the four planes, sixteen at a time, into
    /// words at `dst`; returns how many words it joined.
    ///
    /// # Safety
    /// The CPU must have SSSE3; each plane must hold `words` bytes and `dst` have
    /// room for `words` words.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn join(planes: [*const u8; 4], dst: *mut u8, words: usize) -> usize {
        let order = _mm_loadu_si128(BY_SIGNIFICANCE.as_ptr().cast());
        let blocks = words / 16;
        for block in 0..blocks {
            let loaded = planes.map(|plane| _mm_loadu_si128(plane.add(16 * block).cast()));
            for (i, register) in transpose(loaded).into_iter().enumerate() {
                let words = _mm_shuffle_epi8(register, order);
                _mm_storeu_si128(dst.add(64 * block + 16 * i).cast(), words);
            }
        }
        blocks * 16
    }
}

/// Whether `bytes` look like words that compress better as byte planes: in a sample
/// from their start, more bytes equal the byte a word before them than the byte just
/// before them.
pub fn worth_it(bytes: &[u8]) -> bool {
    if bytes.len() < MIN_LEN {
        return false;
    }
    let sample = &bytes[..bytes.len().min(SAMPLE)];
    let same_as = |distance: usize| {
        sample
            .iter()
            .zip(&sample[distance..])
            .filter(|(a, b)| a == b)
            .count()
    };
    same_as(WORD) > same_as(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_join_back_into_the_bytes_they_were_split_from() {
        for len in [0, 1, 3, 4, 5, 8, 63, 64, 1001] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 5) as u8).collect();
            let mut planes = vec![0xee];
            split_into(&bytes, &mut planes);
            assert_eq!(planes.len(), 1 + len, "len {len}");
            let mut back = vec![0xdd];
            join_into(&planes[1..], &mut back);
            assert_eq!(back[1..], bytes[..], "len {len}");
        }
    }

    #[test]
    fn planes_put_each_significance_together() {
        let bytes = [1, 2, 3, 4, 5, 6, 7, 8, 9];
        let mut planes = Vec::new();
        split_into(&bytes, &mut planes);
        assert_eq!(planes, [1, 5, 2, 6, 3, 7, 4, 8, 9]);
        // Long enough for sixteen words at a time, and a few more.
        let mut state = 0x9e37_79b9u32;
        let bytes: Vec<u8> = (0..4 * 71 + 2)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (state >> 24) as u8
            })
            .collect();
        let mut planes = Vec::new();
        split_into(&bytes, &mut planes);
        for (i, byte) in bytes[..4 * 71].iter().enumerate() {
            assert_eq!(planes[i % 4 * 71 + i / 4], *byte, "byte {i}");
        }
        assert_eq!(planes[4 * 71..], bytes[4 * 71..]);
    }

    #[test]
    fn words_are_worth_splitting_and_runs_of_bytes_are_not() {
        let words: Vec<u8> = (0u32..1024).flat_map(|i| (i ^ 7).to_le_bytes()).collect();
        assert!(worth_it(&words));
        // One-byte pixels in runs of three: alike byte by byte, not word by word.
        let runs: Vec<u8> = (0u32..3000).map(|i| (i / 3 * 37) as u8).collect();
        assert!(!worth_it(&runs));
        assert!(!worth_it(&[0; MIN_LEN - 1]));
    }
}
