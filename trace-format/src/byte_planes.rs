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
    let words = bytes.len() / WORD;
    let start = out.len();
    out.resize(start + bytes.len(), 0);
    let (planes, tail) = out[start..].split_at_mut(words * WORD);
    let (p0, rest) = planes.split_at_mut(words);
    let (p1, rest) = rest.split_at_mut(words);
    let (p2, p3) = rest.split_at_mut(words);
    let planes = p0.iter_mut().zip(p1).zip(p2.iter_mut().zip(p3));
    for (word, ((b0, b1), (b2, b3))) in bytes.chunks_exact(WORD).zip(planes) {
        (*b0, *b1, *b2, *b3) = (word[0], word[1], word[2], word[3]);
    }
    tail.copy_from_slice(&bytes[words * WORD..]);
}

/// Appends the bytes that `planes` (byte planes, as [`split_into`] makes them) hold, in
/// their own order, to `out`.
pub fn join_into(planes: &[u8], out: &mut Vec<u8>) {
    let words = planes.len() / WORD;
    let (p0, rest) = planes.split_at(words);
    let (p1, rest) = rest.split_at(words);
    let (p2, rest) = rest.split_at(words);
    let (p3, tail) = rest.split_at(words);
    let start = out.len();
    out.resize(start + planes.len(), 0);
    let (joined, joined_tail) = out[start..].split_at_mut(words * WORD);
    let planes = p0.iter().zip(p1).zip(p2.iter().zip(p3));
    for (word, ((b0, b1), (b2, b3))) in joined.chunks_exact_mut(WORD).zip(planes) {
        word.copy_from_slice(&[*b0, *b1, *b2, *b3]);
    }
    joined_tail.copy_from_slice(tail);
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
