//! Entry points for fuzzing and for the "arbitrary bytes never panic"
//! property test: they drive the parsers with bytes the way a hostile peer
//! (or a buggy application's ioctl arguments) could, play the other side
//! where a reply is due, and assert invariants that must hold for every
//! input. A panic here is a bug in this crate. Not a stable API.

use crate::header::{complete_frame_len, Header, Opcode, HEADER_LEN};
use crate::ioctl::{self, BadAddress, UserMemory};
use crate::message::{Reply, Request};
use crate::payload::{
    AttachWaitRequest, HandshakeReply, HandshakeRequest, MmapReply, MmapRequest, MunmapRequest, ProtocolErrorBody,
    Role, StatusReply, PROTOCOL_VERSION,
};
use crate::sequence::{ClientSequence, ServerSequence};

/// One fuzz input: the first byte picks the daemon parser, the client parser
/// or the ioctl codec; the rest is the input.
pub fn fuzz_one(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => daemon_parse(rest),
        1 => client_parse(rest),
        _ => ioctl_parse(rest),
    }
}

fn role_of(bits: u8) -> Role {
    match bits % 3 {
        0 => Role::Process,
        1 => Role::Wait,
        _ => Role::Tool,
    }
}

/// A handshaken (and, for waiters, attached) client/server pair.
fn connected(role: Role) -> (ClientSequence, ServerSequence) {
    let mut client = ClientSequence::new();
    let mut server = ServerSequence::new();
    let mut steps = vec![(
        Request::Handshake(HandshakeRequest::new(1, role)),
        Reply::Handshake(HandshakeReply {
            version: PROTOCOL_VERSION,
            session_id: 1,
            attach_token: 2,
            daemon_pid: 3,
            machine: crate::payload::MachineInfo { render_minors: vec![128], topology_dir: "/topology".into() },
        }),
    )];
    if role == Role::Wait {
        steps.push((Request::AttachWait(AttachWaitRequest { session_id: 1, attach_token: 2 }), Reply::AttachWait));
    }
    for (request, reply) in steps {
        let mut frame = Vec::new();
        client.encode_request(&request, &mut frame).expect("a valid request encodes");
        let (pending, _) = server.accept(&frame, 0).expect("a valid request is accepted");
        let mut out = Vec::new();
        server.encode_reply(pending, 0, &reply, &mut out).expect("a valid reply encodes");
        client.decode_reply(&out, 0).expect("a valid reply decodes");
    }
    (client, server)
}

/// The daemon's side: `data[0]` chooses whether the sequence starts fresh or
/// already handshaken (and as which role) and how many descriptors each
/// frame claims to bring; the rest is a byte stream of frames.
pub fn daemon_parse(data: &[u8]) {
    let Some((&mode, mut stream)) = data.split_first() else {
        return;
    };
    let mut server = if mode & 1 == 0 { ServerSequence::new() } else { connected(role_of(mode >> 1)).1 };
    let fds = usize::from(mode >> 6);
    loop {
        let frame = match complete_frame_len(stream) {
            Ok(Some(len)) => {
                let (frame, rest) = stream.split_at(len);
                stream = rest;
                frame
            }
            // A transport never hands over a partial or oversized frame, but
            // the sequence must survive one all the same.
            Ok(None) | Err(_) => {
                let _ = server.accept(stream, fds);
                return;
            }
        };
        let (pending, request) = match server.accept(frame, fds) {
            Ok(accepted) => accepted,
            Err(err) => {
                let mut out = Vec::new();
                server.encode_rejection(frame, &err, &mut out);
                let header = Header::decode(&out).expect("a rejection has a valid header");
                assert_eq!(header.opcode, Opcode::ProtocolError);
                assert_eq!(header.frame_len(), out.len());
                ProtocolErrorBody::decode(&out[HEADER_LEN..]).expect("a rejection decodes");
                return;
            }
        };
        assert_eq!(fds, request.fds().len(), "a request carries exactly the descriptors its trailer describes");
        assert_eq!(request.opcode(), pending.opcode);
        let mut out = Vec::new();
        let answered = match (request, success_reply(&pending)) {
            (Request::Ioctl(mut ioctl), _) => {
                {
                    let view =
                        ioctl::split_payload(ioctl.cmd, &mut ioctl.payload).expect("an accepted ioctl payload splits");
                    let arrays: usize = view.arrays.iter().map(|a| a.len()).sum();
                    assert_eq!(view.args.len() + arrays, ioctl.payload.len());
                }
                server.encode_ioctl_reply(pending, 0, &ioctl.payload, &[], &mut out)
            }
            (_, reply) => server.encode_reply(pending, 0, &reply, &mut out),
        };
        answered.expect("a reply to an accepted request encodes");
        let header = Header::decode(&out).expect("a reply has a valid header");
        assert_eq!(header.frame_len(), out.len());
    }
}

/// A successful reply to a non-IOCTL request.
fn success_reply(pending: &crate::sequence::Pending) -> Reply {
    match pending.opcode {
        Opcode::Handshake => Reply::Handshake(HandshakeReply {
            version: PROTOCOL_VERSION,
            session_id: u64::from(pending.request_id),
            attach_token: 7,
            daemon_pid: 1,
            machine: crate::payload::MachineInfo { render_minors: vec![128, 129], topology_dir: "/t".into() },
        }),
        Opcode::Close => Reply::Close,
        Opcode::Mmap => Reply::Mmap(MmapReply::default()),
        Opcode::Munmap => Reply::Munmap,
        Opcode::AttachWait => Reply::AttachWait,
        Opcode::Status => Reply::Status(StatusReply::default()),
        Opcode::Stats => Reply::Stats(b"{}".to_vec()),
        other => Reply::Failed(other),
    }
}

/// Caller memory for the harness: reads see a pattern, writes go nowhere.
struct PatternMemory;

impl UserMemory for PatternMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
        if addr == u64::MAX {
            return Err(BadAddress);
        }
        for (i, b) in out.iter_mut().enumerate() {
            *b = (addr as usize).wrapping_add(i) as u8;
        }
        Ok(())
    }

    fn write(&self, addr: u64, _data: &[u8]) -> Result<(), BadAddress> {
        if addr == u64::MAX {
            Err(BadAddress)
        } else {
            Ok(())
        }
    }
}

/// Every ioctl the codec knows, in a fixed order, for picking one by index.
fn ioctl_by_index(i: u8) -> Option<ioctl::IoctlSpec> {
    ioctl::all_specs().nth(usize::from(i))
}

/// The client's side: `data[0]` picks the outstanding request, `data[1]` the
/// number of descriptors that "arrived"; the rest is the reply frame.
pub fn client_parse(data: &[u8]) {
    let [kind, fds, rest @ ..] = data else {
        return;
    };
    let (mut client, _) = match kind % 8 {
        0 => (ClientSequence::new(), ServerSequence::new()),
        k => connected(role_of(k)),
    };
    let mut frame = Vec::new();
    let request = match kind >> 3 {
        0 => Request::Handshake(HandshakeRequest::new(1, role_of(*kind))),
        1 => Request::Mmap(MmapRequest::default()),
        2 => Request::Munmap(MunmapRequest::default()),
        3 => Request::Status,
        4 => Request::Close,
        5 => Request::AttachWait(AttachWaitRequest::default()),
        6 => Request::Stats(if fds % 2 == 0 {
            crate::payload::StatsRequest::Enable
        } else {
            crate::payload::StatsRequest::Report
        }),
        n => {
            let Some(spec) = ioctl_by_index(n - 7) else {
                return;
            };
            Request::Ioctl(crate::payload::IoctlRequest::new(spec.cmd, vec![0; spec.arg_size]))
        }
    };
    let cmd = request.ioctl_cmd();
    let args_len = match &request {
        Request::Ioctl(r) => r.payload.len(),
        _ => 0,
    };
    // The request may not be allowed in this phase; then there is nothing to
    // answer, and a reply must be refused.
    let sent = client.encode_request(&request, &mut frame).is_ok();
    match client.decode_reply(rest, usize::from(*fds % 8)) {
        Ok(response) => {
            assert!(sent, "a reply is accepted only for an outstanding request");
            assert!(response.result <= 0);
            assert_eq!(response.reply.fds().len(), usize::from(*fds % 8));
            if let (Reply::Ioctl(reply), Some(cmd)) = (&response.reply, cmd) {
                if !reply.payload.is_empty() {
                    let mut args = vec![0u8; args_len];
                    ioctl::decode_reply(cmd, &mut args, 0x1000, &reply.payload, &PatternMemory)
                        .expect("a reply the sequence accepted applies");
                }
            }
        }
        Err(_) => {
            // The sequence is now failed: nothing more may be sent.
            assert!(client.encode_request(&Request::Status, &mut Vec::new()).is_err());
        }
    }
}

/// The ioctl codec on both sides: `data[0]` picks a known ioctl (or, past
/// the table, a raw number from the next four bytes); the rest is a payload
/// for the daemon side and an argument struct for the client side.
pub fn ioctl_parse(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (cmd, rest) = match ioctl_by_index(pick) {
        Some(spec) => (spec.cmd, rest),
        None => match rest {
            [a, b, c, d, tail @ ..] => (u32::from_le_bytes([*a, *b, *c, *d]), tail),
            _ => return,
        },
    };
    // Daemon side: a payload from the wire.
    let mut payload = rest.to_vec();
    let checked = ioctl::check_payload(cmd, &payload).is_ok();
    let split = ioctl::split_payload(cmd, &mut payload);
    assert_eq!(checked, split.is_ok(), "check_payload and split_payload agree");
    // Client side: an application's argument struct.
    let Some(spec) = ioctl::spec(cmd) else {
        return;
    };
    let Some(args) = rest.get(..spec.arg_size) else {
        return;
    };
    let addr = 0x10_0000;
    if let Ok(encoded) = ioctl::encode_request(cmd, args, addr, &PatternMemory) {
        assert!(ioctl::check_payload(cmd, &encoded).is_ok(), "what the client encodes, the daemon accepts");
        let mut back = args.to_vec();
        match ioctl::decode_reply(cmd, &mut back, addr, &encoded, &PatternMemory) {
            Ok(()) => assert_eq!(back, args, "an unchanged echo restores the caller's struct"),
            // An output array at an address the caller cannot write (only
            // output arrays: inputs were read successfully above).
            Err(ioctl::IoctlError::Fault { addr, .. }) => assert_eq!(addr, u64::MAX),
            Err(e) => panic!("an echoed payload must apply: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by `cargo fuzz run ioctl_payload`: an output array at an
    /// address the caller cannot write is a fault, not a broken invariant.
    #[test]
    fn output_array_at_an_unwritable_address_is_a_fault() {
        let index = ioctl::all_specs().position(|s| s.cmd == crate::abi::drm::cmd::VERSION).unwrap();
        let v = crate::abi::drm::DrmVersion { name_len: 4, name: u64::MAX, ..Default::default() };
        let mut data = vec![index as u8];
        data.extend_from_slice(bytemuck::bytes_of(&v));
        ioctl_parse(&data);
    }

    #[test]
    fn harness_handles_the_edges() {
        fuzz_one(&[]);
        for b in 0..=255u8 {
            fuzz_one(&[b]);
            fuzz_one(&[b, b]);
            fuzz_one(&[b, b, b, b, b, b, b, b]);
        }
    }
}
