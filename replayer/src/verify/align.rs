//! Lining NVK's draws up with the model's. Pairing by position breaks at the first
//! draw one side has and the other lacks (a meta draw, a draw the model skipped):
//! every later pair would differ. Draws are compared by a signature — the draw macro
//! and the parameters of its call, addresses left out — and the two sequences aligned
//! greedily: equal signatures pair; a changed draw whose next draws agree pairs as a
//! changed draw; otherwise the nearest resynchronisation within a window (a run of
//! agreeing signatures after it) decides which side's draws stand alone.

/// Draws looked ahead for a resynchronisation.
const WINDOW: usize = 64;
/// Signatures that must agree after a resynchronisation point (fewer at the end).
const CONFIRM: usize = 3;

/// One step of the alignment: a pair, or a draw of one side alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aligned {
    /// NVK's draw `.0` and the model's `.1`.
    Pair(usize, usize),
    /// A draw only NVK made.
    NvkOnly(usize),
    /// A draw only the model made.
    ModelOnly(usize),
}

/// Aligns two signature sequences.
pub fn align<T: PartialEq>(nvk: &[T], model: &[T]) -> Vec<Aligned> {
    let (n, m) = (nvk.len(), model.len());
    let agree = |i: usize, j: usize| {
        let run = CONFIRM.min(n - i).min(m - j);
        run > 0 && (0..run).all(|k| nvk[i + k] == model[j + k])
    };
    let mut out = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if nvk[i] == model[j] {
            out.push(Aligned::Pair(i, j));
            (i, j) = (i + 1, j + 1);
            continue;
        }
        // A changed draw: what follows agrees.
        if (i + 1 == n && j + 1 == m) || (i + 1 < n && j + 1 < m && agree(i + 1, j + 1)) {
            out.push(Aligned::Pair(i, j));
            (i, j) = (i + 1, j + 1);
            continue;
        }
        let skip = (1..=WINDOW).find_map(|k| {
            if i + k < n && agree(i + k, j) {
                Some((k, 0))
            } else if j + k < m && agree(i, j + k) {
                Some((0, k))
            } else {
                None
            }
        });
        match skip {
            Some((k, 0)) => {
                out.extend((i..i + k).map(Aligned::NvkOnly));
                i += k;
            }
            Some((0, k)) => {
                out.extend((j..j + k).map(Aligned::ModelOnly));
                j += k;
            }
            _ => {
                out.push(Aligned::Pair(i, j));
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    out.extend((i..n).map(Aligned::NvkOnly));
    out.extend((j..m).map(Aligned::ModelOnly));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extra_draw_on_one_side_stands_alone_and_the_rest_pair() {
        let nvk = [1, 2, 3, 9, 4, 5, 6, 7];
        let model = [1, 2, 3, 4, 5, 6, 7];
        let a = align(&nvk, &model);
        assert!(a.contains(&Aligned::NvkOnly(3)));
        assert!(a.contains(&Aligned::Pair(7, 6)));
        assert_eq!(
            a.iter().filter(|s| matches!(s, Aligned::Pair(..))).count(),
            7
        );
        let b = align(&model, &nvk);
        assert!(b.contains(&Aligned::ModelOnly(3)));
    }

    #[test]
    fn a_changed_draw_pairs_and_equal_sequences_pair_in_order() {
        let a = align(&[1, 2, 3, 4], &[1, 8, 3, 4]);
        assert_eq!(
            a,
            vec![
                Aligned::Pair(0, 0),
                Aligned::Pair(1, 1),
                Aligned::Pair(2, 2),
                Aligned::Pair(3, 3)
            ]
        );
        assert_eq!(align::<u8>(&[], &[1]), vec![Aligned::ModelOnly(0)]);
    }

    #[test]
    fn repeated_draws_with_one_missing_pair_the_rest() {
        let nvk = [5; 10];
        let model = [5; 9];
        let a = align(&nvk, &model);
        assert_eq!(
            a.iter().filter(|s| matches!(s, Aligned::Pair(..))).count(),
            9
        );
        assert_eq!(a.last(), Some(&Aligned::NvkOnly(9)));
    }
}
