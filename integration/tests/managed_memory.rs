//! Managed memory (issue 18): `hipMallocManaged` memory shared by the host and kernels, with
//! prefetch and advice, and the host and a kernel on different halves at once
//! (`programs/managed_memory.hip`) — ROCm 5.2 and sid, local and `--daemon`.

use integration::Stack;

const PASSES: [&str; 3] = [
    "host writes, kernel increments, host reads",
    "prefetch to the GPU and back, with advice",
    "kernel and host on different halves at once",
];

fn managed(stack: Stack) {
    stack.assert_program_passes("managed_memory", &PASSES);
}

#[test]
fn managed_memory_on_rocm52() {
    managed(Stack::Host);
}

#[test]
fn managed_memory_on_sid() {
    managed(Stack::Sid);
}
