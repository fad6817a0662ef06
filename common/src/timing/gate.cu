// The harness's gate (not a step): one thread that holds the stream until the host writes a
// non-zero value to `open`, a word of pinned host memory the GPU reads through the bus. A run
// queued behind the gate starts the moment it opens, so the CUDA events around the run time
// the GPU's work and none of the host's: how long the host took to queue it (argument
// checks, tensor maps, the driver's launch call) stays outside. After `timeout_ns` the gate
// opens itself and says so (writes -1), so that no mistake can hang the GPU.
extern "C" __global__ void gate(volatile int* open, unsigned long long timeout_ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (*open != 0) return;
    } while (now - start < timeout_ns);
    *open = -1;
}
