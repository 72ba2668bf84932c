//! Managed memory (issue 18): `hipMallocManaged` memory shared by the host and kernels, with
//! prefetch and advice, and the host and a kernel on different halves at once
//! (`programs/managed_memory.hip`) — ROCm 5.2 and sid, local and `--daemon`.

use integration::{Mode, Stack};
use std::time::Duration;

const PASSES: [&str; 3] = [
    "host writes, kernel increments, host reads",
    "prefetch to the GPU and back, with advice",
    "kernel and host on different halves at once",
];

fn managed(stack: Stack) {
    let exe = stack.hip_program("managed_memory", "gfx90a", &[]);
    for mode in Mode::OWN {
        let mut cmd = stack.rocjitsu_in(mode);
        cmd.arg("--").arg(&exe);
        let o = stack.run(cmd, Duration::from_secs(300));
        o.assert_passes(&format!("managed_memory ({}, {})", stack.name(), mode.name()), &PASSES);
    }
}

#[test]
fn managed_memory_on_rocm52() {
    managed(Stack::Host);
}

#[test]
fn managed_memory_on_sid() {
    managed(Stack::Sid);
}
