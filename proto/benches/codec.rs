//! Cost of the protocol codec per message, without I/O.
//!
//! - `wait_events_request/N`: the client builds a WAIT_EVENTS request with N
//!   events (header, head, struct, inlined events, read from the caller's
//!   memory) and the daemon parses and validates it.
//! - `alloc_reply`: the daemon builds an ALLOC_MEMORY_OF_GPU reply carrying a
//!   memfd description, the client parses it and applies it to the caller's
//!   struct.
//! - `exchange/*`: a whole request/reply cycle through both sequence state
//!   machines (what one daemon-mode ioctl costs on top of the socket).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use proto::abi::kfd;
use proto::header::{Header, Opcode, HEADER_LEN};
use proto::ioctl::{self, BadAddress, UserMemory};
use proto::message::{Reply, Request};
use proto::payload::{
    encode_ioctl_reply, fd_access, FdDesc, FdKind, HandshakeReply, HandshakeRequest, IoctlContext, Role,
    PROTOCOL_VERSION,
};
use proto::sequence::{ClientSequence, ServerSequence};

/// Caller memory as one flat buffer starting at `base`.
struct FlatMemory {
    base: u64,
    bytes: std::cell::RefCell<Vec<u8>>,
}

impl UserMemory for FlatMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
        let start = addr.checked_sub(self.base).ok_or(BadAddress)? as usize;
        let b = self.bytes.borrow();
        out.copy_from_slice(b.get(start..start + out.len()).ok_or(BadAddress)?);
        Ok(())
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
        let start = addr.checked_sub(self.base).ok_or(BadAddress)? as usize;
        let mut b = self.bytes.borrow_mut();
        b.get_mut(start..start + data.len()).ok_or(BadAddress)?.copy_from_slice(data);
        Ok(())
    }
}

const EVENTS_ADDR: u64 = 0x7f00_0000_0000;

fn wait_args(n: u32) -> (Vec<u8>, FlatMemory) {
    let args = kfd::WaitEventsArgs {
        events_ptr: EVENTS_ADDR,
        num_events: n,
        wait_for_all: 0,
        timeout: kfd::KFD_EVENT_TIMEOUT_INFINITE,
        wait_result: 0,
    };
    let mut events = vec![kfd::EventData::default(); n as usize];
    for (i, e) in events.iter_mut().enumerate() {
        e.event_id = i as u32;
    }
    let mem = FlatMemory { base: EVENTS_ADDR, bytes: std::cell::RefCell::new(bytemuck::cast_slice(&events).to_vec()) };
    (bytemuck::bytes_of(&args).to_vec(), mem)
}

fn connected() -> (ClientSequence, ServerSequence) {
    let mut c = ClientSequence::new();
    let mut s = ServerSequence::new();
    let mut f = Vec::new();
    c.encode_request(&Request::Handshake(HandshakeRequest::new(1, Role::Process)), &mut f).unwrap();
    let (p, _) = s.accept(&f, 0).unwrap();
    let mut out = Vec::new();
    s.encode_reply(
        p,
        0,
        &Reply::Handshake(HandshakeReply {
            version: PROTOCOL_VERSION,
            session_id: 1,
            attach_token: 2,
            daemon_pid: 3,
            machine: proto::payload::MachineInfo { render_minors: vec![128], topology_dir: "/t".into() },
        }),
        &mut out,
    )
    .unwrap();
    c.decode_reply(&out, 0).unwrap();
    (c, s)
}

fn wait_events_request(c: &mut Criterion) {
    let mut group = c.benchmark_group("wait_events_request");
    for n in [1u32, 16, 256] {
        let (args, mem) = wait_args(n);
        let mut frame = Vec::with_capacity(1 << 16);
        group.throughput(Throughput::Elements(1));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                // Client: header + head + struct + events from caller memory.
                frame.clear();
                Header { opcode: Opcode::Ioctl, request_id: 1, payload_bytes: 0, result: 0 }.put(&mut frame);
                frame.extend_from_slice(&kfd::cmd::WAIT_EVENTS.to_le_bytes());
                frame.extend_from_slice(&0u32.to_le_bytes());
                ioctl::encode_request_into(kfd::cmd::WAIT_EVENTS, &args, 0x1000, &mem, &mut frame).unwrap();
                let len = (frame.len() - HEADER_LEN) as u32;
                frame[8..12].copy_from_slice(&len.to_le_bytes());
                frame[20..24].copy_from_slice(&(len - 8).to_le_bytes());
                // Daemon: header, exact sizes, ioctl tail validation, split.
                let header = Header::decode(&frame).unwrap();
                let req = Request::decode(header.opcode, &frame[HEADER_LEN..]).unwrap();
                let Request::Ioctl(mut r) = req else { unreachable!() };
                let view = ioctl::split_payload(r.cmd, &mut r.payload).unwrap();
                black_box(view.arrays.len());
            })
        });
    }
    group.finish();
}

fn alloc_reply(c: &mut Criterion) {
    let args = kfd::AllocMemoryOfGpuArgs {
        va_addr: 0x7f00_0000_0000,
        size: 2 << 20,
        handle: 0,
        mmap_offset: 0,
        gpu_id: 0xc0de,
        flags: kfd::alloc_flags::VRAM | kfd::alloc_flags::PUBLIC | kfd::alloc_flags::WRITABLE,
    };
    let mut daemon_args = args;
    daemon_args.handle = 0x1234;
    daemon_args.mmap_offset = 0x1_0000_0000;
    let daemon_payload = bytemuck::bytes_of(&daemon_args).to_vec();
    let fd = [FdDesc {
        kind: FdKind::Allocation,
        access: fd_access::READ | fd_access::WRITE,
        offset: 0x40_0000,
        length: 2 << 20,
    }];
    let ctx = IoctlContext { cmd: kfd::cmd::ALLOC_MEMORY_OF_GPU, args_len: 40 };
    let mem = FlatMemory { base: 0, bytes: Default::default() };
    let mut frame = Vec::with_capacity(256);
    let mut caller = bytemuck::bytes_of(&args).to_vec();
    c.bench_function("alloc_reply", |b| {
        b.iter(|| {
            // Daemon: header + head + struct + fd trailer.
            frame.clear();
            Header { opcode: Opcode::Ioctl, request_id: 1, payload_bytes: 0, result: 0 }.put(&mut frame);
            encode_ioctl_reply(&mut frame, ctx.cmd, &daemon_payload, &fd).unwrap();
            let len = (frame.len() - HEADER_LEN) as u32;
            frame[8..12].copy_from_slice(&len.to_le_bytes());
            // Client: parse, check against the request, apply to the caller.
            let header = Header::decode(&frame).unwrap();
            let reply = Reply::decode(header.opcode, header.result, &frame[HEADER_LEN..], Some(ctx)).unwrap();
            let Reply::Ioctl(r) = reply else { unreachable!() };
            caller.copy_from_slice(bytemuck::bytes_of(&args));
            ioctl::decode_reply(ctx.cmd, &mut caller, 0x1000, &r.payload, &mem).unwrap();
            black_box((&caller, r.fds.len()));
        })
    });
}

fn exchange(c: &mut Criterion) {
    let mut group = c.benchmark_group("exchange");
    let (mut client, mut server) = connected();
    let (args, mem) = wait_args(16);
    let mut caller = args.clone();
    let mut req = Vec::with_capacity(4096);
    let mut rep = Vec::with_capacity(4096);
    group.bench_function("wait_events_16", |b| {
        b.iter(|| {
            req.clear();
            rep.clear();
            client
                .encode_ioctl(
                    kfd::cmd::WAIT_EVENTS,
                    proto::payload::DeviceFile::Kfd,
                    &args,
                    0x1000,
                    &mem,
                    &[],
                    &mut req,
                )
                .unwrap();
            let (pending, request) = server.accept(&req, 0).unwrap();
            let Request::Ioctl(mut r) = request else { unreachable!() };
            {
                let mut view = ioctl::split_payload(r.cmd, &mut r.payload).unwrap();
                let mut a: kfd::WaitEventsArgs = view.get();
                a.wait_result = kfd::KFD_IOC_WAIT_RESULT_COMPLETE;
                view.set(&a);
            }
            server.encode_ioctl_reply(pending, 0, &r.payload, &[], &mut rep).unwrap();
            let response = client.decode_reply(&rep, 0).unwrap();
            let Reply::Ioctl(reply) = response.reply else { unreachable!() };
            caller.copy_from_slice(&args);
            ioctl::decode_reply(kfd::cmd::WAIT_EVENTS, &mut caller, 0x1000, &reply.payload, &mem).unwrap();
            black_box(&caller);
        })
    });
    let alloc = kfd::AllocMemoryOfGpuArgs {
        va_addr: 0x7f00_0000_0000,
        size: 2 << 20,
        gpu_id: 0xc0de,
        flags: kfd::alloc_flags::VRAM,
        ..Default::default()
    };
    let alloc = bytemuck::bytes_of(&alloc).to_vec();
    let fd =
        [FdDesc { kind: FdKind::Allocation, access: fd_access::READ | fd_access::WRITE, offset: 0, length: 2 << 20 }];
    group.bench_function("alloc_with_fd", |b| {
        b.iter(|| {
            req.clear();
            rep.clear();
            client
                .encode_ioctl(
                    kfd::cmd::ALLOC_MEMORY_OF_GPU,
                    proto::payload::DeviceFile::Kfd,
                    &alloc,
                    0x1000,
                    &mem,
                    &[],
                    &mut req,
                )
                .unwrap();
            let (pending, request) = server.accept(&req, 0).unwrap();
            let Request::Ioctl(r) = request else { unreachable!() };
            server.encode_ioctl_reply(pending, 0, &r.payload, &fd, &mut rep).unwrap();
            let response = client.decode_reply(&rep, 1).unwrap();
            let Reply::Ioctl(reply) = response.reply else { unreachable!() };
            caller.truncate(0);
            caller.extend_from_slice(&alloc);
            ioctl::decode_reply(kfd::cmd::ALLOC_MEMORY_OF_GPU, &mut caller, 0x1000, &reply.payload, &mem).unwrap();
            black_box(&caller);
        })
    });
    group.finish();
}

criterion_group!(benches, wait_events_request, alloc_reply, exchange);
criterion_main!(benches);
