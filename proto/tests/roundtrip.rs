//! Property tests: every message type and every ioctl goes client serialise →
//! daemon parse → daemon reply → client deserialise, and comes back as sent,
//! with the caller's pointers restored and output arrays scattered back.

mod common;

use common::{connected, exchange, handshake_reply, FakeMemory};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use proto::error::SequenceError;
use proto::ioctl::{self, ArrayField, Count, IoctlSpec, Location};
use proto::message::{Reply, Request};
use proto::payload::{
    fd_access, AllocationStatus, AttachWaitRequest, ErrorCode, FdDesc, FdKind, HandshakeReply, HandshakeRequest,
    MmapReply, MmapRequest, MunmapRequest, QueueStatus, Role, SessionStatus, StatusReply, MAX_FDS, MAX_GPUS,
    PROTOCOL_VERSION,
};
use proto::sequence::{ClientSequence, Phase, ServerSequence};
use proto::Opcode;

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::Process), Just(Role::Wait), Just(Role::Tool)]
}

fn fd_desc() -> impl Strategy<Value = FdDesc> {
    (prop::sample::select(FdKind::ALL.to_vec()), 0..=fd_access::ALL, 0u64..(1 << 40), 1u64..(1 << 40))
        .prop_map(|(kind, access, page, length)| FdDesc { kind, access, offset: page * 4096, length })
}

fn errno_result() -> impl Strategy<Value = i32> {
    prop_oneof![Just(0), (1i32..=133).prop_map(|e| -e)]
}

proptest! {
    #[test]
    fn handshake_round_trips(
        pid in any::<u32>(),
        role in role(),
        session_id in any::<u64>(),
        token in any::<u64>(),
        daemon_pid in any::<u32>(),
        minors in prop::collection::vec(any::<u32>(), 0..=MAX_GPUS),
        dir in "[^\u{0}]{0,200}",
    ) {
        let mut c = ClientSequence::new();
        let mut s = ServerSequence::new();
        let reply = HandshakeReply {
            version: PROTOCOL_VERSION,
            session_id,
            attach_token: token,
            daemon_pid,
            machine: proto::payload::MachineInfo { render_minors: minors, topology_dir: dir },
        };
        let r = exchange(
            &mut c,
            &mut s,
            &Request::Handshake(HandshakeRequest::new(pid, role)),
            0,
            &Reply::Handshake(reply.clone()),
        );
        prop_assert_eq!(r.reply, Reply::Handshake(reply));
        prop_assert_eq!(s.client_pid(), Some(pid));
        let expected = if role == Role::Wait { Phase::AwaitAttach } else { Phase::Ready(role) };
        prop_assert_eq!(c.phase(), expected);
        prop_assert_eq!(s.phase(), expected);
    }

    #[test]
    fn mmap_round_trips_with_its_fd_trailer(
        addr in any::<u64>(), length in any::<u64>(), prot in any::<i32>(),
        flags in any::<i32>(), offset in any::<i64>(),
        fds in prop::collection::vec(fd_desc(), 0..=MAX_FDS),
        result in errno_result(),
    ) {
        let (mut c, mut s) = connected(Role::Process);
        let req = Request::Mmap(MmapRequest { addr, length, prot, flags, offset, device: proto::payload::DeviceFile::Kfd });
        let reply = if result < 0 { Reply::Failed(Opcode::Mmap) } else { Reply::Mmap(MmapReply { fds }) };
        let r = exchange(&mut c, &mut s, &req, result, &reply);
        prop_assert_eq!(r.result, result);
        prop_assert_eq!(r.reply, reply);
    }

    #[test]
    fn munmap_and_close_round_trip(addr in any::<u64>(), length in any::<u64>(), result in errno_result()) {
        let (mut c, mut s) = connected(Role::Process);
        let reply = if result < 0 { Reply::Failed(Opcode::Munmap) } else { Reply::Munmap };
        let r = exchange(&mut c, &mut s, &Request::Munmap(MunmapRequest { addr, length }), result, &reply);
        prop_assert_eq!((r.result, r.reply), (result, reply));
        let reply = if result < 0 { Reply::Failed(Opcode::Close) } else { Reply::Close };
        let r = exchange(&mut c, &mut s, &Request::Close, result, &reply);
        prop_assert_eq!((r.result, r.reply), (result, reply));
        prop_assert_eq!(c.phase(), Phase::Closed);
        prop_assert_eq!(s.phase(), Phase::Closed);
    }

    #[test]
    fn attach_wait_round_trips(session_id in any::<u64>(), token in any::<u64>(), result in errno_result()) {
        let (mut c, mut s) = {
            let mut c = ClientSequence::new();
            let mut s = ServerSequence::new();
            exchange(&mut c, &mut s, &Request::Handshake(HandshakeRequest::new(1, Role::Wait)), 0,
                &Reply::Handshake(handshake_reply(0)));
            (c, s)
        };
        let reply = if result < 0 { Reply::Failed(Opcode::AttachWait) } else { Reply::AttachWait };
        let r = exchange(&mut c, &mut s,
            &Request::AttachWait(AttachWaitRequest { session_id, attach_token: token }), result, &reply);
        prop_assert_eq!(r.reply, reply);
        // A refused attach leaves the connection waiting to attach.
        let expected = if result < 0 { Phase::AwaitAttach } else { Phase::Ready(Role::Wait) };
        prop_assert_eq!(c.phase(), expected);
        prop_assert_eq!(s.phase(), expected);
    }

    #[test]
    fn status_round_trips(
        daemon_pid in any::<u32>(), uptime_ms in any::<u64>(),
        sessions in prop::collection::vec(
            (any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>(), any::<u64>(),
                any::<u64>())
                .prop_map(|(session_id, client_pid, wait_connections, allocations, queues, events, bytes_allocated,
                        uptime_ms)|
                    SessionStatus { session_id, client_pid, wait_connections, allocations, queues, events,
                        bytes_allocated, uptime_ms }),
            0..20),
        allocations in prop::collection::vec(
            (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u32>(), any::<u32>())
                .prop_map(|(session_id, va, size, handle, gpu_id, flags)|
                    AllocationStatus { session_id, va, size, handle, gpu_id, flags }),
            0..20),
        queues in prop::collection::vec(
            ((any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()),
                (any::<u32>(), any::<u32>(), any::<u32>(), any::<u32>(), "[^\u{0}]{0,300}"))
                .prop_map(|((session_id, ring_base_address, packets_consumed, dispatches_done, running_kernel),
                        (queue_id, gpu_id, queue_type, ring_size, kernel_name))|
                    QueueStatus { session_id, ring_base_address, packets_consumed, dispatches_done, running_kernel,
                        queue_id, gpu_id, queue_type, ring_size, kernel_name }),
            0..20),
        tool in any::<bool>(),
    ) {
        let (mut c, mut s) = connected(if tool { Role::Tool } else { Role::Process });
        let reply = Reply::Status(StatusReply { daemon_pid, uptime_ms, sessions, allocations, queues });
        let r = exchange(&mut c, &mut s, &Request::Status, 0, &reply);
        prop_assert_eq!(r.reply, reply);
    }

    #[test]
    fn rejections_reach_the_client_with_both_versions(client_version in any::<u32>(), pid in any::<u32>()) {
        prop_assume!(client_version != PROTOCOL_VERSION);
        let mut c = ClientSequence::new();
        let mut frame = Vec::new();
        c.encode_request(&Request::Handshake(HandshakeRequest { version: client_version, client_pid: pid, role: Role::Process }), &mut frame).unwrap();
        let mut s = ServerSequence::new();
        let err = s.accept(&frame, 0).unwrap_err();
        let mut out = Vec::new();
        s.encode_rejection(&frame, &err, &mut out);
        match c.decode_reply(&out, 0) {
            Err(SequenceError::Rejected(body)) => {
                prop_assert_eq!(body.code, ErrorCode::VersionMismatch);
                prop_assert_eq!(body.client_version, client_version);
                prop_assert_eq!(body.daemon_version, PROTOCOL_VERSION);
                let text = body.to_string();
                prop_assert!(text.contains(&format!("client protocol {client_version}")), "{}", text);
                prop_assert!(text.contains(&format!("daemon protocol {PROTOCOL_VERSION}")), "{}", text);
            }
            other => prop_assert!(false, "expected a rejection, got {:?}", other),
        }
        prop_assert_eq!(c.phase(), Phase::Failed { during_handshake: true });
        prop_assert_eq!(s.phase(), Phase::Failed { during_handshake: true });
    }
}

// ---------------------------------------------------------------------------
// Every ioctl.

/// Base address of the caller's i-th array, far from the struct and from each
/// other.
fn array_base(i: usize) -> u64 {
    0x10_0000_0000 + (i as u64) * 0x100_0000
}
const ARGS_ADDR: u64 = 0x7000_0000;

fn write_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
fn write_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}
fn read_u64(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

/// Writes a count of `n` elements into the count field of `a`.
fn set_count(args: &mut [u8], a: &ArrayField, n: u64) {
    match a.count {
        Count::U32 { offset } | Count::U32Bytes { offset } => write_u32(args, offset, n as u32),
        Count::U64 { offset } | Count::U64Bytes { offset } => write_u64(args, offset, n),
        Count::U32Bits { offset } => write_u32(args, offset, (n * 32) as u32),
        Count::U32BytesAtMost { offset, .. } => write_u32(args, offset, n as u32),
    }
}

/// The inputs of one ioctl case.
#[derive(Debug, Clone)]
struct IoctlCase {
    args: Vec<u8>,
    selector: u8,
    /// Per array: a fraction (of 0..=7 elements) for the request's count.
    counts: Vec<u8>,
    reply_args: Vec<u8>,
    /// Per array: how much of the sent count the reply keeps.
    shrink: Vec<u8>,
    result: i32,
    omit_args: bool,
    fds: Vec<FdDesc>,
    seed: u64,
}

fn ioctl_case(spec: IoctlSpec) -> impl Strategy<Value = IoctlCase> {
    let n = spec.arrays.len();
    (
        prop::collection::vec(any::<u8>(), spec.arg_size),
        any::<u8>(),
        prop::collection::vec(any::<u8>(), n),
        prop::collection::vec(any::<u8>(), spec.arg_size),
        prop::collection::vec(any::<u8>(), n),
        errno_result(),
        any::<bool>(),
        prop::collection::vec(fd_desc(), 0..=MAX_FDS),
        any::<u64>(),
    )
        .prop_map(|(args, selector, counts, reply_args, shrink, result, omit_args, fds, seed)| IoctlCase {
            args,
            selector,
            counts,
            reply_args,
            shrink,
            result,
            omit_args,
            fds,
            seed,
        })
}

fn fill(seed: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed as u8
        })
        .collect()
}

/// The element count an array gets in a case: small, so cases stay fast;
/// the limits themselves are tested in `validation.rs`.
fn small_count(a: &ArrayField, pick: u8) -> u64 {
    (pick as u64 % 8).min(a.max_elems)
}

fn check_ioctl(spec: IoctlSpec, case: IoctlCase) -> Result<(), TestCaseError> {
    let mem = FakeMemory::default();
    let mut args = case.args.clone();
    let mut seed = case.seed | 1;
    // Pick the selector first (DBG_TRAP's op), among the values that enable
    // some array and one that enables none.
    let selectors: Vec<(usize, u32)> =
        spec.arrays.iter().filter_map(|a| a.when).flat_map(|w| w.values.iter().map(move |v| (w.offset, *v))).collect();
    if let Some(&(offset, _)) = selectors.first() {
        let choice = case.selector as usize % (selectors.len() + 1);
        let value = selectors.get(choice).map_or(7, |s| s.1);
        write_u32(&mut args, offset, value);
    }
    // Counts, pointers and the caller's memory for each present array.
    let mut present = Vec::new();
    for (i, a) in spec.arrays.iter().enumerate() {
        if !a.is_present(&args) {
            present.push(false);
            continue;
        }
        present.push(true);
        set_count(&mut args, a, small_count(a, case.counts[i]));
        let base = match a.location {
            Location::Pointer { offset } => {
                write_u64(&mut args, offset, array_base(i));
                array_base(i)
            }
            Location::Trailing => ARGS_ADDR + spec.arg_size as u64,
        };
        let len = a.byte_len(spec.name, &args).unwrap();
        mem.put(base, &fill(&mut seed, len));
    }
    // SVM's number says how many attributes follow.
    let spec = if ioctl::canonical(spec.cmd) == proto::abi::kfd::cmd::SVM {
        let nattr = u32::from_le_bytes(args[20..24].try_into().unwrap());
        IoctlSpec { cmd: proto::abi::kfd::cmd::svm(nattr), ..spec }
    } else {
        spec
    };
    let lens = ioctl::array_lengths(&spec, &args).unwrap();
    let addr_of = |a: &ArrayField| match a.location {
        Location::Pointer { offset } => read_u64(&args, offset),
        Location::Trailing => ARGS_ADDR + spec.arg_size as u64,
    };
    let before: Vec<Vec<u8>> = spec.arrays.iter().enumerate().map(|(i, a)| mem.get(addr_of(a), lens[i])).collect();

    // Client serialises.
    let (mut client, mut server) = connected(Role::Process);
    let mut frame = Vec::new();
    client
        .encode_ioctl(
            spec.cmd,
            proto::payload::DeviceFile::default_for(spec.cmd),
            &args,
            ARGS_ADDR,
            &mem,
            &[],
            &mut frame,
        )
        .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;

    // Daemon parses: the struct as sent, In arrays copied, Out arrays zeroed.
    let (pending, request) = server.accept(&frame, 0).map_err(|e| TestCaseError::fail(format!("accept: {e}")))?;
    let Request::Ioctl(mut req) = request else {
        return Err(TestCaseError::fail("not an ioctl"));
    };
    prop_assert_eq!(req.cmd, spec.cmd);
    let mut reply_counts = Vec::new();
    {
        let mut view = ioctl::split_payload(spec.cmd, &mut req.payload).unwrap();
        prop_assert_eq!(&view.args[..], &args[..]);
        for (i, a) in spec.arrays.iter().enumerate() {
            let expected = if a.dir.is_in() { before[i].clone() } else { vec![0; lens[i]] };
            prop_assert_eq!(&view.arrays[i][..], &expected[..], "{} array {}", spec.name, a.name);
        }
        // Daemon replies: any struct (its pointers are its own), the same
        // selector, counts no larger than what was sent, new array contents.
        view.args.copy_from_slice(&case.reply_args);
        for w in spec.arrays.iter().filter_map(|a| a.when) {
            view.args[w.offset..w.offset + 4].copy_from_slice(&args[w.offset..w.offset + 4]);
        }
        for (i, a) in spec.arrays.iter().enumerate() {
            if !present[i] {
                reply_counts.push(0);
                continue;
            }
            let sent = small_count(a, case.counts[i]);
            let kept = if sent == 0 { 0 } else { case.shrink[i] as u64 % (sent + 1) };
            set_count(view.args, a, kept);
            reply_counts.push(a.byte_len(spec.name, view.args).unwrap().min(lens[i]));
            let data = fill(&mut seed, lens[i]);
            view.arrays[i].copy_from_slice(&data);
        }
    }
    let daemon_payload = req.payload.clone();
    let fds = if case.result < 0 { vec![] } else { case.fds.clone() };
    let sent_payload: &[u8] = if case.result < 0 && case.omit_args { &[] } else { &daemon_payload };
    let mut out = Vec::new();
    server
        .encode_ioctl_reply(pending, case.result, sent_payload, &fds, &mut out)
        .map_err(|e| TestCaseError::fail(format!("reply: {e}")))?;

    // Client deserialises.
    let response = client.decode_reply(&out, fds.len()).map_err(|e| TestCaseError::fail(format!("decode: {e}")))?;
    prop_assert_eq!(response.result, case.result);
    let Reply::Ioctl(reply) = response.reply else {
        return Err(TestCaseError::fail("not an ioctl reply"));
    };
    prop_assert_eq!(&reply.fds, &fds);
    prop_assert_eq!(reply.cmd, spec.cmd);
    if reply.payload.is_empty() {
        prop_assert!(case.result < 0 && case.omit_args);
        return Ok(());
    }
    let mut back = args.clone();
    ioctl::decode_reply(spec.cmd, &mut back, ARGS_ADDR, &reply.payload, &mem)
        .map_err(|e| TestCaseError::fail(format!("apply: {e}")))?;

    // The struct is the daemon's, except the caller's pointers.
    let mut expected = daemon_payload[..spec.arg_size].to_vec();
    for (i, a) in spec.arrays.iter().enumerate() {
        if let (Location::Pointer { offset }, true) = (a.location, present[i]) {
            write_u64(&mut expected, offset, read_u64(&args, offset));
        }
    }
    prop_assert_eq!(&back, &expected, "{} struct", spec.name);
    // Out arrays: the produced prefix is the daemon's, the rest untouched.
    // In arrays: untouched.
    let mut pos = spec.arg_size;
    for (i, a) in spec.arrays.iter().enumerate() {
        let now = mem.get(addr_of(a), lens[i]);
        let slot = &daemon_payload[pos..pos + lens[i]];
        pos += lens[i];
        if a.dir.is_out() {
            let produced = reply_counts[i];
            prop_assert_eq!(&now[..produced], &slot[..produced], "{} {}", spec.name, a.name);
            prop_assert_eq!(&now[produced..], &before[i][produced..], "{} {}", spec.name, a.name);
        } else {
            prop_assert_eq!(&now, &before[i], "{} {}", spec.name, a.name);
        }
    }
    Ok(())
}

#[test]
fn every_ioctl_round_trips_with_pointers_restored() {
    let cases = std::env::var("PROTO_IOCTL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    let mut count = 0;
    for spec in ioctl::all_specs() {
        let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
        if let Err(e) = runner.run(&ioctl_case(spec), |case| check_ioctl(spec, case)) {
            panic!("{}: {e}", spec.name);
        }
        count += 1;
    }
    // Every KFD ioctl of the 5.2 thunk's header plus the DRM ones.
    assert!(count >= 43, "only {count} ioctls covered");
}

/// The ioctls the ROCm 5.2 stack issues (client contract §5.1) and the DRM
/// ioctls libdrm issues are all known to the codec.
#[test]
fn the_52_ioctl_table_is_covered() {
    use proto::abi::{drm, kfd};
    let table = [
        (0x80084b01, "GET_VERSION"),
        (0xc0584b02, "CREATE_QUEUE"),
        (0xc0084b03, "DESTROY_QUEUE"),
        (0x40204b04, "SET_MEMORY_POLICY"),
        (0xc0284b05, "GET_CLOCK_COUNTERS"),
        (0x81904b06, "GET_PROCESS_APERTURES"),
        (0x40184b07, "UPDATE_QUEUE"),
        (0xc0204b08, "CREATE_EVENT"),
        (0x40084b09, "DESTROY_EVENT"),
        (0x40084b0a, "SET_EVENT"),
        (0x40084b0b, "RESET_EVENT"),
        (0xc0184b0c, "WAIT_EVENTS"),
        (0xc0104b11, "SET_SCRATCH_BACKING_VA"),
        (0xc0284b12, "GET_TILE_CONFIG"),
        (0x40184b13, "SET_TRAP_HANDLER"),
        (0xc0104b14, "GET_PROCESS_APERTURES_NEW"),
        (0x40084b15, "ACQUIRE_VM"),
        (0xc0284b16, "ALLOC_MEMORY_OF_GPU"),
        (0x40084b17, "FREE_MEMORY_OF_GPU"),
        (0xc0184b18, "MAP_MEMORY_TO_GPU"),
        (0xc0184b19, "UNMAP_MEMORY_FROM_GPU"),
        (0x40104b1a, "SET_CU_MASK"),
        (0xc0184b1b, "GET_QUEUE_WAVE_STATE"),
        (0xc0204b1c, "GET_DMABUF_INFO"),
        (0xc0184b1d, "IMPORT_DMABUF"),
        (0xc0104b1e, "ALLOC_QUEUE_GWS"),
        (0xc0084b1f, "SMI_EVENTS"),
        (0xc0184b20, "SVM"),
        (0xc0044b21, "SET_XNACK_MODE"),
        (0xc0384b22, "CRIU_OP"),
        (0xc0304b80, "IPC_IMPORT_HANDLE"),
        (0xc0204b81, "IPC_EXPORT_HANDLE"),
        (0xc0284b82, "DBG_TRAP"),
        (0xc0304b83, "CROSS_MEMORY_COPY"),
        (0xc0204b84, "RLC_SPM"),
        (drm::cmd::VERSION, "DRM_IOCTL_VERSION"),
        (drm::cmd::AMDGPU_INFO, "DRM_IOCTL_AMDGPU_INFO"),
        (drm::cmd::GET_CLIENT, "DRM_IOCTL_GET_CLIENT"),
    ];
    for (cmd, name) in table {
        let spec = ioctl::spec(cmd).unwrap_or_else(|| panic!("{name} {cmd:#x} unknown"));
        assert_eq!(spec.name, name);
        assert_eq!(spec.arg_size, proto::abi::ioc_size(cmd), "{name}");
    }
    assert_eq!(kfd::cmd::WAIT_EVENTS, 0xc0184b0c);
}
