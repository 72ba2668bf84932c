// Image kernels for sim/tests/exec_vmem_kernels.rs, compiled the way the
// ROCclr blit kernels are: clang-15 with Debian's rocm-device-libs (ockl's
// image functions lower read_image*/write_image* to image_load/image_store).

kernel void copy2d(__read_only image2d_t src, __write_only image2d_t dst) {
  int2 c = (int2)(get_global_id(0), get_global_id(1));
  uint4 v = read_imageui(src, c);
  write_imageui(dst, c, v.zyxw + (uint4)(1000, 2000, 3000, 4000));
}

kernel void array_to_buffer(__read_only image2d_array_t src, global float4* out, int w, int h) {
  int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  out[(z * h + y) * w + x] = read_imagef(src, (int4)(x, y, z, 0));
}

kernel void buffer_to_3d(global const float4* in, __write_only image3d_t dst, int w, int h) {
  int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  write_imagef(dst, (int4)(x, y, z, 0), in[(z * h + y) * w + x]);
}
