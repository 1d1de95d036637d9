// Kernels that misbehave on purpose, for kernelab's fault handling on a real GPU:
// copy_ok copies n floats; copy_illegal writes through a wild pointer (an illegal address);
// copy_hang never returns (spins on a value that never changes).
extern "C" __global__ void copy_ok(const float* src, float* dst, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        dst[i] = src[i];
    }
}

extern "C" __global__ void copy_illegal(const float* src, float* dst, unsigned long long n) {
    float* wild = (float*)(0x7f0000000000ull + 4096ull * threadIdx.x);
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        wild[i] = src[i];
    }
}

extern "C" __global__ void copy_hang(const float* src, float* dst, unsigned long long n) {
    volatile float* s = (volatile float*)src;
    // src holds finite values, so this never ends; the compiler cannot prove it.
    while (s[0] == s[0]) {
    }
    dst[0] = src[0];
}
