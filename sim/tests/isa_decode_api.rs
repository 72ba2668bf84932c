//! The decoder's API as the interpreter uses it: operand roles, register counts, constant
//! values, modifiers, memory fields, branch targets, errors. Instruction bytes come from
//! `llvm-mc-15 -mcpu=gfx90a -show-encoding`.

use sim::isa::info::{flags, OpClass, RegFile, Ty};
use sim::isa::{decode, DecodeError, Encoding, Ext, InlineFloat, Inst, Op, Operand, Target, Vop3Mods};

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn dec(bytes: &[u8]) -> Inst {
    let w = words(bytes);
    let inst = decode(&w, Target::Gfx90a).expect("decodes");
    assert_eq!(usize::from(inst.len), bytes.len(), "length of {inst}");
    inst
}

#[test]
fn inst_is_small_and_copy() {
    // 36 today: 16 bytes of operands and header, the literal, 16 bytes of encoding fields.
    assert!(std::mem::size_of::<Inst>() <= 40, "{}", std::mem::size_of::<Inst>());
    assert_eq!(std::mem::size_of::<Operand>(), 2);
    assert_eq!(std::mem::size_of::<Op>(), 2);
}

#[test]
fn vop2_operands_in_printing_order() {
    let i = dec(&[0x02, 0x07, 0x02, 0x02]);
    assert_eq!(i.op, Op::VAddF32);
    assert_eq!(i.enc, Encoding::Vop2);
    assert_eq!(i.dst, [Operand::Vgpr(1), Operand::None]);
    assert_eq!(i.src, [Operand::Vgpr(2), Operand::Vgpr(3), Operand::None]);
    assert_eq!(i.to_string(), "v_add_f32_e32 v1, v2, v3");
    assert_eq!(i.info().class, OpClass::Valu);
}

#[test]
fn implicit_vcc_operands_are_explicit() {
    let i = dec(&[0x02, 0x07, 0x02, 0x38]);
    assert_eq!(i.op, Op::VAddcCoU32);
    assert_eq!(i.dst, [Operand::Vgpr(1), Operand::VccLo]);
    assert_eq!(i.src[2], Operand::VccLo);
    assert_eq!(i.src_regs(2), 2);
    let c = dec(&[0x01, 0x05, 0x84, 0x7c]);
    assert_eq!((c.op, c.dst[0]), (Op::VCmpEqF32, Operand::VccLo));
    assert_eq!(c.dst_regs(0), 2);
}

#[test]
fn vop3_compare_writes_an_sgpr_pair() {
    let i = dec(&[0x04, 0x00, 0xe9, 0xd0, 0x02, 0x09, 0x02, 0x00]);
    assert_eq!(i.op, Op::VCmpLtU64);
    assert_eq!(i.enc, Encoding::Vop3);
    assert_eq!(i.dst[0], Operand::Sgpr(4));
    assert_eq!((i.src_regs(0), i.src_regs(1)), (2, 2));
    assert_eq!(i.to_string(), "v_cmp_lt_u64_e64 s[4:5], v[2:3], v[4:5]");
}

#[test]
fn vop3_modifiers() {
    let i = dec(&[0x01, 0x83, 0x01, 0xd1, 0x02, 0x07, 0x02, 0x28]);
    let Ext::Vop3(m) = i.ext else { panic!("{:?}", i.ext) };
    assert_eq!(m, Vop3Mods { abs: 0b11, neg: 0b01, clamp: true, omod: 1, ..Vop3Mods::default() });
    assert_eq!(i.to_string(), "v_add_f32_e64 v1, -|v2|, |v3| clamp mul:2");
}

#[test]
fn literal_and_inline_constants_by_type() {
    let i = dec(&[0xff, 0x00, 0x00, 0x02, 0xdb, 0x0f, 0x49, 0x40]);
    assert_eq!((i.src[0], i.literal), (Operand::Literal, 0x4049_0fdb));
    assert_eq!(i.src_const(0), Some(0x4049_0fdb));
    assert_eq!(i.src_const(1), None);

    let d = dec(&[0x00, 0x00, 0x80, 0xd2, 0xf2, 0x04, 0x02, 0x00]);
    assert_eq!(d.src[0], Operand::Float(InlineFloat::One));
    assert_eq!(d.info().src[0].ty, Ty::F64);
    assert_eq!(d.src_const(0), Some(0x3ff0_0000_0000_0000));

    let h = dec(&[0xf2, 0x02, 0x00, 0x3e]);
    assert_eq!(h.info().src[0].ty, Ty::F16);
    assert_eq!(h.src_const(0), Some(0x3c00));

    let u = dec(&[0xc1, 0x02, 0x00, 0x4c]);
    assert_eq!(u.info().src[0].ty, Ty::I16);
    assert_eq!((u.src[0], u.src_const(0)), (Operand::Int(-1), Some(0xffff)));

    // A 64-bit integer operand's literal is zero-extended, a double's is the high half.
    let s = dec(&[0xff, 0x01, 0x82, 0xbe, 0x00, 0x00, 0xf0, 0x3f]);
    assert_eq!(s.op, Op::SMovB64);
    assert_eq!(s.src_const(0), Some(0x3ff0_0000));
    assert_eq!(Operand::Literal.const_value(Ty::F64, 0x3ff0_0000), Some(0x3ff0_0000_0000_0000));
}

#[test]
fn madmk_constant_is_a_middle_source() {
    let i = dec(&[0x02, 0x07, 0x02, 0x2e, 0x00, 0x00, 0x20, 0x41]);
    assert_eq!(i.op, Op::VMadmkF32);
    assert_eq!(i.src, [Operand::Vgpr(2), Operand::Literal, Operand::Vgpr(3)]);
    assert_eq!(i.literal, 0x4120_0000);
    assert_eq!(i.to_string(), "v_madmk_f32 v1, v2, 0x41200000, v3");
}

#[test]
fn dpp_and_sdwa_fields() {
    let d = dec(&[0xfa, 0x02, 0x02, 0x7e, 0x02, 0xb1, 0x00, 0xa5]);
    let Ext::Dpp(p) = d.ext else { panic!() };
    assert_eq!((p.ctrl, p.row_mask, p.bank_mask), (0xb1, 0xa, 0x5));
    assert_eq!(d.src[0], Operand::Vgpr(2));
    assert_eq!(d.len, 8);

    let s = dec(&[0xf9, 0x06, 0x02, 0x02, 0x02, 0x15, 0x12, 0x24]);
    let Ext::Sdwa(w) = s.ext else { panic!() };
    assert_eq!((w.dst_sel, w.dst_unused, w.src_sel), (5, 2, [2, 4]));
    assert_eq!((w.neg, w.abs), (0b01, 0b10));
    assert_eq!(s.src, [Operand::Vgpr(2), Operand::Vgpr(3), Operand::None]);
}

#[test]
fn mfma_accumulators_are_agprs() {
    let i = dec(&[0x00, 0x91, 0xc0, 0xd3, 0x01, 0x05, 0x02, 0x64]);
    assert_eq!(i.info().class, OpClass::Mfma);
    assert_eq!(i.dst[0], Operand::Agpr(0));
    assert_eq!(i.src, [Operand::Vgpr(1), Operand::Vgpr(2), Operand::Agpr(0)]);
    assert_eq!((i.dst_regs(0), i.src_regs(2)), (32, 32));
    let Ext::Mfma(m) = i.ext else { panic!() };
    assert_eq!((m.cbsz, m.abid, m.blgp), (1, 2, 3));
}

#[test]
fn scalar_memory() {
    let i = dec(&[0x02, 0x00, 0x06, 0xc0, 0x10, 0x00, 0x00, 0x00]);
    assert_eq!(i.op, Op::SLoadDwordx2);
    assert_eq!((i.dst[0], i.dst_regs(0)), (Operand::Sgpr(0), 2));
    assert_eq!((i.src[0], i.src_regs(0)), (Operand::Sgpr(4), 2));
    let Ext::Smem(m) = i.ext else { panic!() };
    assert_eq!((m.offset, m.has_imm, m.soffset), (16, true, Operand::None));
    assert!(i.op.has_flag(flags::LOAD) && i.is_memory());
}

#[test]
fn global_addressing() {
    let off = dec(&[0xf8, 0x9f, 0x50, 0xdc, 0x02, 0x00, 0x7f, 0x01]);
    let Ext::Flat(f) = off.ext else { panic!() };
    assert_eq!(f.offset, -8);
    assert_eq!((off.src[0], off.src_regs(0), off.src[2]), (Operand::Vgpr(2), 2, Operand::None));
    let s = dec(&[0x10, 0x80, 0x51, 0xdc, 0x02, 0x00, 0x04, 0x01]);
    let Ext::Flat(f) = s.ext else { panic!() };
    assert_eq!((f.offset, f.cache.glc), (16, true));
    assert_eq!((s.src[0], s.src_regs(0)), (Operand::Vgpr(2), 1));
    assert_eq!((s.src[2], s.src_regs(2)), (Operand::Sgpr(4), 2));
    assert_eq!(s.dst[0], Operand::Vgpr(1));
}

#[test]
fn ds_buffer_and_image_fields() {
    let d = dec(&[0x03, 0xff, 0x6e, 0xd8, 0x04, 0x00, 0x00, 0x02]);
    let Ext::Ds(x) = d.ext else { panic!() };
    assert_eq!((x.offset0, x.offset1, x.gds), (3, 255, false));
    assert_eq!((d.dst[0], d.dst_regs(0), d.src[0]), (Operand::Vgpr(2), 2, Operand::Vgpr(4)));

    let b = dec(&[0xff, 0x5f, 0x52, 0xe0, 0x02, 0x01, 0x01, 0x08]);
    let Ext::Buf(x) = b.ext else { panic!() };
    assert_eq!((x.offset, x.offen, x.idxen, x.soffset), (4095, true, false, Operand::Sgpr(8)));
    assert!(x.cache.glc && x.cache.slc);
    assert_eq!((b.dst[0], b.src[0], b.src[2]), (Operand::Vgpr(1), Operand::Vgpr(2), Operand::Sgpr(4)));
    assert_eq!(b.src_regs(2), 4);

    let m = dec(&[0x00, 0x1f, 0x00, 0xf0, 0x04, 0x00, 0x02, 0x00]);
    let Ext::Mimg(x) = m.ext else { panic!() };
    assert_eq!((x.dmask, x.unorm), (0xf, true));
    assert_eq!((m.dst[0], m.dst_regs(0), m.src[2], m.src_regs(2)), (Operand::Vgpr(0), 4, Operand::Sgpr(8), 8));
}

#[test]
fn branches_and_program_control() {
    let b = dec(&[0x05, 0x00, 0x88, 0xbf]);
    assert_eq!(b.op, Op::SCbranchExecz);
    assert!(b.op.has_flag(flags::BRANCH) && b.op.has_flag(flags::CONDITIONAL));
    assert_eq!(b.branch_target(0x1000), 0x1000 + 4 + 5 * 4);
    let back = dec(&[0xff, 0xff, 0x82, 0xbf]);
    assert_eq!(back.simm16(), -1);
    assert_eq!(back.branch_target(0x1000), 0x1000);
    let w = dec(&[0x21, 0x03, 0x8c, 0xbf]);
    assert_eq!((w.op, w.ext), (Op::SWaitcnt, Ext::Imm(0x0321)));
    let g = dec(&[0x01, 0x39, 0x81, 0xb8]);
    assert_eq!((g.op, g.dst[0], g.ext), (Op::SGetregB32, Operand::Sgpr(1), Ext::Imm(0x3901)));
    assert_eq!(g.to_string(), "s_getreg_b32 s1, hwreg(HW_REG_MODE, 4, 8)");
}

#[test]
fn errors_name_what_failed() {
    assert!(matches!(decode(&[], Target::Gfx90a), Err(DecodeError::Truncated { need: 1, have: 0, .. })));
    // A literal that is not there.
    assert!(matches!(decode(&[0x0200_00ff], Target::Gfx90a), Err(DecodeError::Truncated { need: 2, .. })));
    // SOPP opcode 0x7f does not exist.
    assert_eq!(
        decode(&[0xbfff_0000], Target::Gfx90a),
        Err(DecodeError::Unknown { encoding: Encoding::Sopp, opcode: 0x7f, word: 0xbfff_0000 })
    );
    // EXP is not a compute encoding.
    assert!(matches!(decode(&[0xc400_0000, 0], Target::Gfx90a), Err(DecodeError::Unsupported { .. })));
}

#[test]
fn op_table_is_consistent() {
    let mut names = std::collections::BTreeSet::new();
    for i in 0..sim::isa::info::OP_COUNT {
        let op = Op::from_index(i).expect("index");
        assert_eq!(op as usize, i);
        assert!(names.insert(op.name()), "duplicate {}", op.name());
        let info = op.info();
        for s in info.dst.iter().chain(info.src.iter()) {
            assert!(s.regs <= 32);
        }
        if info.class == OpClass::Smem && info.src[0].is_present() {
            assert_eq!(info.src[0].file, RegFile::Sgpr, "{}", info.name);
        }
    }
    assert!(Op::from_index(sim::isa::info::OP_COUNT).is_none());
    assert_eq!(Op::VAddF32.to_string(), "v_add_f32");
}

#[test]
fn mnemonics_cover_every_form() {
    let m: std::collections::BTreeSet<_> = sim::isa::mnemonics(Target::Gfx90a).collect();
    for name in [
        "v_add_f32_e32",
        "v_add_f32_e64",
        "v_add_f32_sdwa",
        "v_add_f32_dpp",
        "v_mfma_f32_32x32x1f32",
        "global_load_dword",
        "s_endpgm",
    ] {
        assert!(m.contains(name), "{name}");
    }
}

#[test]
fn program_control_fields() {
    let w = dec(&[0x21, 0x03, 0x8c, 0xbf]);
    assert_eq!(w.waitcnt(), Some(sim::isa::Waitcnt { vm: 1, exp: 2, lgkm: 3 }));
    let g = dec(&[0x01, 0x39, 0x81, 0xb8]);
    assert_eq!(g.hwreg(), Some(sim::isa::HwReg { id: 1, offset: 4, size: 8 }));
    assert_eq!(g.waitcnt(), None);
    // s_sendmsg sendmsg(MSG_INTERRUPT)
    let m = dec(&[0x01, 0x00, 0x90, 0xbf]);
    assert_eq!(m.sendmsg(), Some((1, 0, 0)));
    assert_eq!(m.to_string(), "s_sendmsg sendmsg(MSG_INTERRUPT)");
}
