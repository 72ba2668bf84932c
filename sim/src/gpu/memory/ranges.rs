//! A first-fit allocator of address ranges, used for offsets inside a
//! process's memory arena.
//!
//! Written by hand because what we need is tiny (a sorted free list with
//! coalescing over a `BTreeMap`) and allocation-rate is low (one call per
//! `hipMalloc`), while range-allocator crates either assume a fixed block size
//! or pull in far more than this.

use std::collections::BTreeMap;

/// Free ranges of `[0, capacity)`, kept sorted and coalesced.
#[derive(Debug, Clone)]
pub struct RangeAllocator {
    capacity: u64,
    /// start → length of each free range.
    free: BTreeMap<u64, u64>,
    used: u64,
}

impl RangeAllocator {
    /// An allocator over `[base, base + len)`.
    pub fn new(base: u64, len: u64) -> Self {
        let mut free = BTreeMap::new();
        if len > 0 {
            free.insert(base, len);
        }
        RangeAllocator { capacity: len, free, used: 0 }
    }

    /// Bytes currently allocated.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Total bytes managed.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Allocates `len` bytes aligned to `align` (a power of two), first fit.
    pub fn alloc(&mut self, len: u64, align: u64) -> Option<u64> {
        debug_assert!(align.is_power_of_two());
        if len == 0 {
            return None;
        }
        let (start, free_len, at) = self.free.iter().find_map(|(&start, &free_len)| {
            let at = start.checked_add(align - 1)? & !(align - 1);
            let end = at.checked_add(len)?;
            (end <= start + free_len).then_some((start, free_len, at))
        })?;
        self.free.remove(&start);
        if at > start {
            self.free.insert(start, at - start);
        }
        let end = at + len;
        if end < start + free_len {
            self.free.insert(end, start + free_len - end);
        }
        self.used += len;
        Some(at)
    }

    /// Returns `[start, start + len)` to the free list, merging neighbours.
    /// The range must have come from [`alloc`](Self::alloc).
    pub fn free(&mut self, start: u64, len: u64) {
        self.used = self.used.saturating_sub(len);
        let mut start = start;
        let mut len = len;
        if let Some((&prev, &prev_len)) = self.free.range(..start).next_back() {
            if prev + prev_len == start {
                self.free.remove(&prev);
                start = prev;
                len += prev_len;
            }
        }
        if let Some(&next_len) = self.free.get(&(start + len)) {
            self.free.remove(&(start + len));
            len += next_len;
        }
        self.free.insert(start, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocates_aligned_and_reuses_freed_space() {
        let mut a = RangeAllocator::new(0x1000, 0x10_0000);
        let x = a.alloc(0x1000, 0x1000).unwrap();
        assert_eq!(x, 0x1000);
        let y = a.alloc(0x2000, 0x10000).unwrap();
        assert_eq!(y, 0x10000);
        assert_eq!(a.used(), 0x3000);
        a.free(x, 0x1000);
        // The hole before y is reused for a small block.
        assert_eq!(a.alloc(0x1000, 0x1000), Some(0x1000));
    }

    #[test]
    fn coalesces_on_free() {
        let mut a = RangeAllocator::new(0, 0x4000);
        let b: Vec<u64> = (0..4).map(|_| a.alloc(0x1000, 0x1000).unwrap()).collect();
        assert_eq!(a.alloc(0x1000, 0x1000), None);
        a.free(b[1], 0x1000);
        a.free(b[2], 0x1000);
        a.free(b[0], 0x1000);
        // Three neighbours merged into one free range of 0x3000.
        assert_eq!(a.alloc(0x3000, 0x1000), Some(0));
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let mut a = RangeAllocator::new(0, 0x2000);
        assert_eq!(a.alloc(0x3000, 0x1000), None);
        assert_eq!(a.alloc(0, 0x1000), None);
        assert_eq!(a.alloc(u64::MAX, 0x1000), None);
    }
}
