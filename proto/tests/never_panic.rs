//! Arbitrary bytes never panic any parser: the daemon's (frames, ioctl
//! payloads), the client's (replies) and the ioctl codec on both sides.
//! The same entry points as the cargo-fuzz targets (`proto::harness`), run
//! as a property test so CI covers them without nightly.
//!
//! Case count: `PROTO_NEVER_PANIC_CASES` (default 100 000 per test).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use proto::header::Opcode;

fn cases() -> u32 {
    std::env::var("PROTO_NEVER_PANIC_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000)
}

fn config() -> Config {
    Config {
        cases: cases(),
        failure_persistence: None,
        // Shrinking a failure of this test is what matters, not speed.
        max_shrink_iters: 100_000,
        ..Config::default()
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    let mut runner = TestRunner::new(config());
    runner
        .run(&prop::collection::vec(any::<u8>(), 0..600), |data| {
            proto::harness::fuzz_one(&data);
            Ok(())
        })
        .unwrap();
}

/// Frames with plausible headers (known opcodes, right lengths, mostly zero
/// reserved fields) and arbitrary payloads, so that cases get past the header
/// and into every payload parser and the sequence rules.
fn frame() -> impl Strategy<Value = Vec<u8>> {
    let opcode = prop_oneof![
        8 => prop::sample::select(Opcode::ALL.iter().map(|o| *o as u16).collect::<Vec<_>>()),
        1 => any::<u16>(),
    ];
    let payload = prop_oneof![
        // Arbitrary bytes.
        2 => prop::collection::vec(any::<u8>(), 0..200),
        // A plausible handshake or ioctl head followed by arbitrary bytes.
        1 => (prop::collection::vec(any::<u8>(), 0..120), any::<u32>()).prop_map(|(mut tail, v)| {
            let mut p = b"RJSU".to_vec();
            p.extend_from_slice(&(proto::PROTOCOL_VERSION - 1 + v % 2).to_le_bytes());
            p.append(&mut tail);
            p
        }),
        2 => (
            prop::sample::select(proto::ioctl::all_specs().map(|s| s.cmd).collect::<Vec<_>>()),
            prop::collection::vec(any::<u8>(), 0..200),
        )
            .prop_map(|(cmd, args)| {
                let mut p = cmd.to_le_bytes().to_vec();
                p.extend_from_slice(&(args.len() as u32).to_le_bytes());
                p.extend_from_slice(&args);
                p
            }),
    ];
    (opcode, prop_oneof![9 => Just(0u16), 1 => any::<u16>()], any::<u32>(), any::<i8>(), payload).prop_map(
        |(op, reserved, id, result, payload)| {
            let mut f = Vec::with_capacity(16 + payload.len());
            f.extend_from_slice(&op.to_le_bytes());
            f.extend_from_slice(&reserved.to_le_bytes());
            f.extend_from_slice(&id.to_le_bytes());
            f.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            f.extend_from_slice(&i32::from(result).min(0).to_le_bytes());
            f.extend_from_slice(&payload);
            f
        },
    )
}

#[test]
fn plausible_frames_never_panic() {
    let mut runner = TestRunner::new(config());
    runner
        .run(&(any::<u8>(), prop::collection::vec(frame(), 1..4), any::<u8>()), |(mode, frames, client_kind)| {
            let mut stream = vec![mode];
            for f in &frames {
                stream.extend_from_slice(f);
            }
            proto::harness::daemon_parse(&stream);
            // The same frame as a reply to each kind of request.
            let mut reply = vec![client_kind, mode & 7];
            reply.extend_from_slice(&frames[0]);
            proto::harness::client_parse(&reply);
            Ok(())
        })
        .unwrap();
}
