// The tensor maps of the standalone benchmarks beside it (box-reads.cu, cluster-reads.cu), built
// with nvcc outside the harness: halves, 128-byte swizzle, through the driver's
// cuTensorMapEncodeTiled by the runtime's entry point (no -lcuda needed).
#pragma once
#include <cstdio>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

// A map of `rank` dimensions (the first contiguous), strides in bytes of dimensions 1 and up.
static CUtensorMap map_halves(void* base, int rank, const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* f = nullptr;
        cudaDriverEntryPointQueryResult q;
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q);
        return (PFN_cuTensorMapEncodeTiled_v12000)f;
    }();
    CUtensorMap m;
    const cuuint32_t one[3] = {1, 1, 1};
    const CUresult r = encode(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rank, base, dims, strides, box, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) printf("error: cuTensorMapEncodeTiled %d (rank %d, box %u x %u)\n", (int)r, rank, box[0], box[1]);
    return m;
}
