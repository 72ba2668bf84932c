//! MODE bits that change vector instructions: VGPR indexing (`s_set_gpr_idx_on`) and
//! VSKIP (`s_setvskip`). Encodings from llvm-mc-15 -mcpu=gfx90a.

use sim::testing::Harness;

const S_MOV_S2_3: u32 = 0xbe82_0083; // s_mov_b32 s2, 3
const GPR_IDX_ON_S2_SRC0_DST: u32 = 0xbf11_0902; // s_set_gpr_idx_on s2, gpr_idx(SRC0,DST)
const GPR_IDX_ON_S2_SRC1: u32 = 0xbf11_0202; // s_set_gpr_idx_on s2, gpr_idx(SRC1)
const GPR_IDX_OFF: u32 = 0xbf9c_0000; // s_set_gpr_idx_off
const V_MOV_V1_V2: u32 = 0x7e02_0302; // v_mov_b32_e32 v1, v2
const V_ADD_V5_V6_V7: u32 = 0x680a_0f06; // v_add_u32_e32 v5, v6, v7
const SETVSKIP_ON: u32 = 0xbf10_8081; // s_setvskip 1, 0
const SETVSKIP_OFF: u32 = 0xbf10_8080; // s_setvskip 0, 0

fn lanes(h: &Harness, r: usize) -> u32 {
    h.wave.vgpr[r][0]
}

#[test]
fn vgpr_indexing_offsets_the_selected_operands() {
    let mut h = Harness::new();
    for r in 0..16 {
        h.wave.vgpr[r] = [100 + r as u32; 64];
    }
    // Index 3 on SRC0 and DST: v_mov v1, v2 moves v5 into v4.
    h.run(&[S_MOV_S2_3, GPR_IDX_ON_S2_SRC0_DST, V_MOV_V1_V2, GPR_IDX_OFF, V_MOV_V1_V2]).unwrap();
    assert_eq!(lanes(&h, 4), 105, "v4 = v5 while indexing");
    assert_eq!(lanes(&h, 1), 102, "after s_set_gpr_idx_off, v1 = v2 again");
    // Index 3 on SRC1 only: v_add v5, v6, v7 reads v10 for its second source.
    let mut h2 = Harness::new();
    for r in 0..16 {
        h2.wave.vgpr[r] = [100 + r as u32; 64];
    }
    h2.run(&[S_MOV_S2_3, GPR_IDX_ON_S2_SRC1, V_ADD_V5_V6_V7, GPR_IDX_OFF]).unwrap();
    assert_eq!(lanes(&h2, 5), 106 + 110);
}

#[test]
fn vskip_skips_vector_instructions_only() {
    let mut h = Harness::new();
    h.wave.vgpr[2] = [7; 64];
    h.run(&[SETVSKIP_ON, V_MOV_V1_V2, S_MOV_S2_3, SETVSKIP_OFF]).unwrap();
    assert_eq!(lanes(&h, 1), 0, "the VALU move was skipped");
    assert_eq!(h.wave.sgpr[2], 3, "scalar instructions still run");
    h.run(&[V_MOV_V1_V2]).unwrap();
    assert_eq!(lanes(&h, 1), 7);
}
