// The tensor-core ceiling: how many FLOP/s one matrix instruction can deliver when nothing
// else is in the way. Every warp keeps its fragments in registers and issues ACC independent
// products ITERS times in a row: no memory traffic, no address arithmetic, no barriers. The
// result is the roof step 7's kernel works under; `ceiling.rs` prints it next to cuBLAS.
//
// VARIANT picks the instruction (FLOPs per warp-instruction in FLOPS_PER_MMA, for the host):
//   1 WMMA m16n16k16 half -> float        2 PTX mma.sync m16n8k16 f16 -> f32
//   3 WMMA m16n16k8  tf32 -> float        4 PTX mma.sync m16n8k8  tf32 -> f32
//   5 WMMA m8n8k4    double               6 PTX mma.sync m8n8k4   f64
//   7 PTX mma.sync m16n8k16 f64 (sm_90: the larger FP64 shape, not reachable through WMMA)
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

#ifndef RANDOM
#define RANDOM 0  // 1: random operands (PTX FP16 and TF32 variants), see below
#endif
#ifndef ACC
#define ACC 4  // independent accumulators per warp: enough to cover the instruction's latency
#endif

#if VARIANT == 1 || VARIANT == 3 || VARIANT == 5
#if VARIANT == 1
typedef half in_t;
typedef float acc_t;
constexpr int FM = 16, FN = 16, FK = 16;
#elif VARIANT == 3
typedef wmma::precision::tf32 in_t;
typedef float acc_t;
constexpr int FM = 16, FN = 16, FK = 8;
#else
typedef double in_t;
typedef double acc_t;
constexpr int FM = 8, FN = 8, FK = 4;
#endif

extern "C" __global__ void ceiling(int iters, double* out) {
    wmma::fragment<wmma::matrix_a, FM, FN, FK, in_t, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, FM, FN, FK, in_t, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, FM, FN, FK, acc_t> acc[ACC];
    // Small non-zero operands (zeros could let the hardware save power, and clocks with it).
    wmma::fill_fragment(a, 0.0078125f);
    wmma::fill_fragment(b, 0.0078125f);
#pragma unroll
    for (int j = 0; j < ACC; ++j) wmma::fill_fragment(acc[j], acc_t(j));
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < ACC; ++j) wmma::mma_sync(acc[j], a, b, acc[j]);
    }
    // One sum per thread keeps every product alive.
    double s = 0;
#pragma unroll
    for (int j = 0; j < ACC; ++j)
        for (int e = 0; e < acc[j].num_elements; ++e) s += acc[j].x[e];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

#else  // raw PTX mma.sync: the fragment registers are spelled out

extern "C" __global__ void ceiling(int iters, double* out) {
#if VARIANT == 2 || VARIANT == 4
    // A: four 32-bit registers, B: two, C/D: four floats (per thread).
#if VARIANT == 2
    const unsigned x = 0x20002000u;  // two halves of 0.0078125
    const unsigned keep = 0x83ff83ffu, one_half = 0x38003800u;  // RANDOM: sign and mantissa bits, in [0.5, 1)
#define MMA "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#else
    const unsigned x = 0x3c000000u;  // 0.0078125 as tf32 (an FP32 bit pattern)
    const unsigned keep = 0x807fe000u, one_half = 0x3f000000u;
#define MMA "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
#endif
    // The operands of product j. With RANDOM, random numbers in +-[0.5, 1) and different for
    // each j, so that the multipliers switch on every instruction as in a real GEMM (power);
    // otherwise one constant everywhere.
    unsigned a[ACC][4], b[ACC][2];
    unsigned h = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int j = 0; j < ACC; ++j)
#pragma unroll
        for (int e = 0; e < 6; ++e) {
            h = h * 1664525u + 1013904223u;
            const unsigned v = RANDOM ? (h & keep) | one_half : x;
            if (e < 4) a[j][e] = v;
            else b[j][e - 4] = v;
        }
    float d[ACC][4];
#pragma unroll
    for (int j = 0; j < ACC; ++j) d[j][0] = d[j][1] = d[j][2] = d[j][3] = float(j);
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < ACC; ++j)
            asm volatile(MMA " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
                         : "r"(a[j][0]), "r"(a[j][1]), "r"(a[j][2]), "r"(a[j][3]), "r"(b[j][0]), "r"(b[j][1]));
    }
    double s = 0;
#pragma unroll
    for (int j = 0; j < ACC; ++j) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
#elif VARIANT == 6
    // m8n8k4 f64: A one double, B one double, C/D two doubles.
    const double x = 0.0078125;
    double d[ACC][2];
#pragma unroll
    for (int j = 0; j < ACC; ++j) d[j][0] = d[j][1] = double(j);
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < ACC; ++j)
            asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                         : "+d"(d[j][0]), "+d"(d[j][1])
                         : "d"(x), "d"(x));
    }
    double s = 0;
#pragma unroll
    for (int j = 0; j < ACC; ++j) s += d[j][0] + d[j][1];
#elif VARIANT == 7
    // m16n8k16 f64 (sm_90): A eight doubles, B four, C/D four.
    const double x = 0.0078125;
    double d[ACC][4];
#pragma unroll
    for (int j = 0; j < ACC; ++j) d[j][0] = d[j][1] = d[j][2] = d[j][3] = double(j);
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < ACC; ++j)
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
                "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
                : "+d"(d[j][0]), "+d"(d[j][1]), "+d"(d[j][2]), "+d"(d[j][3])
                : "d"(x), "d"(x), "d"(x), "d"(x), "d"(x), "d"(x), "d"(x), "d"(x), "d"(x), "d"(x), "d"(x), "d"(x));
    }
    double s = 0;
#pragma unroll
    for (int j = 0; j < ACC; ++j) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
#else
#error "VARIANT must be 1..7"
#endif
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
#endif
