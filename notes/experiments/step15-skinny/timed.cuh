// The timing of the standalone benchmarks beside it (read-ceiling.cu, box-reads.cu), built with
// nvcc outside the harness.
#pragma once
#include <cuda_runtime.h>

// Microseconds a launch: the median of 15 single launches (each between its own events), or of 15
// batches of 20 launches in a row (events around the batch, divided by 20).
template <class Launch> float timed(Launch launch, int batch) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float t[15];
    for (int w = 0; w < 5; ++w) launch();
    for (int r = 0; r < 15; ++r) {
        cudaEventRecord(e0);
        for (int i = 0; i < batch; ++i) launch();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&t[r], e0, e1);
        t[r] *= 1000.0f / batch;
    }
    for (int i = 1; i < 15; ++i)
        for (int j = i; j > 0 && t[j] < t[j - 1]; --j) { const float x = t[j]; t[j] = t[j - 1], t[j - 1] = x; }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return t[7];
}
