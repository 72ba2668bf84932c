//! The ioctl codec: a payload from the wire (daemon side) and an
//! application's argument struct (client side) for any known or unknown
//! ioctl number.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    proto::harness::ioctl_parse(data);
});
