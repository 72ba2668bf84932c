//! What the kernel says is mapped in a range of our address space
//! (`/proc/self/maps`): the truth the share registry checks itself against,
//! since the application can unmap or replace memory behind our back
//! (`brk`, `mremap`, `mmap(MAP_FIXED)` of anonymous memory are not hooked).

use rustix::mm::ProtFlags;

/// One mapping (VMA), clipped to nothing: as the kernel lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vma {
    pub start: u64,
    pub end: u64,
    pub prot: ProtFlags,
    /// `MAP_SHARED` (as opposed to private, copy-on-write).
    pub shared: bool,
    /// Offset in the mapped file (0 for anonymous memory).
    pub offset: u64,
    /// Inode of the mapped file; 0 for anonymous memory.
    pub inode: u64,
    /// (major, minor) of the device holding the mapped file; (0, 0) for
    /// private anonymous memory.
    pub dev: (u32, u32),
}

impl Vma {
    /// Private memory with no file behind it: heap, stacks, anonymous mmaps.
    pub fn is_private_anonymous(&self) -> bool {
        !self.shared && self.inode == 0
    }

    /// The file offset of address `addr` inside this mapping.
    pub fn file_offset(&self, addr: u64) -> u64 {
        self.offset + (addr - self.start)
    }
}

/// Parses one line: `start-end perms offset dev inode [path]`.
fn parse_line(line: &str) -> Option<Vma> {
    let mut fields = line.split_ascii_whitespace();
    let (start, end) = fields.next()?.split_once('-')?;
    let perms = fields.next()?.as_bytes();
    let offset = fields.next()?;
    let (major, minor) = fields.next()?.split_once(':')?;
    let inode = fields.next()?;
    if perms.len() < 4 {
        return None;
    }
    let mut prot = ProtFlags::empty();
    prot.set(ProtFlags::READ, perms[0] == b'r');
    prot.set(ProtFlags::WRITE, perms[1] == b'w');
    prot.set(ProtFlags::EXEC, perms[2] == b'x');
    Some(Vma {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        prot,
        shared: perms[3] == b's',
        offset: u64::from_str_radix(offset, 16).ok()?,
        inode: inode.parse().ok()?,
        dev: (u32::from_str_radix(major, 16).ok()?, u32::from_str_radix(minor, 16).ok()?),
    })
}

/// The mappings overlapping `[start, end)` in `maps` (the text of a maps
/// file), in address order.
pub fn parse(maps: &str, start: u64, end: u64) -> Vec<Vma> {
    maps.lines().filter_map(parse_line).filter(|v| v.start < end && v.end > start).collect()
}

/// The text of this process's maps file.
fn read_text() -> std::io::Result<String> {
    // Raw syscalls (rustix), never our own hooks.
    let fd = rustix::fs::open(
        "/proc/self/maps",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    let mut text = Vec::with_capacity(64 << 10);
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = rustix::io::read(&fd, &mut chunk)?;
        if n == 0 {
            break;
        }
        text.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// The mappings of this process overlapping `[start, end)`.
pub fn read(start: u64, end: u64) -> std::io::Result<Vec<Vma>> {
    Ok(parse(&read_text()?, start, end))
}

/// Every mapping of this process, read once for one operation and then kept
/// up to date with the moves the operation makes itself (so it reads
/// `/proc/self/maps` once, however many ranges it looks at).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// In address order, not overlapping.
    vmas: Vec<Vma>,
}

impl Snapshot {
    /// Reads this process's mappings.
    pub fn read() -> std::io::Result<Snapshot> {
        Ok(Snapshot::parse(&read_text()?))
    }

    /// The mappings listed in `maps` (the text of a maps file).
    pub fn parse(maps: &str) -> Snapshot {
        Snapshot { vmas: parse(maps, 0, u64::MAX) }
    }

    /// [`cover`] of `[start, end)` by these mappings.
    pub fn cover(&self, start: u64, end: u64) -> Vec<(u64, u64, Option<Vma>)> {
        let first = self.vmas.partition_point(|v| v.end <= start);
        cover(&self.vmas[first..], start, end)
    }

    /// Records that `[vma.start, vma.end)` is now mapped as `vma` says
    /// (we just remapped it): what was there is cut away.
    pub fn replace(&mut self, vma: Vma) {
        let first = self.vmas.partition_point(|v| v.end <= vma.start);
        let last = self.vmas.partition_point(|v| v.start < vma.end);
        let mut new = Vec::with_capacity(3);
        if let Some(v) = self.vmas[first..last].first().filter(|v| v.start < vma.start) {
            new.push(Vma { end: vma.start, ..*v });
        }
        new.push(vma);
        if let Some(v) = self.vmas[first..last].last().filter(|v| v.end > vma.end) {
            let offset = if v.inode != 0 { v.file_offset(vma.end) } else { v.offset };
            new.push(Vma { start: vma.end, offset, ..*v });
        }
        self.vmas.splice(first..last, new);
    }
}

/// Splits `[start, end)` by the mappings in `vmas`: each piece with the
/// mapping that covers it, or `None` for a hole.
pub fn cover(vmas: &[Vma], start: u64, end: u64) -> Vec<(u64, u64, Option<Vma>)> {
    let mut out = Vec::new();
    let mut at = start;
    for v in vmas {
        if v.end <= at || v.start >= end {
            continue;
        }
        if v.start > at {
            out.push((at, v.start, None));
        }
        let piece_end = v.end.min(end);
        out.push((at.max(v.start), piece_end, Some(*v)));
        at = piece_end;
    }
    if at < end {
        out.push((at, end, None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0000003000 rw-s 00002000 00:01 4242                       /memfd:rocjitsu-userptr (deleted)
7f0000003000-7f0000005000 r--p 00000000 00:00 0 
7f0000005000-7f0000006000 r-xp 00001000 fd:01 77                         /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
";

    #[test]
    fn lines_become_mappings_and_only_overlapping_ones_are_kept() {
        let v = parse(MAPS, 0x7f00_0000_1000, 0x7f00_0000_5001);
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].start, 0x7f00_0000_0000);
        assert!(v[0].shared && v[0].inode == 4242 && v[0].offset == 0x2000 && v[0].dev == (0, 1));
        assert_eq!(v[2].dev, (0xfd, 1));
        assert_eq!(v[0].file_offset(0x7f00_0000_1000), 0x3000);
        assert!(v[1].is_private_anonymous() && v[1].prot == ProtFlags::READ);
        assert!(!v[2].is_private_anonymous() && v[2].prot == ProtFlags::READ | ProtFlags::EXEC);
        let heap = parse(MAPS, 0x55d0_c0a0_0000, 0x55d0_c0a0_1000);
        assert_eq!(heap[0].prot, ProtFlags::READ | ProtFlags::WRITE);
        assert!(heap[0].is_private_anonymous());
    }

    #[test]
    fn cover_names_holes() {
        let v = parse(MAPS, 0x7f00_0000_4000, 0x7f00_0000_7000);
        let c = cover(&v, 0x7f00_0000_4000, 0x7f00_0000_7000);
        assert_eq!(c.len(), 3);
        assert_eq!((c[0].0, c[0].1), (0x7f00_0000_4000, 0x7f00_0000_5000));
        assert_eq!((c[1].0, c[1].1), (0x7f00_0000_5000, 0x7f00_0000_6000));
        assert_eq!((c[2].0, c[2].1, c[2].2), (0x7f00_0000_6000, 0x7f00_0000_7000, None));
    }

    #[test]
    fn a_snapshot_covers_ranges_and_follows_our_own_remappings() {
        let mut snap = Snapshot::parse(MAPS);
        let c = snap.cover(0x7f00_0000_2000, 0x7f00_0000_4000);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].2.unwrap().inode, 4242);
        assert!(c[1].2.unwrap().is_private_anonymous());
        // The middle of the memfd mapping becomes private memory.
        let private = Vma {
            start: 0x7f00_0000_1000,
            end: 0x7f00_0000_2000,
            prot: ProtFlags::READ,
            shared: false,
            offset: 0,
            inode: 0,
            dev: (0, 0),
        };
        snap.replace(private);
        let c = snap.cover(0x7f00_0000_0000, 0x7f00_0000_3000);
        assert_eq!(c.len(), 3);
        assert_eq!((c[0].0, c[0].1, c[0].2.unwrap().offset), (0x7f00_0000_0000, 0x7f00_0000_1000, 0x2000));
        assert_eq!(c[1].2, Some(private));
        let tail = c[2].2.unwrap();
        assert_eq!(
            (tail.start, tail.inode, tail.offset),
            (0x7f00_0000_2000, 4242, 0x4000),
            "the tail keeps its file offset"
        );
        // A replacement across two mappings and a hole.
        let shared =
            Vma { start: 0x7f00_0000_2000, end: 0x7f00_0000_5800, shared: true, inode: 9, offset: 0, ..private };
        snap.replace(shared);
        let c = snap.cover(0x7f00_0000_2000, 0x7f00_0000_7000);
        assert_eq!(
            c.iter().map(|(s, e, v)| (*s, *e, v.map(|v| v.inode))).collect::<Vec<_>>(),
            vec![
                (0x7f00_0000_2000, 0x7f00_0000_5800, Some(9)),
                (0x7f00_0000_5800, 0x7f00_0000_6000, Some(77)),
                (0x7f00_0000_6000, 0x7f00_0000_7000, None),
            ]
        );
        assert_eq!(snap.cover(0x7f00_0000_5800, 0x7f00_0000_6000)[0].2.unwrap().offset, 0x1800);
    }

    #[test]
    fn our_own_maps_are_readable() {
        let buf = vec![1u8; 3 << 20];
        let at = buf.as_ptr() as u64;
        let v = read(at, at + 1).unwrap();
        assert_eq!(v.len(), 1);
        assert!(v[0].is_private_anonymous() && v[0].prot.contains(ProtFlags::WRITE));
        // Other test threads map and unmap memory between the two reads, so
        // the kernel may merge or split the mapping around `buf`: compare what
        // cannot change, not its bounds.
        let snap = Snapshot::read().unwrap();
        let again = snap.cover(at, at + 1)[0].2.expect("buf is mapped");
        assert!(again.start <= at && at < again.end);
        assert!(again.is_private_anonymous());
        assert_eq!(again.prot, v[0].prot);
    }
}
