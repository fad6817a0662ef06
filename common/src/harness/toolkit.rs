//! Where the CUDA toolkit's run-time compiler and headers are. The harness loads NVRTC by its
//! name (the CUDA toolkit's `lib64` on the loader path), and, where that fails, finds the one
//! `pip` installs (`nvidia-cuda-nvrtc`, in `site-packages/nvidia/cu13/lib` of the user's
//! Python, a virtual environment or this workspace's) and loads it by its path first; the
//! headers then come from beside it (`../include`). So a machine without CUDA needs one
//! command ([`PIP_INSTALL`]) and no paths.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The one command that gives a machine without CUDA everything the harness compiles with.
pub const PIP_INSTALL: &str = "python3 -m pip install --user nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-runtime==13.0.96 \
                               nvidia-cuda-cccl==13.0.85 nvidia-cuda-crt==13.0.88";

/// The soname cudarc asks for (CUDA 13).
const NVRTC: &str = "libnvrtc.so.13";

/// `python3.*/site-packages` (and Debian's `dist-packages`) folders below `lib`.
fn site_packages(lib: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(lib).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with("python3") {
            out.extend(["site-packages", "dist-packages"].iter().map(|s| entry.path().join(s)));
        }
    }
    out
}

/// Where pip may have put `nvidia/cu13`: an active virtual environment (or conda environment), the
/// user's site (`pip install --user`), pyenv's Pythons, the system's, and this workspace's
/// `.venv*` folders.
fn pip_roots() -> Vec<PathBuf> {
    let mut libs: Vec<PathBuf> = Vec::new();
    for active in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        libs.extend(std::env::var_os(active).map(|v| PathBuf::from(v).join("lib")));
    }
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        libs.push(home.join(".local/lib"));
        for version in std::fs::read_dir(home.join(".pyenv/versions")).into_iter().flatten().flatten() {
            libs.push(version.path().join("lib"));
        }
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf);
    for entry in workspace.iter().flat_map(|w| std::fs::read_dir(w).into_iter().flatten().flatten()) {
        if entry.file_name().to_string_lossy().starts_with(".venv") {
            libs.push(entry.path().join("lib"));
        }
    }
    libs.extend(["/usr/local/lib", "/usr/lib"].map(PathBuf::from));
    let mut roots: Vec<PathBuf> = libs.iter().flat_map(|l| site_packages(l)).map(|s| s.join("nvidia/cu13")).collect();
    roots.retain(|r| r.join("lib").join(NVRTC).is_file());
    roots
}

/// Loads NVRTC by its path when the loader cannot find it by name, once per process; returns
/// the folder it was loaded from, if it came from a pip install.
fn preload() -> Option<&'static PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let by_name = CString::new(NVRTC).ok()?;
            // SAFETY: dlopen with a valid C string; a handle that is found is left open (the
            // library stays loaded for cudarc, which opens it by the same soname).
            if !unsafe { libc::dlopen(by_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) }.is_null() {
                return None;
            }
            // NVRTC opens its builtins library by name too: load it first, by path.
            let open = |path: &Path| {
                let c = CString::new(path.to_string_lossy().into_owned()).ok();
                // SAFETY: as above, by path.
                c.is_some_and(|c| !unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) }.is_null())
            };
            for root in pip_roots() {
                let lib = root.join("lib");
                for entry in std::fs::read_dir(&lib).into_iter().flatten().flatten() {
                    if entry.file_name().to_string_lossy().starts_with("libnvrtc-builtins.so") {
                        open(&entry.path());
                    }
                }
                if open(&lib.join(NVRTC)) {
                    return Some(root);
                }
            }
            None
        })
        .as_ref()
}

/// Whether NVRTC can be loaded (by name, or from a pip install).
pub fn nvrtc_present() -> bool {
    preload();
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// The folder of the NVRTC this process loads, found as [`nvrtc_present`] finds it: what a
/// process started with a cleared environment (the lab grader's children) needs on its loader
/// path to load the same one.
pub fn nvrtc_dir() -> Option<PathBuf> {
    if nvrtc_present() { loaded_nvrtc_dir() } else { None }
}

/// The folder of the NVRTC library this process loaded, if any.
fn loaded_nvrtc_dir() -> Option<PathBuf> {
    let name = CString::new(NVRTC).ok()?;
    let symbol = CString::new("nvrtcVersion").ok()?;
    // SAFETY: RTLD_NOLOAD only returns a library already loaded; dladdr fills a plain struct.
    unsafe {
        let handle = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if handle.is_null() {
            return None;
        }
        let f = libc::dlsym(handle, symbol.as_ptr());
        let mut info: libc::Dl_info = std::mem::zeroed();
        if f.is_null() || libc::dladdr(f, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        let file = std::ffi::CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned();
        Path::new(&file).parent().map(Path::to_path_buf)
    }
}

/// Environment variable naming the CUDA include folder explicitly (the folder with `mma.h`).
pub const INCLUDE_ENV: &str = "SGEMM_CUDA_INCLUDE";

/// The CUDA include folders (with `cccl/` on CUDA 13): from `SGEMM_CUDA_INCLUDE`, `CUDA_HOME`,
/// `CUDA_PATH`, beside the NVRTC that was loaded, or /usr/local/cuda, first found wins. Kernels
/// that include only the ladder's own headers need none of them.
pub fn cuda_include_dirs() -> Vec<PathBuf> {
    nvrtc_present();
    let beside_nvrtc = loaded_nvrtc_dir().map(|lib| lib.join("../include"));
    let candidates = std::env::var_os(INCLUDE_ENV)
        .map(PathBuf::from)
        .into_iter()
        .chain(["CUDA_HOME", "CUDA_PATH"].iter().filter_map(std::env::var_os).map(|p| PathBuf::from(p).join("include")))
        .chain(beside_nvrtc)
        .chain(std::iter::once(PathBuf::from("/usr/local/cuda/include")));
    for dir in candidates {
        if dir.join("cuda_fp16.h").is_file() || dir.join("mma.h").is_file() {
            let dir = dir.canonicalize().unwrap_or(dir);
            let cccl = dir.join("cccl");
            return if cccl.is_dir() { vec![dir, cccl] } else { vec![dir] };
        }
    }
    Vec::new()
}
