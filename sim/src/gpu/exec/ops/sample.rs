//! `image_sample`: reading an image through a sampler (S#), the instruction behind HIP's
//! `tex1D/tex2D/tex3D` and layered textures.
//!
//! The sampler descriptor (four dwords; the fields ROCR's image manager sets for HSA and HIP
//! samplers): word 0 CLAMP_X/Y/Z (bits 2:0, 5:3, 8:6) and FORCE_UNNORMALIZED (bit 15);
//! word 2 XY_MAG_FILTER (21:20), XY_MIN_FILTER (23:22), Z_FILTER (25:24); word 3
//! BORDER_COLOR_TYPE (31:30). The instruction's UNRM bit also selects unnormalized
//! coordinates.
//!
//! Semantics, as the filter is documented for textures:
//! - Coordinates are floats; normalized ones are scaled by the size of each filtered axis.
//!   The slice of an array image is the coordinate rounded to the nearest integer and
//!   clamped to the slices that exist; it is never filtered.
//! - Texel coordinates are fixed point with 8 fractional bits. Point filtering takes texel
//!   `floor(u)`. Bilinear filtering takes the texels around `u - 0.5` weighted by the
//!   fraction, a multiple of 1/256, summed in f32; along z of a 3D image only when the
//!   sampler's Z_FILTER says linear (ROCR's samplers say none).
//! - Address modes map a texel index `i` on an axis of `n` texels: wrap `i mod n`, mirror
//!   (period `2n`, reflected), clamp to the last texel, mirror once then clamp, and border,
//!   where texels outside read the border color (transparent black, opaque black or opaque
//!   white).
//! - Texels are converted by the image's number format (unorm/snorm/float give floats) and
//!   DST_SEL, then filtered; integer formats are never filtered (point only).
//! - Only mip level 0 exists in this simulator, so the (implicit) level of detail is 0.
//!   Cube images are refused.

use super::image::{dmask_components, mimg, ImageType};
use super::vmem::access::{self, Data};
use super::vmem::format;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave, LANES};
use crate::isa::Op;

/// Sub-texel positions per texel (8 fractional bits of texel coordinates; bilinear weights
/// are multiples of 1/256).
const SUBTEXELS: f64 = 256.0;

pub fn handler(op: Op) -> Option<Handler> {
    matches!(op, Op::ImageSample).then_some(sample as Handler)
}

/// SQ_TEX_CLAMP: how texel indices outside an axis are mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressMode {
    Wrap,
    Mirror,
    ClampLastTexel,
    MirrorOnceLastTexel,
    ClampHalfBorder,
    MirrorOnceHalfBorder,
    ClampBorder,
    MirrorOnceBorder,
}

impl AddressMode {
    fn from_code(code: u32) -> AddressMode {
        match code & 7 {
            0 => AddressMode::Wrap,
            1 => AddressMode::Mirror,
            2 => AddressMode::ClampLastTexel,
            3 => AddressMode::MirrorOnceLastTexel,
            4 => AddressMode::ClampHalfBorder,
            5 => AddressMode::MirrorOnceHalfBorder,
            6 => AddressMode::ClampBorder,
            _ => AddressMode::MirrorOnceBorder,
        }
    }

    /// The texel index `i` maps to on an axis of `n` texels, or `None` for the border.
    pub fn map(self, i: i64, n: u32) -> Option<u32> {
        let n = n.max(1) as i64;
        let mirror_once = |i: i64| if i < 0 { -1 - i } else { i };
        let j = match self {
            AddressMode::Wrap => i.rem_euclid(n),
            AddressMode::Mirror => {
                let k = i.rem_euclid(2 * n);
                if k >= n {
                    2 * n - 1 - k
                } else {
                    k
                }
            }
            AddressMode::ClampLastTexel => i.clamp(0, n - 1),
            AddressMode::MirrorOnceLastTexel => mirror_once(i).clamp(0, n - 1),
            AddressMode::ClampHalfBorder | AddressMode::ClampBorder => {
                if !(0..n).contains(&i) {
                    return None;
                }
                i
            }
            AddressMode::MirrorOnceHalfBorder | AddressMode::MirrorOnceBorder => {
                let j = mirror_once(i);
                if j >= n {
                    return None;
                }
                j
            }
        };
        Some(j as u32)
    }
}

/// A sampler descriptor (the fields the simulator uses).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ssharp {
    pub clamp: [AddressMode; 3],
    pub unnormalized: bool,
    /// Bilinear (true) or point filtering, for magnification and minification alike (the
    /// level of detail is always 0 here, so magnification's filter applies).
    pub linear: bool,
    /// Linear filtering along the z axis of a 3D image (Z_FILTER = LINEAR). ROCR writes
    /// NONE, and HIP 6 refuses linear filtering of 3D images on gfx90a, so 3D images are
    /// filtered bilinearly in x and y and point-sampled in z unless a sampler asks.
    pub z_linear: bool,
    /// The border color, as floats.
    pub border: [f32; 4],
}

impl Ssharp {
    pub fn parse(d: &[u32; 4]) -> Ssharp {
        let border = match d[3] >> 30 {
            0 => [0.0, 0.0, 0.0, 0.0],
            1 => [0.0, 0.0, 0.0, 1.0],
            2 => [1.0, 1.0, 1.0, 1.0],
            // A border color from the border-color table: none is set up for compute.
            _ => [0.0, 0.0, 0.0, 0.0],
        };
        Ssharp {
            clamp: [AddressMode::from_code(d[0]), AddressMode::from_code(d[0] >> 3), AddressMode::from_code(d[0] >> 6)],
            unnormalized: d[0] >> 15 & 1 != 0,
            linear: d[2] >> 20 & 3 == 1,
            z_linear: d[2] >> 24 & 3 == 2,
            border,
        }
    }
}

fn sample(w: &mut Wave, inst: &crate::isa::Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let m = mimg(inst)?;
    let t = super::image::descriptor(w, inst)?;
    if t.ty == ImageType::Cube {
        return Err(ExecError::Invalid("image_sample of a cube image is not supported".into()));
    }
    let mut sd = [0u32; 4];
    w.read_sgprs(m.ssamp, &mut sd)?;
    let s = Ssharp::parse(&sd);
    let unnormalized = s.unnormalized || m.unorm;
    let n = t.coords();
    let regs = if m.r128 { n.div_ceil(2) } else { n };
    let raw = access::gather(w, inst.src[0], regs)?;
    let coord = |i: usize, l: usize| -> f32 {
        if m.r128 {
            format::f16_to_f32((raw[i / 2][l] >> (16 * (i % 2))) as u16)
        } else {
            f32::from_bits(raw[i][l])
        }
    };
    // Filtered axes and the array slice coordinate, by image type.
    let (filtered, slice_coord): (usize, Option<usize>) = match t.ty {
        ImageType::D1 => (1, None),
        ImageType::D1Array => (1, Some(1)),
        ImageType::D2 => (2, None),
        ImageType::D2Array => (2, Some(2)),
        ImageType::D3 => (3, None),
        ImageType::Cube => unreachable!("refused above"),
    };
    let sizes = [t.width, if filtered > 1 { t.height } else { 1 }, if filtered > 2 { t.depth } else { 1 }];
    let float_texels = !t.format.num.is_integer();
    let linear = s.linear && float_texels;
    let exec = w.exec;
    let mut out = [[0u32; 4]; LANES];
    let mut fault = None;
    access::for_lanes(exec, |l| {
        if fault.is_some() {
            return;
        }
        let slice = slice_coord.map_or(0, |c| {
            let z = coord(c, l).round_ties_even();
            if z.is_nan() {
                0
            } else {
                z.clamp(0.0, (t.depth - 1) as f32) as u32
            }
        });
        // Per filtered axis: the texels (index, weight) that contribute.
        let mut taps = [[(0i64, 1.0f32), (0, 0.0)]; 3];
        for (a, tap) in taps.iter_mut().enumerate().take(filtered) {
            let c = coord(a, l) as f64;
            let u = if unnormalized { c } else { c * sizes[a] as f64 };
            let u = if u.is_finite() { u } else { 0.0 };
            // Texel coordinates in fixed point with 8 fractional bits, as the hardware
            // takes them: a coordinate a rounding error below a texel edge is on the edge.
            // HIP relies on it (point sampling snaps normalized coordinates to texel edges).
            let u = (u * SUBTEXELS).round() / SUBTEXELS;
            *tap = if linear && (a < 2 || s.z_linear) {
                let v = u - 0.5;
                let i0 = v.floor();
                let frac = (v - i0) as f32;
                [(i0 as i64, 1.0 - frac), (i0 as i64 + 1, frac)]
            } else {
                [(u.floor() as i64, 1.0), (0, 0.0)]
            };
        }
        let mut acc = [0f32; 4];
        let mut point = [0u32; 4];
        let corners = if linear { 1 << filtered } else { 1 };
        for corner in 0..corners {
            let mut weight = 1.0f32;
            let mut xyz = [0u32; 3];
            let mut border = false;
            for a in 0..filtered {
                let (i, wgt) = taps[a][corner >> a & 1];
                weight *= wgt;
                match s.clamp[a].map(i, sizes[a]) {
                    Some(j) => xyz[a] = j,
                    None => border = true,
                }
            }
            if weight == 0.0 && linear {
                continue;
            }
            let texel = if border {
                if float_texels {
                    s.border.map(f32::to_bits)
                } else {
                    s.border.map(|v| v as u32)
                }
            } else {
                let at = match t.ty {
                    ImageType::D1Array => [xyz[0], 0, slice],
                    ImageType::D2Array => [xyz[0], xyz[1], slice],
                    _ => xyz,
                };
                let mut b = [0u8; 16];
                let bytes = t.format.data.bytes as usize;
                if let Err(e) = ctx.mem.read_bytes(t.address(at), &mut b[..bytes]) {
                    fault = Some(e);
                    return;
                }
                format::dst_sel(t.dst_sel, &t.format.unpack(&b[..bytes]), t.format.one())
            };
            if linear {
                for (c, v) in acc.iter_mut().enumerate() {
                    *v += weight * f32::from_bits(texel[c]);
                }
            } else {
                point = texel;
            }
        }
        let v = if linear { acc.map(f32::to_bits) } else { point };
        let mut o = [0u32; 4];
        for (i, c) in dmask_components(m.dmask).enumerate() {
            o[i] = v[c];
        }
        out[l] = o;
    });
    if let Some(f) = fault {
        return Err(f.into());
    }
    let comps = (m.dmask.count_ones() as usize).max(1);
    let mut regs: Data = [[0; LANES]; 4];
    for (l, o) in out.iter().enumerate() {
        if m.d16 {
            // Two 16-bit floats (or integers) per register.
            for c in 0..comps {
                let h = if float_texels { format::f32_to_f16(f32::from_bits(o[c])) as u32 } else { o[c] & 0xffff };
                regs[c / 2][l] |= h << (16 * (c % 2));
            }
        } else {
            for c in 0..comps {
                regs[c][l] = o[c];
            }
        }
    }
    let n_regs = if m.d16 { comps.div_ceil(2) } else { comps };
    access::scatter(w, inst.dst[0], n_regs, exec, &regs)?;
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_modes_map_indices_as_documented() {
        let n = 4;
        let map = |m: AddressMode| (-5..9).map(|i| m.map(i, n)).collect::<Vec<_>>();
        let some = |v: &[u32]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        assert_eq!(map(AddressMode::Wrap), some(&[3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0]));
        assert_eq!(map(AddressMode::Mirror), some(&[3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0]));
        assert_eq!(map(AddressMode::ClampLastTexel), some(&[0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3]));
        assert_eq!(map(AddressMode::MirrorOnceLastTexel), some(&[3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3]));
        let border = map(AddressMode::ClampBorder);
        assert_eq!(&border[5..9], &some(&[0, 1, 2, 3])[..]);
        assert!(border[..5].iter().chain(&border[9..]).all(Option::is_none));
    }

    #[test]
    fn sampler_words_as_rocr_writes_them() {
        // Clamp to edge, unnormalized, linear (ROCR's PopulateSamplerSrd for gfx9).
        let s = Ssharp::parse(&[2 | 2 << 3 | 2 << 6 | 1 << 15, 4095 << 12, 1 << 20 | 1 << 22, 0]);
        assert_eq!(s.clamp, [AddressMode::ClampLastTexel; 3]);
        assert!(s.unnormalized && s.linear);
        assert_eq!(s.border, [0.0; 4]);
        // Repeat, normalized, point; opaque white border.
        let s = Ssharp::parse(&[0, 0, 0, 2 << 30]);
        assert_eq!(s.clamp, [AddressMode::Wrap; 3]);
        assert!(!s.unnormalized && !s.linear && !s.z_linear);
        assert_eq!(s.border, [1.0; 4]);
        assert!(Ssharp::parse(&[0, 0, 2 << 24 | 1 << 20, 0]).z_linear);
    }
}
