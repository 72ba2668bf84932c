//! After a barrier the waves of a workgroup advance side by side, as on the hardware
//! (`gpu::exec::workgroup`'s lockstep rounds): a value every wave reads right after the
//! barrier is not yet overwritten by a wave that first waits for a global load. Kernel:
//! `tests/kernels/lockstep.cl`. Without the lockstep, wave 0 ran a whole quantum first and
//! RCCL's group calls hung (its other waves read the next work item's `isLast` and left).

use sim::testing::{kernargs, opencl_kernels};
use sim::Machine;

#[test]
fn every_wave_reads_what_was_there_when_the_barrier_released() {
    let m = Machine::new(sim::config::default_config());
    let elf = opencl_kernels("clang-15", "gfx90a", "lockstep.cl");
    for workers in [1usize, 2] {
        let s = m.kernel_runner_with_workers(workers).unwrap();
        let co = s.load_code_object(&elf).unwrap();
        let (groups, block) = (8u32, 256u32);
        let next = s.upload(&[2i32]).unwrap();
        let seen = s.alloc(u64::from(groups * block) * 4).unwrap();
        let args = kernargs(&[next, seen]);
        s.dispatch(co.kernel("read_after_barrier").unwrap(), [groups * block, 1, 1], [block, 1, 1], &args).unwrap();
        let got: Vec<i32> = s.read_vec(seen, (groups * block) as usize).unwrap();
        let late: Vec<usize> = (0..got.len()).filter(|&i| got[i] != 1).collect();
        assert!(late.is_empty(), "{workers} workers: work-items that read the overwritten value: {late:?}");
    }
}
