// A hand-written gfx90a kernel built with xnack off (issue 26 item 2): loads 16 bytes from LDS
// with four 32-bit loads and stores them to global memory.
// Build: llvm-mc-19 -triple=amdgcn-amd-amdhsa -mcpu=gfx90a -mattr=-xnack -filetype=obj X.s -o X.o
//        ld.lld-19 -shared X.o -o X.co
  .amdgcn_target "amdgcn-amd-amdhsa--gfx90a:xnack-"
  .text
  .globl lds_copy
  .p2align 8
  .type lds_copy,@function
lds_copy:
  s_load_dwordx2 s[0:1], s[4:5], 0x0
  v_mov_b32 v1, 0
  ds_read_b32 v2, v1
  ds_read_b32 v3, v1 offset:4
  ds_read_b32 v4, v1 offset:8
  ds_read_b32 v5, v1 offset:12
  s_waitcnt lgkmcnt(0)
  global_store_dwordx4 v1, v[2:5], s[0:1]
  s_endpgm
.Lfunc_end0:
  .size lds_copy, .Lfunc_end0-lds_copy

  .rodata
  .p2align 6
  .amdhsa_kernel lds_copy
    .amdhsa_next_free_vgpr 6
    .amdhsa_next_free_sgpr 8
    .amdhsa_accum_offset 8
    .amdhsa_group_segment_fixed_size 64
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .end_amdhsa_kernel

  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx90a:xnack-
amdhsa.kernels:
  - .name: lds_copy
    .symbol: lds_copy.kd
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 64
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 8
    .vgpr_count: 6
    .agpr_count: 0
    .vgpr_spill_count: 0
    .sgpr_spill_count: 0
    .max_flat_workgroup_size: 256
    .args:
      - { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
...
  .end_amdgpu_metadata
