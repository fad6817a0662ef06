// expect: refused
// needs: nvrtc
// Includes the reference solution from the grading machine's disk.
#include "../step04-bankfree/src/kernel.cu"
