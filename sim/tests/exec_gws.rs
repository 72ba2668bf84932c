//! Global wave sync (`ds_gws_*`): semaphores in one wave, and a barrier across the waves
//! of several workgroups in a kernel compiled by clang-15 (`tests/kernels/gws.cl`).

use sim::gpu::exec::ExecError;
use sim::testing::{kernargs, opencl_kernels, Harness};
use sim::Machine;

// llvm-mc-15 -mcpu=gfx90a
const S_MOV_M0_0X30000: [u32; 2] = [0xbefc_00ff, 0x0003_0000]; // s_mov_b32 m0, 0x30000
const V_MOV_V2_1: u32 = 0x7e04_0281; // v_mov_b32_e32 v2, 1
const DS_GWS_INIT_V2_OFF2: [u32; 2] = [0xd933_0002, 0x0000_0002]; // ds_gws_init v2 offset:2 gds
const DS_GWS_SEMA_P_OFF2: [u32; 2] = [0xd939_0002, 0x0000_0000]; // ds_gws_sema_p offset:2 gds
const DS_GWS_SEMA_V_OFF2: [u32; 2] = [0xd935_0002, 0x0000_0000]; // ds_gws_sema_v offset:2 gds
const S_ENDPGM: u32 = 0xbf81_0000;

fn program(parts: &[&[u32]]) -> Vec<u32> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

#[test]
fn semaphore_counts_down_and_waits_at_zero() {
    // Resource 3 + 2 = 5 (M0[21:16] = 3, offset 2): init 1, take it, give it back, take it.
    let ok = program(&[
        &S_MOV_M0_0X30000,
        &[V_MOV_V2_1],
        &DS_GWS_INIT_V2_OFF2,
        &DS_GWS_SEMA_P_OFF2,
        &DS_GWS_SEMA_V_OFF2,
        &DS_GWS_SEMA_P_OFF2,
        &[S_ENDPGM],
    ]);
    Harness::new().run(&ok).unwrap();
    // A second take without a give waits forever (the one-wave harness gives up).
    let waits = program(&[
        &S_MOV_M0_0X30000,
        &[V_MOV_V2_1],
        &DS_GWS_INIT_V2_OFF2,
        &DS_GWS_SEMA_P_OFF2,
        &DS_GWS_SEMA_P_OFF2,
        &[S_ENDPGM],
    ]);
    let e = Harness::new().run(&waits).unwrap_err();
    assert!(matches!(e, ExecError::Invalid(ref m) if m.contains("does not terminate")), "{e}");
}

fn code_object() -> Vec<u8> {
    opencl_kernels("clang-15", "gfx90a", "gws.cl")
}

/// Every wave adds 1 to a counter, meets the others at the GWS barrier, then reads the
/// counter: all must see the total.
fn barrier_run(groups: u32, workers: usize) {
    let m = Machine::new(sim::config::default_config());
    let s = m.kernel_runner_with_workers(workers).unwrap();
    let co = s.load_code_object(&code_object()).unwrap();
    let waves = u64::from(groups) * 4;
    s.dispatch(co.kernel("gws_init").unwrap(), [64, 1, 1], [64, 1, 1], &kernargs(&[waves])).unwrap();
    let counter = s.upload(&[0i32]).unwrap();
    let seen = s.alloc(waves * 4).unwrap();
    s.dispatch(co.kernel("gws_barrier").unwrap(), [groups * 256, 1, 1], [256, 1, 1], &kernargs(&[counter, seen]))
        .unwrap();
    let got: Vec<i32> = s.read_vec(seen, waves as usize).unwrap();
    assert!(got.iter().all(|&v| v == waves as i32), "{groups} groups: {got:?}");
}

#[test]
fn barrier_across_the_waves_of_one_workgroup() {
    barrier_run(1, 1);
}

#[test]
fn barrier_across_workgroups_running_at_once() {
    barrier_run(2, 2);
}

/// More workgroups than host workers: a workgroup whose waves wait at the barrier stays
/// resident and gives its worker to the others (the hardware keeps them all resident).
#[test]
fn barrier_across_more_workgroups_than_workers() {
    barrier_run(64, 1);
    barrier_run(208, 2);
}
