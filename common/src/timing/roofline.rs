//! The two floors of the method: FLOPs over the arithmetic peak, bytes over the memory
//! bandwidth. The larger one is the fastest any kernel can be.

use crate::harness::device::Gpu;
use crate::harness::problem::Gemm;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Floors {
    /// 2MNK over the FP32 SIMT peak, ms.
    pub compute_ms: f64,
    /// The minimal bytes over the DRAM bandwidth, ms.
    pub memory_ms: f64,
}

impl Floors {
    pub fn of(gemm: &Gemm, peak_flops: f64, bytes_per_s: f64) -> Floors {
        Floors { compute_ms: gemm.shape.flops() / peak_flops * 1e3, memory_ms: gemm.min_bytes(4) / bytes_per_s * 1e3 }
    }

    /// The floors for `gemm` from the GPU's datasheet rates (read off the device).
    pub fn for_gpu(gemm: &Gemm, gpu: &Gpu) -> Floors {
        Floors::of(gemm, gpu.peak_fp32_flops(), gpu.peak_dram_bytes())
    }

    pub fn floor_ms(&self) -> f64 {
        self.compute_ms.max(self.memory_ms)
    }

    pub fn bound(&self) -> &'static str {
        if self.compute_ms >= self.memory_ms { "compute" } else { "memory" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Shape;

    #[test]
    fn sgemm_4096_is_compute_bound_on_an_h100_like_gpu() {
        // 66.9 TFLOP/s FP32 and 3.35 TB/s: 137 GFLOP take 2.05 ms, 201 MB take 0.06 ms.
        let f = Floors::of(&Gemm::new(Shape::cube(4096), 1.0, 0.0), 66.9e12, 3.35e12);
        assert!((f.compute_ms - 2.054).abs() < 0.01, "{f:?}");
        assert!((f.memory_ms - 0.0601).abs() < 0.001, "{f:?}");
        assert_eq!(f.bound(), "compute");
        // A skinny product (M = 16) is memory-bound.
        let skinny = Floors::of(&Gemm::new(Shape::new(16, 11008, 4096), 1.0, 0.0), 66.9e12, 3.35e12);
        assert_eq!(skinny.bound(), "memory");
    }
}
