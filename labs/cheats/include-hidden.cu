// expect: refused
// needs: nvrtc
// Includes the hidden-cases file through the grader's working directory, to compute only those
// shapes. The submission is compiled alone, and the include policy refuses any file but the
// step's headers and the CUDA headers.
#include "sgemm.cuh"
#include "hidden.txt"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {}
