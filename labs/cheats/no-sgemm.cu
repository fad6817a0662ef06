// expect: refused
// expect: note "defines no kernel `sgemm`"
// needs: nvrtc
// Compiles, and defines no kernel the grader can launch (a misspelt name). One failure says so,
// at the compile: the cases do not run, to fail 60 times for the same reason.
#include "sgemm.cuh"

extern "C" __global__ void sgem(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {}
