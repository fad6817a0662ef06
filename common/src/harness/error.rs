//! One error type for the whole harness. Every variant prints as one line that says what
//! is missing or wrong and how to fix it; binaries print it and exit, never panic.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// libcuda could not be loaded: no NVIDIA driver on this machine.
    NoDriver,
    /// The driver loaded but reports no usable GPU (or the one asked for does not exist).
    NoDevice(String),
    /// libnvrtc could not be loaded: no CUDA toolkit (or it is not on the loader path).
    NoNvrtc,
    /// libcublas could not be loaded.
    NoCublas,
    /// The GPU is older than what a kernel needs.
    ArchTooOld { needs: (i32, i32), has: (i32, i32), what: String },
    /// The kernel is built for one architecture's own instructions and this GPU is another.
    WrongArch { needs: (i32, i32), arch: String, has: (i32, i32), what: String },
    /// NVRTC rejected a kernel; `log` holds the compiler's messages with `file:line`.
    Compile { file: String, arch: String, log: String },
    /// A problem the harness refuses to run (bad dimensions, index overflow, grid too large).
    BadInput(String),
    /// A CUDA driver, cuBLAS or NVRTC call failed.
    Cuda(String),
    /// A file could not be read or written.
    Io(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver => write!(
                f,
                "no NVIDIA driver: libcuda.so could not be loaded; install the NVIDIA driver \
                 (https://www.nvidia.com/drivers) or run on a machine with an NVIDIA GPU"
            ),
            Error::NoDevice(why) => write!(f, "no usable NVIDIA GPU: {why}"),
            Error::NoNvrtc => write!(
                f,
                "no NVRTC (libnvrtc.so.13 could not be loaded): install it with `{}` (the harness finds it \
                 there, no paths to set), or install the CUDA 13 toolkit and put its lib64 on LD_LIBRARY_PATH",
                crate::harness::toolkit::PIP_INSTALL
            ),
            Error::NoCublas => write!(
                f,
                "no cuBLAS: libcublas.so could not be loaded; install the CUDA 13 toolkit \
                 and put its lib64 folder on LD_LIBRARY_PATH"
            ),
            Error::ArchTooOld { needs, has, what } => write!(
                f,
                "{what} needs a GPU of compute capability {}.{} or newer; this GPU is {}.{}",
                needs.0, needs.1, has.0, has.1
            ),
            Error::WrongArch { needs, arch, has, what } => write!(
                f,
                "{what} runs only on GPUs of compute capability {}.{} (its kernel uses {arch} instructions); \
                 this GPU is {}.{}: run an earlier step instead",
                needs.0, needs.1, has.0, has.1
            ),
            Error::Compile { file, arch, log } => {
                write!(f, "{file} does not compile for {arch}:\n{}", log.trim_end())
            }
            Error::BadInput(why) => write!(f, "{why}"),
            Error::Cuda(why) => write!(f, "CUDA error: {why}"),
            Error::Io(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// True when the error means "this machine cannot run GPU work at all" (as opposed to a bug).
    pub fn is_missing_gpu(&self) -> bool {
        matches!(self, Error::NoDriver | Error::NoDevice(_) | Error::NoCublas | Error::NoNvrtc)
    }
}

impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Self {
        Error::Cuda(format!("driver: {e}"))
    }
}

impl From<cudarc::cublas::result::CublasError> for Error {
    fn from(e: cudarc::cublas::result::CublasError) -> Self {
        Error::Cuda(format!("cuBLAS: {e:?}"))
    }
}

impl From<cudarc::nvrtc::result::NvrtcError> for Error {
    fn from(e: cudarc::nvrtc::result::NvrtcError) -> Self {
        Error::Cuda(format!("NVRTC: {e:?}"))
    }
}
