// Small kernels for the cubin reader tests (issue 15, items 10 and 11): built per target by
// bench/h200/make_arch_cubins.sh; cuobjdump's readings of the results are recorded beside them.

// No stack, no local memory.
extern "C" __global__ void plain(float* o, const float* i, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) o[t] = i[t] * 2.0f;
}

__device__ __noinline__ float pick(const float* a, int k) { return a[k & 1]; }

// A two-float array handed to a call: an 8-byte stack frame, no local memory.
extern "C" __global__ void stack8(float* o, const float* i, int k) {
  float a[2];
  a[0] = i[0];
  a[1] = i[1];
  o[threadIdx.x] = pick(a, k + threadIdx.x);
}

// A callee with a 16-byte frame of its own.
__device__ __noinline__ float inner(int k) {
  float b[4];
  for (int j = 0; j < 4; j++) b[j] = float(j * k);
  return pick(b, k) + pick(b + 2, k);
}

// An 8-byte frame calling `inner`: the frame and the cumulative stack differ.
extern "C" __global__ void nested(float* o, const float* i, int k) {
  float a[2];
  a[0] = i[0];
  a[1] = i[1];
  o[threadIdx.x] = pick(a, k + threadIdx.x) + inner(k);
}
