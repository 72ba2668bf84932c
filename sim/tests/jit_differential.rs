//! The translator against the interpreter, bit for bit.
//!
//! Random straight-line programs of the instructions the translator takes — every opcode of
//! the VOP1, VOP2, VOPC and VOP3 maps that decodes to one, with random VGPR, SGPR, VCC, inline
//! constant and literal operands, mixed with random SOP1/SOP2/SOPC/SOPK instructions (which
//! write SGPRs, VCC, M0, EXEC and SCC that later vector code reads) and short forward
//! branches — run from the same random state (float edge values: NaNs
//! with payloads, infinities, denormals, signed zeros; integer edges; EXEC masks with holes,
//! empty and full; MODE with and without f32 denormals, and a rounding mode the translator
//! must leave to the interpreter) once interpreted and once translated. Every register must
//! come out identical.

use sim::gpu::exec::jit::{self, select, Engine};
use sim::isa::{decode, Target};
use sim::testing::{splitmix, Harness};

/// A deterministic random stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 += 1;
        splitmix(self.0)
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }
}

/// VGPRs the programs use (v0..v11) and the SGPRs of uniform sources (s0..s7).
const VGPRS: u32 = 12;
const SGPRS: u32 = 8;
/// Lane-mask registers: VCC (106), s[8:9], s[10:11].
const MASKS: [u32; 3] = [106, 8, 10];

/// Interesting 32-bit values: float specials and integer edges.
const EDGES: [u32; 29] = [
    0,
    0x8000_0000,
    1,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0x7fa0_1234, // signalling NaN with a payload
    0xffc1_2345,
    0x0000_0001, // smallest denormal
    0x807f_ffff, // largest negative denormal
    0x0080_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x4b80_0000,
    0x7f7f_ffff,
    0xffff_ffff,
    0x7fff_ffff,
    0x00ff_ffff,
    0x0100_0000,
    31,
    32,
    33,
    0x3eaa_aaab,
    0xcf00_0000,
    // High dwords of f64 edges: ±infinity (with a zero low dword), 1.0, the largest
    // denormal's and the smallest normal's.
    0x7ff0_0000,
    0xfff0_0000,
    0x3ff0_0000,
    0x000f_ffff,
    0x0010_0000,
];

fn value(r: &mut Rng) -> u32 {
    if r.below(3) == 0 {
        r.next()
    } else {
        r.pick(&EDGES)
    }
}

/// A uniform source operand: SGPR, inline constant (integer or float) or the literal.
fn uniform_src(r: &mut Rng, literal_ok: bool) -> u32 {
    match r.below(if literal_ok { 4 } else { 3 }) {
        0 => r.below(SGPRS),
        1 => 128 + r.below(81), // 0..64, -1..-16
        2 => 240 + r.below(9),  // 0.5 .. 1/(2pi)
        _ => 255,
    }
}

fn vgpr_src(r: &mut Rng) -> u32 {
    256 + r.below(VGPRS)
}

fn any_src(r: &mut Rng, literal_ok: bool) -> u32 {
    if r.below(3) == 0 {
        uniform_src(r, literal_ok)
    } else {
        vgpr_src(r)
    }
}

/// A scalar destination: s0..s11 mostly, sometimes VCC, M0 or EXEC.
fn scalar_dst(r: &mut Rng) -> u32 {
    match r.below(16) {
        0 => 106,
        1 => 124,
        2 => 126,
        _ => r.below(12),
    }
}

/// A scalar source: s0..s11, VCC, EXEC, M0, SCC, constants, the literal.
fn scalar_src(r: &mut Rng) -> u32 {
    match r.below(8) {
        0 => r.pick(&[106, 107, 124, 126, 127, 253]),
        1 | 2 => 128 + r.below(81),
        3 => 255,
        _ => r.below(12),
    }
}

/// One random encoded scalar instruction the translator hands to the interpreter, or a
/// short forward branch.
fn scalar_instruction(r: &mut Rng) -> Vec<u32> {
    loop {
        let (dst, a, b) = (scalar_dst(r), scalar_src(r), scalar_src(r));
        let mut words = match r.below(6) {
            0 | 1 => vec![0x8000_0000 | r.below(0x7d) << 23 | dst << 16 | b << 8 | a],
            2 => vec![0xbe80_0000 | dst << 16 | r.below(64) << 8 | a],
            3 => vec![0xbf00_0000 | r.below(32) << 16 | b << 8 | a],
            4 => vec![0xb000_0000 | r.below(22) << 23 | dst << 16 | r.next() & 0xffff],
            // s_branch, s_cbranch_{scc0,scc1,vccz,vccnz,execz,execnz}, skipping 0..2 words.
            _ => vec![0xbf80_0000 | r.pick(&[2, 4, 5, 6, 7, 8, 9]) << 16 | r.below(3)],
        };
        if words[0] >> 28 != 0xb && (words[0] & 0xff == 255 || words[0] >> 8 & 0xff == 255) {
            words.push(value(r));
        }
        let Ok(inst) = decode(&words, Target::Gfx90a) else { continue };
        if inst.len as usize == words.len() * 4
            && matches!(select::takes(&inst), Some(select::Taken::Interpreted | select::Taken::Branch))
        {
            return words;
        }
    }
}

/// The VOP3 opcodes whose instruction the translator takes (with VGPR operands).
fn vop3_taken() -> &'static [u32] {
    static OPS: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    OPS.get_or_init(|| {
        (0..1024)
            .filter(|op| {
                // v_<op> v0, v0, v0, v0 (a compare writes s[8:9] instead).
                let words = [0xd000_0000 | op << 16, 0x0402_0100];
                decode(&words, Target::Gfx90a).is_ok_and(|inst| select::kind(inst.op).is_some())
            })
            .collect()
    })
}

/// A random `v_pk_mov_b32` (VOP3P) of VGPR pairs, pairs that may overlap its destination,
/// any OP_SEL, and now and then a negation, clamp or an SGPR-pair source (forms the
/// segments leave to the interpreter's handler).
fn pk_mov(r: &mut Rng) -> Vec<u32> {
    let pair = |r: &mut Rng| 2 * r.below(VGPRS / 2);
    let vdst = pair(r);
    let op_sel = r.below(4) << 11 | r.below(2) << 14;
    let odd = r.below(8) == 0;
    let clamp = if odd && r.below(2) == 0 { 1 << 15 } else { 0 };
    let neg = if odd && r.below(2) == 0 { (1 + r.below(3)) << 29 } else { 0 };
    let src0 = if odd && r.below(2) == 0 { 2 * r.below(SGPRS / 2) } else { 256 + pair(r) };
    let src1 = 256 + pair(r);
    vec![0xd3b3_0000 | op_sel | clamp | vdst, src0 | src1 << 9 | r.below(4) << 27 | neg]
}

/// The first register of a random VGPR pair among the programs' VGPRs.
fn vgpr_pair(r: &mut Rng) -> u32 {
    2 * r.below(VGPRS / 2)
}

/// A random register-pair source operand of a 64-bit or packed op: a VGPR pair mostly, an
/// SGPR pair (a lane-mask pair among them, which earlier vector code of the run may have
/// written), an integer or float inline constant.
fn pair_src(r: &mut Rng) -> u32 {
    match r.below(7) {
        0 => 2 * r.below(SGPRS / 2),
        1 => r.pick(&MASKS),
        2 => 128 + r.below(81),
        3 => 240 + r.below(9),
        _ => 256 + vgpr_pair(r),
    }
}

/// A random `v_pk_fma_f32`, `v_pk_mul_f32` or `v_pk_add_f32` (VOP3P): VGPR pairs that may
/// overlap the destination, SGPR pairs (lane-mask pairs among them, which earlier vector
/// code of the run may have written), inline constants; any OP_SEL and OP_SEL_HI, negations
/// of either half, now and then clamp (left to the interpreter's handler).
fn pk_f32(r: &mut Rng) -> Vec<u32> {
    let op = r.pick(&[0x30, 0x31, 0x32]);
    let vdst = vgpr_pair(r);
    let (src0, src1, src2) = (pair_src(r), pair_src(r), pair_src(r));
    let op_sel = r.below(8) << 11;
    let op_sel_hi = (r.below(2) << 14, r.below(4) << 27);
    let neg_hi = if r.below(2) == 0 { r.below(8) << 8 } else { 0 };
    let neg = if r.below(2) == 0 { r.below(8) << 29 } else { 0 };
    let clamp = if r.below(16) == 0 { 1 << 15 } else { 0 };
    vec![
        0xd380_0000 | op << 16 | clamp | op_sel_hi.0 | op_sel | neg_hi | vdst,
        src0 | src1 << 9 | src2 << 18 | op_sel_hi.1 | neg,
    ]
}

/// A random `v_div_scale_f64` (its lane mask to VCC or an SGPR pair), `v_div_fmas_f64`
/// (VCC read) or `v_div_fixup_f64` (VOP3): VGPR pairs, SGPR pairs (lane-mask pairs among
/// them), inline constants.
fn f64_division(r: &mut Rng) -> Vec<u32> {
    let op = r.pick(&[0x1e1, 0x1e3, 0x1df]);
    let sdst = if op == 0x1e1 { r.pick(&MASKS) << 8 } else { 0 };
    let (src0, src1, src2) = (pair_src(r), pair_src(r), pair_src(r));
    vec![0xd000_0000 | op << 16 | sdst | vgpr_pair(r), src0 | src1 << 9 | src2 << 18]
}

/// A random `v_div_scale_f32` (its lane mask to VCC or an SGPR pair), `v_div_fmas_f32`
/// (VCC read) or `v_div_fixup_f32` (VOP3): VGPRs, SGPRs (lane-mask registers among them),
/// inline constants; now and then a negated source (left to the interpreter).
fn f32_division(r: &mut Rng) -> Vec<u32> {
    let op = r.pick(&[0x1e0, 0x1e2, 0x1de]);
    let sdst = if op == 0x1e0 { r.pick(&MASKS) << 8 } else { 0 };
    let neg = if r.below(8) == 0 { r.below(8) << 29 } else { 0 };
    let (src0, src1, src2) = (any_src(r, false), any_src(r, false), any_src(r, false));
    vec![0xd000_0000 | op << 16 | sdst | r.below(VGPRS), src0 | src1 << 9 | src2 << 18 | neg]
}

/// A random `v_ldexp_f64` (VOP3): a VGPR pair, SGPR pair or inline constant scaled by a
/// VGPR, SGPR or inline constant; now and then abs/neg on either source (the integer
/// exponent's are ignored).
fn ldexp_f64(r: &mut Rng) -> Vec<u32> {
    let abs = if r.below(4) == 0 { r.below(4) << 8 } else { 0 };
    let neg = if r.below(4) == 0 { r.below(4) << 29 } else { 0 };
    let exponent = if r.below(2) == 0 { vgpr_src(r) } else { uniform_src(r, false) };
    vec![0xd284_0000 | abs | vgpr_pair(r), pair_src(r) | exponent << 9 | neg]
}

/// A random `v_mad_u64_u32` (VOP3b): factors a VGPR, an SGPR (a lane-mask register among
/// them, which earlier vector code of the run may have written) or an inline constant; the
/// addend a register pair as [`pair_src`] picks it; the carry to VCC or an SGPR pair; now
/// and then clamp (left to the interpreter's handler).
fn mad_u64(r: &mut Rng) -> Vec<u32> {
    let clamp = if r.below(8) == 0 { 1 << 15 } else { 0 };
    let factor = |r: &mut Rng| if r.below(3) == 0 { uniform_src(r, false) } else { vgpr_src(r) };
    let (a, b) = (factor(r), factor(r));
    vec![0xd1e8_0000 | clamp | r.pick(&MASKS) << 8 | vgpr_pair(r), a | b << 9 | pair_src(r) << 18]
}

/// One random encoded instruction the translator takes on its own (words, with a literal
/// if it has one): vector mostly, scalar sometimes.
fn instruction(r: &mut Rng) -> Vec<u32> {
    if r.below(4) == 0 {
        return scalar_instruction(r);
    }
    match r.below(16) {
        0 => return pk_mov(r),
        1 => return pk_f32(r),
        2 => return f64_division(r),
        3 => return ldexp_f64(r),
        4 => return mad_u64(r),
        5 => return f32_division(r),
        _ => {}
    }
    loop {
        let vdst = r.below(VGPRS);
        let mut words = match r.below(4) {
            0 => vec![(r.below(64) << 25) | vdst << 17 | (r.below(VGPRS)) << 9 | any_src(r, true)],
            1 => vec![0x7e00_0000 | vdst << 17 | r.below(128) << 9 | any_src(r, true)],
            2 => vec![0x7c00_0000 | r.below(256) << 17 | r.below(VGPRS) << 9 | any_src(r, true)],
            _ => {
                // VOP3: the low byte is VDST, or for compares an SGPR pair; VOP3b's SDST (bits
                // 8..14) and a lane-mask third source are lane-mask registers.
                // Half the time one the translator takes: most of the 1024 opcodes are
                // not, so uniform picks would try each VOP3-only op about once a run.
                let op = if r.below(2) == 0 { r.pick(vop3_taken()) } else { r.below(1024) };
                let mask = r.pick(&MASKS);
                let low = if r.below(2) == 0 { vdst } else { mask };
                // Bits 8..14 are VOP3b's SDST but VOP3a's ABS, OP_SEL and CLAMP, which the
                // translator leaves to the interpreter: VOP3a instructions get them clear.
                let sdst = if r.below(2) == 0 { r.pick(&MASKS) << 8 } else { 0 };
                // Now and then VOP3a's ABS bits, and NEG bits (the float ops' sign-bit
                // modifiers, which the f64 steps compile).
                let abs = if sdst == 0 && r.below(4) == 0 { r.below(8) << 8 } else { 0 };
                let neg = if r.below(4) == 0 { r.below(8) << 29 } else { 0 };
                let src2 = if r.below(2) == 0 { r.pick(&MASKS) } else { any_src(r, false) };
                vec![
                    0xd000_0000 | op << 16 | sdst | abs | low,
                    any_src(r, false) | any_src(r, false) << 9 | src2 << 18 | neg,
                ]
            }
        };
        if words[0] & 0x1ff == 255 && words.len() == 1 {
            words.push(value(r));
        }
        let Ok(inst) = decode(&words, Target::Gfx90a) else { continue };
        if inst.len as usize != words.len() * 4 {
            continue;
        }
        // Only what the translator takes alone, under the default MODE.
        if select::kind(inst.op).is_some() && select::plan(&[inst], 0xf0).insts == 1 {
            return words;
        }
    }
}

/// A loop: `s11` counts 1..=4 trips of `len` random instructions (none of them writing
/// s10/s11), then `s_sub_u32 s11, s11, 1; s_cmp_lg_u32 s11, 0; s_cbranch_scc1` back to the
/// body. The translated run loops inside its code.
fn a_loop(r: &mut Rng, len: usize) -> Vec<Vec<u32>> {
    let mut body: Vec<Vec<u32>> = Vec::new();
    while body.len() < len {
        let words = instruction(r);
        let inst = decode(&words, Target::Gfx90a).expect("decodes");
        let counter = |op: sim::isa::Operand| matches!(op, sim::isa::Operand::Sgpr(10 | 11));
        let branch = matches!(select::takes(&inst), Some(select::Taken::Branch));
        if !inst.dst.iter().any(|d| counter(*d)) && !branch {
            body.push(words);
        }
    }
    let words: usize = body.iter().map(Vec::len).sum();
    let mut program = vec![vec![0xbe8b_0080 | (1 + r.below(4))]]; // s_mov_b32 s11, 1..4
    program.extend(body);
    program.push(vec![0x808b_810b]); // s_sub_u32 s11, s11, 1
    program.push(vec![0xbf07_800b]); // s_cmp_lg_u32 s11, 0
                                     // s_cbranch_scc1 to the body: back over the body, the two above and itself.
    program.push(vec![0xbf85_0000 | (-(words as i32 + 3) as u16 as u32)]);
    program
}

/// A wave state both engines start from.
fn randomize(h: &mut Harness, r: &mut Rng, mode: u32) {
    for reg in h.wave.vgpr.iter_mut().take(VGPRS as usize) {
        for lane in reg.iter_mut() {
            *lane = value(r);
        }
    }
    for s in h.wave.sgpr.iter_mut().take(12) {
        *s = value(r);
    }
    h.wave.vcc = (r.next() as u64) << 32 | r.next() as u64;
    h.wave.exec = match r.below(5) {
        0 => u64::MAX,
        1 => 0,
        2 => 1 << r.below(64),
        3 => 0x5555_5555_0f0f_f0f0,
        _ => (r.next() as u64) << 32 | r.next() as u64,
    };
    h.wave.mode = mode;
    h.wave.scc = r.below(2) == 1;
    h.wave.m0 = value(r);
}

type State = (Vec<[u32; 64]>, Vec<u32>, u64, u64, (bool, u32));

fn state(h: &Harness) -> State {
    let w = &h.wave;
    (w.vgpr[..VGPRS as usize].to_vec(), w.sgpr[..12].to_vec(), w.vcc, w.exec, (w.scc, w.m0))
}

/// How many compiled vector steps of `plan` are of a kind `pick` takes.
fn steps_where(plan: &select::Plan, pick: impl Fn(select::Kind) -> bool) -> usize {
    let segments = plan.items.iter().filter_map(|i| match i {
        select::Item::Vector(seg) => Some(seg),
        _ => None,
    });
    segments.flat_map(|seg| &seg.steps).filter(|step| pick(step.kind)).count()
}

#[test]
fn random_programs_give_the_same_registers_interpreted_and_translated() {
    jit::check_translations();
    let mut r = Rng(0x5eed);
    // MODE: f32 denormals kept (HIP), flushed (OpenCL's default on some targets), flushed on
    // output only, round-toward-zero (f32 arithmetic then stays with the interpreter), and
    // f64 denormals flushed (f64 arithmetic and compares then stay with it).
    let modes = [0xf0, 0xc0, 0xd0, 0xf3, 0x30];
    let (mut programs, mut translated, mut mixed, mut compiled_scalar) = (0, 0usize, 0usize, 0usize);
    let (mut deferred, mut packed, mut double) = (0usize, 0usize, 0usize);
    let (mut double_compares, mut double_conversions, mut double_modified) = (0usize, 0usize, 0usize);
    let (mut divisions, mut divisions32) = ([0usize; 3], [0usize; 3]);
    let (mut scalings, mut multiply_adds, mut unary_f32) = (0usize, 0usize, 0usize);
    for case in 0..10_000 {
        let len = 1 + r.below(12) as usize;
        let program = if case % 4 == 3 { a_loop(&mut r, len) } else { (0..len).map(|_| instruction(&mut r)).collect() };
        let words: Vec<u32> = program.concat();
        let mode = modes[case % modes.len()];
        let seed = r.next() as u64;
        let run = |engine: Engine| {
            let mut h = Harness::new();
            h.set_engine(engine);
            randomize(&mut h, &mut Rng(seed), mode);
            h.run(&words).map(|_| state(&h))
        };
        let interp = run(Engine::Interp);
        let jit = run(Engine::Jit);
        let text: Vec<String> =
            program.iter().map(|w| decode(w, Target::Gfx90a).map(|i| i.to_string()).unwrap_or_default()).collect();
        assert_eq!(interp.is_ok(), jit.is_ok(), "case {case}, mode {mode:#x}: {text:#?}");
        if let (Ok(a), Ok(b)) = (interp, jit) {
            for (v, (x, y)) in a.0.iter().zip(&b.0).enumerate() {
                if x != y {
                    let lane = (0..64).find(|&l| x[l] != y[l]).unwrap();
                    panic!(
                        "case {case}, mode {mode:#x}, seed {seed:#x}: v{v} lane {lane}: interpreter {:#010x}, translated {:#010x}\n{text:#?}",
                        x[lane], y[lane]
                    );
                }
            }
            assert_eq!(a.1, b.1, "SGPRs, case {case}, mode {mode:#x}: {text:#?}");
            assert_eq!(a.2, b.2, "VCC, case {case}, mode {mode:#x}: {text:#?}");
            assert_eq!(a.3, b.3, "EXEC, case {case}: {text:#?}");
            assert_eq!(a.4, b.4, "SCC and M0, case {case}: {text:#?}");
        }
        programs += 1;
        let insts: Vec<_> = program.iter().map(|w| decode(w, Target::Gfx90a).expect("decodes")).collect();
        let plan = select::plan(&insts, mode);
        translated += plan.insts;
        let scalar = |i: &select::Item| matches!(i, select::Item::Interpreted { .. } | select::Item::Scalar(_));
        let scalar_at = plan.items.iter().position(scalar);
        compiled_scalar += plan.items.iter().filter(|i| matches!(i, select::Item::Scalar(_))).count();
        deferred += plan.deferred as usize;
        packed += steps_where(&plan, |k| matches!(k, select::Kind::PkF32 { .. }));
        double += steps_where(&plan, |k| matches!(k, select::Kind::F64 { .. }));
        double_compares += steps_where(&plan, |k| matches!(k, select::Kind::CmpF64 { .. }));
        for (n, op) in [select::DivOp::Scale, select::DivOp::Fmas, select::DivOp::Fixup].into_iter().enumerate() {
            divisions[n] += steps_where(&plan, |k| k == select::Kind::DivF64(op));
            divisions32[n] += steps_where(&plan, |k| k == select::Kind::DivF32(op));
        }
        double_conversions += steps_where(&plan, |k| matches!(k, select::Kind::CvtF64 { .. }));
        scalings += steps_where(&plan, |k| matches!(k, select::Kind::LdexpF64 { .. }));
        multiply_adds += steps_where(&plan, |k| k == select::Kind::MadU64U32);
        unary_f32 += steps_where(&plan, |k| matches!(k, select::Kind::RcpF32 | select::Kind::RoundF32 { .. }));
        double_modified += steps_where(
            &plan,
            |k| matches!(k, select::Kind::F64 { abs, neg, .. } | select::Kind::CmpF64 { abs, neg, .. } if abs | neg != 0),
        );
        mixed +=
            scalar_at.is_some_and(|k| plan.items[k..].iter().any(|i| matches!(i, select::Item::Vector(_)))) as usize;
    }
    // The translator did the work: most programs start with a run of several instructions.
    assert!(translated > programs * 2, "{translated} instructions translated in {programs} programs");
    assert!(jit::stats().0 > 100, "translations compiled: {:?}", jit::stats());
    assert_eq!(jit::stats().1, 0, "runs that failed to compile");
    // And runs where vector code follows scalar code (which reads the wave's registers anew).
    assert!(mixed > 300, "{mixed} runs with vector code after scalar code");
    assert!(compiled_scalar > 300, "{compiled_scalar} scalar instructions compiled in");
    // Scalar ops run after vector code that follows them, and packed-f32 ops compiled.
    assert!(deferred > 300, "{deferred} scalar ops moved past vector instructions");
    assert!(packed > 300, "{packed} packed-f32 steps");
    assert!(double > 300, "{double} f64 steps");
    assert!(double_compares > 300, "{double_compares} f64 compares");
    assert!(double_conversions > 100, "{double_conversions} conversions to f64");
    assert!(double_modified > 100, "{double_modified} f64 steps with abs or neg");
    assert!(divisions.iter().all(|n| *n > 300), "f64 division helpers (scale, fmas, fixup): {divisions:?}");
    assert!(divisions32.iter().all(|n| *n > 300), "f32 division helpers (scale, fmas, fixup): {divisions32:?}");
    assert!(scalings > 100, "{scalings} v_ldexp_f64 steps");
    assert!(multiply_adds > 100, "{multiply_adds} v_mad_u64_u32 steps");
    assert!(unary_f32 > 100, "{unary_f32} v_rcp_f32, v_rndne_f32 and v_trunc_f32 steps");
    eprintln!(
        "{programs} programs, {translated} instructions in translated runs, {mixed} mixed runs, \
         {compiled_scalar} scalar instructions compiled ({deferred} moved past vector code), {packed} packed-f32 and {double} f64 steps, \
         {double_compares} f64 compares, {double_conversions} conversions to f64, {double_modified} f64 steps with abs or neg, \
         {divisions:?} f64 and {divisions32:?} f32 division helpers (scale, fmas, fixup), {scalings} v_ldexp_f64, {multiply_adds} v_mad_u64_u32"
    );
}

/// The f64 division helpers with operands at and around every bound of the translated
/// code's fast test (`v_div_scale_f64`: source 0 not NaN or infinite, the denominator's
/// exponent field 1..=2044, the numerator's 54..=2046, their difference -1021..=767;
/// `v_div_fixup_f64`: the estimate finite, both fields 1..=2046, the difference at least
/// -1075), each in a chunk whose other lanes pass it: a looser bound would give one of them
/// the fast answer.
#[test]
fn division_helpers_at_the_bounds_of_the_fast_test_match_the_interpreter() {
    jit::check_translations();
    // Encodings by llvm-mc-15 (gfx90a); v[0:1], v[2:3], v[4:5] in, v[6:7] (and VCC) out.
    const SCALE: [u32; 2] = [0xd1e1_6a06, 0x0412_0500]; // v_div_scale_f64 v[6:7], vcc, v[0:1], v[2:3], v[4:5]
    const FIXUP: [u32; 2] = [0xd1df_0006, 0x0412_0500]; // v_div_fixup_f64 v[6:7], v[0:1], v[2:3], v[4:5]
    let f = |e: u64| e << 52 | 0x8_1234_5678_9abc;
    let typical = [f(1023), f(1024), f(1025)];
    let exps = [0u64, 1, 2, 53, 54, 55, 1023, 2043, 2044, 2045, 2046, 2047];
    let mut triples: Vec<[u64; 3]> = Vec::new();
    for slot in 0..3 {
        for &e in &exps {
            let mut t = typical;
            t[slot] = f(e);
            triples.push(t);
        }
    }
    // Numerator and denominator fields whose difference sits at a bound.
    for (en, ed) in
        [(60, 1081), (60, 1082), (60, 1080), (1790, 1023), (1791, 1023), (1789, 1023), (1, 1076), (1, 1077), (2, 1077)]
    {
        triples.push([f(1023), f(ed), f(en)]);
    }
    for (name, words) in [("v_div_scale_f64", SCALE), ("v_div_fixup_f64", FIXUP)] {
        let set = |h: &mut Harness, lane: usize, t: [u64; 3]| {
            for (i, v) in t.iter().enumerate() {
                h.wave.vgpr[2 * i][lane] = *v as u32;
                h.wave.vgpr[2 * i + 1][lane] = (*v >> 32) as u32;
            }
        };
        edges_in_fast_chunks(&words, &triples, typical, set, |h| h.wave.vcc, name);
    }
}

/// The f32 division helpers the same way (`v_div_scale_f32`: source 0's exponent field at
/// most 254, the denominator's 1..=252, the numerator's 24..=254, their difference
/// -124..=95; `v_div_fixup_f32`: the estimate's field at most 254, both others 1..=254, the
/// difference at least -150), and `v_div_fmas_f32` with VCC bits set in some chunks only.
#[test]
fn f32_division_helpers_at_the_bounds_of_the_fast_test_match_the_interpreter() {
    jit::check_translations();
    // Encodings by llvm-mc-15 (gfx90a); v0, v2, v4 in, v6 (and VCC) out.
    const SCALE: [u32; 2] = [0xd1e0_6a06, 0x0412_0500]; // v_div_scale_f32 v6, vcc, v0, v2, v4
    const FIXUP: [u32; 2] = [0xd1de_0006, 0x0412_0500]; // v_div_fixup_f32 v6, v0, v2, v4
    const FMAS: [u32; 2] = [0xd1e2_0006, 0x0412_0500]; // v_div_fmas_f32 v6, v0, v2, v4
    let f = |e: u32| e << 23 | 0x12_3457;
    let typical = [f(127), f(128), f(129)];
    let exps = [0u32, 1, 2, 23, 24, 25, 127, 251, 252, 253, 254, 255];
    let mut triples: Vec<[u32; 3]> = Vec::new();
    for slot in 0..3 {
        for &e in &exps {
            let mut t = typical;
            t[slot] = f(e);
            triples.push(t);
        }
    }
    // Numerator and denominator fields whose difference sits at a bound; zeros and a
    // denormal estimate (flushed or kept by MODE).
    for (en, ed) in [(30, 154), (30, 153), (30, 155), (222, 127), (223, 127), (221, 127), (1, 151), (1, 152), (2, 152)]
    {
        triples.push([f(127), f(ed), f(en)]);
    }
    triples.extend([
        [0, f(127), f(127)],
        [f(127), 0, f(127)],
        [f(127), f(127), 0x8000_0000],
        [0x12_3457, f(127), f(128)],
    ]);
    // Infinite denominators (source 0 the denominator, the numerator, or neither; numerators
    // normal, denormal, zero, infinite, NaN), and NaN operands.
    let (inf, ninf, nan, snan) = (0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0xff80_0005);
    triples.extend([
        [inf, inf, f(127)],
        [f(127), inf, f(127)],
        [ninf, ninf, 0x8000_0003],
        [0x8000_0003, ninf, 0x8000_0003],
        [f(200), inf, f(1)],
        [inf, inf, 0],
        [inf, inf, ninf],
        [nan, inf, f(127)],
        [f(127), inf, snan],
        [snan, f(127), f(127)],
        [f(127), nan, f(128)],
        [f(127), f(128), snan],
    ]);
    for mode in [0xf0, 0xc0] {
        for (name, words) in [("v_div_scale_f32", SCALE), ("v_div_fixup_f32", FIXUP), ("v_div_fmas_f32", FMAS)] {
            // v_div_fmas_f32 also with VCC set in the edge lanes.
            let vccs: &[u64] = if words == FMAS { &[0, 0x1111_1111_1111_1111] } else { &[0] };
            for (triples, &vcc) in triples.chunks(16).flat_map(|g| vccs.iter().map(move |v| (g, v))) {
                let run = |engine: Engine| {
                    let mut h = Harness::new();
                    h.set_engine(engine);
                    h.wave.mode = mode;
                    h.wave.exec = u64::MAX;
                    h.wave.vcc = vcc;
                    for lane in 0..64 {
                        let t = if lane % 4 == 0 { triples.get(lane / 4).copied().unwrap_or(typical) } else { typical };
                        for (i, v) in t.iter().enumerate() {
                            h.wave.vgpr[2 * i][lane] = *v;
                        }
                    }
                    h.run(&words).expect("runs");
                    (h.wave.vgpr[6], h.wave.vcc)
                };
                let (interp, jit) = (run(Engine::Interp), run(Engine::Jit));
                assert_eq!(interp, jit, "{name}, MODE {mode:#x}, operands {triples:#x?}");
            }
        }
    }
}

/// `v_rcp_f32`, `v_rndne_f32`, `v_trunc_f32`, `v_cvt_i32_f32`, `v_cvt_u32_f32`, and
/// `v_max3_f32`/`v_min3_f32` with abs/neg sources, over float edges (signed zeros,
/// denormals, the smallest normal, halves that round to even, the largest finite, values
/// beyond the integer ranges, reciprocals that land on the smallest normal or below it,
/// infinities, quiet and signalling NaNs; the three-source ops on rotations of them) in
/// every f32 denormal mode, translated and interpreted: the same bits in every lane.
#[test]
fn one_and_three_source_f32_ops_on_float_edges_match_the_interpreter() {
    jit::check_translations();
    // Encodings by llvm-mc-15 (gfx90a): v6 from v0 (and v2, v4).
    const OPS: [(&str, &[u32]); 7] = [
        ("v_rcp_f32", &[0x7e0c_4500]),
        ("v_rndne_f32", &[0x7e0c_3d00]),
        ("v_trunc_f32", &[0x7e0c_3900]),
        ("v_cvt_i32_f32", &[0x7e0c_1100]),
        ("v_cvt_u32_f32", &[0x7e0c_0f00]),
        ("v_max3_f32 v6, v0, |v2|, -v4", &[0xd1d3_0206, 0x8412_0500]),
        ("v_min3_f32 v6, |v0|, v2, v4", &[0xd1d0_0106, 0x0412_0500]),
    ];
    let edges: Vec<u32> = [
        0u32,
        0x8000_0000,
        1,
        0x807f_ffff,
        0x0080_0000,
        0x3f80_0000,
        0x3f00_0000,
        0x4020_0000,
        0x4060_0000,
        0xc020_0000,
        0x3eff_ffff,
        0x4b7f_ffff,
        0x4b00_0001,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7e80_0000,
        0x7f00_0000,
        0x7e7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_1234,
        0x7f80_0001,
        0xffa0_0005,
        0x3e99_999a,
        0xbf7f_ffff,
        0x4f00_0000,
        0xcf00_0001,
        0x3400_0001,
        0x0000_0400,
    ]
    .into_iter()
    .collect();
    for (name, words) in OPS {
        for mode in [0xf0, 0xc0, 0xd0, 0xe0, 0x2f0] {
            let run = |engine: Engine| {
                let mut h = Harness::new();
                h.set_engine(engine);
                h.wave.mode = mode;
                h.wave.exec = u64::MAX;
                for (i, step) in [(0, 0), (2, 7), (4, 13)] {
                    h.wave.vgpr[i] = std::array::from_fn(|l| edges[(l + step) % edges.len()]);
                }
                h.run(&[words, &[0xbf81_0000]].concat()).expect("runs");
                h.wave.vgpr[6]
            };
            let (interp, jit) = (run(Engine::Interp), run(Engine::Jit));
            for l in 0..64 {
                assert_eq!(interp[l], jit[l], "{name} lane {l} ({:#010x}), MODE {mode:#x}", edges[l % edges.len()]);
            }
        }
    }
}

/// `v_cvt_f16_f32` and `v_pack_b32_f16` translated against the interpreter on every f32
/// whose f16 rounding is not trivial: f16's edges (zeros, the smallest denormal and halfway
/// below it, the largest denormal, the smallest normal and the f32 just below it, ties to
/// even on both sides, the largest finite f16 65504, 65519.99 and the tie 65520 that rounds
/// to infinity, f32 denormals, infinities, NaNs with payloads) and 64 × 48 values of random
/// mantissas with exponents from 2^-26 to 2^17, in MODEs that translate (f16 denormals kept,
/// f16 rounding to nearest even; f32 input denormals kept or flushed; IEEE on or off) and
/// two that leave it to the interpreter (f16 denormals flushed; f16 rounding upward).
#[test]
fn f16_conversion_and_packing_match_the_interpreter() {
    jit::check_translations();
    // By llvm-mc-15 (gfx90a): v_cvt_f16_f32 v6, v0; v_pack_b32_f16 v6, v0, v2.
    const CVT: [u32; 1] = [0x7e0c_1500];
    const PACK: [u32; 2] = [0xd2a0_0006, 0x0002_0500];
    let edges = [
        0u32,
        0x8000_0000,
        0x3380_0000,
        0x3300_0000,
        0x3300_0001,
        0x387f_c000,
        0x387f_ffff,
        0x3880_0000,
        0xb880_0000,
        0x3f80_1000,
        0x3f80_3000,
        0x3f80_1001,
        0x3f80_2fff,
        0x477f_e000,
        0x477f_efff,
        0x477f_f000,
        0xc77f_f000,
        0x4780_0000,
        0x0000_0001,
        0x807f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f80_2001,
        0xffbf_e000,
        0x7f7f_ffff,
        0x3c00_0000,
        0x3a80_1000,
        0x3380_0001,
        0x3280_0000,
        0x3440_0000,
        0x3460_0000,
    ];
    let mut rng = Rng(0xf16);
    let random = (0..64 * 48).map(|_| {
        let exponent = 101 + rng.below(44);
        rng.next() & 0x8000_0000 | exponent << 23 | rng.next() & 0x7f_ffff
    });
    let values: Vec<u32> = edges.into_iter().chain(random).collect();
    for mode in [0xf0, 0xc0, 0x2f0, 0x3c0, 0x70, 0xf4] {
        let translates = mode & 0x80 != 0 && mode & 0xc == 0;
        for (name, words) in [("v_cvt_f16_f32", &CVT[..]), ("v_pack_b32_f16", &PACK[..])] {
            let insts = [decode(words, Target::Gfx90a).expect("decodes")];
            let plan = select::plan(&insts, mode);
            let compiled = steps_where(&plan, |k| matches!(k, select::Kind::CvtF16F32 | select::Kind::PackB32F16)) == 1;
            assert_eq!(compiled, translates || name == "v_pack_b32_f16", "{name} compiled in MODE {mode:#x}");
            for batch in values.chunks(64) {
                let run = |engine: Engine| {
                    let mut h = Harness::new();
                    h.set_engine(engine);
                    h.wave.mode = mode;
                    // Lanes past the batch's end, and lane 5, are off.
                    h.wave.exec = (u64::MAX >> (64 - batch.len())) & !(1 << 5);
                    h.wave.vgpr[0] = std::array::from_fn(|l| batch[l % batch.len()]);
                    h.wave.vgpr[2] = std::array::from_fn(|l| batch[(l + 7) % batch.len()].rotate_left(16));
                    h.wave.vgpr[6] = [0xdead_beef; 64];
                    h.run(&[words, &[0xbf81_0000]].concat()).expect("runs");
                    h.wave.vgpr[6]
                };
                let (interp, translated) = (run(Engine::Interp), run(Engine::Jit));
                for l in 0..64 {
                    assert_eq!(
                        interp[l],
                        translated[l],
                        "{name} lane {l} ({:#010x}), MODE {mode:#x}",
                        batch[l % batch.len()]
                    );
                }
                assert_eq!(translated[5], 0xdead_beef, "{name}: a lane that is off keeps its value");
            }
        }
    }
    // The rounding itself, for values derived by hand from the f16 format (1 sign, 5 exponent,
    // 10 mantissa bits; bias 15; denormals in units of 2^-24).
    let mut h = Harness::new();
    h.set_engine(Engine::Jit);
    h.wave.mode = 0xf0;
    h.wave.exec = u64::MAX;
    let expected = [
        (0x3f80_0000u32, 0x3c00u32), // 1.0
        (0x3f80_1000, 0x3c00),       // 1 + 2^-11: a tie, to the even 1.0
        (0x3f80_3000, 0x3c02),       // 1 + 3 * 2^-11: a tie, to the even 1 + 2^-9
        (0x477f_e000, 0x7bff),       // 65504, the largest finite
        (0x477f_f000, 0x7c00),       // 65520: a tie, to the even infinity
        (0x3380_0000, 0x0001),       // 2^-24, the smallest denormal
        (0x3300_0000, 0x0000),       // 2^-25: a tie, to the even zero
        (0x3300_0001, 0x0001),       // just above it
        (0x387f_ffff, 0x0400),       // just below 2^-14: up to the smallest normal
        (0xc000_0000, 0xc000),       // -2.0
        (0x7f80_2001, 0x7e01),       // a signalling NaN: quieted, top mantissa bits kept
        (0xff80_0000, 0xfc00),       // -infinity
    ];
    h.wave.vgpr[0] = std::array::from_fn(|l| expected[l % expected.len()].0);
    h.run(&[&CVT[..], &[0xbf81_0000]].concat()).expect("runs");
    for (l, (input, half)) in expected.iter().enumerate() {
        assert_eq!(h.wave.vgpr[6][l], *half, "v_cvt_f16_f32 of {input:#010x}");
    }
}

/// Runs `words` on both engines with MODE 0xf0, a full EXEC and VCC 0, once per group of 16
/// `edges`: lane 4k of each chunk gets the group's `k`th edge, every other lane `typical`
/// (`set` puts a lane's operands in its registers); v[6:7] and what `more` reads must come
/// out identical.
fn edges_in_fast_chunks<T: Copy + std::fmt::Debug, M: PartialEq + std::fmt::Debug>(
    words: &[u32],
    edges: &[T],
    typical: T,
    set: impl Fn(&mut Harness, usize, T),
    more: impl Fn(&Harness) -> M,
    name: &str,
) {
    for group in edges.chunks(16) {
        let run = |engine: Engine| {
            let mut h = Harness::new();
            h.set_engine(engine);
            h.wave.mode = 0xf0;
            h.wave.exec = u64::MAX;
            h.wave.vcc = 0;
            for lane in 0..64 {
                let t = if lane % 4 == 0 { group.get(lane / 4).copied().unwrap_or(typical) } else { typical };
                set(&mut h, lane, t);
            }
            h.run(words).expect("runs");
            (h.wave.vgpr[6], h.wave.vgpr[7], more(&h))
        };
        let (interp, jit) = (run(Engine::Interp), run(Engine::Jit));
        assert_eq!(interp, jit, "{name}, operands {group:#x?}");
    }
}

/// `v_ldexp_f64` with exponent fields and amounts at and around the bounds of the translated
/// code's fast test (a normal number whose field stays in 1..=2046, or a zero), and the
/// specials it leaves to the interpreter (denormals, infinities, NaNs, amounts near the ends
/// of i32), each in a chunk whose other lanes pass it: a looser bound would give one of them
/// the fast answer.
#[test]
fn ldexp_at_the_bounds_of_the_fast_test_matches_the_interpreter() {
    jit::check_translations();
    // Encodings by llvm-mc-15 (gfx90a).
    const PLAIN: [u32; 2] = [0xd284_0006, 0x0002_0500]; // v_ldexp_f64 v[6:7], v[0:1], v2
    const MODIFIED: [u32; 2] = [0xd284_0106, 0x2002_0500]; // v_ldexp_f64 v[6:7], -|v[0:1]|, v2
    let f = |sign: u64, e: u64| sign << 63 | e << 52 | 0x8_1234_5678_9abc;
    let typical = (f(0, 1023), 3u32);
    let mut cases: Vec<(u64, u32)> = Vec::new();
    for e in [0u64, 1, 2, 1023, 2045, 2046, 2047] {
        for n in
            [0i32, 1, -1, 2, -2, 1022, -1022, 1023, -1023, 1024, -1024, 2045, -2045, 2046, -2046, i32::MAX, i32::MIN]
        {
            cases.push((f(e & 1, e), n as u32));
        }
    }
    // Fields that land exactly on 0, 1, 2046 and 2047.
    for (e, n) in [(1000, -999), (1000, -1000), (1000, 1046), (1000, 1047), (1, -1), (2046, 1), (5, -5), (5, -4)] {
        cases.push((f(0, e), n as u32));
    }
    // Zeros, denormals, infinities, NaNs (a signalling one with a payload).
    for a in [0, 1 << 63, 1, 0x000f_ffff_ffff_ffff, 0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000, 0x7ff4_0000_0000_1234]
    {
        for n in [0i32, 5, -5, 2000, -2000] {
            cases.push((a, n as u32));
        }
    }
    for (name, words) in [("v_ldexp_f64", PLAIN), ("v_ldexp_f64 of -|a|", MODIFIED)] {
        let set = |h: &mut Harness, lane: usize, (a, n): (u64, u32)| {
            h.wave.vgpr[0][lane] = a as u32;
            h.wave.vgpr[1][lane] = (a >> 32) as u32;
            h.wave.vgpr[2][lane] = n;
        };
        edges_in_fast_chunks(&words, &cases, typical, set, |_| (), name);
    }
}

/// Address registers of the memory programs: pairs v[12:13] and v[14:15], the 32-bit offset
/// v16 (with the SGPR bases s[12:13] and s[14:15]).
const ADDR_PAIRS: [u32; 2] = [12, 14];
const VOFFSET: u32 = 16;
/// Memory the programs reach: the harness block's first 64 KiB and its last 4 KiB.
const LOW: u64 = 64 << 10;
const HIGH: u64 = 4 << 10;

/// Lane addresses (byte offsets from the block) in one of the shapes programs use:
/// consecutive elements of 4 to 16 bytes (the compiled case), one address, scattered,
/// consecutive with one lane out of step, running off the end of the block, or below it.
fn address_shape(r: &mut Rng) -> [i64; 64] {
    let stride = [4, 8, 12, 16][r.below(4) as usize] as i64;
    let start = 64
        + 4 * r.below(((LOW - 64 * 16 - 256) / 4) as u32) as i64
        + if r.below(8) == 0 { 1 + r.below(3) as i64 } else { 0 };
    let mut a: [i64; 64] = std::array::from_fn(|l| start + l as i64 * stride);
    match r.below(10) {
        0..=4 => {}
        5 => a = [start; 64],
        6 => a = std::array::from_fn(|_| 4 * r.below((LOW / 4 - 8) as u32) as i64),
        7 => a[1 + r.below(63) as usize] += 4,
        8 => a = std::array::from_fn(|l| MEM_BYTES as i64 - 256 + l as i64 * stride),
        _ => a = std::array::from_fn(|l| -4096 + l as i64 * stride),
    }
    a
}

use sim::testing::{MEM_BASE, MEM_BYTES};

/// A 64-bit sum into data registers, as compiled code forms addresses:
/// `v_add_co_u32_e32 vA, vcc, src, vB` then `v_addc_co_u32_e32 vC, vcc, src, vD, vcc` (the
/// second's carry-out into VCC is often written again before anything reads it).
fn address_sum(r: &mut Rng) -> Vec<Vec<u32>> {
    let vop2 = |op: u32, dst: u32, src0: u32, vsrc1: u32| op << 25 | dst << 17 | vsrc1 << 9 | src0;
    let src0 = |r: &mut Rng| if r.below(2) == 0 { 256 + r.below(12) } else { r.below(12) };
    let (lo, hi) = (r.below(12), r.below(12));
    let add = vop2(0x19, lo, src0(r), r.below(12));
    let addc = vop2(0x1c, hi, src0(r), r.below(12));
    vec![vec![add], vec![addc]]
}

/// One random global or FLAT load or store of 1 to 4 dwords with v0..v11 as data.
fn memory_instruction(r: &mut Rng) -> Vec<u32> {
    let dwords = 1 + r.below(4);
    let store = r.below(2) == 0;
    let op = if store { 0x1c } else { 0x14 } + dwords - 1;
    let data = r.below(VGPRS - dwords + 1);
    // FLAT, GLOBAL with a VGPR pair, GLOBAL with an SGPR base.
    let (seg, addr, saddr) = match r.below(3) {
        0 => (0, r.pick(&ADDR_PAIRS), 0),
        1 => (2, r.pick(&ADDR_PAIRS), 0x7f),
        _ => (2, VOFFSET, r.pick(&[12, 14])),
    };
    let offset = if r.below(4) == 0 { 0 } else { (4 * r.below(16)) as i32 - if seg == 2 { 32 } else { 0 } };
    let offset = offset as u32 & 0x1fff;
    let (vdst, vdata) = if store { (0, data) } else { (data, 0) };
    vec![0xdc00_0000 | op << 18 | seg << 14 | offset, vdst << 24 | saddr << 16 | vdata << 8 | addr]
}

/// One random `s_load_dword{,x2,x4,x8,x16}` from s[12:13] (the block's base minus 4 KiB) or
/// s[14:15] (unmapped), mostly with an offset inside the block's first 64 KiB.
fn scalar_load_instruction(r: &mut Rng) -> Vec<u32> {
    let op = r.below(5);
    let dwords = 1 << op;
    let sdata = r.below(13 - dwords.min(12)) & !(dwords.min(4) - 1);
    let sbase = r.pick(&[6, 6, 6, 7]);
    if r.below(8) == 0 {
        // SGPR offset: s0..s11, mostly not a useful address (a fault, both ways).
        return vec![0xc000_0000 | op << 18 | sdata << 6 | sbase, r.below(12)];
    }
    let offset = match r.below(8) {
        0 => 4 * r.below(1024),
        _ => (4096 + r.below(LOW as u32 - 64)) & !(if r.below(4) == 0 { 0 } else { 3 }),
    };
    vec![0xc002_0000 | op << 18 | sdata << 6 | sbase, offset]
}

/// One random `ds_read_b32..b128` or `ds_write_b32..b128` at v16 plus an offset (some
/// lanes beyond the 64 KiB of LDS in some shapes; lanes scattered, or one out of step, take
/// the translated code's lane-by-lane path), or one of the two-address forms.
fn lds_instruction(r: &mut Rng) -> Vec<u32> {
    if r.below(3) == 0 {
        return lds_pair_instruction(r);
    }
    let dwords = 1 + r.below(4);
    let store = r.below(2) == 0;
    let op = match (store, dwords) {
        (false, 1) => 0x36,
        (false, 2) => 0x76,
        (false, 3) => 0xfe,
        (false, _) => 0xff,
        (true, 1) => 0x0d,
        (true, 2) => 0x4d,
        (true, 3) => 0xde,
        (true, _) => 0xdf,
    };
    let data = r.below(VGPRS - dwords + 1);
    let offset = if r.below(2) == 0 { 0 } else { 4 * r.below(64) };
    // Sometimes a read into its own address register (`ds_read_b32 v12, v12 offset:4`).
    let data = if !store && dwords == 1 && r.below(4) == 0 { VOFFSET } else { data };
    let (vdst, vdata) = if store { (0, data) } else { (data, 0) };
    vec![0xd800_0000 | op << 17 | offset, vdst << 24 | vdata << 8 | VOFFSET]
}

/// One random `ds_read2{,st64}_b32/b64` or `ds_write2{,st64}_b32/b64` at v16: `offset0` and
/// `offset1` anywhere in 0..255 elements (with `st64` many lanes leave the 64 KiB of LDS), the
/// two addresses sometimes equal (a write's second data wins), and sometimes a read whose
/// first or second result lands in its own address register.
fn lds_pair_instruction(r: &mut Rng) -> Vec<u32> {
    let store = r.below(2) == 0;
    let wide = r.below(2) == 0;
    let st64 = r.below(4) == 0;
    let op = match (store, wide, st64) {
        (true, false, false) => 0x0e,
        (true, false, true) => 0x0f,
        (true, true, false) => 0x4e,
        (true, true, true) => 0x4f,
        (false, false, false) => 0x37,
        (false, false, true) => 0x38,
        (false, true, false) => 0x77,
        (false, true, true) => 0x78,
    };
    let regs = if wide { 2 } else { 1 };
    let offset0 = r.below(256);
    let offset1 = if r.below(4) == 0 { offset0 } else { r.below(256) };
    let (vdst, data0, data1) = if store {
        (0, r.below(VGPRS - regs + 1), r.below(VGPRS - regs + 1))
    } else if r.below(4) == 0 {
        // The first or the second result into v16, the address (the second access must
        // still use the address the instruction started with).
        (if r.below(2) == 0 { VOFFSET } else { VOFFSET - regs }, 0, 0)
    } else {
        (r.below(VGPRS - 2 * regs + 1), 0, 0)
    };
    vec![0xd800_0000 | op << 17 | offset1 << 8 | offset0, vdst << 24 | data1 << 16 | data0 << 8 | VOFFSET]
}

#[test]
fn random_memory_programs_give_the_same_registers_and_memory_interpreted_and_translated() {
    jit::check_translations();
    let mut r = Rng(0x3e3_0001);
    let (mut programs, mut compiled, mut scalar_loads, mut unread) = (0, 0usize, 0usize, 0usize);
    let mut pairs = 0usize;
    for case in 0..3_000 {
        let len = 1 + r.below(10) as usize;
        let program: Vec<Vec<u32>> = (0..len)
            .flat_map(|_| match r.below(12) {
                0..=3 => vec![memory_instruction(&mut r)],
                4 => vec![scalar_load_instruction(&mut r)],
                5 | 6 => vec![lds_instruction(&mut r)],
                7 | 8 => address_sum(&mut r),
                _ => vec![instruction(&mut r)],
            })
            .collect();
        let words: Vec<u32> = program.concat();
        let seed = r.next() as u64;
        let run = |engine: Engine| {
            let mut h = Harness::new();
            h.set_engine(engine);
            let mut r = Rng(seed);
            randomize(&mut h, &mut r, 0xf0);
            if r.below(2) == 0 {
                h.wave.exec = u64::MAX;
            }
            for pair in ADDR_PAIRS {
                for (l, a) in address_shape(&mut r).into_iter().enumerate() {
                    let va = (MEM_BASE as i64 + a) as u64;
                    h.wave.vgpr[pair as usize][l] = va as u32;
                    h.wave.vgpr[pair as usize + 1][l] = (va >> 32) as u32;
                }
            }
            for (l, a) in address_shape(&mut r).into_iter().enumerate() {
                h.wave.vgpr[VOFFSET as usize][l] = (a + 4096) as u32;
            }
            let base = MEM_BASE - 4096;
            [h.wave.sgpr[12], h.wave.sgpr[13]] = [base as u32, (base >> 32) as u32];
            [h.wave.sgpr[14], h.wave.sgpr[15]] = [0x7000_0000, 0];
            let low: Vec<u8> = (0..LOW).map(|_| r.next() as u8).collect();
            h.write_mem(MEM_BASE, &low);
            let high: Vec<u8> = (0..HIGH).map(|_| r.next() as u8).collect();
            h.write_mem(MEM_BASE + MEM_BYTES - HIGH, &high);
            for b in h.lds.iter_mut() {
                *b = r.next() as u8;
            }
            // Twice: the second run's compiled accesses find the mappings their sites kept.
            let result = h.run(&words).and_then(|()| h.run(&words)).map_err(|e| format!("{e:?}"));
            let (mut low, mut high) = (vec![0; LOW as usize], vec![0; HIGH as usize]);
            h.read_mem(MEM_BASE, &mut low);
            h.read_mem(MEM_BASE + MEM_BYTES - HIGH, &mut high);
            let w = &h.wave;
            (result, w.vgpr[..17].to_vec(), w.sgpr[..16].to_vec(), (w.vcc, w.exec, w.scc, w.m0), low, high, h.lds)
        };
        let (a, b) = (run(Engine::Interp), run(Engine::Jit));
        let text: Vec<String> =
            program.iter().map(|w| decode(w, Target::Gfx90a).map(|i| i.to_string()).unwrap_or_default()).collect();
        assert_eq!(a.0, b.0, "outcome, case {case}: {text:#?}");
        for (v, (x, y)) in a.1.iter().zip(&b.1).enumerate() {
            if let Some(lane) = (0..64).find(|&l| x[l] != y[l]) {
                panic!(
                    "case {case}: v{v} lane {lane}: interpreter {:#010x}, translated {:#010x}\n{text:#?}",
                    x[lane], y[lane]
                );
            }
        }
        assert_eq!(a.2, b.2, "SGPRs, case {case}: {text:#?}");
        // After a fault the wave is gone (the dispatch reports it): a VCC value that the run
        // would have overwritten unread is not computed (`select::mark_unread_masks`), so
        // VCC is compared only where the run went on.
        let vcc_kept = |x: &(u64, u64, bool, u32)| if a.0.is_ok() { *x } else { (0, x.1, x.2, x.3) };
        assert_eq!(vcc_kept(&a.3), vcc_kept(&b.3), "VCC, EXEC, SCC, M0, case {case}: {text:#?}");
        if let Some(at) = (0..a.4.len()).find(|&i| a.4[i] != b.4[i]) {
            panic!(
                "case {case}: memory at +{at:#x}: interpreter {:#04x}, translated {:#04x}\n{text:#?}",
                a.4[at], b.4[at]
            );
        }
        assert!(a.5 == b.5, "case {case}: the block's last 4 KiB differ\n{text:#?}");
        if let Some(at) = (0..a.6.len()).find(|&i| a.6[i] != b.6[i]) {
            panic!("case {case}: LDS at {at:#x}: interpreter {:#04x}, translated {:#04x}\n{text:#?}", a.6[at], b.6[at]);
        }
        programs += 1;
        let insts: Vec<_> = program.iter().map(|w| decode(w, Target::Gfx90a).expect("decodes")).collect();
        let plan = select::plan(&insts, 0xf0);
        compiled += plan.items.iter().filter(|i| matches!(i, select::Item::Memory { .. })).count();
        pairs +=
            plan.items.iter().filter(|i| matches!(i, select::Item::Memory { op, .. } if op.second.is_some())).count();
        scalar_loads += plan.items.iter().filter(|i| matches!(i, select::Item::ScalarLoad { .. })).count();
        for item in &plan.items {
            if let select::Item::Vector(seg) = item {
                unread += seg.masks_read_later.iter().filter(|read| !**read).count();
            }
        }
    }
    assert!(compiled > programs, "{compiled} memory instructions compiled in {programs} programs");
    assert!(pairs > programs / 10, "{pairs} two-address LDS instructions compiled in {programs} programs");
    assert!(scalar_loads > programs / 4, "{scalar_loads} scalar loads compiled in {programs} programs");
    // Lane masks written again unread across a memory instruction: not computed.
    assert!(unread > 300, "{unread} lane masks left unread");
    assert_eq!(jit::stats().1, 0, "runs that failed to compile");
    eprintln!(
        "{programs} programs, {compiled} vector ({pairs} two-address LDS) and {scalar_loads} scalar memory \
         instructions compiled, {unread} lane masks not computed"
    );
}

/// Translated code checks the mapping its site kept before it asks the wave's translation
/// cache; a store must still refuse a read-only mapping that a load at the same site (the
/// first compiled access of another run) kept, and both must reach the right bytes.
#[test]
fn a_site_kept_by_a_load_does_not_let_a_store_into_read_only_memory() {
    jit::check_translations();
    const LOAD: [u32; 2] = [0xdc50_8000, 0x017f_0002]; // global_load_dword v1, v[2:3], off
    const STORE: [u32; 2] = [0xdc70_8000, 0x007f_0102]; // global_store_dword v[2:3], v1, off
    const ADD: u32 = 0x6808_0904; // v_add_u32_e32 v4, v4, v4
    const READ_ONLY: u64 = MEM_BASE + MEM_BYTES + (1 << 20);
    let load: Vec<u32> = [&LOAD[..], &[ADD, ADD]].concat();
    let store: Vec<u32> = [&[ADD, ADD][..], &STORE[..]].concat();
    for engine in [Engine::Interp, Engine::Jit] {
        let mut h = Harness::new();
        h.set_engine(engine);
        let words: Vec<u8> = (0..256u32).flat_map(|w| (w * 0x0101_0101).to_le_bytes()).collect();
        h.context().map_read_only(READ_ONLY, 4096, &words);
        for l in 0..64 {
            let va = READ_ONLY + 4 * l as u64;
            (h.wave.vgpr[2][l], h.wave.vgpr[3][l]) = (va as u32, (va >> 32) as u32);
        }
        // Twice: the second load takes the mapping its site kept.
        for _ in 0..2 {
            h.run(&load).expect("a load from read-only memory");
            assert!((0..64).all(|l| h.wave.vgpr[1][l] == l as u32 * 0x0101_0101), "{engine:?}: the loaded words");
        }
        h.wave.vgpr[1] = [0xdead_beef; 64];
        let fault = h.run(&store);
        assert!(fault.is_err(), "{engine:?}: a store into read-only memory faults");
        let mut after = vec![0u8; words.len()];
        h.read_mem(READ_ONLY, &mut after);
        assert_eq!(after, words, "{engine:?}: read-only memory unchanged");
    }
}

/// `v_max_f32`/`v_min_f32` translated against interpreted over every pair of float edges
/// (signed zeros, denormals, infinities, quiet and signalling NaNs with payloads), with
/// MODE's IEEE bit on (HIP's MODE: a signalling NaN wins, quieted) and off, f32 denormals
/// kept and flushed, and with VOP3's abs and neg. The random programs run without the
/// IEEE bit.
#[test]
fn min_and_max_match_the_interpreter_in_every_mode() {
    jit::check_translations();
    // Encodings by llvm-mc-15 (gfx90a).
    let programs: [(&str, &[u32]); 3] = [
        ("v_max_f32 v6, v0, v1", &[0x160c_0300]),
        ("v_min_f32 v6, v0, v1", &[0x140c_0300]),
        ("v_max_f32_e64 v6, |v0|, -v1", &[0xd10b_0106, 0x4002_0300]),
    ];
    let edges: [u32; 14] = [
        0,
        0x8000_0000,
        0x0000_0001,
        0x807f_ffff,
        0x3f80_0000,
        0xbf80_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc1_2345,
        0x7fa0_1234,
        0xff80_0001,
        0x4b80_0000,
        0x7f7f_ffff,
    ];
    let pairs: Vec<(u32, u32)> = edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b))).collect();
    for (name, words) in programs {
        for mode in [0x2f0, 0x0f0, 0x2c0, 0x0c0] {
            for chunk in pairs.chunks(64) {
                let run = |engine: Engine| {
                    let mut h = Harness::new();
                    h.set_engine(engine);
                    h.wave.mode = mode;
                    h.wave.exec = u64::MAX;
                    for (lane, &(a, b)) in chunk.iter().enumerate() {
                        (h.wave.vgpr[0][lane], h.wave.vgpr[1][lane]) = (a, b);
                    }
                    h.run(words).expect("runs");
                    h.wave.vgpr[6]
                };
                let (interp, jit) = (run(Engine::Interp), run(Engine::Jit));
                for (lane, &(a, b)) in chunk.iter().enumerate() {
                    assert_eq!(
                        interp[lane], jit[lane],
                        "{name}, MODE {mode:#x}: ({a:#x}, {b:#x}) interpreted {:#x}, translated {:#x}",
                        interp[lane], jit[lane]
                    );
                }
            }
        }
    }
}
