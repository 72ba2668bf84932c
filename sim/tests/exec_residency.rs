//! Resident workgroups all make progress (`gpu::exec::units`): workgroups that wait,
//! through memory, for other workgroups of their dispatch finish with fewer host workers
//! than workgroups, as on the hardware, where all of them are resident at once. Kernels:
//! `tests/kernels/spin.cl` (bounded waits, so a wrong scheduler fails instead of hanging).

use sim::testing::{kernargs, opencl_kernels};
use sim::Machine;

/// Polls before a kernel's wait gives up: far more than any correct schedule needs.
const BOUND: u64 = 2_000_000;

fn code_object() -> Vec<u8> {
    opencl_kernels("clang-15", "gfx90a", "spin.cl")
}

#[test]
fn workgroups_waiting_for_the_last_one_finish_on_one_worker() {
    let m = Machine::new(sim::config::default_config());
    let s = m.kernel_runner_with_workers(1).unwrap();
    let co = s.load_code_object(&code_object()).unwrap();
    for groups in [2u32, 64, 416] {
        let flag = s.upload(&[0i32]).unwrap();
        let out = s.alloc(u64::from(groups) * 4).unwrap();
        let args = kernargs(&[flag, out, u64::from(groups) | BOUND << 32]);
        s.dispatch(co.kernel("wait_for_last").unwrap(), [groups * 64, 1, 1], [64, 1, 1], &args).unwrap();
        let got: Vec<i32> = s.read_vec(out, groups as usize).unwrap();
        assert!(got.iter().all(|&v| v == 1), "{groups} groups: {got:?}");
    }
}

#[test]
fn a_counter_barrier_across_every_resident_workgroup_completes() {
    let m = Machine::new(sim::config::default_config());
    for (workers, groups, sleep) in [(1usize, 104u32, 0u64), (2, 416, 0), (2, 832, 1)] {
        let s = m.kernel_runner_with_workers(workers).unwrap();
        let co = s.load_code_object(&code_object()).unwrap();
        let arrived = s.upload(&[0i32]).unwrap();
        let out = s.alloc(u64::from(groups) * 4).unwrap();
        let args = kernargs(&[arrived, out, u64::from(groups) | BOUND << 32, sleep]);
        s.dispatch(co.kernel("counter_barrier").unwrap(), [groups * 256, 1, 1], [256, 1, 1], &args).unwrap();
        let got: Vec<i32> = s.read_vec(out, groups as usize).unwrap();
        assert!(got.iter().all(|&v| v == groups as i32), "{workers} workers, {groups} groups: {got:?}");
    }
}
