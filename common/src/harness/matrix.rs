//! Matrices on the GPU: stored as a precision says (FP16, BF16, FP32 or FP64), optionally with
//! guard zones around them, uploaded and downloaded through the device's page-locked buffer.

use crate::harness::device::Gpu;
use crate::harness::precision::{Elem, Precision, e4m3_to_f32, f32_to_e4m3};
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, DevicePtr};

/// A device matrix (FP16, FP32 or FP64 elements), never zero bytes (the driver rejects
/// empty allocations). A guarded matrix has `guard` extra elements before and after it,
/// filled with the bytes of [`GUARD_BITS`], so that a kernel writing outside its matrix is
/// caught even without compute-sanitizer.
pub struct DeviceMatrix {
    pub data: CudaSlice<u8>,
    pub len: usize,
    pub guard: usize,
    pub elem: Elem,
    /// An FP8 matrix's FP32 scales (`harness::quantize` says how they are laid out); else `None`.
    pub scales: Option<CudaSlice<u8>>,
}

/// The bit pattern of the guard zones, repeated byte by byte: a NaN no kernel computes by
/// accident (as FP32, and as FP64 when two are side by side).
pub const GUARD_BITS: u32 = 0x7fba_dbad;

/// Byte `i` of a buffer filled with the guard pattern.
fn guard_byte(i: usize) -> u8 {
    GUARD_BITS.to_le_bytes()[i % 4]
}

impl Elem {
    /// The value stored for `x` (FP16 rounds to nearest even; FP32 and FP64 are exact).
    pub fn store(self, x: f32) -> f64 {
        match self {
            Elem::F16 => half::f16::from_f32(x).to_f64(),
            Elem::Bf16 => half::bf16::from_f32(x).to_f64(),
            Elem::F32 | Elem::F64 => x as f64,
            Elem::E4m3 => e4m3_to_f32(f32_to_e4m3(x)) as f64,
        }
    }

    /// `host` stored as this element type, little-endian, into `out` (exactly its size).
    fn encode_into(self, host: &[f32], out: &mut [u8]) {
        let w = self.bytes();
        // One arm per type, so that each loop is a plain conversion the compiler vectorizes.
        let chunks = out.chunks_exact_mut(w).zip(host);
        match self {
            Elem::F16 => chunks.for_each(|(o, &x)| o.copy_from_slice(&half::f16::from_f32(x).to_le_bytes())),
            Elem::Bf16 => chunks.for_each(|(o, &x)| o.copy_from_slice(&half::bf16::from_f32(x).to_le_bytes())),
            Elem::F32 => chunks.for_each(|(o, &x)| o.copy_from_slice(&x.to_le_bytes())),
            Elem::F64 => chunks.for_each(|(o, &x)| o.copy_from_slice(&(x as f64).to_le_bytes())),
            Elem::E4m3 => chunks.for_each(|(o, &x)| o[0] = f32_to_e4m3(x)),
        }
    }

    fn decode(self, b: &[u8]) -> f64 {
        match self {
            Elem::F16 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
            Elem::Bf16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f64(),
            Elem::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Elem::F64 => f64::from_le_bytes(b.try_into().expect("8 bytes")),
            Elem::E4m3 => e4m3_to_f32(b[0]) as f64,
        }
    }
}

/// Checks that A, B and C are stored as `p` says (A and B in its input type, C in its output type).
pub fn check_storage(p: Precision, a: &DeviceMatrix, b: &DeviceMatrix, c: &DeviceMatrix) -> Result<()> {
    if a.elem != p.input() || b.elem != p.input() || c.elem != p.output() {
        return Err(Error::BadInput(format!("buffers are not stored as {p} expects")));
    }
    Ok(())
}

impl DeviceMatrix {
    /// `host` on the GPU as FP32.
    pub fn from_host(gpu: &Gpu, host: &[f32]) -> Result<Self> {
        Self::guarded(gpu, host, Elem::F32, 0)
    }

    /// `host` on the GPU stored as `elem`, with `guard` sentinel elements on each side.
    pub fn guarded(gpu: &Gpu, host: &[f32], elem: Elem, guard: usize) -> Result<Self> {
        let total = (host.len() + 2 * guard) * elem.bytes();
        let data = alloc(gpu, total)?;
        if total > 0 {
            let w = elem.bytes();
            let mut bytes = vec![0u8; total];
            let (front, rest) = bytes.split_at_mut(guard * w);
            let (body, back) = rest.split_at_mut(host.len() * w);
            front.iter_mut().enumerate().for_each(|(i, b)| *b = guard_byte(i));
            elem.encode_into(host, body);
            let after = (guard + host.len()) * w;
            back.iter_mut().enumerate().for_each(|(i, b)| *b = guard_byte(after + i));
            gpu.upload(&bytes, data.device_ptr(&gpu.stream).0)?;
        }
        Ok(DeviceMatrix { data, len: host.len(), guard, elem, scales: None })
    }

    /// A matrix of `len` elements whose contents are whatever the allocation held: for outputs
    /// of a product with beta = 0, which never reads them.
    pub fn uninit(gpu: &Gpu, len: usize, elem: Elem) -> Result<Self> {
        Ok(DeviceMatrix { data: alloc(gpu, len * elem.bytes())?, len, guard: 0, elem, scales: None })
    }

    /// The matrix, each element widened to f64 (exact for every element type).
    pub fn download(&self, gpu: &Gpu) -> Result<Vec<f64>> {
        let w = self.elem.bytes();
        let mut bytes = vec![0u8; self.len * w];
        if self.len > 0 {
            gpu.download(self.ptr(gpu), &mut bytes)?;
        }
        Ok(bytes.chunks_exact(w).map(|b| self.elem.decode(b)).collect())
    }

    /// How many guard elements before and after the matrix no longer hold the sentinel. Reads
    /// the two guard zones alone.
    pub fn guard_damage(&self, gpu: &Gpu) -> Result<(usize, usize)> {
        if self.guard == 0 {
            return Ok((0, 0));
        }
        let w = self.elem.bytes();
        let (zone, after) = (self.guard * w, (self.guard + self.len) * w);
        let mut bytes = vec![0u8; zone];
        // An element is damaged when any of its bytes differs from the pattern at its place.
        let mut bad = |from: usize| -> Result<usize> {
            gpu.download(self.data.device_ptr(&gpu.stream).0 + from as u64, &mut bytes)?;
            Ok((0..self.guard).filter(|e| (e * w..(e + 1) * w).any(|i| bytes[i] != guard_byte(from + i))).count())
        };
        Ok((bad(0)?, bad(after)?))
    }

    /// A copy on the device with `guard` sentinel elements on each side: the bytes
    /// [`DeviceMatrix::guarded`] makes of the values this matrix holds, and a copy of its scales
    /// (a kernel that writes the copy's cannot reach the ones this matrix shares).
    pub fn guarded_copy(&self, gpu: &Gpu, guard: usize) -> Result<Self> {
        let w = self.elem.bytes();
        let (zone, body) = (guard * w, self.len * w);
        let mut data = alloc(gpu, 2 * zone + body)?;
        if zone > 0 {
            let at = data.device_ptr(&gpu.stream).0;
            let pattern = |from: usize| (from..from + zone).map(guard_byte).collect::<Vec<u8>>();
            gpu.upload(&pattern(0), at)?;
            gpu.upload(&pattern(zone + body), at + (zone + body) as u64)?;
        }
        if body > 0 {
            let from = self.guard * w;
            gpu.stream.memcpy_dtod(&self.data.slice(from..from + body), &mut data.slice_mut(zone..zone + body))?;
        }
        let scales = match &self.scales {
            Some(s) => {
                let mut copy = alloc(gpu, s.len())?;
                gpu.stream.memcpy_dtod(s, &mut copy)?;
                Some(copy)
            }
            None => None,
        };
        Ok(DeviceMatrix { data, len: self.len, guard, elem: self.elem, scales })
    }

    /// The matrix's bytes as stored (guard zones left out), then its scales' bytes: what a
    /// kernel must leave as it found them.
    pub fn bytes(&self, gpu: &Gpu) -> Result<Vec<u8>> {
        let body = self.len * self.elem.bytes();
        let scales = self.scales.as_ref().map_or(0, |s| s.len());
        let mut bytes = vec![0u8; body + scales];
        if body > 0 {
            gpu.download(self.ptr(gpu), &mut bytes[..body])?;
        }
        if scales > 0 {
            gpu.download(self.scales_ptr(gpu), &mut bytes[body..])?;
        }
        Ok(bytes)
    }

    /// The device address of an FP8 matrix's scales (0 for a matrix without).
    pub fn scales_ptr(&self, gpu: &Gpu) -> u64 {
        self.scales.as_ref().map_or(0, |s| s.device_ptr(&gpu.stream).0)
    }

    /// The raw device address of the first element, passed to kernels and cuBLAS.
    pub fn ptr(&self, gpu: &Gpu) -> u64 {
        self.data.device_ptr(&gpu.stream).0 + (self.elem.bytes() * self.guard) as u64
    }
}

pub(crate) fn alloc(gpu: &Gpu, bytes: usize) -> Result<CudaSlice<u8>> {
    // SAFETY: every byte is written (upload or kernel) before it is read back.
    unsafe { gpu.stream.alloc::<u8>(bytes.max(1)) }
        .map_err(|e| Error::Cuda(format!("cannot allocate {:.1} MiB on the GPU: {e}", bytes as f64 / (1 << 20) as f64)))
}
