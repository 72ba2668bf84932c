//! Scalar moves with EXEC, M0-relative moves, PC ops, fork/join, VGPR
//! indexing and VSKIP state, and the hardware registers.
//!
//! Encodings: `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`
//! (`-mcpu=gfx940` for XCC_ID). Expected values follow the MI200/MI300 ISA
//! pseudo-code.

mod salu_support;

use salu_support::{get64, run, set64, EDGE64};
use sim::gpu::exec::ops::salu::hwreg::{gpr_idx, mode};
use sim::gpu::exec::ExecError;
use sim::isa::{Operand, Target};
use sim::testing::Harness;

type ExecRef = fn(u64, u64) -> u64;

/// `<op> s[4:5], s[0:1]`: the new EXEC from (S0, EXEC).
const SAVEEXEC: &[(u32, &str, ExecRef)] = &[
    (0xbe84_2000, "s_and_saveexec_b64", |s, e| s & e),
    (0xbe84_2100, "s_or_saveexec_b64", |s, e| s | e),
    (0xbe84_2200, "s_xor_saveexec_b64", |s, e| s ^ e),
    (0xbe84_2300, "s_andn2_saveexec_b64", |s, e| s & !e),
    (0xbe84_2400, "s_orn2_saveexec_b64", |s, e| s | !e),
    (0xbe84_2500, "s_nand_saveexec_b64", |s, e| !(s & e)),
    (0xbe84_2600, "s_nor_saveexec_b64", |s, e| !(s | e)),
    (0xbe84_2700, "s_xnor_saveexec_b64", |s, e| !(s ^ e)),
    (0xbe84_3300, "s_andn1_saveexec_b64", |s, e| !s & e),
    (0xbe84_3400, "s_orn1_saveexec_b64", |s, e| !s | e),
];

const WREXEC: &[(u32, &str, ExecRef)] =
    &[(0xbe84_3500, "s_andn1_wrexec_b64", |s, e| !s & e), (0xbe84_3600, "s_andn2_wrexec_b64", |s, e| s & !e)];

#[test]
fn saveexec_writes_old_exec_and_wrexec_the_new() {
    let mut h = Harness::new();
    for &(word, name, f) in SAVEEXEC.iter().chain(WREXEC) {
        let wr = name.contains("wrexec");
        for s in EDGE64 {
            for e in EDGE64 {
                set64(&mut h, 0, s);
                h.wave.exec = e;
                h.wave.scc = false;
                run(&mut h, &[word], name);
                let new = f(s, e);
                assert_eq!(h.wave.exec, new, "{name} s {s:#x} exec {e:#x}");
                assert_eq!(get64(&h, 4), if wr { new } else { e }, "{name} destination");
                assert_eq!(h.wave.scc, new != 0, "{name} SCC");
            }
        }
    }
    // D naming S0: S0 is read first.
    set64(&mut h, 0, 0xff);
    h.wave.exec = 0x0f0f;
    run(&mut h, &[0xbe80_2000], "s_and_saveexec_b64 s[0:1], s[0:1]");
    assert_eq!((get64(&h, 0), h.wave.exec), (0x0f0f, 0x0f));
}

#[test]
fn cmov_b64_and_exec_writes() {
    let mut h = Harness::new();
    set64(&mut h, 0, 0x1234_5678_9abc_def0);
    set64(&mut h, 4, 7);
    h.wave.scc = false;
    run(&mut h, &[0xbe84_0300], "s_cmov_b64 s[4:5], s[0:1]");
    assert_eq!(get64(&h, 4), 7);
    h.wave.scc = true;
    run(&mut h, &[0xbe84_0300], "s_cmov_b64 s[4:5], s[0:1]");
    assert_eq!(get64(&h, 4), 0x1234_5678_9abc_def0);
    run(&mut h, &[0xbefe_0100], "s_mov_b64 exec, s[0:1]");
    assert_eq!(h.wave.exec, 0x1234_5678_9abc_def0);
}

#[test]
fn relative_moves_offset_by_m0() {
    let mut h = Harness::new();
    for (k, r) in h.wave.sgpr.iter_mut().enumerate() {
        *r = 1000 + k as u32;
    }
    h.wave.m0 = 3;
    run(&mut h, &[0xbe84_2a0a], "s_movrels_b32 s4, s10");
    assert_eq!(h.wave.sgpr[4], 1013);
    h.wave.sgpr[4] = 77;
    run(&mut h, &[0xbe8a_2c04], "s_movreld_b32 s10, s4");
    assert_eq!((h.wave.sgpr[10], h.wave.sgpr[13]), (1010, 77));
    h.wave.m0 = 2;
    run(&mut h, &[0xbe84_2b0a], "s_movrels_b64 s[4:5], s[10:11]");
    assert_eq!(h.wave.sgpr[4..6], [1012, 77]);
    set64(&mut h, 4, 0x5_0000_0006);
    run(&mut h, &[0xbe8a_2d04], "s_movreld_b64 s[10:11], s[4:5]");
    assert_eq!(h.wave.sgpr[12..14], [6, 5]);
    // s100 + 2 is past s101.
    assert_eq!(h.run(&[0xbee4_2c04]), Err(ExecError::Register(Operand::Sgpr(100))), "s_movreld_b32 s100, s4");
    h.wave.m0 = 1;
    run(&mut h, &[0xbee4_2c04], "s_movreld_b32 s100, s4");
    assert_eq!(h.wave.sgpr[101], 6);
    // TTMPs stay within ttmp0..ttmp15.
    h.wave.ttmp[15] = 0xabc;
    h.wave.m0 = 13;
    run(&mut h, &[0xbe84_2a6e], "s_movrels_b32 s4, ttmp2");
    assert_eq!(h.wave.sgpr[4], 0xabc);
    h.wave.m0 = 14;
    assert_eq!(h.run(&[0xbe84_2a6e]), Err(ExecError::Register(Operand::Ttmp(2))));
}

#[test]
fn pc_ops() {
    let mut h = Harness::new();
    run(&mut h, &[0xbf80_0000, 0xbe84_1c00], "s_nop 0; s_getpc_b64 s[4:5]");
    assert_eq!(get64(&h, 4), 8, "the address of the next instruction");
    // s_setpc_b64 s[0:1] to 12 skips the two s_movk_i32 s6 in between.
    let prog = [0xbe80_1d00, 0xb006_0001, 0xb006_0001, 0xb007_0002];
    set64(&mut h, 0, 12);
    h.wave.sgpr[6] = 0;
    run(&mut h, &prog, "s_setpc_b64");
    assert_eq!(h.wave.sgpr[6..8], [0, 2]);
    let prog = [0xbe84_1e00, 0xb006_0001, 0xb006_0001, 0xb007_0003];
    run(&mut h, &prog, "s_swappc_b64 s[4:5], s[0:1]");
    assert_eq!((get64(&h, 4), h.wave.sgpr[6], h.wave.sgpr[7]), (4, 0, 3));
    let prog = [0xba84_0002, 0xb006_0001, 0xb006_0001, 0xb007_0004];
    run(&mut h, &prog, "s_call_b64 s[4:5], 2");
    assert_eq!((get64(&h, 4), h.wave.sgpr[6], h.wave.sgpr[7]), (4, 0, 4));
    let prog = [0xbe80_1f00, 0xb006_0001, 0xb006_0001, 0xb007_0005];
    run(&mut h, &prog, "s_rfe_b64 s[0:1]");
    assert_eq!(h.wave.sgpr[6..8], [0, 5]);
    let prog = [0x9580_0200, 0xb006_0001, 0xb006_0001, 0xb007_0006];
    run(&mut h, &prog, "s_rfe_restore_b64 s[0:1], s2");
    assert_eq!(h.wave.sgpr[6..8], [0, 6]);
}

fn csp(h: &Harness) -> u32 {
    (h.wave.mode & mode::CSP) >> mode::CSP_SHIFT
}

#[test]
fn fork_and_join_use_the_sgpr_stack() {
    let mut h = Harness::new();
    // g_fork with equal halves: the passing lanes run at the target first,
    // the failing lanes and PC+4 are pushed to s[0:3].
    h.wave.exec = 0xff;
    set64(&mut h, 8, 0x0f);
    set64(&mut h, 10, 0x100);
    run(&mut h, &[0x9480_0a08], "s_cbranch_g_fork s[8:9], s[10:11]");
    assert_eq!(h.wave.exec, 0x0f);
    assert_eq!((get64(&h, 0), get64(&h, 2), csp(&h)), (0xf0, 4, 1));
    // A second fork pushes to s[4:7]; fewer failing lanes run first here.
    set64(&mut h, 8, 0x0e);
    run(&mut h, &[0x9480_0a08], "s_cbranch_g_fork s[8:9], s[10:11]");
    assert_eq!(h.wave.exec, 0x01);
    assert_eq!((get64(&h, 4), get64(&h, 6), csp(&h)), (0x0e, 0x100, 2));
    // join at a deeper stack pops (lanes, PC).
    h.wave.sgpr[12] = 0;
    run(&mut h, &[0xbe80_2e0c, 0xb007_0009], "s_cbranch_join s12");
    assert_eq!((h.wave.exec, csp(&h)), (0x0e, 1), "jumped past the program");
    run(&mut h, &[0xbe80_2e0c, 0xb007_0009], "s_cbranch_join s12");
    assert_eq!((h.wave.exec, csp(&h)), (0xf0, 0));
    assert_eq!(h.wave.sgpr[7], 9, "resumed at PC 4");
    // At the saved depth, join falls through.
    h.wave.sgpr[7] = 0;
    run(&mut h, &[0xbe80_2e0c, 0xb007_0009], "s_cbranch_join s12");
    assert_eq!((h.wave.exec, csp(&h), h.wave.sgpr[7]), (0xf0, 0, 9));
    // All lanes one way: a plain branch (or none), nothing pushed.
    set64(&mut h, 8, 0xff0);
    set64(&mut h, 0, 0);
    run(&mut h, &[0x9480_0a08, 0xb007_000a], "s_cbranch_g_fork (all pass)");
    assert_eq!((h.wave.exec, csp(&h), get64(&h, 0), h.wave.sgpr[7]), (0xf0, 0, 0, 9));
    set64(&mut h, 8, 0xf);
    run(&mut h, &[0x9480_0a08, 0xb007_000a], "s_cbranch_g_fork (all fail)");
    assert_eq!((h.wave.exec, csp(&h), h.wave.sgpr[7]), (0xf0, 0, 10));
    // i_fork: the target is PC + 4 + 4 * simm16.
    h.wave.exec = 0b11;
    set64(&mut h, 8, 0b01);
    run(&mut h, &[0xb808_0003], "s_cbranch_i_fork s[8:9], 3");
    assert_eq!((h.wave.exec, get64(&h, 0), get64(&h, 2), csp(&h)), (0b01, 0b10, 4, 1));
}

#[test]
fn gpr_indexing_state() {
    let mut h = Harness::new();
    h.wave.m0 = 0xffff_ffff;
    h.wave.sgpr[0] = 0x1_0005;
    run(&mut h, &[0xbf11_0900], "s_set_gpr_idx_on s0, gpr_idx(SRC0,DST)");
    assert_eq!(h.wave.m0, 0xffff_0f00 | 0x05 | gpr_idx::SRC0 | gpr_idx::DST);
    assert_ne!(h.wave.mode & mode::GPR_IDX_EN, 0);
    assert_eq!(mode::GPR_IDX_EN, 1 << 27);
    run(&mut h, &[0xbf9d_0002], "s_set_gpr_idx_mode gpr_idx(SRC1)");
    assert_eq!(h.wave.m0, 0xffff_0f05 | gpr_idx::SRC1);
    h.wave.sgpr[0] = 0x1ab;
    run(&mut h, &[0xbe80_3200], "s_set_gpr_idx_idx s0");
    assert_eq!(h.wave.m0, 0xffff_0fab | gpr_idx::SRC1);
    let before = h.wave.mode;
    run(&mut h, &[0xbf9c_0000], "s_set_gpr_idx_off");
    assert_eq!(h.wave.mode, before & !mode::GPR_IDX_EN);
    assert_eq!(h.wave.m0, 0xffff_0fab | gpr_idx::SRC1, "M0 is left alone");
    h.wave.m0 = 0;
    run(&mut h, &[0xbf11_06ff, 0x0000_1234], "s_set_gpr_idx_on 0x1234, gpr_idx(SRC1,SRC2)");
    assert_eq!(h.wave.m0, 0x34 | gpr_idx::SRC1 | gpr_idx::SRC2);
}

#[test]
fn setvskip_sets_mode_bit_28() {
    let mut h = Harness::new();
    h.wave.sgpr[0] = 0b100;
    h.wave.sgpr[1] = 34; // bit 34 & 31 = 2
    run(&mut h, &[0xbf10_0100], "s_setvskip s0, s1");
    assert_eq!(h.wave.mode, 1 << 28);
    assert_eq!(mode::VSKIP, 1 << 28);
    h.wave.sgpr[1] = 1;
    run(&mut h, &[0xbf10_0100], "s_setvskip s0, s1");
    assert_eq!(h.wave.mode, 0);
}

#[test]
fn mode_and_trapsts_are_writable() {
    let mut h = Harness::new();
    h.wave.mode = 0x1234_5678;
    run(&mut h, &[0xb884_f801], "s_getreg_b32 s4, hwreg(HW_REG_MODE)");
    assert_eq!(h.wave.sgpr[4], 0x1234_5678);
    run(&mut h, &[0xb884_3901], "s_getreg_b32 s4, hwreg(HW_REG_MODE, 4, 8)");
    assert_eq!(h.wave.sgpr[4], 0x67);
    h.wave.sgpr[4] = 0xabc;
    run(&mut h, &[0xb904_3901], "s_setreg_b32 hwreg(HW_REG_MODE, 4, 8), s4");
    assert_eq!(h.wave.mode, 0x1234_5bc8);
    // A field running past bit 31 is cut there.
    run(&mut h, &[0xba00_1f81, 0x0000_000f], "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 30, 4), 0xf");
    assert_eq!(h.wave.mode, 0xd234_5bc8);
    run(&mut h, &[0xb884_07c1], "s_getreg_b32 s4, hwreg(HW_REG_MODE, 31, 1)");
    assert_eq!(h.wave.sgpr[4], 1);
    run(&mut h, &[0xba00_f803, 0xffff_ffff], "s_setreg_imm32_b32 hwreg(HW_REG_TRAPSTS), 0xffffffff");
    assert_eq!(h.wave.trapsts, 0x1fff_ffff, "TRAPSTS[31:29] are read-only");
    run(&mut h, &[0xb884_f803], "s_getreg_b32 s4, hwreg(HW_REG_TRAPSTS)");
    assert_eq!(h.wave.sgpr[4], 0x1fff_ffff);
}

#[test]
fn read_only_registers() {
    let mut h = Harness::new();
    let getreg = |h: &mut Harness, word: u32| {
        h.wave.sgpr[4] = 0xdead;
        run(h, &[word], "s_getreg_b32");
        h.wave.sgpr[4]
    };
    // STATUS: SCC (0), EXECZ (9), VCCZ (10), VALID (16); one wave per
    // workgroup (no IN_TG) and no trap handler (no TRAP_EN).
    h.wave.scc = true;
    h.wave.exec = 0;
    h.wave.vcc = 0;
    assert_eq!(getreg(&mut h, 0xb884_f802), 1 | 1 << 9 | 1 << 10 | 1 << 16);
    h.wave.scc = false;
    h.wave.exec = 1;
    h.wave.vcc = 1;
    assert_eq!(getreg(&mut h, 0xb884_f802), 1 << 16);
    run(&mut h, &[0xba00_f802, 0xffff_ffff], "s_setreg_imm32_b32 hwreg(HW_REG_STATUS), 0xffffffff");
    assert_eq!(getreg(&mut h, 0xb884_f802), 1 << 16, "writes to STATUS are dropped");
    assert!(!h.wave.scc);
    // HW_ID: WAVE_ID[3:0], SIMD_ID[5:4], VM_ID[23:20], ME_ID[31:30].
    h.wave.wave_in_group = 5;
    assert_eq!(getreg(&mut h, 0xb884_f804), 1 | 1 << 4 | 8 << 20 | 1 << 30);
    // GPR_ALLOC: (64 + 32) VGPRs in granules of 8, 112 SGPRs in granules of 16.
    assert_eq!(getreg(&mut h, 0xb884_f805), 11 << 8 | 6 << 24);
    // LDS_ALLOC: 64 KiB in granules of 128 dwords.
    assert_eq!(getreg(&mut h, 0xb884_f806), 128 << 12);
    assert_eq!(getreg(&mut h, 0xb884_f807), 0, "IB_STS");
    assert_eq!(getreg(&mut h, 0xb884_f80f), 0x0001_0002, "SH_MEM_BASES");
    for word in [0xb884_f810, 0xb884_f811, 0xb884_f812, 0xb884_f813] {
        assert_eq!(getreg(&mut h, word), 0, "TBA/TMA without a trap handler");
    }
    assert_eq!(getreg(&mut h, 0xb884_f83f), 0, "hwreg(63)");
    let mut h = Harness::for_target(Target::Gfx942);
    assert_eq!(getreg(&mut h, 0xb884_f814), 0, "XCC_ID");
}

/// `s_sendmsg sendmsg(MSG_INTERRUPT)`: the wave interrupts the host; the driver gets the event
/// whose id is M0's low 24 bits (the message context).
#[test]
fn sendmsg_interrupt_raises_the_event_in_m0() {
    let mut h = Harness::new();
    h.wave.m0 = 0xab00_0123;
    h.run(&[0xbf90_0001]).unwrap();
    assert_eq!(h.context().interrupts(), [0x0000_0123]);
    assert!(h.context().faults().is_empty());
}
