// expect: score <= 0
// needs: nvrtc
// grade: --budget 20
// A macro that expands to 8^9 tokens: the compiler would run for minutes and eat memory. The
// compile runs in a child with a memory and CPU limit inside the budget.
#include "sgemm.cuh"
#define A0 x
#define A1 A0 A0 A0 A0 A0 A0 A0 A0
#define A2 A1 A1 A1 A1 A1 A1 A1 A1
#define A3 A2 A2 A2 A2 A2 A2 A2 A2
#define A4 A3 A3 A3 A3 A3 A3 A3 A3
#define A5 A4 A4 A4 A4 A4 A4 A4 A4
#define A6 A5 A5 A5 A5 A5 A5 A5 A5
#define A7 A6 A6 A6 A6 A6 A6 A6 A6
#define A8 A7 A7 A7 A7 A7 A7 A7 A7
#define A9 A8 A8 A8 A8 A8 A8 A8 A8
__device__ int bomb() { int x = 0; return A9; }
extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {}
