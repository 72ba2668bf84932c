//! The daemon's parser of client bytes: a stream of frames through a
//! `ServerSequence` (fresh or already handshaken, as the first byte says),
//! each accepted request answered, each refusal turned into a
//! PROTOCOL_ERROR. Invariants are asserted in `proto::harness`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    proto::harness::daemon_parse(data);
});
