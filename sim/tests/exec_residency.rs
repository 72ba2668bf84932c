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

#[test]
fn every_workgroup_runs_once_when_short_ones_run_in_batches() {
    // Workers run short workgroups one after another in one turn, and give back the rest of
    // such a batch when one of them waits (here for the last workgroup, which a batch taken
    // early does not hold): each must still run exactly once, and every waiter be released.
    // A lost or repeated workgroup can also leave the dispatch unfinished: a watchdog turns
    // that into a failure.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let m = Machine::new(sim::config::default_config());
        for workers in [1usize, 2] {
            let s = m.kernel_runner_with_workers(workers).unwrap();
            let co = s.load_code_object(&code_object()).unwrap();
            for (groups, every) in [(1u32, 0u64), (7, 0), (1000, 0), (20_000, 0), (7, 3), (1000, 13), (20_000, 997)] {
                let runs = s.upload(&vec![0i32; groups as usize]).unwrap();
                let flag = s.upload(&[0i32]).unwrap();
                let out = s.alloc(u64::from(groups) * 4).unwrap();
                let args = kernargs(&[runs, flag, out, u64::from(groups) | BOUND << 32, every]);
                s.dispatch(co.kernel("count_runs").unwrap(), [groups * 64, 1, 1], [64, 1, 1], &args).unwrap();
                let runs: Vec<i32> = s.read_vec(runs, groups as usize).unwrap();
                let once = runs.iter().filter(|&&r| r == 1).count();
                let what = format!("{workers} workers, {groups} groups, every {every}");
                assert_eq!(once, groups as usize, "{what}: runs {runs:?}");
                let out: Vec<i32> = s.read_vec(out, groups as usize).unwrap();
                assert!(out.iter().all(|&v| v == 1), "{what}: {out:?}");
            }
        }
        done.send(()).unwrap();
    });
    match finished.recv_timeout(std::time::Duration::from_secs(300)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("a check failed (above)"),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("a dispatch did not finish in 300 s"),
    }
}
