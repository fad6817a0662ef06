// expect: score <= 75
// needs: gpu
// Remembers its last launch (shape and buffers) in device memory and returns at once when it
// sees the same launch again, as a timing loop would repeat it. Every timed run gets fresh
// inputs, fresh buffers and a poisoned C, and is checked: a skipped run is a wrong result.
#include "sgemm.cuh"

__device__ unsigned long long last_a, last_c, runs;
__device__ int last_mnk[3];

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const bool same = last_a == (unsigned long long)A && last_c == (unsigned long long)C && last_mnk[0] == M &&
                      last_mnk[1] == N && last_mnk[2] == K && runs > 0;
    __syncthreads();
    if (!same) {
        const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
        if (row < M && col < N) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
            store_c(C, row * N + col, acc, alpha, beta);
        }
    }
    if (blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 && threadIdx.x == 0 && threadIdx.y == 0) {
        last_a = (unsigned long long)A;
        last_c = (unsigned long long)C;
        last_mnk[0] = M;
        last_mnk[1] = N;
        last_mnk[2] = K;
        runs += 1;
    }
}
