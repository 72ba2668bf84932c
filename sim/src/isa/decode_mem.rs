//! Memory encodings: DS, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF, MIMG. Operand roles are listed in
//! `inst.rs`. On gfx90a an `acc` bit makes the data/return registers AGPRs.

use super::decode::{sdst, ssrc, Cx, DecodeError, Tables};
use super::info::{flags, RegFile, Slot, Ty};
use super::inst::{Buf, Cache, Ds, Encoding, Ext, Flat, Inst, Mimg};
use super::operand::Operand;
use super::Target;

fn vreg(n: u32, acc: bool) -> Operand {
    if acc {
        Operand::Agpr(n as u8)
    } else {
        Operand::Vgpr(n as u8)
    }
}

const ONE_SGPR: Slot = Slot { regs: 1, file: RegFile::Sgpr, ty: Ty::B32 };

pub(crate) fn mem(cx: &Cx, t: &Tables, w0: u32) -> Result<Inst, DecodeError> {
    let (opcode, table) = match cx.enc {
        Encoding::Ds => ((w0 >> 17) & 0xff, t.ds),
        Encoding::Flat => ((w0 >> 18) & 0x7f, t.flat),
        Encoding::Global => ((w0 >> 18) & 0x7f, t.global),
        Encoding::Scratch => ((w0 >> 18) & 0x7f, t.scratch),
        Encoding::Mubuf => ((w0 >> 18) & 0x7f, t.mubuf),
        Encoding::Mtbuf => ((w0 >> 15) & 0xf, t.mtbuf),
        _ => ((w0 >> 18) & 0x7f, t.mimg),
    };
    let op = table(opcode).ok_or_else(|| cx.unknown(opcode))?;
    let w1 = cx.word(1)?;
    let info = op.info();
    let bad = || cx.invalid(op);
    let mut inst = cx.inst(op, 8);
    let atomic = info.flags & flags::ATOMIC != 0;
    match cx.enc {
        Encoding::Ds => {
            let acc = w0 & (1 << 25) != 0;
            if info.dst[0].is_present() {
                inst.dst[0] = vreg(w1 >> 24, acc);
            }
            if info.src[0].is_present() {
                // GWS ops name a data register here, which may be an AGPR.
                let gws = info.name.starts_with("ds_gws");
                inst.src[0] = vreg(w1 & 0xff, acc && gws);
            }
            if info.src[1].is_present() {
                inst.src[1] = vreg((w1 >> 8) & 0xff, acc);
            }
            if info.src[2].is_present() {
                inst.src[2] = vreg((w1 >> 16) & 0xff, acc);
            }
            inst.ext = Ext::Ds(Ds { offset0: w0 as u8, offset1: (w0 >> 8) as u8, gds: w0 & (1 << 16) != 0 });
        }
        Encoding::Flat | Encoding::Global | Encoding::Scratch => {
            let acc = w1 & (1 << 23) != 0;
            let glc = w0 & (1 << 16) != 0;
            let lds = w0 & (1 << 13) != 0;
            let f_saddr = (w1 >> 16) & 0x7f;
            let has_saddr = cx.enc != Encoding::Flat && f_saddr != 0x7f;
            if has_saddr {
                inst.src[2] = sdst(f_saddr, &info.src[2]).ok_or_else(bad)?;
            }
            // gfx90a scratch with an SGPR address has no VGPR address; gfx940+ scratch has one
            // only with the SVE bit (13, the gfx90a lds bit).
            let vaddr = match (cx.enc, cx.target) {
                (Encoding::Scratch, Target::Gfx90a) => !has_saddr,
                (Encoding::Scratch, Target::Gfx942 | Target::Gfx950) => w0 & (1 << 13) != 0,
                _ => true,
            };
            let lds = lds && !(cx.enc == Encoding::Scratch && cx.target.is_gfx94x_family());
            if vaddr {
                inst.src[0] = Operand::Vgpr(w1 as u8);
            }
            if info.src[1].is_present() {
                inst.src[1] = vreg((w1 >> 8) & 0xff, acc);
            }
            if info.dst[0].is_present() && (!atomic || glc) && !lds {
                inst.dst[0] = vreg(w1 >> 24, acc);
            }
            let raw = w0 & 0x1fff;
            let offset = if cx.enc == Encoding::Flat { raw as i16 } else { ((raw << 3) as i16) >> 3 };
            inst.ext = Ext::Flat(Flat {
                offset,
                cache: Cache { glc, slc: w0 & (1 << 17) != 0, scc: w0 & (1 << 25) != 0 },
                lds,
            });
        }
        Encoding::Mubuf | Encoding::Mtbuf => {
            let acc = w1 & (1 << 23) != 0;
            let offen = w0 & (1 << 12) != 0;
            let idxen = w0 & (1 << 13) != 0;
            let glc = w0 & (1 << 14) != 0;
            let mtbuf = cx.enc == Encoding::Mtbuf;
            let lds = !mtbuf && w0 & (1 << 16) != 0;
            if offen || idxen {
                inst.src[0] = Operand::Vgpr(w1 as u8);
            }
            let vdata = vreg((w1 >> 8) & 0xff, acc);
            if info.src[1].is_present() && !lds {
                inst.src[1] = vdata;
            }
            if info.dst[0].is_present() && (!atomic || glc) && !lds {
                inst.dst[0] = vdata;
            }
            if !info.src[2].is_present() {
                // buffer_wbinvl1 & co: only the cache bits mean something.
                inst.ext = Ext::Buf(Buf {
                    cache: Cache { glc, slc: w0 & (1 << 17) != 0, scc: w0 & (1 << 15) != 0 },
                    ..Buf::default()
                });
                return Ok(inst);
            }
            inst.src[2] = sdst(((w1 >> 16) & 0x1f) << 2, &info.src[2]).ok_or_else(bad)?;
            let slc = if mtbuf { w1 & (1 << 22) != 0 } else { w0 & (1 << 17) != 0 };
            inst.ext = Ext::Buf(Buf {
                soffset: ssrc(w1 >> 24, &ONE_SGPR).ok_or_else(bad)?,
                offset: (w0 & 0xfff) as u16,
                offen,
                idxen,
                lds,
                cache: Cache { glc, slc, scc: if mtbuf { w1 & (1 << 21) != 0 } else { w0 & (1 << 15) != 0 } },
                dfmt: if mtbuf { ((w0 >> 19) & 0xf) as u8 } else { 0 },
                nfmt: if mtbuf { ((w0 >> 23) & 7) as u8 } else { 0 },
            });
            if inst.ext_buf_soffset_is_literal() {
                return Err(bad());
            }
        }
        _ => {
            let acc = w0 & (1 << 16) != 0;
            let glc = w0 & (1 << 13) != 0;
            let vdata = vreg((w1 >> 8) & 0xff, acc);
            inst.src[0] = Operand::Vgpr(w1 as u8);
            if info.src[1].is_present() {
                inst.src[1] = vdata;
            }
            if info.dst[0].is_present() && (!atomic || glc) {
                inst.dst[0] = vdata;
            }
            inst.src[2] = sdst(((w1 >> 16) & 0x1f) << 2, &info.src[2]).ok_or_else(bad)?;
            let sampler = info.name.contains("sample") || info.name.contains("gather");
            inst.ext = Ext::Mimg(Mimg {
                ssamp: if sampler {
                    sdst(((w1 >> 21) & 0x1f) << 2, &Slot { regs: 4, ..ONE_SGPR }).ok_or_else(bad)?
                } else {
                    Operand::None
                },
                dmask: ((w0 >> 8) & 0xf) as u8,
                unorm: w0 & (1 << 12) != 0,
                da: w0 & (1 << 14) != 0,
                r128: w0 & (1 << 15) != 0,
                tfe: false,
                lwe: w0 & (1 << 17) != 0,
                d16: w1 & (1 << 31) != 0,
                cache: Cache { glc, slc: w0 & (1 << 25) != 0, scc: false },
            });
        }
    }
    Ok(inst)
}

impl Inst {
    fn ext_buf_soffset_is_literal(&self) -> bool {
        matches!(self.ext, Ext::Buf(b) if b.soffset == Operand::Literal)
    }
}
