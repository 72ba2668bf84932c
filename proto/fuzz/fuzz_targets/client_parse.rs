//! The client's parser of daemon bytes: a reply frame against each kind of
//! outstanding request.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    proto::harness::client_parse(data);
});
