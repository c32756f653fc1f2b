//! Views: a range of a device buffer, accepted wherever a primitive or a launch takes a
//! buffer.
//!
//! A [`View`] borrows a buffer and names the elements `offset..offset + len`; a
//! [`ViewMut`] does the same for writing. Every primitive of [`crate::Executor`] and
//! every kernel launch takes `impl Into<View<..>>` / `impl Into<ViewMut<..>>`, so a
//! whole buffer is passed as `&buf` / `&mut buf` and a sub-range as
//! `buf.slice(a..b)?` / `buf.slice_mut(a..b)?`:
//!
//! ```
//! use orrery_core::{CpuExecutor, Executor, Slice};
//! let exec = CpuExecutor::new();
//! let counts = exec.upload(&[9u32, 1, 2, 3, 9])?;
//! let mut offsets = exec.alloc::<u32>(4)?;
//! exec.exclusive_scan(counts.slice(1..4)?, &mut offsets)?; // scans [1, 2, 3]
//! assert_eq!(exec.download(&offsets)?, [0, 1, 3, 6]);
//! # Ok::<(), orrery_core::Error>(())
//! ```
//!
//! Offsets inside a primitive's other arguments (a scan's output, a segmented
//! primitive's CSR offsets) are relative to the view they index: element `i` of a view is
//! element `offset + i` of its buffer. On wgpu, where storage bindings must start at
//! aligned byte offsets, the executor binds the aligned start below the view and passes
//! the remainder to the kernel as an element offset (see [`crate::gpu`]).

use std::marker::PhantomData;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::executor::DeviceBuffer;

/// The elements `offset..offset + len` of a buffer, for reading.
pub struct View<'a, T, B: ?Sized> {
    buffer: &'a B,
    offset: usize,
    len: usize,
    _element: PhantomData<fn() -> T>,
}

/// The elements `offset..offset + len` of a buffer, for writing (and reading).
pub struct ViewMut<'a, T, B: ?Sized> {
    buffer: &'a mut B,
    offset: usize,
    len: usize,
    _element: PhantomData<fn() -> T>,
}

impl<T, B: ?Sized> Clone for View<'_, T, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, B: ?Sized> Copy for View<'_, T, B> {}

impl<T, B: ?Sized> std::fmt::Debug for View<'_, T, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View").field("offset", &self.offset).field("len", &self.len).finish_non_exhaustive()
    }
}

impl<T, B: ?Sized> std::fmt::Debug for ViewMut<'_, T, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewMut").field("offset", &self.offset).field("len", &self.len).finish_non_exhaustive()
    }
}

/// `range` relative to a view of `len` elements, as absolute bounds after `offset`.
fn sub_range(len: usize, offset: usize, range: &Range<usize>) -> Result<(usize, usize)> {
    if range.start > range.end || range.end > len {
        return Err(Error::InvalidArgument {
            what: "view range",
            reason: format!("{}..{} is not within a view of {len} element(s)", range.start, range.end),
        });
    }
    Ok((offset + range.start, range.end - range.start))
}

impl<'a, T, B: DeviceBuffer<T> + ?Sized> View<'a, T, B> {
    /// The whole buffer.
    pub fn of(buffer: &'a B) -> Self {
        Self { len: buffer.len(), buffer, offset: 0, _element: PhantomData }
    }
}

impl<'a, T, B: ?Sized> View<'a, T, B> {
    /// The buffer the view borrows.
    pub fn buffer(&self) -> &'a B {
        self.buffer
    }

    /// Index of the view's first element in its buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The view's elements as a range of its buffer.
    pub fn range(&self) -> Range<usize> {
        self.offset..self.offset + self.len
    }

    /// A sub-range of this view (`range` relative to the view).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `range` is reversed or exceeds the view.
    pub fn slice(&self, range: Range<usize>) -> Result<Self> {
        let (offset, len) = sub_range(self.len, self.offset, &range)?;
        Ok(Self { buffer: self.buffer, offset, len, _element: PhantomData })
    }
}

impl<'a, T, B: DeviceBuffer<T> + ?Sized> ViewMut<'a, T, B> {
    /// The whole buffer.
    pub fn of(buffer: &'a mut B) -> Self {
        Self { len: buffer.len(), buffer, offset: 0, _element: PhantomData }
    }
}

impl<'a, T, B: ?Sized> ViewMut<'a, T, B> {
    /// The buffer the view borrows.
    pub fn buffer(&self) -> &B {
        self.buffer
    }

    /// The buffer, mutably (backends write through it).
    pub fn buffer_mut(&mut self) -> &mut B {
        self.buffer
    }

    /// Index of the view's first element in its buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The view's elements as a range of its buffer.
    pub fn range(&self) -> Range<usize> {
        self.offset..self.offset + self.len
    }

    /// The same elements for reading, borrowed from this view.
    pub fn as_view(&self) -> View<'_, T, B> {
        View { buffer: self.buffer, offset: self.offset, len: self.len, _element: PhantomData }
    }

    /// The same elements, reborrowed (to pass the view on and keep using it after).
    pub fn reborrow(&mut self) -> ViewMut<'_, T, B> {
        ViewMut { buffer: self.buffer, offset: self.offset, len: self.len, _element: PhantomData }
    }

    /// A sub-range of this view (`range` relative to the view), consuming it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `range` is reversed or exceeds the view.
    pub fn slice_mut(self, range: Range<usize>) -> Result<Self> {
        let (offset, len) = sub_range(self.len, self.offset, &range)?;
        Ok(Self { buffer: self.buffer, offset, len, _element: PhantomData })
    }

    /// The buffer and the view's range, consuming the view (for backends).
    pub fn into_parts(self) -> (&'a mut B, Range<usize>) {
        let range = self.offset..self.offset + self.len;
        (self.buffer, range)
    }
}

impl<'a, T, B: DeviceBuffer<T> + ?Sized> From<&'a B> for View<'a, T, B> {
    fn from(buffer: &'a B) -> Self {
        Self::of(buffer)
    }
}

impl<'a, T, B: DeviceBuffer<T> + ?Sized> From<&'a mut B> for View<'a, T, B> {
    fn from(buffer: &'a mut B) -> Self {
        Self::of(buffer)
    }
}

impl<'a, T, B: DeviceBuffer<T> + ?Sized> From<&'a mut B> for ViewMut<'a, T, B> {
    fn from(buffer: &'a mut B) -> Self {
        Self::of(buffer)
    }
}

impl<'a, T, B: ?Sized> From<ViewMut<'a, T, B>> for View<'a, T, B> {
    fn from(view: ViewMut<'a, T, B>) -> Self {
        View { buffer: view.buffer, offset: view.offset, len: view.len, _element: PhantomData }
    }
}

/// Sub-ranges of buffers, for every executor's buffer type.
pub trait Slice<T>: DeviceBuffer<T> {
    /// The whole buffer as a view.
    fn view(&self) -> View<'_, T, Self> {
        View::of(self)
    }

    /// The whole buffer as a writable view.
    fn view_mut(&mut self) -> ViewMut<'_, T, Self> {
        ViewMut::of(self)
    }

    /// The elements in `range`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `range` is reversed or exceeds the buffer.
    fn slice(&self, range: Range<usize>) -> Result<View<'_, T, Self>> {
        View::of(self).slice(range)
    }

    /// The elements in `range`, for writing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `range` is reversed or exceeds the buffer.
    fn slice_mut(&mut self, range: Range<usize>) -> Result<ViewMut<'_, T, Self>> {
        ViewMut::of(self).slice_mut(range)
    }
}

impl<T, B: DeviceBuffer<T> + ?Sized> Slice<T> for B {}

#[cfg(test)]
mod tests {
    use super::*;

    struct Host(Vec<u32>);
    impl DeviceBuffer<u32> for Host {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn capacity(&self) -> usize {
            self.0.capacity()
        }
    }

    #[test]
    fn slices_compose_relative_to_their_view() {
        let b = Host(vec![0; 10]);
        let v = b.slice(2..9).unwrap();
        assert_eq!(v.range(), 2..9);
        let w = v.slice(1..3).unwrap();
        assert_eq!((w.offset(), w.len()), (3, 2));
        assert!(w.slice(0..3).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = v.slice(3..1);
        assert!(reversed.is_err());
        assert!(b.slice(0..11).is_err());
        assert!(b.slice(10..10).unwrap().is_empty());
    }

    #[test]
    fn mutable_views_reborrow_and_convert() {
        let mut b = Host(vec![0; 4]);
        let mut m = b.slice_mut(1..4).unwrap();
        assert_eq!(m.reborrow().slice_mut(1..2).unwrap().range(), 2..3);
        assert_eq!(m.as_view().range(), 1..4);
        let v: View<'_, u32, Host> = m.into();
        assert_eq!(v.len(), 3);
    }
}
