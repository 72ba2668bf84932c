//! Helpers shared by the integration tests.
#![allow(dead_code)]

use proto::ioctl::{BadAddress, UserMemory};
use proto::message::{Reply, Request};
use proto::payload::{AttachWaitRequest, HandshakeReply, HandshakeRequest, Role, PROTOCOL_VERSION};
use proto::sequence::{ClientSequence, ServerSequence};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The caller's memory as a sparse byte map; unmapped bytes read as faults.
#[derive(Default)]
pub struct FakeMemory(RefCell<BTreeMap<u64, u8>>);

impl FakeMemory {
    pub fn put(&self, addr: u64, data: &[u8]) {
        let mut m = self.0.borrow_mut();
        for (i, b) in data.iter().enumerate() {
            m.insert(addr + i as u64, *b);
        }
    }

    /// Bytes at `addr`; unmapped bytes read as 0xee.
    pub fn get(&self, addr: u64, len: usize) -> Vec<u8> {
        let m = self.0.borrow();
        (0..len).map(|i| *m.get(&(addr + i as u64)).unwrap_or(&0xee)).collect()
    }
}

impl UserMemory for FakeMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
        let m = self.0.borrow();
        for (i, o) in out.iter_mut().enumerate() {
            *o = *m.get(&(addr + i as u64)).ok_or(BadAddress)?;
        }
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
        self.put(addr, data);
        Ok(())
    }
}

pub fn handshake_reply(session_id: u64) -> HandshakeReply {
    HandshakeReply {
        version: PROTOCOL_VERSION,
        session_id,
        attach_token: 0x5eed,
        daemon_pid: 4242,
        machine: proto::payload::MachineInfo {
            render_minors: vec![128],
            topology_dir: "/run/rocjitsu/topology".into(),
        },
    }
}

/// Runs one request through client → server → client with a given reply.
pub fn exchange(
    client: &mut ClientSequence,
    server: &mut ServerSequence,
    request: &Request,
    result: i32,
    reply: &Reply,
) -> proto::sequence::Response {
    let mut frame = Vec::new();
    client.encode_request(request, &mut frame).expect("encode request");
    let (pending, got) = server.accept(&frame, 0).expect("accept request");
    assert_eq!(&got, request);
    let mut out = Vec::new();
    server.encode_reply(pending, result, reply, &mut out).expect("encode reply");
    client.decode_reply(&out, reply.fds().len()).expect("decode reply")
}

/// A client/server pair after a successful handshake (and ATTACH_WAIT for
/// the wait role).
pub fn connected(role: Role) -> (ClientSequence, ServerSequence) {
    let mut c = ClientSequence::new();
    let mut s = ServerSequence::new();
    exchange(
        &mut c,
        &mut s,
        &Request::Handshake(HandshakeRequest::new(100, role)),
        0,
        &Reply::Handshake(handshake_reply(if role == Role::Process { 1 } else { 0 })),
    );
    if role == Role::Wait {
        exchange(
            &mut c,
            &mut s,
            &Request::AttachWait(AttachWaitRequest { session_id: 1, attach_token: 0x5eed }),
            0,
            &Reply::AttachWait,
        );
    }
    (c, s)
}
