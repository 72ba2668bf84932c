//! MIMG: image loads, stores, atomics and `image_get_resinfo` through an
//! image resource descriptor (T#), without samplers.
//!
//! Layout: every image is linear — texel (x, y, z) of a slice lies at
//! `base + ((z * height + y) * pitch + x) * texel_bytes`, `pitch` from the
//! descriptor (the padded row length). Tiled swizzle modes use the same
//! layout over the padded pitch: consistent as long as all accesses to the
//! image go through image instructions (the blit kernels copy between
//! images and buffers with these instructions only). Types: 1D, 2D, 3D,
//! cube (faces as slices), 1D and 2D arrays; MSAA images are refused. Only
//! mip level 0 exists. All non-compressed data formats with every number
//! format, sRGB included. Out-of-range coordinates load 0 and drop stores.
//!
//! `image_sample` lives in [`super::sample`]. Not implemented: the `_pck` forms (no ROCm
//! library uses them).

use super::vmem::access::{self, Access, Data, Space};
use super::vmem::atomic::Rmw;
use super::vmem::buffer::{components_to_regs, read_elements, regs_to_components, write_elements};
use super::vmem::format::{self, DataFormat, Format, NumFormat};
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave, LANES};
use crate::isa::{Ext, Inst, Mimg, Op};

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::ImageLoad | Op::ImageLoadMip => load,
        Op::ImageStore | Op::ImageStoreMip => store,
        Op::ImageGetResinfo => resinfo,
        Op::ImageAtomicAdd
        | Op::ImageAtomicAnd
        | Op::ImageAtomicCmpswap
        | Op::ImageAtomicDec
        | Op::ImageAtomicInc
        | Op::ImageAtomicOr
        | Op::ImageAtomicSmax
        | Op::ImageAtomicSmin
        | Op::ImageAtomicSub
        | Op::ImageAtomicSwap
        | Op::ImageAtomicUmax
        | Op::ImageAtomicUmin
        | Op::ImageAtomicXor => atomic,
        _ => return None,
    };
    Some(h)
}

/// Image resource types (T# word 3 bits 31:28).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageType {
    D1,
    D2,
    D3,
    Cube,
    D1Array,
    D2Array,
}

/// An image resource descriptor (the fields the simulator uses).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tsharp {
    pub base: u64,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    /// Depth (3D) or number of slices (arrays), from DEPTH + 1.
    pub depth: u32,
    /// Row length in texels (PITCH + 1).
    pub pitch: u32,
    pub dst_sel: u32,
    pub ty: ImageType,
    pub last_level: u32,
    pub base_level: u32,
}

impl Tsharp {
    pub fn parse(d: &[u32; 8]) -> Result<Tsharp, ExecError> {
        let bad = |what: String| ExecError::Invalid(format!("image descriptor: {what}"));
        let dfmt = (d[1] >> 20 & 0x3f) as u8;
        let nfmt = (d[1] >> 26 & 0xf) as u8;
        let data = DataFormat::from_code(dfmt).ok_or_else(|| bad(format!("data format {dfmt} is not supported")))?;
        let num = NumFormat::from_code(nfmt).ok_or_else(|| bad(format!("number format {nfmt} is not supported")))?;
        let ty = match d[3] >> 28 {
            8 => ImageType::D1,
            9 => ImageType::D2,
            10 => ImageType::D3,
            11 => ImageType::Cube,
            12 => ImageType::D1Array,
            13 => ImageType::D2Array,
            14 | 15 => return Err(bad("MSAA images are not supported".into())),
            t => return Err(bad(format!("type {t} is not an image"))),
        };
        Ok(Tsharp {
            base: (d[0] as u64) << 8 | ((d[1] & 0xff) as u64) << 40,
            format: Format { data, num },
            width: (d[2] & 0x3fff) + 1,
            height: (d[2] >> 14 & 0x3fff) + 1,
            depth: (d[4] & 0x1fff) + 1,
            pitch: (d[4] >> 13 & 0xffff) + 1,
            dst_sel: d[3] & 0xfff,
            ty,
            base_level: d[3] >> 12 & 0xf,
            last_level: d[3] >> 16 & 0xf,
        })
    }

    /// Number of address coordinates (before a mip level).
    pub(super) fn coords(&self) -> usize {
        match self.ty {
            ImageType::D1 => 1,
            ImageType::D2 | ImageType::D1Array => 2,
            ImageType::D3 | ImageType::Cube | ImageType::D2Array => 3,
        }
    }

    /// (x, y, slice) limits: texels per row, rows, slices.
    fn extent(&self) -> [u32; 3] {
        match self.ty {
            ImageType::D1 => [self.width, 1, 1],
            ImageType::D1Array => [self.width, 1, self.depth],
            ImageType::D2 => [self.width, self.height, 1],
            ImageType::Cube => [self.width, self.height, 6 * self.depth],
            ImageType::D2Array | ImageType::D3 => [self.width, self.height, self.depth],
        }
    }

    /// Byte address of texel (x, y, slice).
    pub(super) fn address(&self, [x, y, z]: [u32; 3]) -> u64 {
        let bpp = self.format.data.bytes as u64;
        let rows = if matches!(self.ty, ImageType::D1 | ImageType::D1Array) { 1 } else { self.height as u64 };
        self.base + ((z as u64 * rows + y as u64) * self.pitch as u64 + x as u64) * bpp
    }
}

pub(super) fn mimg(inst: &Inst) -> Result<Mimg, ExecError> {
    match inst.ext {
        Ext::Mimg(m) => Ok(m),
        _ => Err(ExecError::Invalid(format!("{} without MIMG fields", inst.op))),
    }
}

pub(super) fn descriptor(w: &Wave, inst: &Inst) -> Result<Tsharp, ExecError> {
    let mut d = [0u32; 8];
    w.read_sgprs(inst.src[2], &mut d)?;
    Tsharp::parse(&d)
}

/// Whether the op takes a mip level after the coordinates.
fn has_mip(op: Op) -> bool {
    matches!(op, Op::ImageLoadMip | Op::ImageStoreMip)
}

/// The lane addresses of an image access; lanes whose coordinates (or mip
/// level) are out of range get no accessible bytes.
fn addresses(w: &Wave, inst: &Inst, t: &Tsharp) -> Result<Access, ExecError> {
    let m = mimg(inst)?;
    let n = t.coords() + has_mip(inst.op) as usize;
    let mut c = [[0u32; LANES]; 4];
    // a16 (the r128 bit on gfx90a): two 16-bit coordinates per register.
    let regs = if m.r128 { n.div_ceil(2) } else { n };
    let raw = access::gather(w, inst.src[0], regs)?;
    for (i, ci) in c.iter_mut().enumerate().take(n) {
        for l in 0..LANES {
            ci[l] = if m.r128 { raw[i / 2][l] >> (16 * (i % 2)) & 0xffff } else { raw[i][l] };
        }
    }
    let ext = t.extent();
    let mut acc = Access::new(Space::Global);
    let mut avail = [u64::MAX; LANES];
    for l in 0..LANES {
        let xyz = match t.ty {
            ImageType::D1 => [c[0][l], 0, 0],
            ImageType::D1Array => [c[0][l], 0, c[1][l]],
            _ => [c[0][l], c[1][l], c[2][l]],
        };
        let mip = if has_mip(inst.op) { c[t.coords()][l] } else { 0 };
        let inside = mip == 0 && xyz.iter().zip(ext).all(|(v, e)| *v < e);
        if inside {
            acc.addr[l] = t.address(xyz);
        } else {
            avail[l] = 0;
        }
    }
    acc.avail = Some(avail);
    Ok(acc)
}

/// Positions (register index, component) of the dmask components.
pub(super) fn dmask_components(dmask: u8) -> impl Iterator<Item = usize> {
    (0..4).filter(move |c| dmask >> c & 1 != 0)
}

fn load(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let m = mimg(inst)?;
    let t = descriptor(w, inst)?;
    let acc = addresses(w, inst, &t)?;
    let exec = w.exec;
    let fmt = t.format;
    let mut texels = read_elements(ctx, &acc, exec, &fmt)?;
    let one = fmt.one();
    let avail = acc.avail.unwrap_or([u64::MAX; LANES]);
    access::for_lanes(exec, |l| {
        let v = if avail[l] != 0 { format::dst_sel(t.dst_sel, &texels[l], one) } else { [0; 4] };
        // Pack the dmask-selected components into consecutive registers.
        let mut out = [0u32; 4];
        for (i, c) in dmask_components(m.dmask).enumerate() {
            out[i] = v[c];
        }
        texels[l] = out;
    });
    let comps = (m.dmask.count_ones() as usize).max(1);
    components_to_regs(w, inst, exec, &fmt, &texels, comps, m.d16, false, ctx.dispatch.d16_preserves_unused)?;
    Ok(Flow::Next)
}

fn store(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let m = mimg(inst)?;
    let t = descriptor(w, inst)?;
    let acc = addresses(w, inst, &t)?;
    let fmt = t.format;
    let comps = (m.dmask.count_ones() as usize).max(1);
    let packed = regs_to_components(w, inst, &fmt, comps, m.d16, false)?;
    let mut texels = [[0u32; 4]; LANES];
    for (t4, p) in texels.iter_mut().zip(&packed) {
        let mut v = [0u32; 4];
        for (i, c) in dmask_components(m.dmask).enumerate() {
            v[c] = p[i];
        }
        *t4 = format::undo_dst_sel(t.dst_sel, &v);
    }
    write_elements(ctx, &acc, w.exec, &fmt, &texels)?;
    Ok(Flow::Next)
}

fn resinfo(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let m = mimg(inst)?;
    let t = descriptor(w, inst)?;
    let mip = *w.vreg(inst.src[0], 0)?;
    let levels = t.last_level.saturating_sub(t.base_level) + 1;
    let exec = w.exec;
    let mut out = [[0u32; 4]; LANES];
    access::for_lanes(exec, |l| {
        let s = mip[l].min(31);
        let dim = |v: u32| (v >> s).max(1);
        let v = match t.ty {
            ImageType::D1 => [dim(t.width), 0, 0, levels],
            ImageType::D1Array => [dim(t.width), t.depth, 0, levels],
            ImageType::D2 => [dim(t.width), dim(t.height), 0, levels],
            ImageType::Cube | ImageType::D2Array => [dim(t.width), dim(t.height), t.depth, levels],
            ImageType::D3 => [dim(t.width), dim(t.height), dim(t.depth), levels],
        };
        let mut o = [0u32; 4];
        for (i, c) in dmask_components(m.dmask).enumerate() {
            o[i] = v[c];
        }
        out[l] = o;
    });
    let mut regs: Data = [[0; LANES]; 4];
    for (l, o) in out.iter().enumerate() {
        for (r, v) in o.iter().enumerate() {
            regs[r][l] = *v;
        }
    }
    access::scatter(w, inst.dst[0], (m.dmask.count_ones() as usize).max(1), exec, &regs)?;
    Ok(Flow::Next)
}

fn atomic(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let m = mimg(inst)?;
    let t = descriptor(w, inst)?;
    let rmw = match inst.op {
        Op::ImageAtomicAdd => Rmw::Add,
        Op::ImageAtomicAnd => Rmw::And,
        Op::ImageAtomicCmpswap => Rmw::CmpSwap,
        Op::ImageAtomicDec => Rmw::Dec,
        Op::ImageAtomicInc => Rmw::Inc,
        Op::ImageAtomicOr => Rmw::Or,
        Op::ImageAtomicSmax => Rmw::SMax,
        Op::ImageAtomicSmin => Rmw::SMin,
        Op::ImageAtomicSub => Rmw::Sub,
        Op::ImageAtomicSwap => Rmw::Swap,
        Op::ImageAtomicUmax => Rmw::UMax,
        Op::ImageAtomicUmin => Rmw::UMin,
        _ => Rmw::Xor,
    };
    let regs = if rmw == Rmw::CmpSwap { 2 } else { 1 };
    if t.format.data.bytes != 4 || m.dmask.count_ones() as usize != regs {
        return Err(ExecError::Invalid(format!("{}: only 32-bit image atomics are supported", inst.op)));
    }
    let mut acc = addresses(w, inst, &t)?;
    if let Some(a) = acc.avail.as_mut() {
        for x in a.iter_mut() {
            *x = if *x >= 4 { u64::MAX } else { 0 };
        }
    }
    let data = access::gather(w, inst.src[1], regs)?;
    let mut old: Data = [[0; LANES]; 4];
    let exec = w.exec;
    access::atomic(ctx, &acc, exec, rmw, false, &data, &mut old)?;
    if !inst.dst[0].is_none() {
        access::scatter(w, inst.dst[0], 1, exec, &old)?;
    }
    Ok(Flow::Next)
}
