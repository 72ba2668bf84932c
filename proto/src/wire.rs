//! Little-endian field readers and writers for the protocol's own structs.
//!
//! The protocol's payloads are written field by field rather than cast from
//! `#[repr(C)]` structs: the byte layout is then exactly what the docs say,
//! with no padding to forget, no alignment requirement on the receive buffer,
//! and no dependence on the host's byte order. (The ioctl argument structs are
//! different: they are the kernel ABI and travel as the caller laid them out.)

/// A cursor over a payload that never reads past its end: every read returns
/// `None` once the input is exhausted, so a parser cannot panic on short input.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// The next `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.buf.len() {
            return None;
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Some(out)
    }

    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    pub(crate) fn i32(&mut self) -> Option<i32> {
        self.array().map(i32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    pub(crate) fn i64(&mut self) -> Option<i64> {
        self.array().map(i64::from_le_bytes)
    }

    /// Everything not read yet.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        core::mem::take(&mut self.buf)
    }
}

/// Appends little-endian fields to a buffer.
pub(crate) trait Put {
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
    fn put_i32(&mut self, v: i32);
    fn put_u64(&mut self, v: u64);
    fn put_i64(&mut self, v: i64);
}

impl Put for Vec<u8> {
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_i32(&mut self, v: i32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_i64(&mut self, v: i64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
}

/// Overwrites a u32 at `offset` (used to patch lengths once a payload is built).
pub(crate) fn patch_u32(buf: &mut [u8], offset: usize, v: u32) {
    if let Some(dst) = buf.get_mut(offset..offset + 4) {
        dst.copy_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_stops_at_the_end_instead_of_panicking() {
        let mut r = Reader::new(&[1, 0, 0, 0, 2, 0]);
        assert_eq!(r.u32(), Some(1));
        assert_eq!(r.u32(), None);
        assert_eq!(r.remaining(), 2);
        assert_eq!(r.u16(), Some(2));
        assert_eq!(r.u16(), None);
    }

    #[test]
    fn writer_is_little_endian() {
        let mut v = Vec::new();
        v.put_u32(0x0403_0201);
        v.put_i32(-2);
        assert_eq!(v, [1, 2, 3, 4, 0xfe, 0xff, 0xff, 0xff]);
        patch_u32(&mut v, 0, 7);
        assert_eq!(&v[..4], &[7, 0, 0, 0]);
    }
}
