//! Throughput of float ops, in ns per wave-instruction (run with
//! `cargo test --release -p sim --test exec_valu_float_perf -- --ignored --nocapture`).
//! Each op's handler is called on a decoded instruction, as the
//! interpreter does after its decode cache.

use proto::abi::kfd::alloc_flags;
use sim::driver::kfd::UserptrMode;
use sim::gpu::cp::aql::KernelDispatch;
use sim::gpu::exec::dispatch::DispatchInfo;
use sim::gpu::exec::kd::KernelDescriptor;
use sim::gpu::exec::memory::{PrivateMem, WaveMem};
use sim::gpu::exec::{Ctx, Lanes, Wave};
use sim::isa::{decode, Target};
use sim::machine::Machine;
use std::time::Instant;

const OPS: &[(&str, &[u32])] = &[
    ("v_add_f32 v2, v0, v1", &[0x02040300]),
    ("v_mul_f32 v2, v0, v1", &[0x0a040300]),
    ("v_fma_f32 v3, v0, v1, v2", &[0xd1cb0003, 0x040a0300]),
    ("v_fmac_f32 v2, v0, v1", &[0x76040300]),
    ("v_mac_f32 v2, v0, v1", &[0x2c040300]),
    ("v_max_f32 v2, v0, v1", &[0x16040300]),
    ("v_cvt_f32_u32 v2, v0", &[0x7e040d00]),
    ("v_cvt_u32_f32 v2, v0", &[0x7e040f00]),
    ("v_rcp_iflag_f32 v2, v0", &[0x7e044700]),
    ("v_add_f64 v[4:5], v[0:1], v[2:3]", &[0xd2800004, 0x00020500]),
    ("v_fma_f64 v[6:7], v[0:1], v[2:3], v[4:5]", &[0xd1cc0006, 0x04120500]),
    ("v_pk_fma_f32 v[6:7], v[0:1], v[2:3], v[4:5]", &[0xd3b04006, 0x1c120500]),
    ("v_fma_f16 v3, v0, v1, v2", &[0xd2060003, 0x040a0300]),
    ("v_exp_f32 v2, v0", &[0x7e044100]),
    ("v_log_f32 v2, v0", &[0x7e044300]),
    ("v_sin_f32 v2, v0", &[0x7e045300]),
    ("v_cvt_f16_f32 v2, v0", &[0x7e041500]),
    ("v_cvt_f32_f16 v2, v0", &[0x7e041700]),
    ("v_div_scale_f32 v3, s[4:5], v1, v1, v0", &[0xd1e00403, 0x04020301]),
    ("v_div_fmas_f32 v3, v3, v5, v7", &[0xd1e20003, 0x041e0b03]),
    ("v_div_fixup_f32 v2, v3, v1, v0", &[0xd1de0002, 0x04020303]),
    ("v_mul_f64 v[4:5], v[0:1], v[2:3]", &[0xd2810004, 0x00020500]),
    ("v_rcp_f64 v[4:5], v[0:1]", &[0x7e084b00]),
];

#[test]
#[ignore]
fn float_op_throughput() {
    let machine = Machine::new(sim::config::default_config());
    let process = machine.service().open_process(0, UserptrMode::Direct).unwrap();
    let flags = alloc_flags::VRAM | alloc_flags::WRITABLE | alloc_flags::PUBLIC;
    process.alloc_and_map(0, 0x1000_0000, 1 << 16, flags).unwrap();
    let info = DispatchInfo {
        target: Target::Gfx90a,
        process: process.clone(),
        gpu: 0,
        packet: KernelDispatch::default(),
        packet_va: 0,
        queue_va: 0,
        dispatch_id: 0,
        kd: KernelDescriptor::parse(&[0; 64]),
        entry_pc: 0,
        grid: [64, 1, 1],
        wg_size: [64, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        private_per_lane: 0,
        vgprs: 16,
        agprs: 0,
        d16_preserves_unused: false,
        count_instructions: false,
        engine: sim::gpu::exec::jit::Engine::Interp,
        trace: false,
        itrace: None,
    };
    let vm = process.vm();
    let mem = WaveMem::new(&vm);
    let mut lds = vec![0u8; 0];
    let mut private = PrivateMem::new(0);
    for &mode in &[0x2f0u32] {
        for (asm, words) in OPS {
            let inst = decode(words, Target::Gfx90a).unwrap();
            let handler = sim::gpu::exec::ops::handler(inst.op);
            let mut w = Wave::new(16, 0);
            w.mode = mode;
            let vals: Lanes = std::array::from_fn(|l| (1.0f32 + l as f32 / 64.0).to_bits());
            for r in 0..8 {
                w.vgpr[r] = vals;
            }
            let mut ctx = Ctx { mem: &mem, lds: &mut lds, private: &mut private, dispatch: &info };
            // The best of several runs: the machine is shared.
            let n = 100_000;
            let ns = (0..8)
                .map(|_| {
                    let t = Instant::now();
                    for _ in 0..n {
                        handler(&mut w, &inst, &mut ctx).unwrap();
                    }
                    t.elapsed().as_nanos() as f64 / n as f64
                })
                .fold(f64::INFINITY, f64::min);
            println!("MODE {mode:#x} {asm:45} {ns:7.1} ns per wave-instruction");
        }
    }
}
