//! Negative tests: each validation rule of the protocol, on the side(s) that
//! enforce it, with the typed error it must produce (never a panic).

mod common;

use common::{connected, exchange, handshake_reply};
use proto::abi::{drm, kfd};
use proto::error::{FrameError, MessageError, SequenceError};
use proto::header::{Header, Opcode, MAX_PAYLOAD_BYTES};
use proto::ioctl::IoctlError;
use proto::message::{Reply, Request};
use proto::payload::{
    encode_ioctl_reply, fd_access, ErrorCode, FdDesc, FdKind, HandshakeReply, HandshakeRequest, IoctlRequest,
    MmapReply, MmapRequest, ProtocolErrorBody, Role, PROTOCOL_VERSION,
};
use proto::sequence::{ClientSequence, Phase, ServerSequence};

/// A frame with arbitrary header fields.
fn raw_frame(opcode: u16, reserved: u16, id: u32, result: i32, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&opcode.to_le_bytes());
    v.extend_from_slice(&reserved.to_le_bytes());
    v.extend_from_slice(&id.to_le_bytes());
    v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    v.extend_from_slice(&result.to_le_bytes());
    v.extend_from_slice(payload);
    v
}

fn handshake_payload(version: u32, role_flags: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(b"RJSU");
    v.extend_from_slice(&version.to_le_bytes());
    v.extend_from_slice(&77u32.to_le_bytes());
    v.extend_from_slice(&role_flags.to_le_bytes());
    v
}

/// Feeds `frame` to a server in `role` (or fresh if `None`) and returns the
/// error, checking that the rejection the daemon would send decodes, names
/// the expected code and echoes the request id.
fn refused(role: Option<Role>, frame: &[u8], fds: usize, code: ErrorCode) -> SequenceError {
    let mut server = match role {
        Some(r) => connected(r).1,
        None => ServerSequence::new(),
    };
    let err = server.accept(frame, fds).expect_err("must be refused");
    let mut out = Vec::new();
    server.encode_rejection(frame, &err, &mut out);
    let header = Header::decode(&out).unwrap();
    assert_eq!(header.opcode, Opcode::ProtocolError);
    if frame.len() >= 8 {
        assert_eq!(header.request_id, u32::from_le_bytes(frame[4..8].try_into().unwrap()));
    }
    let body = ProtocolErrorBody::decode(&out[16..]).unwrap();
    assert_eq!(body.code, code, "{err}");
    assert_eq!(body.reason, err.to_string());
    // After any refusal the connection accepts nothing.
    let status = raw_frame(Opcode::Status as u16, 0, 1, 0, &[]);
    assert!(server.accept(&status, 0).is_err());
    err
}

// --- Rule: reserved ≠ 0 -----------------------------------------------------

#[test]
fn reserved_header_field_is_refused_by_both_sides() {
    let frame = raw_frame(0, 1, 5, 0, &handshake_payload(PROTOCOL_VERSION, 0));
    let err = refused(None, &frame, 0, ErrorCode::MalformedFrame);
    assert_eq!(err, SequenceError::Frame(FrameError::ReservedNonZero(1)));

    let (mut c, _) = connected(Role::Process);
    c.encode_request(&Request::Status, &mut Vec::new()).unwrap();
    let reply = raw_frame(Opcode::Status as u16, 0x8000, 2, 0, &[0; 24]);
    assert_eq!(c.decode_reply(&reply, 0), Err(SequenceError::Frame(FrameError::ReservedNonZero(0x8000))));
}

#[test]
fn reserved_payload_fields_are_refused() {
    // Non-zero reserved word in a handshake reply and in an fd trailer.
    let mut c = ClientSequence::new();
    c.encode_request(&Request::Handshake(HandshakeRequest::new(1, Role::Process)), &mut Vec::new()).unwrap();
    let mut payload = Vec::new();
    handshake_reply(1).encode(&mut payload).unwrap();
    payload[36] = 1;
    let frame = raw_frame(0, 0, 1, 0, &payload);
    assert!(matches!(c.decode_reply(&frame, 0), Err(SequenceError::Message(MessageError::ReservedNonZero { .. }))));
    let mut trailer = Vec::new();
    proto::payload::put_fd_trailer(&mut trailer, &[]).unwrap();
    trailer[4] = 1;
    assert!(matches!(MmapReply::decode(&trailer), Err(MessageError::ReservedNonZero { .. })));
}

// --- Rule: unknown opcode ---------------------------------------------------

#[test]
fn unknown_and_reserved_opcodes_are_refused() {
    for op in [6u16, 15, 20, 0x100, 0xffff] {
        let frame = raw_frame(op, 0, 3, 0, &[]);
        assert_eq!(
            refused(Some(Role::Process), &frame, 0, ErrorCode::MalformedFrame),
            SequenceError::Frame(FrameError::UnknownOpcode(op))
        );
    }
    // OPEN is AMD's reserved opcode: never valid, in any phase.
    for role in [None, Some(Role::Process)] {
        let err = refused(role, &raw_frame(Opcode::Open as u16, 0, 3, 0, &[]), 0, ErrorCode::MalformedPayload);
        assert_eq!(err, SequenceError::Message(MessageError::ReservedOpcode { opcode: Opcode::Open }));
    }
    // PROTOCOL_ERROR is never a request.
    let err = refused(
        Some(Role::Process),
        &raw_frame(Opcode::ProtocolError as u16, 0, 3, 0, &[]),
        0,
        ErrorCode::MalformedPayload,
    );
    assert!(matches!(err, SequenceError::Message(MessageError::NotARequest { .. })));
    // And the client refuses a reply with an unknown opcode.
    let (mut c, _) = connected(Role::Process);
    c.encode_request(&Request::Status, &mut Vec::new()).unwrap();
    assert_eq!(
        c.decode_reply(&raw_frame(42, 0, 2, 0, &[]), 0),
        Err(SequenceError::Frame(FrameError::UnknownOpcode(42)))
    );
}

// --- Rule: payload size exactly right for the opcode ------------------------

#[test]
fn every_fixed_size_request_is_exact() {
    let cases: [(Opcode, usize, Role); 6] = [
        (Opcode::Mmap, 40, Role::Process),
        (Opcode::Stats, 16, Role::Process),
        (Opcode::Munmap, 16, Role::Process),
        (Opcode::Close, 0, Role::Process),
        (Opcode::Status, 0, Role::Tool),
        (Opcode::AttachWait, 16, Role::Wait),
    ];
    for (op, size, role) in cases {
        let mut server_role = Some(role);
        if role == Role::Wait {
            // An unattached wait connection.
            server_role = None;
        }
        for wrong in [size.wrapping_sub(1), size + 1, size + 8] {
            if wrong > 64 {
                continue;
            }
            let frame = raw_frame(op as u16, 0, 9, 0, &vec![0; wrong]);
            let err = match server_role {
                Some(r) => refused(Some(r), &frame, 0, ErrorCode::MalformedPayload),
                None => {
                    let mut c = ClientSequence::new();
                    let mut s = ServerSequence::new();
                    exchange(
                        &mut c,
                        &mut s,
                        &Request::Handshake(HandshakeRequest::new(1, Role::Wait)),
                        0,
                        &Reply::Handshake(handshake_reply(0)),
                    );
                    s.accept(&frame, 0).unwrap_err()
                }
            };
            assert!(
                matches!(
                    err,
                    SequenceError::Message(MessageError::PayloadSize { expected, got, .. })
                        if expected == size && got == wrong
                ),
                "{op} with {wrong} bytes: {err}"
            );
        }
    }
    // HANDSHAKE: 16 bytes exactly.
    for wrong in [8, 15, 17, 32] {
        let mut p = handshake_payload(PROTOCOL_VERSION, 0);
        p.resize(wrong, 0);
        let err = refused(None, &raw_frame(0, 0, 1, 0, &p), 0, ErrorCode::MalformedPayload);
        assert!(matches!(err, SequenceError::Message(MessageError::PayloadSize { expected: 16, .. })), "{err}");
    }
}

#[test]
fn frame_length_must_match_its_header() {
    let mut frame = raw_frame(Opcode::Status as u16, 0, 1, 0, &[]);
    frame.push(0);
    assert_eq!(
        refused(Some(Role::Process), &frame, 0, ErrorCode::MalformedFrame),
        SequenceError::Frame(FrameError::LengthMismatch { declared: 16, got: 17 })
    );
    assert!(matches!(
        refused(None, &frame[..10], 0, ErrorCode::MalformedFrame),
        SequenceError::Frame(FrameError::ShortHeader { got: 10 })
    ));
}

// --- Rule: payload size exactly right for the ioctl -------------------------

/// An IOCTL request frame on the device its cmd belongs to: head, `payload`, and an empty
/// fd trailer.
fn ioctl_frame(cmd: u32, args_bytes: u32, payload: &[u8]) -> Vec<u8> {
    ioctl_frame_on(cmd, proto::payload::DeviceFile::default_for(cmd).to_wire(), args_bytes, payload)
}

fn ioctl_frame_on(cmd: u32, device: u32, args_bytes: u32, payload: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&cmd.to_le_bytes());
    p.extend_from_slice(&args_bytes.to_le_bytes());
    p.extend_from_slice(&device.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes());
    p.extend_from_slice(payload);
    p.extend_from_slice(&[0; 8]);
    raw_frame(Opcode::Ioctl as u16, 0, 11, 0, &p)
}

#[test]
fn ioctl_payloads_are_exact_for_the_ioctl() {
    let alloc = [0u8; 40];
    // Right.
    let (_, mut s) = connected(Role::Process);
    assert!(s.accept(&ioctl_frame(kfd::cmd::ALLOC_MEMORY_OF_GPU, 40, &alloc), 0).is_ok());
    // Struct too short / too long for the ioctl number.
    for len in [39usize, 41, 0] {
        let err = refused(
            Some(Role::Process),
            &ioctl_frame(kfd::cmd::ALLOC_MEMORY_OF_GPU, len as u32, &vec![0; len]),
            0,
            ErrorCode::MalformedPayload,
        );
        assert!(matches!(err, SequenceError::Message(MessageError::Ioctl(IoctlError::PayloadSize { .. }))), "{err}");
    }
    // args_bytes disagreeing with the frame: the arguments no longer fit the
    // ioctl, or run past the end of the payload.
    for args_bytes in [39u32, 41] {
        let err = refused(
            Some(Role::Process),
            &ioctl_frame(kfd::cmd::ALLOC_MEMORY_OF_GPU, args_bytes, &alloc),
            0,
            ErrorCode::MalformedPayload,
        );
        assert!(matches!(err, SequenceError::Message(MessageError::Ioctl(IoctlError::PayloadSize { .. }))), "{err}");
    }
    for args_bytes in [40 + 9, u32::MAX] {
        let err = refused(
            Some(Role::Process),
            &ioctl_frame(kfd::cmd::ALLOC_MEMORY_OF_GPU, args_bytes, &alloc),
            0,
            ErrorCode::MalformedPayload,
        );
        assert!(matches!(err, SequenceError::Message(MessageError::PayloadSize { .. })), "{err}");
    }
    // A head shorter than 8 bytes.
    let err = refused(
        Some(Role::Process),
        &raw_frame(Opcode::Ioctl as u16, 0, 1, 0, &[1, 2, 3]),
        0,
        ErrorCode::MalformedPayload,
    );
    assert!(matches!(err, SequenceError::Message(MessageError::PayloadTooShort { min: 16, got: 3, .. })));
    // An ioctl on the wrong kind of device: a KFD ioctl on a render node, a DRM one on
    // /dev/kfd or on a minor that is no render node.
    for (cmd, device) in [(kfd::cmd::GET_VERSION, 128), (drm::cmd::VERSION, 0), (drm::cmd::VERSION, 127)] {
        let err =
            refused(Some(Role::Process), &ioctl_frame_on(cmd, device, 8, &[0; 8]), 0, ErrorCode::MalformedPayload);
        assert!(matches!(err, SequenceError::Message(MessageError::WrongDevice { .. })), "{err}");
    }
    // An unknown ioctl is refused, never answered with success.
    let err = refused(Some(Role::Process), &ioctl_frame(0xc0084bff, 8, &[0; 8]), 0, ErrorCode::MalformedPayload);
    assert_eq!(err, SequenceError::Message(MessageError::Ioctl(IoctlError::Unknown(0xc0084bff))));
}

#[test]
fn ioctl_array_tails_are_exact() {
    // WAIT_EVENTS with 3 events needs 24 + 3 × 48 bytes.
    let args = kfd::WaitEventsArgs { events_ptr: 0x1000, num_events: 3, ..Default::default() };
    let mut payload = bytemuck::bytes_of(&args).to_vec();
    for tail in [0usize, 48, 96, 143, 145, 192] {
        payload.truncate(24);
        payload.resize(24 + tail, 0);
        let frame = ioctl_frame(kfd::cmd::WAIT_EVENTS, payload.len() as u32, &payload);
        let err = refused(Some(Role::Process), &frame, 0, ErrorCode::MalformedPayload);
        assert!(
            matches!(err, SequenceError::Message(MessageError::Ioctl(IoctlError::PayloadSize { expected: 168, .. }))),
            "tail {tail}: {err}"
        );
    }
}

// --- Rule: array counts that overflow or exceed limits ----------------------

fn ioctl_err(cmd: u32, args: &[u8]) -> IoctlError {
    let frame = ioctl_frame(cmd, args.len() as u32, args);
    match refused(Some(Role::Process), &frame, 0, ErrorCode::MalformedPayload) {
        SequenceError::Message(MessageError::Ioctl(e)) => e,
        other => panic!("expected an ioctl error, got {other}"),
    }
}

#[test]
fn more_than_4096_events_is_refused() {
    for n in [4097u32, 0x1000_0000, u32::MAX] {
        let args = kfd::WaitEventsArgs { events_ptr: 8, num_events: n, ..Default::default() };
        let err = ioctl_err(kfd::cmd::WAIT_EVENTS, bytemuck::bytes_of(&args));
        assert_eq!(err, IoctlError::TooMany { name: "WAIT_EVENTS", field: "events_ptr", count: n as u64, max: 4096 });
    }
    // 4096 itself is fine (on the client side, from the caller's memory).
    let mem = common::FakeMemory::default();
    mem.put(0x1000, &vec![0; 4096 * 48]);
    let args = kfd::WaitEventsArgs { events_ptr: 0x1000, num_events: 4096, ..Default::default() };
    let (mut c, mut s) = connected(Role::Process);
    let mut frame = Vec::new();
    c.encode_ioctl(
        kfd::cmd::WAIT_EVENTS,
        proto::payload::DeviceFile::Kfd,
        bytemuck::bytes_of(&args),
        0x10,
        &mem,
        &[],
        &mut frame,
    )
    .unwrap();
    assert_eq!(frame.len(), 16 + 16 + 24 + 4096 * 48 + 8);
    assert!(s.accept(&frame, 0).is_ok());
}

#[test]
fn more_than_64_devices_is_refused() {
    for cmd in [kfd::cmd::MAP_MEMORY_TO_GPU, kfd::cmd::UNMAP_MEMORY_FROM_GPU] {
        let args = kfd::MapMemoryToGpuArgs { device_ids_array_ptr: 8, n_devices: 65, ..Default::default() };
        assert!(matches!(ioctl_err(cmd, bytemuck::bytes_of(&args)), IoctlError::TooMany { count: 65, max: 64, .. }));
    }
    let mut dbg = kfd::DbgTrapArgs { ptr: 8, op: kfd::dbg_trap_op::DEVICE_SNAPSHOT, data1: 65, ..Default::default() };
    assert!(matches!(ioctl_err(kfd::cmd::DBG_TRAP, bytemuck::bytes_of(&dbg)), IoctlError::TooMany { count: 65, .. }));
    dbg.data1 = 64;
    let mut payload = bytemuck::bytes_of(&dbg).to_vec();
    payload.resize(40 + 64 * 64, 0);
    let (_, mut s) = connected(Role::Process);
    assert!(s.accept(&ioctl_frame(kfd::cmd::DBG_TRAP, payload.len() as u32, &payload), 0).is_ok());
}

#[test]
fn counts_that_would_overflow_are_refused_before_any_arithmetic() {
    // u64 counts (CROSS_MEMORY_COPY, DRM_IOCTL_VERSION): u64::MAX × 16 would
    // wrap; it must be a TooMany, not a small length.
    let cross = kfd::CrossMemoryCopyArgs { src_mem_range_array: 8, src_mem_array_size: u64::MAX, ..Default::default() };
    assert!(matches!(
        ioctl_err(kfd::cmd::CROSS_MEMORY_COPY, bytemuck::bytes_of(&cross)),
        IoctlError::TooMany { count: u64::MAX, .. }
    ));
    let cross = kfd::CrossMemoryCopyArgs {
        src_mem_range_array: 8,
        src_mem_array_size: (u64::MAX / 16) + 2,
        ..Default::default()
    };
    assert!(matches!(ioctl_err(kfd::cmd::CROSS_MEMORY_COPY, bytemuck::bytes_of(&cross)), IoctlError::TooMany { .. }));
    let v = drm::DrmVersion { name_len: u64::MAX, name: 8, ..Default::default() };
    assert!(matches!(ioctl_err(drm::cmd::VERSION, bytemuck::bytes_of(&v)), IoctlError::TooMany { .. }));
    // Bit counts that are not whole words.
    let cu = kfd::SetCuMaskArgs { queue_id: 0, num_cu_mask: 31, cu_mask_ptr: 8 };
    assert!(matches!(
        ioctl_err(kfd::cmd::SET_CU_MASK, bytemuck::bytes_of(&cu)),
        IoctlError::BadCount { count: 31, .. }
    ));
}

#[test]
fn oversized_replies_and_statuses_are_refused() {
    // A status body claiming 4 billion sessions in a small payload.
    let mut p = vec![0u8; 24];
    p[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let (mut c, _) = connected(Role::Tool);
    c.encode_request(&Request::Status, &mut Vec::new()).unwrap();
    assert!(matches!(
        c.decode_reply(&raw_frame(Opcode::Status as u16, 0, 2, 0, &p), 0),
        Err(SequenceError::Message(MessageError::PayloadSize { .. }))
    ));
    // A handshake reply claiming 65 GPUs.
    let mut c = ClientSequence::new();
    c.encode_request(&Request::Handshake(HandshakeRequest::new(1, Role::Process)), &mut Vec::new()).unwrap();
    let mut payload = Vec::new();
    handshake_reply(1).encode(&mut payload).unwrap();
    payload[28..32].copy_from_slice(&65u32.to_le_bytes());
    assert!(matches!(
        c.decode_reply(&raw_frame(0, 0, 1, 0, &payload), 0),
        Err(SequenceError::Message(MessageError::TooMany { count: 65, max: 64, .. }))
    ));
}

// --- Rule: frames over 16 MiB -----------------------------------------------

#[test]
fn frames_over_16_mib_are_refused_from_the_header() {
    let mut frame = raw_frame(Opcode::Ioctl as u16, 0, 1, 0, &[]);
    frame[8..12].copy_from_slice(&(MAX_PAYLOAD_BYTES + 1).to_le_bytes());
    assert!(matches!(
        refused(Some(Role::Process), &frame, 0, ErrorCode::MalformedFrame),
        SequenceError::Frame(FrameError::TooLarge { .. })
    ));
    // The client refuses to build one.
    let (mut c, _) = connected(Role::Process);
    let huge = Request::Ioctl(IoctlRequest::new(kfd::cmd::GET_VERSION, vec![0; MAX_PAYLOAD_BYTES as usize]));
    assert!(matches!(
        c.encode_request(&huge, &mut Vec::new()),
        Err(SequenceError::Message(MessageError::TooLarge { .. }))
    ));
}

// --- Rule: handshake first, exactly once; requests after a failure ----------

#[test]
fn handshake_comes_first_and_once() {
    for op in [Opcode::Status, Opcode::Close, Opcode::Mmap, Opcode::AttachWait] {
        let frame = raw_frame(op as u16, 0, 1, 0, &[]);
        assert_eq!(
            refused(None, &frame, 0, ErrorCode::HandshakeRequired),
            SequenceError::HandshakeRequired { got: op }
        );
    }
    let frame = raw_frame(0, 0, 2, 0, &handshake_payload(PROTOCOL_VERSION, 0));
    assert_eq!(
        refused(Some(Role::Process), &frame, 0, ErrorCode::DuplicateHandshake),
        SequenceError::DuplicateHandshake
    );
    let (mut c, _) = connected(Role::Process);
    assert_eq!(
        c.encode_request(&Request::Handshake(HandshakeRequest::new(1, Role::Process)), &mut Vec::new()),
        Err(SequenceError::DuplicateHandshake)
    );
}

#[test]
fn nothing_is_accepted_after_a_failed_handshake() {
    // The daemon refused the handshake (e.g. could not create the process).
    let mut c = ClientSequence::new();
    let mut s = ServerSequence::new();
    let r = exchange(
        &mut c,
        &mut s,
        &Request::Handshake(HandshakeRequest::new(1, Role::Process)),
        -19,
        &Reply::Failed(Opcode::Handshake),
    );
    assert_eq!(r.result, -19);
    assert_eq!(c.phase(), Phase::Failed { during_handshake: true });
    assert_eq!(
        c.encode_request(&Request::Status, &mut Vec::new()),
        Err(SequenceError::HandshakeFailed { got: Opcode::Status })
    );
    let status = raw_frame(Opcode::Status as u16, 0, 2, 0, &[]);
    assert_eq!(s.accept(&status, 0), Err(SequenceError::HandshakeFailed { got: Opcode::Status }));
    // A malformed handshake fails the connection the same way.
    let mut s = ServerSequence::new();
    assert!(s.accept(&raw_frame(0, 0, 1, 0, &handshake_payload(PROTOCOL_VERSION, 7)), 0).is_err());
    let good = raw_frame(0, 0, 2, 0, &handshake_payload(PROTOCOL_VERSION, 0));
    assert_eq!(s.accept(&good, 0), Err(SequenceError::HandshakeFailed { got: Opcode::Handshake }));
}

// --- Rule: protocol version mismatch, checked and reported by both sides ----

#[test]
fn daemon_reports_a_client_of_another_version() {
    let frame = raw_frame(0, 0, 1, 0, &handshake_payload(PROTOCOL_VERSION + 1, 0));
    let err = refused(None, &frame, 0, ErrorCode::VersionMismatch);
    assert_eq!(
        err,
        SequenceError::Message(MessageError::VersionMismatch {
            client: PROTOCOL_VERSION + 1,
            daemon: PROTOCOL_VERSION
        })
    );
    assert_eq!(err.errno(), proto::error::EPROTONOSUPPORT);
    // AMD's client sends an empty handshake: told it is not one of ours.
    let err = refused(None, &raw_frame(0, 0, 0, 0, &[]), 0, ErrorCode::MalformedPayload);
    assert!(matches!(err, SequenceError::Message(MessageError::PayloadTooShort { .. })));
    let mut bad_magic = handshake_payload(PROTOCOL_VERSION, 0);
    bad_magic[0] = b'X';
    refused(None, &raw_frame(0, 0, 0, 0, &bad_magic), 0, ErrorCode::BadMagic);
}

#[test]
fn client_reports_a_daemon_of_another_version() {
    let mut c = ClientSequence::new();
    c.encode_request(&Request::Handshake(HandshakeRequest::new(1, Role::Process)), &mut Vec::new()).unwrap();
    let mut payload = Vec::new();
    HandshakeReply { version: PROTOCOL_VERSION + 5, ..handshake_reply(1) }.encode(&mut payload).unwrap();
    let err = c.decode_reply(&raw_frame(0, 0, 1, 0, &payload), 0).unwrap_err();
    assert_eq!(
        err,
        SequenceError::Message(MessageError::VersionMismatch {
            client: PROTOCOL_VERSION,
            daemon: PROTOCOL_VERSION + 5
        })
    );
    assert!(err
        .to_string()
        .contains(&format!("client speaks {PROTOCOL_VERSION}, daemon speaks {}", PROTOCOL_VERSION + 5)));
}

// --- Request-id and opcode echo ---------------------------------------------

#[test]
fn client_checks_request_id_and_opcode_echo() {
    let (mut c, _) = connected(Role::Process);
    let id = c.encode_request(&Request::Status, &mut Vec::new()).unwrap();
    let mut body = Vec::new();
    proto::payload::StatusReply::default().encode(&mut body).unwrap();
    assert_eq!(
        c.decode_reply(&raw_frame(Opcode::Status as u16, 0, id + 1, 0, &body), 0),
        Err(SequenceError::RequestIdMismatch { expected: id, got: id + 1 })
    );
    let (mut c, _) = connected(Role::Process);
    let id = c.encode_request(&Request::Status, &mut Vec::new()).unwrap();
    assert_eq!(
        c.decode_reply(&raw_frame(Opcode::Munmap as u16, 0, id, 0, &[]), 0),
        Err(SequenceError::OpcodeMismatch { expected: Opcode::Status, got: Opcode::Munmap })
    );
    // After a mismatch the client sequence is unusable.
    assert!(c.encode_request(&Request::Status, &mut Vec::new()).is_err());
    // A reply with nothing outstanding.
    let (mut c, _) = connected(Role::Process);
    assert_eq!(
        c.decode_reply(&raw_frame(Opcode::Status as u16, 0, 1, 0, &body), 0),
        Err(SequenceError::NoRequestPending { got: Opcode::Status })
    );
}

#[test]
fn ioctl_reply_must_match_the_request() {
    let (mut c, mut s) = connected(Role::Process);
    let args = kfd::GetVersionArgs::default();
    let mut frame = Vec::new();
    c.encode_ioctl(
        kfd::cmd::GET_VERSION,
        proto::payload::DeviceFile::Kfd,
        bytemuck::bytes_of(&args),
        0,
        &common::FakeMemory::default(),
        &[],
        &mut frame,
    )
    .unwrap();
    let (pending, _) = s.accept(&frame, 0).unwrap();
    // The daemon cannot answer with another ioctl or another size...
    assert!(matches!(
        s.encode_ioctl_reply(pending, 0, &[0; 9], &[], &mut Vec::new()),
        Err(SequenceError::Message(MessageError::ReplyArgsSize { expected: 8, got: 9 }))
    ));
    // ...and the client refuses one that does.
    let mut p = Vec::new();
    encode_ioctl_reply(&mut p, kfd::cmd::GET_CLOCK_COUNTERS, &[0; 8], &[]).unwrap();
    let reply = raw_frame(Opcode::Ioctl as u16, 0, 2, 0, &p);
    assert_eq!(
        c.decode_reply(&reply, 0),
        Err(SequenceError::Message(MessageError::WrongIoctl {
            expected: kfd::cmd::GET_VERSION,
            got: kfd::cmd::GET_CLOCK_COUNTERS
        }))
    );
}

// --- One request at a time; nothing after CLOSE; result 0 in requests -------

#[test]
fn one_request_at_a_time_and_nothing_after_close() {
    let (mut c, mut s) = connected(Role::Process);
    let mut frame = Vec::new();
    c.encode_request(&Request::Status, &mut frame).unwrap();
    assert!(matches!(c.encode_request(&Request::Status, &mut Vec::new()), Err(SequenceError::RequestPending { .. })));
    let (_pending, _) = s.accept(&frame, 0).unwrap();
    let second = raw_frame(Opcode::Status as u16, 0, 9, 0, &[]);
    assert_eq!(
        s.accept(&second, 0),
        Err(SequenceError::RequestPending { pending: Opcode::Status, got: Opcode::Status })
    );

    let (mut c, mut s) = connected(Role::Process);
    exchange(&mut c, &mut s, &Request::Close, 0, &Reply::Close);
    assert_eq!(c.encode_request(&Request::Status, &mut Vec::new()), Err(SequenceError::Closed { got: Opcode::Status }));
    assert_eq!(refused_after_close(&mut s), SequenceError::Closed { got: Opcode::Status });

    let err =
        refused(Some(Role::Process), &raw_frame(Opcode::Status as u16, 0, 1, -5, &[]), 0, ErrorCode::MalformedPayload);
    assert_eq!(err, SequenceError::Message(MessageError::ResultInRequest(-5)));
}

fn refused_after_close(s: &mut ServerSequence) -> SequenceError {
    s.accept(&raw_frame(Opcode::Status as u16, 0, 1, 0, &[]), 0).unwrap_err()
}

// --- Roles ------------------------------------------------------------------

#[test]
fn wait_connections_carry_only_wait_events() {
    let (mut c, mut s) = connected(Role::Wait);
    // The client refuses to send anything else...
    let mem = common::FakeMemory::default();
    let args = kfd::CreateEventArgs::default();
    assert!(matches!(
        c.encode_ioctl(
            kfd::cmd::CREATE_EVENT,
            proto::payload::DeviceFile::Kfd,
            bytemuck::bytes_of(&args),
            0,
            &mem,
            &[],
            &mut Vec::new()
        ),
        Err(SequenceError::NotAllowed { state: "wait", .. })
    ));
    assert!(c.encode_request(&Request::Mmap(MmapRequest::default()), &mut Vec::new()).is_err());
    // ...and the server refuses it if sent anyway.
    let frame = ioctl_frame(kfd::cmd::CREATE_EVENT, 32, &[0; 32]);
    let err = refused(Some(Role::Wait), &frame, 0, ErrorCode::NotAllowed);
    assert_eq!(err.to_string(), "IOCTL CREATE_EVENT is not allowed on a wait connection");
    // WAIT_EVENTS itself goes through.
    let wait = kfd::WaitEventsArgs::default();
    let mut frame = Vec::new();
    c.encode_ioctl(
        kfd::cmd::WAIT_EVENTS,
        proto::payload::DeviceFile::Kfd,
        bytemuck::bytes_of(&wait),
        0,
        &mem,
        &[],
        &mut frame,
    )
    .unwrap();
    assert!(s.accept(&frame, 0).is_ok());
    // Before attaching, only ATTACH_WAIT (or CLOSE).
    let mut c = ClientSequence::new();
    let mut s = ServerSequence::new();
    exchange(
        &mut c,
        &mut s,
        &Request::Handshake(HandshakeRequest::new(1, Role::Wait)),
        0,
        &Reply::Handshake(handshake_reply(0)),
    );
    assert!(matches!(
        s.accept(&ioctl_frame(kfd::cmd::WAIT_EVENTS, 24, &[0; 24]), 0),
        Err(SequenceError::NotAllowed { state: "unattached wait", .. })
    ));
}

#[test]
fn tool_connections_carry_only_status() {
    for frame in [ioctl_frame(kfd::cmd::GET_VERSION, 8, &[0; 8]), raw_frame(Opcode::Munmap as u16, 0, 1, 0, &[0; 16])] {
        refused(Some(Role::Tool), &frame, 0, ErrorCode::NotAllowed);
    }
    refused(Some(Role::Process), &raw_frame(Opcode::AttachWait as u16, 0, 1, 0, &[0; 16]), 0, ErrorCode::NotAllowed);
}

// --- Descriptors ------------------------------------------------------------

#[test]
fn requests_carry_only_the_memory_of_a_userptr_allocation() {
    let err =
        refused(Some(Role::Process), &raw_frame(Opcode::Status as u16, 0, 1, 0, &[]), 1, ErrorCode::UnexpectedFds);
    assert_eq!(err, SequenceError::UnexpectedFds { opcode: Opcode::Status, got: 1 });
    // An ioctl that describes no descriptors, with one.
    let version = ioctl_frame(kfd::cmd::GET_VERSION, 8, &[0; 8]);
    let err = refused(Some(Role::Process), &version, 1, ErrorCode::UnexpectedFds);
    assert_eq!(err, SequenceError::UnexpectedFds { opcode: Opcode::Ioctl, got: 1 });
    // A USERPTR allocation of one page with the page's memfd: accepted with exactly one.
    let args = kfd::AllocMemoryOfGpuArgs {
        size: 0x1000,
        mmap_offset: 0x7f00_0000_0000,
        flags: kfd::alloc_flags::USERPTR,
        ..Default::default()
    };
    let memory =
        FdDesc { kind: FdKind::Userptr, access: fd_access::READ | fd_access::WRITE, offset: 0, length: 0x1000 };
    let (mut c, mut s) = connected(Role::Process);
    let mut frame = Vec::new();
    c.encode_ioctl(
        kfd::cmd::ALLOC_MEMORY_OF_GPU,
        proto::payload::DeviceFile::Kfd,
        bytemuck::bytes_of(&args),
        0,
        &common::FakeMemory::default(),
        &[memory],
        &mut frame,
    )
    .unwrap();
    let (_, request) = s.accept(&frame, 1).unwrap();
    assert_eq!(request.fds(), &[memory]);
    for received in [0, 2] {
        let err = refused(Some(Role::Process), &frame, received, ErrorCode::MalformedPayload);
        assert_eq!(err, SequenceError::Message(MessageError::FdCountMismatch { declared: 1, received }));
    }
}

#[test]
fn replies_carry_exactly_the_descriptors_they_describe() {
    let fd = FdDesc { kind: FdKind::Doorbell, access: fd_access::READ | fd_access::WRITE, offset: 0, length: 0x2000 };
    for (described, received) in [(1usize, 0usize), (0, 1), (1, 2), (2, 1)] {
        let (mut c, mut s) = connected(Role::Process);
        let mut frame = Vec::new();
        c.encode_request(&Request::Mmap(MmapRequest::default()), &mut frame).unwrap();
        let (pending, _) = s.accept(&frame, 0).unwrap();
        let mut out = Vec::new();
        s.encode_reply(pending, 0, &Reply::Mmap(MmapReply { fds: vec![fd; described] }), &mut out).unwrap();
        assert_eq!(
            c.decode_reply(&out, received),
            Err(SequenceError::Message(MessageError::FdCountMismatch { declared: described, received }))
        );
    }
    // A reply without a trailer (STATUS) that brings a descriptor.
    let (mut c, _) = connected(Role::Process);
    c.encode_request(&Request::Status, &mut Vec::new()).unwrap();
    let mut body = Vec::new();
    proto::payload::StatusReply::default().encode(&mut body).unwrap();
    assert!(matches!(
        c.decode_reply(&raw_frame(Opcode::Status as u16, 0, 2, 0, &body), 1),
        Err(SequenceError::Message(MessageError::FdCountMismatch { declared: 0, received: 1 }))
    ));
}

#[test]
fn a_protocol_error_with_descriptors_is_refused_and_reported() {
    let (mut c, _) = connected(Role::Process);
    c.encode_request(&Request::Status, &mut Vec::new()).unwrap();
    let mut body = Vec::new();
    ProtocolErrorBody {
        code: ErrorCode::Internal,
        daemon_version: PROTOCOL_VERSION,
        client_version: PROTOCOL_VERSION,
        reason: "x".into(),
    }
    .encode(&mut body);
    let frame = raw_frame(Opcode::ProtocolError as u16, 0, 0, -71, &body);
    assert!(matches!(c.decode_reply(&frame, 1), Err(SequenceError::UnexpectedFds { got: 1, .. })));
}
