//! Descriptor passing over real socketpairs, through the blocking (std) and
//! the tokio framing: memfds go both ways, and the received descriptor maps
//! the same memory as the sent one (written through one mapping, read through
//! the other). Also: received descriptors are close-on-exec, and a truncated
//! or oversized control message leaves no descriptor open.
#![cfg(feature = "std-io")]

use proto::abi::kfd;
use proto::error::{RpcError, TransportError};
use proto::framing::std_io::UnixTransport;
use proto::header::{Header, Opcode, HEADER_LEN, MAX_PAYLOAD_BYTES};
use proto::ioctl::{BadAddress, UserMemory};
use proto::message::{Reply, Request};
use proto::payload::{fd_access, FdDesc, FdKind, HandshakeReply, MmapReply, MmapRequest, PROTOCOL_VERSION};
use proto::sequence::ServerSequence;
use proto::transport::Transport;
use proto::RpcClient;
use rustix::fs::{ftruncate, memfd_create, MemfdFlags};
use rustix::mm::{mmap, munmap, MapFlags, ProtFlags};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

const PAGE: usize = 4096;

/// A shared mapping of (part of) a descriptor, unmapped on drop.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(fd: BorrowedFd<'_>, offset: u64, len: usize) -> Mapping {
        // SAFETY: a fresh mapping at an address the kernel chooses
        // (null hint, no MAP_FIXED) cannot alias any Rust object; it is
        // unmapped exactly once, in `drop`.
        let ptr = unsafe {
            mmap(std::ptr::null_mut(), len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::SHARED, fd, offset)
        }
        .expect("mmap");
        Mapping { ptr: ptr.cast(), len }
    }

    fn write(&self, at: usize, data: &[u8]) {
        assert!(at + data.len() <= self.len);
        // SAFETY: in bounds of a live RW mapping (checked above); the memory is
        // plain bytes, and the tests synchronise writers and readers by
        // message order.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(at), data.len()) }
    }

    fn read(&self, at: usize, len: usize) -> Vec<u8> {
        assert!(at + len <= self.len);
        let mut out = vec![0; len];
        // SAFETY: in bounds of a live mapping (checked above), see `write`.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(at), out.as_mut_ptr(), len) }
        out
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned, unmapped once.
        unsafe { munmap(self.ptr.cast(), self.len) }.expect("munmap");
    }
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A memfd of `len` bytes with a name unique to this test process and tag.
fn memfd(tag: &str, len: u64) -> (OwnedFd, String) {
    let name = format!("proto-{tag}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let fd = memfd_create(name.as_str(), MemfdFlags::CLOEXEC).expect("memfd_create");
    ftruncate(&fd, len).expect("ftruncate");
    (fd, name)
}

/// How many descriptors of this process point at a memfd with this name.
fn open_count(name: &str) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().contains(name))
        .count()
}

fn is_cloexec(fd: BorrowedFd<'_>) -> bool {
    rustix::io::fcntl_getfd(fd).unwrap().contains(rustix::io::FdFlags::CLOEXEC)
}

fn frame(opcode: Opcode, payload: &[u8]) -> Vec<u8> {
    let mut f = Header { opcode, request_id: 7, payload_bytes: payload.len() as u32, result: 0 }.encode().to_vec();
    f.extend_from_slice(payload);
    f
}

/// Sends a memfd from `a` to `b`, then checks both map the same pages.
fn std_pass(a: &mut UnixTransport, b: &mut UnixTransport, tag: &str) {
    let (fd, name) = memfd(tag, 2 * PAGE as u64);
    let sent = frame(Opcode::Mmap, &[1, 2, 3]);
    a.send_with_handles(&sent, &[fd.as_fd()]).unwrap();
    let mut got = Vec::new();
    let mut fds = Vec::new();
    b.recv_with_handles(&mut got, &mut fds).unwrap();
    assert_eq!(got, sent);
    assert_eq!(fds.len(), 1);
    assert!(is_cloexec(fds[0].as_fd()), "received fds are close-on-exec");
    assert_eq!(open_count(&name), 2);
    let mine = Mapping::new(fd.as_fd(), 0, 2 * PAGE);
    let theirs = Mapping::new(fds[0].as_fd(), PAGE as u64, PAGE);
    mine.write(PAGE + 10, b"through the sender's mapping");
    assert_eq!(theirs.read(10, 28), b"through the sender's mapping");
    theirs.write(100, b"and back");
    assert_eq!(mine.read(PAGE + 100, 8), b"and back");
}

#[test]
fn std_framing_passes_memfds_both_ways() {
    let (mut a, mut b) = UnixTransport::pair().unwrap();
    std_pass(&mut a, &mut b, "std-ab");
    std_pass(&mut b, &mut a, "std-ba");
    // Several descriptors in one frame, then a frame without any: each frame
    // gets exactly its own.
    let (f1, _) = memfd("std-multi", PAGE as u64);
    let (f2, _) = memfd("std-multi", PAGE as u64);
    a.send_with_handles(&frame(Opcode::Ioctl, &[9; 100]), &[f1.as_fd(), f2.as_fd()]).unwrap();
    a.send(&frame(Opcode::Status, &[])).unwrap();
    let mut got = Vec::new();
    let mut fds = Vec::new();
    b.recv_with_handles(&mut got, &mut fds).unwrap();
    assert_eq!((got.len(), fds.len()), (116, 2));
    b.recv(&mut got).unwrap();
    assert_eq!(got.len(), 16);
}

#[test]
fn more_than_four_fds_are_refused_before_sending() {
    let (mut a, mut b) = UnixTransport::pair().unwrap();
    let fds: Vec<OwnedFd> = (0..5).map(|_| memfd("five", 4096).0).collect();
    let refs: Vec<BorrowedFd<'_>> = fds.iter().map(|f| f.as_fd()).collect();
    assert!(matches!(
        a.send_with_handles(&frame(Opcode::Status, &[]), &refs),
        Err(TransportError::TooManyHandles { got: 5, max: 4 })
    ));
    // Nothing went out: the next frame is the first one b sees.
    a.send(&frame(Opcode::Close, &[])).unwrap();
    let mut got = Vec::new();
    b.recv(&mut got).unwrap();
    assert_eq!(Header::decode(&got).unwrap().opcode, Opcode::Close);
}

/// Sends `n` descriptors with one frame, bypassing our own limit.
fn raw_send(sock: BorrowedFd<'_>, data: &[u8], fds: &[BorrowedFd<'_>]) {
    use rustix::net::{sendmsg, SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(16))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    assert!(control.push(SendAncillaryMessage::ScmRights(fds)));
    let n = sendmsg(sock, &[std::io::IoSlice::new(data)], &mut control, SendFlags::empty()).unwrap();
    assert_eq!(n, data.len());
}

#[test]
fn too_many_or_truncated_fds_are_all_closed() {
    for (count, truncated) in [(5usize, false), (12, true)] {
        let (a, mut b) = UnixTransport::pair().unwrap();
        let tag = format!("excess{count}");
        let mine: Vec<(OwnedFd, String)> = (0..count).map(|_| memfd(&tag, 4096)).collect();
        let refs: Vec<BorrowedFd<'_>> = mine.iter().map(|(f, _)| f.as_fd()).collect();
        raw_send(a.stream().as_fd(), &frame(Opcode::Status, &[]), &refs);
        let names: Vec<String> = mine.iter().map(|(_, n)| n.clone()).collect();
        drop(mine);
        let mut got = Vec::new();
        let mut fds = Vec::new();
        let err = b.recv_with_handles(&mut got, &mut fds).unwrap_err();
        match (truncated, err) {
            (false, TransportError::TooManyHandles { got: 5, max: 4 }) => {}
            (true, TransportError::ControlTruncated { closed }) => assert!(closed > 0),
            (_, other) => panic!("{count} fds: unexpected {other}"),
        }
        assert!(fds.is_empty());
        for name in names {
            assert_eq!(open_count(&name), 0, "{name} leaked");
        }
    }
}

#[test]
fn framing_errors_from_the_stream() {
    // Oversized frame: refused from the header, without waiting for 16 MiB.
    let (mut a, mut b) = UnixTransport::pair().unwrap();
    let mut f = frame(Opcode::Ioctl, &[]);
    f[8..12].copy_from_slice(&(MAX_PAYLOAD_BYTES + 1).to_le_bytes());
    a.send(&f).unwrap();
    assert!(matches!(b.recv(&mut Vec::new()), Err(TransportError::Frame(proto::error::FrameError::TooLarge { .. }))));
    // Closed between frames / inside a frame.
    let (a, mut b) = UnixTransport::pair().unwrap();
    drop(a);
    assert!(matches!(b.recv(&mut Vec::new()), Err(TransportError::Closed)));
    let (mut a, mut b) = UnixTransport::pair().unwrap();
    let f = frame(Opcode::Status, &[0; 8]);
    a.send(&f[..HEADER_LEN + 3]).unwrap();
    drop(a);
    assert!(matches!(b.recv(&mut Vec::new()), Err(TransportError::Truncated { got: 19, expected: 24 })));
    // A too-long socket path is an error, not a truncation.
    let long = format!("/tmp/{}", "x".repeat(200));
    assert!(UnixTransport::connect(long).is_err());
}

// ---------------------------------------------------------------------------
// A whole exchange: RpcClient (std) against a daemon loop.

struct NoMemory;
impl UserMemory for NoMemory {
    fn read(&self, _: u64, _: &mut [u8]) -> Result<(), BadAddress> {
        Err(BadAddress)
    }
    fn write(&self, _: u64, _: &[u8]) -> Result<(), BadAddress> {
        Err(BadAddress)
    }
}

fn handshake_reply() -> HandshakeReply {
    HandshakeReply {
        version: PROTOCOL_VERSION,
        session_id: 1,
        attach_token: 2,
        daemon_pid: std::process::id(),
        machine: proto::payload::MachineInfo { render_minors: vec![128], topology_dir: "/tmp/topology".into() },
    }
}

/// The daemon's allocation: a memfd with the BO at page 1.
const BO_OFFSET: u64 = PAGE as u64;

/// A minimal daemon: answers HANDSHAKE, ALLOC (with the memfd), MMAP (with
/// the memfd) and CLOSE; writes `marker` into the BO before replying.
fn serve_std(mut t: UnixTransport, memfd: OwnedFd, marker: &'static [u8]) -> Vec<u8> {
    let daemon_view = Mapping::new(memfd.as_fd(), 0, 2 * PAGE);
    daemon_view.write(PAGE, marker);
    let mut sequence = ServerSequence::new();
    let mut frame = Vec::new();
    let mut out = Vec::new();
    let desc = FdDesc {
        kind: FdKind::Allocation,
        access: fd_access::READ | fd_access::WRITE,
        offset: BO_OFFSET,
        length: PAGE as u64,
    };
    loop {
        let mut fds = Vec::new();
        if t.recv_with_handles(&mut frame, &mut fds).is_err() {
            break;
        }
        let (pending, request) = sequence.accept(&frame, fds.len()).unwrap();
        out.clear();
        match request {
            Request::Handshake(_) => {
                sequence.encode_reply(pending, 0, &Reply::Handshake(handshake_reply()), &mut out).unwrap();
                t.send(&out).unwrap();
            }
            Request::Ioctl(mut ioctl) => {
                assert_eq!(ioctl.cmd, kfd::cmd::ALLOC_MEMORY_OF_GPU);
                let mut view = proto::ioctl::split_payload(ioctl.cmd, &mut ioctl.payload).unwrap();
                let mut a: kfd::AllocMemoryOfGpuArgs = view.get();
                a.handle = 0x77;
                a.mmap_offset = 0x1_0000_0000;
                view.set(&a);
                sequence.encode_ioctl_reply(pending, 0, &ioctl.payload, &[desc], &mut out).unwrap();
                t.send_with_handles(&out, &[memfd.as_fd()]).unwrap();
            }
            Request::Mmap(_) => {
                let reply = Reply::Mmap(MmapReply { fds: vec![desc] });
                sequence.encode_reply(pending, 0, &reply, &mut out).unwrap();
                t.send_with_handles(&out, &[memfd.as_fd()]).unwrap();
            }
            Request::Close => {
                sequence.encode_reply(pending, 0, &Reply::Close, &mut out).unwrap();
                t.send(&out).unwrap();
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    daemon_view.read(PAGE, 64)
}

fn client_side<T>(t: T) -> Vec<u8>
where
    T: Transport<Handle = OwnedFd>,
{
    let mut client = RpcClient::connect(t, std::process::id()).unwrap();
    assert_eq!(client.handshake().machine.render_minors, vec![128]);
    let args = kfd::AllocMemoryOfGpuArgs {
        va_addr: 0x7f00_0000_0000,
        size: PAGE as u64,
        gpu_id: 0xc0de,
        flags: kfd::alloc_flags::VRAM | kfd::alloc_flags::PUBLIC,
        ..Default::default()
    };
    let mut bytes = bytemuck::bytes_of(&args).to_vec();
    let outcome = client
        .ioctl(proto::payload::DeviceFile::Kfd, kfd::cmd::ALLOC_MEMORY_OF_GPU, &mut bytes, 0x1000, &NoMemory)
        .unwrap();
    assert_eq!(outcome.result, 0);
    let back: kfd::AllocMemoryOfGpuArgs = bytemuck::pod_read_unaligned(&bytes);
    assert_eq!((back.handle, back.mmap_offset), (0x77, 0x1_0000_0000));
    assert_eq!(outcome.fds.len(), 1);
    let (desc, fd) = &outcome.fds[0];
    assert_eq!(desc.kind, FdKind::Allocation);
    assert!(is_cloexec(fd.as_fd()));
    // The application's view of the BO: map the fd at the described offset.
    let app_view = Mapping::new(fd.as_fd(), desc.offset, desc.length as usize);
    let seen = app_view.read(0, 6);
    app_view.write(32, b"written by the application");
    // MMAP brings the same memory again.
    let mapped = client
        .mmap(MmapRequest {
            addr: 0x7f00_0000_0000,
            length: PAGE as u64,
            prot: 3,
            flags: 1,
            offset: 0x1_0000_0000,
            device: proto::payload::DeviceFile::Render { minor: 128 },
        })
        .unwrap();
    let (desc, fd) = &mapped.fds[0];
    let again = Mapping::new(fd.as_fd(), desc.offset, PAGE);
    assert_eq!(again.read(32, 26), b"written by the application");
    assert_eq!(client.close().unwrap(), 0);
    seen
}

#[test]
fn rpc_client_receives_alloc_and_mmap_memfds_from_a_std_daemon() {
    let (client_t, daemon_t) = UnixTransport::pair().unwrap();
    let (bo, _) = memfd("rpc-std", 2 * PAGE as u64);
    let daemon = std::thread::spawn(move || serve_std(daemon_t, bo, b"daemon"));
    let seen = client_side(client_t);
    assert_eq!(seen, b"daemon");
    let daemon_view = daemon.join().unwrap();
    assert_eq!(&daemon_view[32..58], b"written by the application");
}

#[test]
fn a_poisoned_client_refuses_further_calls() {
    let (client_t, mut daemon_t) = UnixTransport::pair().unwrap();
    let daemon = std::thread::spawn(move || {
        let mut frame = Vec::new();
        daemon_t.recv(&mut frame).unwrap();
        // Answer with a wrong request id.
        let mut sequence = ServerSequence::new();
        let (pending, _) = sequence.accept(&frame, 0).unwrap();
        let mut out = Vec::new();
        sequence.encode_reply(pending, 0, &Reply::Handshake(handshake_reply()), &mut out).unwrap();
        out[4] ^= 0xff;
        daemon_t.send(&out).unwrap();
    });
    let err = RpcClient::connect(client_t, 1).unwrap_err();
    assert!(matches!(err, RpcError::Sequence(proto::error::SequenceError::RequestIdMismatch { .. })));
    assert_eq!(err.errno(), proto::ioctl::EPROTO);
    daemon.join().unwrap();
}

// ---------------------------------------------------------------------------
// tokio

#[cfg(feature = "tokio-io")]
mod tokio_side {
    use super::*;
    use proto::framing::tokio_io::{Connection, FrameCodec};
    use tokio_util::codec::Decoder;

    fn connection_pair() -> (Connection, Connection) {
        let (a, b) = tokio::net::UnixStream::pair().unwrap();
        (Connection::new(a), Connection::new(b))
    }

    async fn tokio_pass(a: &mut Connection, b: &mut Connection, tag: &str) {
        let (fd, name) = memfd(tag, 2 * PAGE as u64);
        let sent = frame(Opcode::Ioctl, &[5; 40]);
        a.send(&sent, &[fd.as_fd()]).await.unwrap();
        let got = b.recv().await.unwrap().expect("a frame");
        assert_eq!(&got.frame[..], &sent[..]);
        assert_eq!(got.fds.len(), 1);
        assert!(is_cloexec(got.fds[0].as_fd()));
        assert_eq!(open_count(&name), 2);
        let mine = Mapping::new(fd.as_fd(), 0, 2 * PAGE);
        let theirs = Mapping::new(got.fds[0].as_fd(), 0, 2 * PAGE);
        theirs.write(7, b"receiver writes");
        assert_eq!(mine.read(7, 15), b"receiver writes");
        mine.write(PAGE, b"sender writes");
        assert_eq!(theirs.read(PAGE, 13), b"sender writes");
    }

    #[tokio::test]
    async fn tokio_framing_passes_memfds_both_ways() {
        let (mut a, mut b) = connection_pair();
        tokio_pass(&mut a, &mut b, "tokio-ab").await;
        tokio_pass(&mut b, &mut a, "tokio-ba").await;
        // Frames back to back, one with fds: each gets exactly its own.
        let (f1, _) = memfd("tokio-multi", PAGE as u64);
        a.send(&frame(Opcode::Status, &[]), &[]).await.unwrap();
        a.send(&frame(Opcode::Mmap, &[1; 32]), &[f1.as_fd(), f1.as_fd()]).await.unwrap();
        a.send(&frame(Opcode::Close, &[]), &[]).await.unwrap();
        let r1 = b.recv().await.unwrap().unwrap();
        let r2 = b.recv().await.unwrap().unwrap();
        let r3 = b.recv().await.unwrap().unwrap();
        assert_eq!((r1.fds.len(), r2.fds.len(), r3.fds.len()), (0, 2, 0), "descriptors stay with their frame");
        assert_eq!(r2.frame.len(), 48);
        drop(a);
        assert!(b.recv().await.unwrap().is_none(), "clean EOF between frames");
    }

    #[tokio::test]
    async fn tokio_mixed_with_std_both_ways() {
        // The deployment: a std client, a tokio daemon.
        let (std_side, tokio_side) = std::os::unix::net::UnixStream::pair().unwrap();
        tokio_side.set_nonblocking(true).unwrap();
        let mut daemon = Connection::new(tokio::net::UnixStream::from_std(tokio_side).unwrap());
        let client = std::thread::spawn(move || {
            let mut t = UnixTransport::from_stream(std_side);
            let (fd, _) = memfd("mixed-c2d", PAGE as u64);
            let m = Mapping::new(fd.as_fd(), 0, PAGE);
            m.write(0, b"client page");
            t.send_with_handles(&frame(Opcode::Mmap, &[0; 32]), &[fd.as_fd()]).unwrap();
            let mut got = Vec::new();
            let mut fds = Vec::new();
            t.recv_with_handles(&mut got, &mut fds).unwrap();
            let theirs = Mapping::new(fds[0].as_fd(), 0, PAGE);
            let seen = theirs.read(0, 11);
            theirs.write(100, b"ack");
            t.send(&frame(Opcode::Close, &[])).unwrap();
            (seen, m.read(0, 11))
        });
        let got = daemon.recv().await.unwrap().unwrap();
        let theirs = Mapping::new(got.fds[0].as_fd(), 0, PAGE);
        assert_eq!(theirs.read(0, 11), b"client page");
        let (fd, _) = memfd("mixed-d2c", PAGE as u64);
        let mine = Mapping::new(fd.as_fd(), 0, PAGE);
        mine.write(0, b"daemon page");
        daemon.send(&frame(Opcode::Mmap, &[]), &[fd.as_fd()]).await.unwrap();
        let close = daemon.recv().await.unwrap().unwrap();
        assert_eq!(Header::decode(&close.frame).unwrap().opcode, Opcode::Close);
        assert_eq!(mine.read(100, 3), b"ack");
        let (seen, own) = tokio::task::spawn_blocking(move || client.join().unwrap()).await.unwrap();
        assert_eq!((seen.as_slice(), own.as_slice()), (&b"daemon page"[..], &b"client page"[..]));
    }

    #[tokio::test]
    async fn tokio_closes_excess_descriptors() {
        let (a, b) = tokio::net::UnixStream::pair().unwrap();
        let mut b = Connection::new(b);
        let mine: Vec<(OwnedFd, String)> = (0..12).map(|_| memfd("tokio-excess", 4096)).collect();
        let refs: Vec<BorrowedFd<'_>> = mine.iter().map(|(f, _)| f.as_fd()).collect();
        raw_send(a.as_fd(), &frame(Opcode::Status, &[]), &refs);
        let names: Vec<String> = mine.iter().map(|(_, n)| n.clone()).collect();
        drop(mine);
        let got = b.recv().await;
        assert!(matches!(got, Err(TransportError::ControlTruncated { closed: 1.. })), "{got:?}");
        for name in names {
            assert_eq!(open_count(&name), 0, "{name} leaked");
        }
        // And our own sender refuses a fifth descriptor.
        let (x, _y) = connection_pair();
        let mut x = x;
        let five: Vec<OwnedFd> = (0..5).map(|_| memfd("tokio-five", 4096).0).collect();
        let refs: Vec<BorrowedFd<'_>> = five.iter().map(|f| f.as_fd()).collect();
        assert!(matches!(
            x.send(&frame(Opcode::Status, &[]), &refs).await,
            Err(TransportError::TooManyHandles { got: 5, .. })
        ));
    }

    #[tokio::test]
    async fn a_tokio_daemon_serves_the_std_rpc_client() {
        let (std_side, tokio_side) = std::os::unix::net::UnixStream::pair().unwrap();
        tokio_side.set_nonblocking(true).unwrap();
        let mut conn = Connection::new(tokio::net::UnixStream::from_std(tokio_side).unwrap());
        let (bo, _) = memfd("rpc-tokio", 2 * PAGE as u64);
        let daemon_view = Mapping::new(bo.as_fd(), 0, 2 * PAGE);
        daemon_view.write(PAGE, b"daemon");
        let client = std::thread::spawn(move || client_side(UnixTransport::from_stream(std_side)));
        let desc = FdDesc {
            kind: FdKind::Allocation,
            access: fd_access::READ | fd_access::WRITE,
            offset: BO_OFFSET,
            length: PAGE as u64,
        };
        let mut sequence = ServerSequence::new();
        let mut out = Vec::new();
        while let Some(received) = conn.recv().await.unwrap() {
            let (pending, request) = sequence.accept(&received.frame, received.fds.len()).unwrap();
            out.clear();
            let fds: Vec<BorrowedFd<'_>> = match request {
                Request::Handshake(_) => {
                    sequence.encode_reply(pending, 0, &Reply::Handshake(handshake_reply()), &mut out).unwrap();
                    vec![]
                }
                Request::Ioctl(mut ioctl) => {
                    let mut view = proto::ioctl::split_payload(ioctl.cmd, &mut ioctl.payload).unwrap();
                    let mut a: kfd::AllocMemoryOfGpuArgs = view.get();
                    a.handle = 0x77;
                    a.mmap_offset = 0x1_0000_0000;
                    view.set(&a);
                    sequence.encode_ioctl_reply(pending, 0, &ioctl.payload, &[desc], &mut out).unwrap();
                    vec![bo.as_fd()]
                }
                Request::Mmap(_) => {
                    let reply = Reply::Mmap(MmapReply { fds: vec![desc] });
                    sequence.encode_reply(pending, 0, &reply, &mut out).unwrap();
                    vec![bo.as_fd()]
                }
                Request::Close => {
                    sequence.encode_reply(pending, 0, &Reply::Close, &mut out).unwrap();
                    vec![]
                }
                other => panic!("unexpected {other:?}"),
            };
            conn.send(&out, &fds).await.unwrap();
        }
        let seen = tokio::task::spawn_blocking(move || client.join().unwrap()).await.unwrap();
        assert_eq!(seen, b"daemon");
        assert_eq!(daemon_view.read(PAGE + 32, 26), b"written by the application");
    }

    #[test]
    fn codec_cuts_frames_and_refuses_oversized_ones() {
        use bytes::BytesMut;
        let mut codec = FrameCodec;
        let mut buf = BytesMut::new();
        let f = frame(Opcode::Status, &[1, 2, 3]);
        buf.extend_from_slice(&f[..10]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(&f[10..]);
        buf.extend_from_slice(&f[..4]);
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], &f[..]);
        assert_eq!(buf.len(), 4);
        assert!(matches!(codec.decode_eof(&mut buf), Err(TransportError::Truncated { .. })));
        let mut big = BytesMut::from(&frame(Opcode::Ioctl, &[])[..]);
        big[8..12].copy_from_slice(&(MAX_PAYLOAD_BYTES + 1).to_le_bytes());
        assert!(matches!(codec.decode(&mut big), Err(TransportError::Frame(_))));
        assert!(big.capacity() < 1 << 20, "nothing reserved for a refused frame");
    }
}
