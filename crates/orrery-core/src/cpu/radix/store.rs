//! The two layouts a sort's pairs live in, behind one small trait.
//!
//! - [`Split`]: the caller's arrays, `keys: &mut [u64]` and `values: &mut [u32]` (12
//!   bytes per pair in two streams);
//! - [`Packed`]: the sort's scratch, one array of [`Pair`] (12 bytes per pair in one
//!   stream: `repr(C, packed(4))`, so no 4 bytes of padding are read and written in
//!   every pass, which 16-byte pairs would cost).
//!
//! Every counting pass moves the pairs from one layout to the other, so the sort needs
//! one scratch array of `n` pairs and no copy in or out: the first pass reads the
//! caller's arrays, the last writes them.
//!
//! The sequential passes use safe indexing. The parallel scatter (many chunks writing
//! one destination at positions that only the offsets computation proves disjoint)
//! writes through a [`Store::Raw`] handle, whose one `unsafe` method states that
//! contract.

use std::marker::PhantomData;

use bytemuck::{Pod, Zeroable};

/// One `(key, value)` pair of the packed scratch: 12 bytes, 4-byte aligned (the key is
/// read with an unaligned load, which costs nothing extra on x86-64 and AArch64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Zeroable, Pod)]
#[repr(C, packed(4))]
pub(super) struct Pair {
    key: u64,
    value: u32,
}

/// A sort's scratch array, which its owner may keep between sorts: a sort no larger
/// than one before it then takes no page faults (fresh pages cost a fault and the
/// kernel's zeroing each, 4 KiB at a time).
#[derive(Default)]
pub(crate) struct Scratch(Vec<Pair>);

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scratch({} pairs)", self.0.len())
    }
}

impl Scratch {
    /// Room for `n` pairs, grown (to exactly `n`) when smaller. A new array is zeroed
    /// by the allocator, which takes fresh pages from the OS without writing them.
    pub(super) fn pairs(&mut self, n: usize) -> &mut [Pair] {
        if self.0.len() < n {
            // Free the old array first: the two need not exist at once.
            self.0 = Vec::new();
            self.0 = bytemuck::zeroed_vec(n);
        }
        &mut self.0[..n]
    }

    /// Grows the scratch to `n` pairs and writes every page of it, in parallel in the
    /// current rayon pool, so that sorts of up to `n` pairs take no page fault.
    pub(crate) fn reserve(&mut self, n: usize) {
        use rayon::prelude::*;
        if self.0.len() < n {
            self.pairs(n).par_chunks_mut(1 << 16).for_each(|c| c.fill(Pair::default()));
        }
    }
}

/// A contiguous run of pairs in one layout: what a counting pass reads or writes.
///
/// A store is a unique borrow; [`Store::split_at`] divides it into two disjoint stores,
/// which is how buckets are handed to different threads.
pub(super) trait Store: Sized + Send + Sync {
    /// The unchecked writer of a parallel scatter, borrowing the store.
    type Raw<'b>: RawStore
    where
        Self: 'b;

    /// Number of pairs.
    fn len(&self) -> usize;

    /// The key of pair `i`.
    fn key(&self, i: usize) -> u64;

    /// Pair `i` as `(key, value)`.
    fn get(&self, i: usize) -> (u64, u32);

    /// Overwrites pair `i`.
    fn set(&mut self, i: usize, pair: (u64, u32));

    /// The first `mid` pairs and the rest.
    fn split_at(self, mid: usize) -> (Self, Self);

    /// A writer for [`RawStore::put`], valid while it borrows `self`.
    fn raw(&mut self) -> Self::Raw<'_>;

    /// Copies all pairs of `src` (of the same length) into `self`.
    fn copy_from<S: Store>(&mut self, src: &S) {
        debug_assert_eq!(self.len(), src.len());
        for i in 0..src.len() {
            self.set(i, src.get(i));
        }
    }

    /// Splits `self` into consecutive stores of the given lengths (which sum to
    /// `self.len()`).
    fn pieces(self, lens: impl IntoIterator<Item = usize>) -> Vec<Self> {
        let mut rest = self;
        let mut out = Vec::new();
        for len in lens {
            let (head, tail) = rest.split_at(len);
            out.push(head);
            rest = tail;
        }
        debug_assert_eq!(rest.len(), 0);
        out
    }
}

/// Writes pairs of a store from several threads at once.
pub(super) trait RawStore: Copy + Send + Sync {
    /// Writes pair `i`.
    ///
    /// # Safety
    /// `i` is less than the store's length, and while the handle lives no other thread
    /// writes or reads position `i` (each position is written by one thread at most).
    unsafe fn put(self, i: usize, pair: (u64, u32));
}

/// The caller's layout: keys and values in two arrays of the same length.
pub(super) struct Split<'a> {
    keys: &'a mut [u64],
    values: &'a mut [u32],
}

impl<'a> Split<'a> {
    /// The pairs `(keys[i], values[i])` (the lengths are equal, checked by the caller).
    pub(super) fn new(keys: &'a mut [u64], values: &'a mut [u32]) -> Self {
        assert_eq!(keys.len(), values.len(), "sort_pairs: keys and values differ in length");
        Self { keys, values }
    }
}

/// Unchecked writer of a [`Split`].
#[derive(Clone, Copy)]
pub(super) struct SplitRaw<'b> {
    keys: *mut u64,
    values: *mut u32,
    _borrow: PhantomData<&'b mut ()>,
}

// SAFETY: the pointers come from a unique borrow held for `'b`; `put`'s contract makes
// concurrent writes go to distinct positions, so sharing the handle is race-free.
unsafe impl Send for SplitRaw<'_> {}
// SAFETY: as above.
unsafe impl Sync for SplitRaw<'_> {}

impl RawStore for SplitRaw<'_> {
    #[inline]
    unsafe fn put(self, i: usize, (key, value): (u64, u32)) {
        // SAFETY: `i` is in bounds of both arrays (same length) and no other thread
        // touches position `i` (the caller's contract).
        unsafe {
            self.keys.add(i).write(key);
            self.values.add(i).write(value);
        }
    }
}

impl Store for Split<'_> {
    type Raw<'b>
        = SplitRaw<'b>
    where
        Self: 'b;

    #[inline]
    fn len(&self) -> usize {
        self.keys.len()
    }

    #[inline]
    fn key(&self, i: usize) -> u64 {
        self.keys[i]
    }

    #[inline]
    fn get(&self, i: usize) -> (u64, u32) {
        (self.keys[i], self.values[i])
    }

    #[inline]
    fn set(&mut self, i: usize, (key, value): (u64, u32)) {
        self.keys[i] = key;
        self.values[i] = value;
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let (ka, kb) = self.keys.split_at_mut(mid);
        let (va, vb) = self.values.split_at_mut(mid);
        (Split { keys: ka, values: va }, Split { keys: kb, values: vb })
    }

    fn raw(&mut self) -> SplitRaw<'_> {
        SplitRaw { keys: self.keys.as_mut_ptr(), values: self.values.as_mut_ptr(), _borrow: PhantomData }
    }

    fn copy_from<S: Store>(&mut self, src: &S) {
        for (i, (k, v)) in self.keys.iter_mut().zip(self.values.iter_mut()).enumerate() {
            (*k, *v) = src.get(i);
        }
    }
}

/// The scratch layout: one array of [`Pair`].
pub(super) struct Packed<'a>(pub(super) &'a mut [Pair]);

/// Unchecked writer of a [`Packed`].
#[derive(Clone, Copy)]
pub(super) struct PackedRaw<'b> {
    pairs: *mut Pair,
    _borrow: PhantomData<&'b mut ()>,
}

// SAFETY: as for `SplitRaw`.
unsafe impl Send for PackedRaw<'_> {}
// SAFETY: as for `SplitRaw`.
unsafe impl Sync for PackedRaw<'_> {}

impl RawStore for PackedRaw<'_> {
    #[inline]
    unsafe fn put(self, i: usize, (key, value): (u64, u32)) {
        // SAFETY: `i` is in bounds and no other thread touches position `i` (the
        // caller's contract); `Pair` has alignment 4, which the array's pointer has.
        unsafe { self.pairs.add(i).write(Pair { key, value }) };
    }
}

impl Store for Packed<'_> {
    type Raw<'b>
        = PackedRaw<'b>
    where
        Self: 'b;

    #[inline]
    fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    fn key(&self, i: usize) -> u64 {
        self.0[i].key
    }

    #[inline]
    fn get(&self, i: usize) -> (u64, u32) {
        let p = self.0[i];
        (p.key, p.value)
    }

    #[inline]
    fn set(&mut self, i: usize, (key, value): (u64, u32)) {
        self.0[i] = Pair { key, value };
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let (a, b) = self.0.split_at_mut(mid);
        (Packed(a), Packed(b))
    }

    fn raw(&mut self) -> PackedRaw<'_> {
        PackedRaw { pairs: self.0.as_mut_ptr(), _borrow: PhantomData }
    }

    fn copy_from<S: Store>(&mut self, src: &S) {
        for (i, p) in self.0.iter_mut().enumerate() {
            let (key, value) = src.get(i);
            *p = Pair { key, value };
        }
    }
}
