; gfx950 (CDNA4) test kernels in LLVM IR, compiled by `testing::compile_llvm_ir` with the LLVM 22 of
; Rust's llvm-tools component (Debian 12's clang-19 cannot target gfx950). Each kernel exercises
; instructions gfx950 adds; `tests/gfx950_kernels.rs` checks the results against CPU references.

target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half>, <8 x half>, <4 x float>, i32, i32, i32)
declare { i32, i32 } @llvm.amdgcn.permlane32.swap(i32, i32, i1, i1)

define amdgpu_kernel void @mfma_f16_tile(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x half>, ptr addrspace(1) %a, i32 %lane
  %va = load <8 x half>, ptr addrspace(1) %pa, align 16
  %pb = getelementptr <8 x half>, ptr addrspace(1) %b, i32 %lane
  %vb = load <8 x half>, ptr addrspace(1) %pb, align 16
  %pc = getelementptr <4 x float>, ptr addrspace(1) %c, i32 %lane
  %vc = load <4 x float>, ptr addrspace(1) %pc, align 16
  %r = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half> %va, <8 x half> %vb, <4 x float> %vc, i32 0, i32 0, i32 0)
  %pd = getelementptr <4 x float>, ptr addrspace(1) %d, i32 %lane
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @swap_halves(ptr addrspace(1) %x, ptr addrspace(1) %y) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %px = getelementptr i32, ptr addrspace(1) %x, i32 %lane
  %py = getelementptr i32, ptr addrspace(1) %y, i32 %lane
  %vx = load i32, ptr addrspace(1) %px
  %vy = load i32, ptr addrspace(1) %py
  %s = call { i32, i32 } @llvm.amdgcn.permlane32.swap(i32 %vx, i32 %vy, i1 false, i1 false)
  %s0 = extractvalue { i32, i32 } %s, 0
  %s1 = extractvalue { i32, i32 } %s, 1
  store i32 %s0, ptr addrspace(1) %px
  store i32 %s1, ptr addrspace(1) %py
  ret void
}

define amdgpu_kernel void @to_bf16_and_select(ptr addrspace(1) %f, ptr addrspace(1) %u, ptr addrspace(1) %out_bf, ptr addrspace(1) %out_sel, i32 %n) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 256
  %i = add i32 %base, %tid
  %in = icmp ult i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %pf = getelementptr <2 x float>, ptr addrspace(1) %f, i32 %i
  %vf = load <2 x float>, ptr addrspace(1) %pf, align 8
  %bf = fptrunc <2 x float> %vf to <2 x bfloat>
  %pob = getelementptr <2 x bfloat>, ptr addrspace(1) %out_bf, i32 %i
  store <2 x bfloat> %bf, ptr addrspace(1) %pob, align 4
  ; Three packed dwords per item (a <3 x i32> element would be 16 bytes apart).
  %i3 = mul i32 %i, 3
  %pu = getelementptr i32, ptr addrspace(1) %u, i32 %i3
  %vu = load <3 x i32>, ptr addrspace(1) %pu, align 4
  %a = extractelement <3 x i32> %vu, i32 0
  %b = extractelement <3 x i32> %vu, i32 1
  %c = extractelement <3 x i32> %vu, i32 2
  %ab = and i32 %a, %b
  %na = xor i32 %a, -1
  %nac = and i32 %na, %c
  %sel = or i32 %ab, %nac
  %x = xor i32 %sel, %c
  %y = or i32 %x, %b
  %pos = getelementptr i32, ptr addrspace(1) %out_sel, i32 %i
  store i32 %y, ptr addrspace(1) %pos
  br label %done
done:
  ret void
}

declare i32 @llvm.amdgcn.bitop3.i32(i32, i32, i32, i32 immarg)
declare float @llvm.minimum.f32(float, float)

define amdgpu_kernel void @bitop3_minimum3(ptr addrspace(1) %u, ptr addrspace(1) %f, ptr addrspace(1) %out_u, ptr addrspace(1) %out_f) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %pu = getelementptr <4 x i32>, ptr addrspace(1) %u, i32 %lane
  %vu = load <4 x i32>, ptr addrspace(1) %pu, align 16
  %a = extractelement <4 x i32> %vu, i32 0
  %b = extractelement <4 x i32> %vu, i32 1
  %c = extractelement <4 x i32> %vu, i32 2
  %r = call i32 @llvm.amdgcn.bitop3.i32(i32 %a, i32 %b, i32 %c, i32 232)
  %pou = getelementptr i32, ptr addrspace(1) %out_u, i32 %lane
  store i32 %r, ptr addrspace(1) %pou
  %pf = getelementptr <4 x float>, ptr addrspace(1) %f, i32 %lane
  %vf = load <4 x float>, ptr addrspace(1) %pf, align 16
  %x = extractelement <4 x float> %vf, i32 0
  %y = extractelement <4 x float> %vf, i32 1
  %z = extractelement <4 x float> %vf, i32 2
  %m1 = call float @llvm.minimum.f32(float %x, float %y)
  %m2 = call float @llvm.minimum.f32(float %m1, float %z)
  %pof = getelementptr float, ptr addrspace(1) %out_f, i32 %lane
  store float %m2, ptr addrspace(1) %pof
  ret void
}

; Block-scaled fp8 x fp8 and unscaled fp4 x fp4 matrix products (v_mfma_scale_f32_16x16x128_f8f6f4,
; v_mfma_f32_16x16x128_f8f6f4 cbsz:4 blgp:4): each lane passes its registers in order.
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <4 x float>, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32>, <4 x i32>, <4 x float>, i32 immarg, i32 immarg, i32 immarg, i32, i32 immarg, i32)

define amdgpu_kernel void @mfma_scale_fp8(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %sc, ptr addrspace(1) %d) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <8 x i32>, ptr addrspace(1) %a, i32 %lane
  %va = load <8 x i32>, ptr addrspace(1) %pa, align 32
  %pb = getelementptr <8 x i32>, ptr addrspace(1) %b, i32 %lane
  %vb = load <8 x i32>, ptr addrspace(1) %pb, align 32
  %ps = getelementptr <2 x i32>, ptr addrspace(1) %sc, i32 %lane
  %vs = load <2 x i32>, ptr addrspace(1) %ps, align 8
  %sa = extractelement <2 x i32> %vs, i32 0
  %sb = extractelement <2 x i32> %vs, i32 1
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32> %va, <8 x i32> %vb, <4 x float> zeroinitializer, i32 0, i32 0, i32 0, i32 %sa, i32 0, i32 %sb)
  %pd = getelementptr <4 x float>, ptr addrspace(1) %d, i32 %lane
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

define amdgpu_kernel void @mfma_fp4(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr <4 x i32>, ptr addrspace(1) %a, i32 %lane
  %va = load <4 x i32>, ptr addrspace(1) %pa, align 16
  %pb = getelementptr <4 x i32>, ptr addrspace(1) %b, i32 %lane
  %vb = load <4 x i32>, ptr addrspace(1) %pb, align 16
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32> %va, <4 x i32> %vb, <4 x float> zeroinitializer, i32 4, i32 4, i32 0, i32 0, i32 0, i32 0)
  %pd = getelementptr <4 x float>, ptr addrspace(1) %d, i32 %lane
  store <4 x float> %r, ptr addrspace(1) %pd, align 16
  ret void
}

; Scaled fp8 quantisation and back (v_cvt_scalef32_pk_fp8_f32, v_cvt_scalef32_pk_f32_fp8).
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16>, float, float, float, i1)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32, float, i1)

define amdgpu_kernel void @fp8_quant_roundtrip(ptr addrspace(1) %x, float %scale, ptr addrspace(1) %q, ptr addrspace(1) %y) {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %px = getelementptr <2 x float>, ptr addrspace(1) %x, i32 %lane
  %vx = load <2 x float>, ptr addrspace(1) %px, align 8
  %x0 = extractelement <2 x float> %vx, i32 0
  %x1 = extractelement <2 x float> %vx, i32 1
  %p = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16> zeroinitializer, float %x0, float %x1, float %scale, i1 false)
  %pi = bitcast <2 x i16> %p to i32
  %pq = getelementptr i32, ptr addrspace(1) %q, i32 %lane
  store i32 %pi, ptr addrspace(1) %pq
  %back = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32 %pi, float %scale, i1 false)
  %py = getelementptr <2 x float>, ptr addrspace(1) %y, i32 %lane
  store <2 x float> %back, ptr addrspace(1) %py, align 8
  ret void
}
