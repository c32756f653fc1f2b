//! The top-k engine every search shares: a block's top-k by replace-worst insertion, and
//! the merge of sorted block lists.
//!
//! A block (a query tile against a range of database rows, or a query against one list)
//! keeps at most `k` candidates in an unsorted array and the index of the worst one. A
//! candidate enters when the block is not full, or when it is better than the worst by
//! `(key, row)`, replacing it; the new worst is found by one scan of the `k` entries
//! (`O(k)`, but only on a replacement, which becomes rare once the top-k has settled).
//! At the end the block sorts its entries. The merge reads the sorted lists of all blocks
//! of a query and keeps the `k` best, again by `(key, row)`.

use super::NO_ROW;

/// A scored row: smaller `key` is better, equal keys go to the lower `row`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// The ranking key (squared distance, or negated inner product).
    pub key: f64,
    /// The row.
    pub row: u32,
}

impl Candidate {
    /// No candidate: worse than every real one.
    pub const NONE: Candidate = Candidate { key: f64::INFINITY, row: NO_ROW };

    /// Whether `self` ranks before `other`.
    #[inline]
    pub fn better(self, other: Candidate) -> bool {
        self.key < other.key || (self.key == other.key && self.row < other.row)
    }
}

/// A block's top-k (see the module docs).
#[derive(Debug, Clone)]
pub struct TopK {
    k: usize,
    items: Vec<Candidate>,
    worst: usize,
}

impl TopK {
    /// An empty top-`k` (a top-0 keeps nothing).
    pub fn new(k: usize) -> Self {
        Self { k, items: Vec::with_capacity(k), worst: 0 }
    }

    /// Offers a candidate.
    #[inline]
    pub fn push(&mut self, c: Candidate) {
        if self.k == 0 {
            return;
        }
        if self.items.len() < self.k {
            self.items.push(c);
            if self.items.len() == self.k {
                self.find_worst();
            }
        } else if c.better(self.items[self.worst]) {
            self.items[self.worst] = c;
            self.find_worst();
        }
    }

    fn find_worst(&mut self) {
        let mut w = 0;
        for (i, c) in self.items.iter().enumerate().skip(1) {
            if self.items[w].better(*c) {
                w = i;
            }
        }
        self.worst = w;
    }

    /// The entries, best first, padded with [`Candidate::NONE`] to `k`.
    pub fn into_sorted(mut self) -> Vec<Candidate> {
        self.items.sort_unstable_by(|a, b| a.key.total_cmp(&b.key).then(a.row.cmp(&b.row)));
        self.items.resize(self.k, Candidate::NONE);
        self.items
    }
}

/// The `k` best of several lists, each sorted best first (entries of [`NO_ROW`] end a
/// list); rows must be distinct across lists. Padded with [`Candidate::NONE`] to `k`.
pub fn merge_sorted(lists: &[&[Candidate]], k: usize) -> Vec<Candidate> {
    let mut heads = vec![0usize; lists.len()];
    let mut out = Vec::with_capacity(k);
    while out.len() < k {
        let mut best: Option<(usize, Candidate)> = None;
        for (l, list) in lists.iter().enumerate() {
            if let Some(&c) = list.get(heads[l])
                && c.row != NO_ROW
                && best.is_none_or(|(_, b)| c.better(b))
            {
                best = Some((l, c));
            }
        }
        let Some((l, c)) = best else { break };
        heads[l] += 1;
        out.push(c);
    }
    out.resize(k, Candidate::NONE);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_worst_keeps_the_k_best_with_ties_by_row() {
        let mut t = TopK::new(3);
        for (key, row) in [(5.0, 0), (1.0, 1), (5.0, 2), (3.0, 3), (1.0, 4), (5.0, 5), (0.5, 6)] {
            t.push(Candidate { key, row });
        }
        let rows: Vec<u32> = t.into_sorted().iter().map(|c| c.row).collect();
        assert_eq!(rows, [6, 1, 4]);
        let mut t = TopK::new(4);
        t.push(Candidate { key: 2.0, row: 9 });
        assert_eq!(t.into_sorted()[1], Candidate::NONE);
    }

    #[test]
    fn merge_takes_the_best_heads() {
        let a = [Candidate { key: 1.0, row: 5 }, Candidate { key: 2.0, row: 1 }, Candidate::NONE];
        let b = [Candidate { key: 1.0, row: 3 }, Candidate { key: 4.0, row: 0 }, Candidate::NONE];
        let m = merge_sorted(&[&a, &b], 5);
        let rows: Vec<u32> = m.iter().map(|c| c.row).collect();
        assert_eq!(rows, [3, 5, 1, 0, NO_ROW]);
    }
}
