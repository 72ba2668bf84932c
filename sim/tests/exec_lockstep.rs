//! After a barrier the waves of a workgroup advance side by side, as on the hardware
//! (`gpu::exec::workgroup`'s lockstep rounds): a value every wave reads right after the
//! barrier is not yet overwritten by a wave that first waits for a global load. Kernel:
//! `tests/kernels/lockstep.cl`. Without the lockstep, wave 0 ran a whole quantum first and
//! RCCL's group calls hung (its other waves read the next work item's `isLast` and left).

use sim::gpu::exec::jit::{self, select, Ran};
use sim::gpu::exec::Flow;
use sim::isa::{decode, Inst, Target};
use sim::runner::{CodeObject, KernelRunner};
use sim::testing::{kernargs, opencl_kernels, Harness};
use sim::Machine;

/// Runs `test` with `lockstep.cl` loaded, on 1 and on 2 workers.
fn with_each_worker_count(test: impl Fn(usize, &KernelRunner, &CodeObject)) {
    let m = Machine::new(sim::config::default_config());
    let elf = opencl_kernels("clang-15", "gfx90a", "lockstep.cl");
    for workers in [1usize, 2] {
        let s = m.kernel_runner_with_workers(workers).unwrap();
        let co = s.load_code_object(&elf).unwrap();
        test(workers, &s, &co);
    }
}

#[test]
fn every_wave_reads_what_was_there_when_the_barrier_released() {
    with_each_worker_count(|workers, s, co| {
        let (groups, block) = (8u32, 256u32);
        let next = s.upload(&[2i32]).unwrap();
        let seen = s.alloc(u64::from(groups * block) * 4).unwrap();
        let args = kernargs(&[next, seen]);
        s.dispatch(co.kernel("read_after_barrier").unwrap(), [groups * block, 1, 1], [block, 1, 1], &args).unwrap();
        let got: Vec<i32> = s.read_vec(seen, (groups * block) as usize).unwrap();
        let late: Vec<usize> = (0..got.len()).filter(|&i| got[i] != 1).collect();
        assert!(late.is_empty(), "{workers} workers: work-items that read the overwritten value: {late:?}");
    });
}

/// What a work-item of `compute_then_store` and `store_then_compute` computes: `v` through
/// twelve steps of `v * m + (k ^ v)`.
fn computed(mut v: i32, m: i32) -> i32 {
    for k in 0..12 {
        v = v.wrapping_mul(m).wrapping_add(k ^ v);
    }
    v
}

/// A wave that computes on its registers for a while after the barrier (run in one go by
/// the simulator) still makes its store after the other waves' earlier reads.
#[test]
fn a_store_after_a_long_computation_comes_after_the_early_reads() {
    with_each_worker_count(|workers, s, co| {
        let (groups, block) = (8u32, 256u32);
        let next = s.upload(&[7i32]).unwrap();
        let seen = s.alloc(u64::from(groups * block) * 4).unwrap();
        s.dispatch(
            co.kernel("compute_then_store").unwrap(),
            [groups * block, 1, 1],
            [block, 1, 1],
            &kernargs(&[next, seen]),
        )
        .unwrap();
        let got: Vec<i32> = s.read_vec(seen, (groups * block) as usize).unwrap();
        let want = |i: usize| if i % block as usize >= 64 { 1 } else { computed(7, 3) };
        let wrong: Vec<(usize, i32)> = (0..got.len()).filter(|&i| got[i] != want(i)).map(|i| (i, got[i])).collect();
        assert!(wrong.is_empty(), "{workers} workers: (work-item, value read) not as expected: {wrong:?}");
    });
}

/// A store right after the barrier is seen by a wave that reads after a long computation,
/// though that wave comes first in every round.
#[test]
fn a_read_after_a_long_computation_sees_an_early_store() {
    with_each_worker_count(|workers, s, co| {
        let (groups, block) = (8u32, 256u32);
        let seen = s.alloc(u64::from(groups * block) * 8).unwrap();
        s.dispatch(co.kernel("store_then_compute").unwrap(), [groups * block, 1, 1], [block, 1, 1], &kernargs(&[seen]))
            .unwrap();
        let got: Vec<i32> = s.read_vec(seen, (groups * block * 2) as usize).unwrap();
        for g in 0..groups as usize {
            for t in 0..128usize {
                let i = g * block as usize + t;
                let v = if t < 64 { computed(t as i32, 5) } else { t as i32 };
                assert_eq!(
                    (got[2 * i], got[2 * i + 1]),
                    (2, v),
                    "{workers} workers, workgroup {g}, work-item {t}: (read, computed)"
                );
            }
        }
    });
}

/// rocRAND's MT19937 jump-ahead in miniature (`barriers` in `lockstep.cl`): one lane advances
/// a 624-word state in LDS, then every lane of both waves folds a share in, two barriers a
/// step. The state after 300 steps is the one a host loop computes.
#[test]
fn a_state_stepped_by_one_lane_and_folded_by_all_matches_the_host() {
    const N: usize = 624;
    let steps = 300u32;
    let mut temp: Vec<u32> = (0..N as u32).collect();
    let share = |j: usize| (j as u32).wrapping_mul(2_654_435_761);
    let mut ptr = 0usize;
    for s in 0..steps {
        let (t0, t1, tm) = (temp[ptr], temp[(ptr + 1) % N], temp[(ptr + 397) % N]);
        let y = (t0 & 0x8000_0000) | (t1 & 0x7fff_ffff);
        temp[ptr] = tm ^ (y >> 1) ^ if y & 1 == 1 { 0x9908_b0df } else { 0 };
        ptr = (ptr + 1) % N;
        if s.wrapping_mul(2_654_435_761) >> 31 != 0 {
            for j in 0..N {
                temp[(ptr + j) % N] ^= share(j);
            }
        }
    }
    with_each_worker_count(|workers, s, co| {
        let groups = 4u32;
        let out = s.alloc(u64::from(groups) * N as u64 * 4).unwrap();
        s.dispatch(
            co.kernel("barriers").unwrap(),
            [groups * 128, 1, 1],
            [128, 1, 1],
            &kernargs(&[out, u64::from(steps)]),
        )
        .unwrap();
        let got: Vec<u32> = s.read_vec(out, groups as usize * N).unwrap();
        for g in 0..groups as usize {
            let wrong = (0..N).filter(|&j| got[g * N + j] != temp[j]).count();
            assert_eq!(wrong, 0, "{workers} workers, workgroup {g}: words that differ from the host's");
        }
    });
}

/// The translated run a wave kept in step runs: told to stop before its first shared
/// instruction at or past a bound, it runs exactly the instructions before that one (its
/// LDS writes and register updates) and says where it stopped.
#[test]
fn a_run_bounded_on_shared_instructions_stops_before_the_first_at_or_past_its_bound() {
    // v_add_u32 v1, 1, v1; ds_write_b32 v0, v1; v_add_u32 v1, 1, v1;
    // ds_write_b32 v0, v1 offset:256; v_add_u32 v1, 1, v1; s_barrier; ds_read_b32 v2, v0
    // (llvm-mc-15 -mcpu=gfx90a): shared at indices 1, 3, 5 and 6.
    const ADD: u32 = 0x6802_0281;
    let words =
        [ADD, 0xd81a_0000, 0x0000_0100, ADD, 0xd81a_0100, 0x0000_0100, ADD, 0xbf8a_0000, 0xd86c_0000, 0x0200_0000];
    let insts: Vec<Inst> = select::candidates(|offset| decode(words.get(offset as usize / 4..)?, Target::Gfx90a).ok());
    let block = jit::translate(Target::Gfx90a, &insts, |bytes| Some(words[..bytes as usize / 4].to_vec()), 0, 1)
        .expect("a translated run");
    assert_eq!(select::plan(&insts, 0).shared, [1, 3, 5, 6]);
    // (bound, instructions retired, where it stopped, v1's increments, LDS dwords 0 and 64 written)
    type Case = (Option<u64>, u64, u64, u32, [bool; 2]);
    let cases: [Case; 6] = [
        (Some(0), 1, 4, 1, [false, false]),
        (Some(1), 1, 4, 1, [false, false]),
        (Some(2), 3, 16, 2, [true, false]),
        (Some(4), 5, 28, 3, [true, true]),
        (Some(5), 5, 28, 3, [true, true]),
        (None, 6, 28, 3, [true, true]),
    ];
    for (bound, retired, stop_at, adds, written) in cases {
        let mut h = Harness::new();
        for l in 0..64 {
            h.wave.vgpr[0][l] = 4 * l as u32;
            h.wave.vgpr[1][l] = 1000 + l as u32;
        }
        h.lds.fill(0xee);
        let (ran, n, _) = h.with_ctx(|w, ctx| block.run(w, ctx, 64, bound)).expect("the run");
        assert_eq!(n, retired, "bound {bound:?}");
        match (ran, bound) {
            (Ran::BeforeShared { pc }, Some(_)) => assert_eq!(pc, stop_at, "bound {bound:?}"),
            (Ran::Stopped { flow: Flow::Barrier, pc, .. }, None) => assert_eq!(pc, stop_at),
            _ => panic!("bound {bound:?}: the wrong ending"),
        }
        assert_eq!(h.wave.vgpr[1][5], 1005 + adds, "bound {bound:?}");
        let dword = |at: usize| u32::from_le_bytes(h.lds[at..at + 4].try_into().unwrap());
        let lane5 = [dword(20) == 1006, dword(256 + 20) == 1007];
        assert_eq!(lane5, written, "bound {bound:?}");
        assert!(h.wave.vgpr[2].iter().all(|&v| v == 0), "the read after the barrier never ran");
    }
}
