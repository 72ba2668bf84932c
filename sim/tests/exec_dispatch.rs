//! The dispatch machinery without the instruction families: hand-made
//! kernels made of program-control instructions only, run through the
//! embedding API.

use sim::config::default_config;
use sim::gpu::cp::dispatch::DispatchError;
use sim::runner::RunnerError;
use sim::Machine;

const S_ENDPGM: u32 = 0xbf81_0000;
const S_BARRIER: u32 = 0xbf8a_0000;
const S_NOP: u32 = 0xbf80_0000;
const S_TRAP_2: u32 = 0xbf92_0002;
const S_BRANCH_1: u32 = 0xbf82_0001;
/// EXP, which compute kernels cannot use and the decoder refuses.
const EXP: u32 = 0xc400_0000;

/// A kernel descriptor (no user SGPRs, one VGPR granule) followed by `code`.
fn kernel(code: &[u32]) -> Vec<u8> {
    let mut kd = [0u8; 64];
    kd[16..24].copy_from_slice(&64i64.to_le_bytes());
    let mut bytes = kd.to_vec();
    for w in code {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    bytes
}

fn run(code: &[u32], grid: u32, block: u32) -> Result<(), RunnerError> {
    let m = Machine::new(default_config());
    let s = m.kernel_runner_with_workers(2)?;
    let k = s.load_raw_kernel(&kernel(code))?;
    s.dispatch(&k, [grid, 1, 1], [block, 1, 1], &[])
}

#[test]
fn empty_kernel_over_many_workgroups() {
    run(&[S_ENDPGM], 64 * 1000, 64).unwrap();
}

#[test]
fn barrier_releases_every_wave_of_a_group() {
    // 4 waves per group, two barriers in a row, partial last group.
    run(&[S_BARRIER, S_BARRIER, S_ENDPGM], 1000, 256).unwrap();
}

#[test]
fn branches_skip_instructions() {
    run(&[S_BRANCH_1, S_TRAP_2, S_ENDPGM], 64, 64).unwrap();
}

#[test]
fn trap_stops_the_dispatch_with_a_queue_error() {
    let e = run(&[S_TRAP_2, S_ENDPGM], 128, 64).unwrap_err();
    assert!(
        matches!(e, RunnerError::Dispatch(DispatchError::Invalid { code: 0x8000_0000, ref reason }) if reason.contains("s_trap")),
        "{e}"
    );
}

#[test]
fn undecodable_code_names_the_pc() {
    let e = run(&[EXP, S_ENDPGM], 64, 64).unwrap_err();
    let RunnerError::Dispatch(DispatchError::Illegal { pc, what }) = e else { panic!("{e}") };
    assert_eq!(pc & 0xfff, 64, "the first instruction after the 64-byte descriptor");
    assert!(what.contains("decode"), "{what}");
}

#[test]
fn running_off_the_end_of_code_faults() {
    // No s_endpgm: s_nop up to the end of the page, then the unmapped guard
    // page after the buffer.
    let e = run(&[S_NOP; (4096 - 64) / 4], 64, 64).unwrap_err();
    assert!(matches!(e, RunnerError::Dispatch(DispatchError::Fault(_))), "{e}");
}

#[test]
fn invalid_packets_are_refused() {
    let m = Machine::new(default_config());
    let s = m.kernel_runner().unwrap();
    let k = s.load_raw_kernel(&kernel(&[S_ENDPGM])).unwrap();
    let e = s.dispatch(&k, [64, 1, 1], [2048, 1, 1], &[]).unwrap_err();
    assert!(matches!(e, RunnerError::Dispatch(DispatchError::Invalid { code: 64, .. })), "{e}");
    let e = s.dispatch(&k, [0, 1, 1], [64, 1, 1], &[]).unwrap_err();
    assert!(matches!(e, RunnerError::Dispatch(DispatchError::Invalid { code: 2, .. })), "{e}");
}
