//! Lining two method lists up: the longest common subsequence, after the common prefix
//! and suffix are taken off, then each run of differences paired method by method.

use super::segment::Method;

/// One step of a lined-up pair of lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// NVK's method `.0` equals the model's `.1`.
    Same(usize, usize),
    /// The same method on both sides with different data.
    Data(usize, usize),
    /// A method only NVK pushed.
    NvkOnly(usize),
    /// A method only the model pushed.
    ModelOnly(usize),
}

/// The longest middle lined up by dynamic programming; past this many cells the
/// middle is taken as different whole (each side's methods paired by method where
/// they can be).
const MAX_CELLS: usize = 1 << 24;

/// Lines `nvk` up against `model`.
pub fn diff(nvk: &[Method], model: &[Method]) -> Vec<Step> {
    let prefix = nvk.iter().zip(model).take_while(|(a, b)| a == b).count();
    let suffix = nvk[prefix..]
        .iter()
        .rev()
        .zip(model[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut steps: Vec<Step> = (0..prefix).map(|i| Step::Same(i, i)).collect();
    let (a, b) = (
        &nvk[prefix..nvk.len() - suffix],
        &model[prefix..model.len() - suffix],
    );
    let middle = if a.len().saturating_mul(b.len()) > MAX_CELLS {
        lined_up_by_method(a, b)
    } else {
        whole_or_lcs(a, b)
    };
    steps.extend(pair_runs(a, b, middle).into_iter().map(|s| match s {
        Step::Same(i, j) => Step::Same(i + prefix, j + prefix),
        Step::Data(i, j) => Step::Data(i + prefix, j + prefix),
        Step::NvkOnly(i) => Step::NvkOnly(i + prefix),
        Step::ModelOnly(j) => Step::ModelOnly(j + prefix),
    }));
    let (n0, m0) = (nvk.len() - suffix, model.len() - suffix);
    steps.extend((0..suffix).map(|k| Step::Same(n0 + k, m0 + k)));
    steps
}

/// The longest common subsequence of `a` and `b`, or, past [`MAX_CELLS`] or with a
/// side empty, the two sides different whole.
fn whole_or_lcs(a: &[Method], b: &[Method]) -> Vec<Step> {
    if a.is_empty() || b.is_empty() || a.len().saturating_mul(b.len()) > MAX_CELLS {
        let mut raw: Vec<Step> = (0..a.len()).map(Step::NvkOnly).collect();
        raw.extend((0..b.len()).map(Step::ModelOnly));
        raw
    } else {
        lcs(a, b)
    }
}

/// A middle too long for the table (a segment of thousands of transfers whose
/// addresses differ throughout): the methods both sides push in the same order at
/// its start and end are lined up one to one (`Same` where the data agree, else
/// `Data`), and only what lies between goes through [`whole_or_lcs`].
fn lined_up_by_method(a: &[Method], b: &[Method]) -> Vec<Step> {
    let key = |m: &Method| (m.subc, m.mthd);
    let head = a
        .iter()
        .zip(b)
        .take_while(|(x, y)| key(x) == key(y))
        .count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| key(x) == key(y))
        .count();
    let pair = |i: usize, j: usize| {
        if a[i] == b[j] {
            Step::Same(i, j)
        } else {
            Step::Data(i, j)
        }
    };
    let (a_end, b_end) = (a.len() - tail, b.len() - tail);
    let mut steps: Vec<Step> = (0..head).map(|k| pair(k, k)).collect();
    steps.extend(
        whole_or_lcs(&a[head..a_end], &b[head..b_end])
            .into_iter()
            .map(|s| match s {
                Step::Same(i, j) => Step::Same(i + head, j + head),
                Step::Data(i, j) => Step::Data(i + head, j + head),
                Step::NvkOnly(i) => Step::NvkOnly(i + head),
                Step::ModelOnly(j) => Step::ModelOnly(j + head),
            }),
    );
    steps.extend((0..tail).map(|k| pair(a_end + k, b_end + k)));
    steps
}

/// The longest common subsequence of `a` and `b` as steps. Where two writes of the
/// same method differ and pairing them loses no common method (the rest still has a
/// subsequence as long), they pair as one method whose data differ: of the equally
/// long subsequences, the one that keeps a macro's parameters and a method's words in
/// their places (an address word that happens to equal a later parameter of the
/// other side does not pull the lists apart).
fn lcs(a: &[Method], b: &[Method]) -> Vec<Step> {
    let (n, m) = (a.len(), b.len());
    // table[i][j]: the LCS length of a[i..] and b[j..].
    let mut table = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[at(i, j)] = if a[i] == b[j] {
                table[at(i + 1, j + 1)] + 1
            } else {
                table[at(i + 1, j)].max(table[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut steps = Vec::with_capacity(n.max(m));
    while i < n && j < m {
        if a[i] == b[j] {
            steps.push(Step::Same(i, j));
            i += 1;
            j += 1;
        } else if (a[i].subc, a[i].mthd) == (b[j].subc, b[j].mthd)
            && table[at(i + 1, j + 1)] == table[at(i, j)]
        {
            steps.push(Step::Data(i, j));
            i += 1;
            j += 1;
        } else if table[at(i + 1, j)] >= table[at(i, j + 1)] {
            steps.push(Step::NvkOnly(i));
            i += 1;
        } else {
            steps.push(Step::ModelOnly(j));
            j += 1;
        }
    }
    steps.extend((i..n).map(Step::NvkOnly));
    steps.extend((j..m).map(Step::ModelOnly));
    steps
}

/// Within each run of steps between two `Same`s, pairs an NVK method with the model's
/// first unpaired write of the same method: that is one method whose data differs.
fn pair_runs(a: &[Method], b: &[Method], steps: Vec<Step>) -> Vec<Step> {
    let mut out = Vec::with_capacity(steps.len());
    let mut run: Vec<Step> = Vec::new();
    let flush = |run: &mut Vec<Step>, out: &mut Vec<Step>| {
        let mut model: Vec<Option<usize>> = run
            .iter()
            .map(|s| match s {
                Step::ModelOnly(j) => Some(*j),
                _ => None,
            })
            .collect();
        let mut paired = Vec::new();
        for s in run.iter() {
            if let Step::NvkOnly(i) = s {
                let found = model.iter_mut().find(|j| {
                    j.is_some_and(|j| b[j].subc == a[*i].subc && b[j].mthd == a[*i].mthd)
                });
                match found.and_then(Option::take) {
                    Some(j) => paired.push(Step::Data(*i, j)),
                    None => paired.push(Step::NvkOnly(*i)),
                }
            }
        }
        out.extend(paired);
        out.extend(model.into_iter().flatten().map(Step::ModelOnly));
        run.clear();
    };
    for s in steps {
        match s {
            Step::Same(..) | Step::Data(..) => {
                flush(&mut run, &mut out);
                out.push(s);
            }
            _ => run.push(s),
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(mthd: u16, data: u32) -> Method {
        Method {
            subc: 0,
            mthd,
            data,
        }
    }

    #[test]
    fn lines_up_inserted_missing_and_changed_methods() {
        let nvk = [m(1, 0), m(2, 5), m(3, 0), m(4, 0), m(6, 0)];
        let model = [m(1, 0), m(2, 7), m(4, 0), m(5, 0), m(6, 0)];
        let steps = diff(&nvk, &model);
        assert!(steps.contains(&Step::Same(0, 0)));
        assert!(steps.contains(&Step::Data(1, 1)));
        assert!(steps.contains(&Step::NvkOnly(2)));
        assert!(steps.contains(&Step::Same(3, 2)));
        assert!(steps.contains(&Step::ModelOnly(3)));
        assert!(steps.contains(&Step::Same(4, 4)));
        // Every method of both sides appears once.
        let nvk_seen = steps
            .iter()
            .filter(|s| !matches!(s, Step::ModelOnly(_)))
            .count();
        let model_seen = steps
            .iter()
            .filter(|s| !matches!(s, Step::NvkOnly(_)))
            .count();
        assert_eq!((nvk_seen, model_seen), (5, 5));
    }

    #[test]
    fn long_lists_differing_only_in_data_line_up_method_by_method() {
        // 5,000 methods a side, every tenth with other data: past the table's size.
        let nvk: Vec<Method> = (0..5000).map(|i| m((i % 7) as u16, 0)).collect();
        let model: Vec<Method> = (0..5000)
            .map(|i| m((i % 7) as u16, u32::from(i % 10 == 0)))
            .collect();
        let steps = diff(&nvk, &model);
        assert_eq!(steps.len(), 5000);
        let data = steps.iter().filter(|s| matches!(s, Step::Data(..))).count();
        assert_eq!(data, 500);
        assert!(steps
            .iter()
            .all(|s| !matches!(s, Step::NvkOnly(_) | Step::ModelOnly(_))));
    }

    /// A macro's parameters where the model's address words differ from NVK's and
    /// one of NVK's equals a later parameter (bind_vb: slot, address high and low,
    /// size): each parameter pairs with its own, not the equal value further on.
    #[test]
    fn differing_words_stay_in_place_when_a_value_repeats_further_on() {
        let nvk = [
            m(0x4c, 0),
            m(0x4c, 0x3f),
            m(0x4c, 0xfc67_0740),
            m(0x4c, 0x10),
        ];
        let model = [m(0x4c, 0), m(0x4c, 0x10), m(0x4c, 0x89_0740), m(0x4c, 0x10)];
        assert_eq!(
            diff(&nvk, &model),
            vec![
                Step::Same(0, 0),
                Step::Data(1, 1),
                Step::Data(2, 2),
                Step::Same(3, 3)
            ]
        );
    }

    #[test]
    fn equal_lists_are_all_same() {
        let a = [m(1, 1), m(2, 2)];
        assert_eq!(diff(&a, &a), vec![Step::Same(0, 0), Step::Same(1, 1)]);
    }
}
