//! Which pages of the application are lent to the daemon: the bookkeeping,
//! with no system calls (generic over the memory file, so it is tested with
//! plain values).
//!
//! A *piece* is a page range of the application's address space that is
//! mapped shared from one memory file at one offset, with the number of live
//! USERPTR registrations (*users*) that cover it. Pieces never overlap; they
//! are split where a registration starts or ends and merged again when their
//! neighbours agree.

use std::collections::BTreeMap;

/// One page range lent from `file` at `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece<F> {
    pub len: u64,
    pub file: F,
    pub offset: u64,
    /// Live registrations covering the range.
    pub users: u32,
}

/// A stretch of a range: already backed by a memory file, or still the
/// application's private memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run<F> {
    Lent { start: u64, len: u64, file: F, offset: u64 },
    Private { start: u64, len: u64 },
}

impl<F> Run<F> {
    pub fn start(&self) -> u64 {
        match self {
            Run::Lent { start, .. } | Run::Private { start, .. } => *start,
        }
    }

    /// One past the last byte.
    pub fn end(&self) -> u64 {
        match self {
            Run::Lent { start, len, .. } | Run::Private { start, len } => start + len,
        }
    }
}

/// The pieces, by start address.
#[derive(Debug)]
pub struct Registry<F> {
    pieces: BTreeMap<u64, Piece<F>>,
}

impl<F> Default for Registry<F> {
    fn default() -> Self {
        Registry { pieces: BTreeMap::new() }
    }
}

impl<F: Clone + PartialEq> Registry<F> {
    /// Every piece, in address order: (start, piece).
    pub fn pieces(&self) -> impl Iterator<Item = (u64, &Piece<F>)> {
        self.pieces.iter().map(|(s, p)| (*s, p))
    }

    /// The pieces overlapping `[start, end)`: (start, piece).
    pub fn overlapping(&self, start: u64, end: u64) -> Vec<(u64, Piece<F>)> {
        let first = self.pieces.range(..=start).next_back().filter(|(s, p)| **s + p.len > start).map(|(s, _)| *s);
        self.pieces.range(first.unwrap_or(start)..end).map(|(s, p)| (*s, p.clone())).collect()
    }

    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        !self.overlapping(start, end).is_empty()
    }

    /// Makes `addr` a piece boundary (if a piece spans it).
    fn split_at(&mut self, addr: u64) {
        let Some((&s, p)) = self.pieces.range(..addr).next_back() else { return };
        if s + p.len <= addr {
            return;
        }
        let cut = addr - s;
        let tail = Piece { len: p.len - cut, file: p.file.clone(), offset: p.offset + cut, users: p.users };
        self.pieces.get_mut(&s).expect("just found").len = cut;
        self.pieces.insert(addr, tail);
    }

    /// Merges pieces in `[start, end]` (and their neighbours) that continue
    /// each other: same file, adjacent offsets, same users.
    fn coalesce(&mut self, start: u64, end: u64) {
        let from = self.pieces.range(..start).next_back().map_or(start, |(s, _)| *s);
        let keys: Vec<u64> = self.pieces.range(from..=end).map(|(s, _)| *s).collect();
        let mut current: Option<u64> = None;
        for k in keys {
            if let Some(c) = current {
                let (cp, kp) = (&self.pieces[&c], &self.pieces[&k]);
                if c + cp.len == k && cp.file == kp.file && cp.offset + cp.len == kp.offset && cp.users == kp.users {
                    let len = kp.len;
                    self.pieces.remove(&k);
                    self.pieces.get_mut(&c).expect("present").len += len;
                    continue;
                }
            }
            current = Some(k);
        }
    }

    /// How `[start, end)` is backed now, stretch by stretch, with adjacent
    /// stretches of one file at adjacent offsets merged.
    pub fn plan(&self, start: u64, end: u64) -> Vec<Run<F>> {
        let mut runs: Vec<Run<F>> = Vec::new();
        let mut at = start;
        for (s, p) in self.overlapping(start, end) {
            if s > at {
                runs.push(Run::Private { start: at, len: s - at });
            }
            let from = at.max(s);
            let to = (s + p.len).min(end);
            let offset = p.offset + (from - s);
            match runs.last_mut() {
                Some(Run::Lent { start: ls, len, file, offset: lo })
                    if *ls + *len == from && *file == p.file && *lo + *len == offset =>
                {
                    *len += to - from
                }
                _ => runs.push(Run::Lent { start: from, len: to - from, file: p.file.clone(), offset }),
            }
            at = to;
        }
        if at < end {
            runs.push(Run::Private { start: at, len: end - at });
        }
        runs
    }

    /// Records that `[start, start + len)` is now mapped from `file` at
    /// `offset`, with no users yet. The range must hold no piece.
    pub fn insert(&mut self, start: u64, len: u64, file: F, offset: u64) {
        debug_assert!(!self.overlaps(start, start + len));
        self.pieces.insert(start, Piece { len, file, offset, users: 0 });
        self.coalesce(start, start + len);
    }

    /// Adds `delta` users to every piece in `[start, end)` (which must be
    /// fully covered by pieces); returns the stretches left with no user.
    pub fn add_users(&mut self, start: u64, end: u64, delta: i32) -> Vec<Run<F>> {
        self.add_users_of(start, end, delta, None)
    }

    /// [`Self::add_users`] for the pieces of `[start, end)` lent from `file`
    /// only, when given: a registration releases the pieces it was lent,
    /// not pieces that replaced them after the application remapped its
    /// memory.
    pub fn add_users_of(&mut self, start: u64, end: u64, delta: i32, file: Option<&F>) -> Vec<Run<F>> {
        self.split_at(start);
        self.split_at(end);
        for (_, p) in self.pieces.range_mut(start..end) {
            if file.is_none_or(|f| *f == p.file) {
                p.users = p.users.saturating_add_signed(delta);
            }
        }
        self.coalesce(start, end);
        self.idle(start, end)
    }

    /// The stretches of `[start, end)` lent with no user.
    pub fn idle(&self, start: u64, end: u64) -> Vec<Run<F>> {
        let mut out = Vec::new();
        for (s, p) in self.overlapping(start, end) {
            if p.users == 0 {
                let from = s.max(start);
                let to = (s + p.len).min(end);
                out.push(Run::Lent {
                    start: from,
                    len: to - from,
                    file: p.file.clone(),
                    offset: p.offset + (from - s),
                });
            }
        }
        out
    }

    /// Forgets `[start, end)`: it is no longer mapped from our files (the
    /// application unmapped it, or we gave it back private memory).
    pub fn forget(&mut self, start: u64, end: u64) {
        self.split_at(start);
        self.split_at(end);
        let doomed: Vec<u64> = self.pieces.range(start..end).map(|(s, _)| *s).collect();
        for s in doomed {
            self.pieces.remove(&s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = 0x1000;

    fn lent(start: u64, len: u64, file: u32, offset: u64) -> Run<u32> {
        Run::Lent { start, len, file, offset }
    }

    #[test]
    fn a_fresh_range_is_private_then_lent() {
        let mut r = Registry::<u32>::default();
        assert_eq!(r.plan(0x10 * P, 0x13 * P), vec![Run::Private { start: 0x10 * P, len: 3 * P }]);
        r.insert(0x10 * P, 3 * P, 7, 0);
        assert!(r.add_users(0x10 * P, 0x13 * P, 1).is_empty());
        assert_eq!(r.plan(0x10 * P, 0x13 * P), vec![lent(0x10 * P, 3 * P, 7, 0)]);
        // Released: the whole range is idle.
        assert_eq!(r.add_users(0x10 * P, 0x13 * P, -1), vec![lent(0x10 * P, 3 * P, 7, 0)]);
        r.forget(0x10 * P, 0x13 * P);
        assert_eq!(r.pieces().count(), 0);
    }

    #[test]
    fn neighbours_sharing_a_boundary_page() {
        // Registration A covers pages 0..3, registration B pages 2..6 (page 2
        // holds the end of one buffer and the start of the next).
        let mut r = Registry::<u32>::default();
        r.insert(0, 3 * P, 1, 0);
        r.add_users(0, 3 * P, 1);
        assert_eq!(r.plan(2 * P, 6 * P), vec![lent(2 * P, P, 1, 2 * P), Run::Private { start: 3 * P, len: 3 * P }]);
        // B's private pages go to file 2 at their offset within B's range.
        r.insert(3 * P, 3 * P, 2, P);
        r.add_users(2 * P, 6 * P, 1);
        assert_eq!(r.plan(2 * P, 6 * P), vec![lent(2 * P, P, 1, 2 * P), lent(3 * P, 3 * P, 2, P)]);
        assert_eq!(r.overlapping(0, 6 * P).iter().map(|(_, p)| p.users).collect::<Vec<_>>(), vec![1, 2, 1]);
        // A goes: only its own pages become idle; the shared page stays.
        assert_eq!(r.add_users(0, 3 * P, -1), vec![lent(0, 2 * P, 1, 0)]);
        r.forget(0, 2 * P);
        // B goes: its pages, including the one from A's file, are idle.
        assert_eq!(r.add_users(2 * P, 6 * P, -1), vec![lent(2 * P, P, 1, 2 * P), lent(3 * P, 3 * P, 2, P)]);
    }

    #[test]
    fn pieces_merge_back_when_they_agree() {
        let mut r = Registry::<u32>::default();
        r.insert(0, 8 * P, 3, 0);
        r.add_users(0, 8 * P, 1);
        r.add_users(2 * P, 4 * P, 1);
        assert_eq!(r.pieces().count(), 3);
        r.add_users(2 * P, 4 * P, -1);
        assert_eq!(r.pieces().count(), 1, "split pieces merge again");
        // Releasing through another file's registration changes nothing.
        assert!(r.add_users_of(0, 8 * P, -1, Some(&9)).is_empty());
        // Adjacent pieces of different files, or of one file at distant
        // offsets, stay apart.
        r.insert(8 * P, P, 3, 100 * P);
        r.insert(9 * P, P, 4, 0);
        assert_eq!(r.pieces().count(), 3);
    }

    #[test]
    fn forgetting_part_of_a_piece_keeps_the_rest() {
        let mut r = Registry::<u32>::default();
        r.insert(0, 4 * P, 5, 0x10 * P);
        r.forget(P, 2 * P);
        assert_eq!(
            r.plan(0, 4 * P),
            vec![lent(0, P, 5, 0x10 * P), Run::Private { start: P, len: P }, lent(2 * P, 2 * P, 5, 0x12 * P)]
        );
        assert!(r.overlaps(3 * P, 3 * P + 1));
        assert!(!r.overlaps(P, 2 * P));
    }
}
