//! Kernel build: a step's `.cu` through NVRTC to a CUBIN for one exact GPU architecture,
//! with the step's compile-time defines and the shared headers of `common/include`.

use crate::harness::toolkit::nvrtc_present;
pub use crate::harness::toolkit::{INCLUDE_ENV, cuda_include_dirs};
use crate::{Error, Result};
use cudarc::nvrtc::sys as nv;
use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// A device header a kernel may `#include "NAME"`: embedded at build time (binaries run without
/// the source tree), served to NVRTC by name, hashed with every kernel that includes it, and found
/// at `path` in the workspace (`cargo xtask rehash` reads its older texts there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    pub name: &'static str,
    pub path: &'static str,
    pub text: &'static str,
}

macro_rules! shared {
    ($name:literal) => {
        Header {
            name: $name,
            path: concat!("common/include/", $name),
            text: include_str!(concat!("../../include/", $name)),
        }
    };
}

/// The shared device headers (`common/include`), which every kernel may include.
pub const HEADERS: &[Header] =
    &[shared!("sgemm.cuh"), shared!("precision.cuh"), shared!("tensor.cuh"), shared!("hopper.cuh")];

/// A header of a step crate, `src/NAME`: an algorithm a rung introduces and later rungs include
/// (step 11's schedule, step 12's epilogue), so that each stays in the crate of its rung.
#[macro_export]
macro_rules! step_header {
    ($name:literal) => {
        $crate::harness::compile::Header {
            name: $name,
            path: concat!(env!("CARGO_PKG_NAME"), "/src/", $name),
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/", $name)),
        }
    };
}

/// A kernel's source text, the name it is reported under (compile errors say `name(line)`), and
/// the headers of step crates it may include besides the shared ones ([`HEADERS`]): its own
/// step's and those of the earlier steps it builds on. They travel with the source rather than
/// live in a list here, because `common` knows no step crate: a step passes its headers with its
/// kernel, and a text put in the kernel's place (`--kernel`, an experiment, a submission:
/// [`Self::from_file_over`], [`Self::with_code`]) keeps them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelSource {
    pub name: Cow<'static, str>,
    pub code: Cow<'static, str>,
    pub headers: &'static [Header],
}

/// Embeds a crate's kernel file: `kernel_source!("src/kernel.cu")`, reported as
/// `step01-naive/src/kernel.cu`; `kernel_source!("src/kernel.cu", &[HEADER, ...])` with the
/// headers of step crates it includes.
#[macro_export]
macro_rules! kernel_source {
    ($rel:literal $(, $headers:expr)?) => {
        $crate::harness::compile::KernelSource {
            name: ::std::borrow::Cow::Borrowed(concat!(env!("CARGO_PKG_NAME"), "/", $rel)),
            code: ::std::borrow::Cow::Borrowed(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $rel))),
            headers: $crate::__last!(&[] $(, $headers)?),
        }
    };
}

impl KernelSource {
    /// A kernel file, or an experiment given as a diff against `base` (a `.patch`,
    /// [`crate::harness::patch`]), in the place of `base`: the `--kernel` option of the tools.
    pub fn from_file_over(path: &Path, base: &KernelSource) -> Result<Self> {
        let what = if path.extension().is_some_and(|e| e == "patch") { "experiment" } else { "kernel file" };
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Io(format!("cannot read {what} {}: {e}", path.display())))?;
        let code = if what == "experiment" {
            crate::harness::patch::apply(&base.code, &text)
                .map_err(|e| Error::BadInput(format!("{} does not apply to {}: {e}", path.display(), base.name)))?
        } else {
            text
        };
        Ok(base.with_code(path.display().to_string(), code))
    }

    /// Another text in this kernel's place (a submission), with the same headers.
    pub fn with_code(&self, name: impl Into<Cow<'static, str>>, code: impl Into<Cow<'static, str>>) -> Self {
        KernelSource { name: name.into(), code: code.into(), headers: self.headers }
    }

    /// Every header served to NVRTC with this kernel, as (name, text): the shared ones, then its
    /// steps'.
    pub fn served(&self) -> Vec<(&'static str, &'static str)> {
        HEADERS.iter().chain(self.headers).map(|h| (h.name, h.text)).collect()
    }

    /// A stable 64-bit FNV-1a hash of the kernel and the headers it includes, as 16 hex digits:
    /// recorded results name the exact source they came from.
    pub fn hash(&self) -> String {
        self.hash_with(&self.served())
    }

    /// [`Self::hash`] with other texts of the headers (as of an older commit): the kernel, then
    /// each header it includes, directly or through another header, in the order of `headers`.
    pub fn hash_with(&self, headers: &[(&str, &str)]) -> String {
        hash_code(self.code.as_bytes(), headers)
    }
}

/// [`KernelSource::hash`] of a kernel's bytes: the kernel, then each header it includes, directly
/// or through another header, in the order of `headers`.
fn hash_code(code: &[u8], headers: &[(&str, &str)]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(code);
    let includes = |text: &[u8], name: &str| {
        let directive = format!("#include \"{name}\"");
        text.windows(directive.len()).any(|w| w == directive.as_bytes())
    };
    let mut included = vec![false; headers.len()];
    let mut texts = vec![code];
    while let Some(text) = texts.pop() {
        for (i, (name, header)) in headers.iter().enumerate() {
            if !included[i] && includes(text, name) {
                included[i] = true;
                texts.push(header.as_bytes());
            }
        }
    }
    for ((name, text), _) in headers.iter().zip(included).filter(|(_, i)| *i) {
        eat(name.as_bytes());
        eat(text.as_bytes());
    }
    format!("{h:016x}")
}

/// What ptxas reports about one compiled kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    pub registers: u32,
    pub smem_bytes: u32,
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
}

impl Resources {
    pub fn spills(&self) -> u32 {
        self.spill_store_bytes + self.spill_load_bytes
    }

    /// Reads the `--ptxas-options=-v` lines of an NVRTC log.
    pub fn parse(log: &str) -> Resources {
        // The number right before `unit` (e.g. "38 registers"), wherever it stands in the log.
        let before = |unit: &str| -> u32 {
            log.lines()
                .flat_map(|line| {
                    let words: Vec<&str> = line.split([' ', ',']).filter(|w| !w.is_empty()).collect();
                    (1..words.len())
                        .filter(|&i| unit.split(' ').eq(words[i..].iter().take(unit.split(' ').count()).copied()))
                        .filter_map(|i| words[i - 1].parse::<u32>().ok())
                        .collect::<Vec<_>>()
                })
                .max()
                .unwrap_or(0)
        };
        Resources {
            registers: before("registers"),
            smem_bytes: before("bytes smem"),
            stack_bytes: before("bytes stack frame"),
            spill_store_bytes: before("bytes spill stores"),
            spill_load_bytes: before("bytes spill loads"),
        }
    }
}

/// A kernel compiled for one architecture.
#[derive(Debug)]
pub struct Compiled {
    pub cubin: Vec<u8>,
    pub log: String,
    pub resources: Resources,
    pub arch: String,
}

/// NVRTC's version, e.g. (13, 0).
pub fn nvrtc_version() -> Result<(i32, i32)> {
    if !nvrtc_present() {
        return Err(Error::NoNvrtc);
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints.
    unsafe { nv::nvrtcVersion(&mut major, &mut minor) }.result()?;
    Ok((major, minor))
}

/// NVRTC consults the CUDA compute cache (`~/.nv/ComputeCache`): on a hit it returns the
/// CUBIN without running ptxas, so the log has no register and spill report. The harness's
/// programs call this first thing in `main` (through `cli::program_start`, before any thread
/// starts) so every compile reports its resources; a user's own `CUDA_CACHE_DISABLE` setting wins.
pub fn disable_compute_cache() {
    if std::env::var_os("CUDA_CACHE_DISABLE").is_none() {
        // SAFETY: called at the start of a program's main, while it has a single thread.
        unsafe { std::env::set_var("CUDA_CACHE_DISABLE", "1") };
    }
}

type CacheKey = (KernelSource, Vec<(String, i64)>, String);

/// Environment variable naming a folder where compiled kernels are kept between processes (the
/// grader's children compile a submission once: the first writes, the others read).
pub const CUBIN_CACHE_ENV: &str = "SGEMM_CUBIN_CACHE";

/// The file a compile of `code` is kept in under [`CUBIN_CACHE_ENV`]: named by a hash of what it
/// depends on.
fn disk_cache_file(code: &[u8], key: &CacheKey) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os(CUBIN_CACHE_ENV)?;
    let (source, defines, arch) = key;
    let mut text = format!("{}{arch}", hash_code(code, &source.served()));
    defines.iter().for_each(|(n, v)| text += &format!(" {n}={v}"));
    let name = KernelSource { name: "".into(), code: text.into(), headers: &[] }.hash();
    Some(Path::new(&dir).join(format!("{name}.cubin")))
}

/// Compiles `source` for `arch` (e.g. "sm_90") with `-D NAME=VALUE` for each define.
/// Results are cached per process: the test suite and the benches compile each variant once.
pub fn compile(source: &KernelSource, defines: &[(&str, i64)], arch: &str) -> Result<Arc<Compiled>> {
    compile_bytes(source, source.code.as_bytes(), defines, arch)
}

/// A kernel file of the harness itself (the timing gate, the FP8 quantization) compiled for `gpu`
/// and loaded, once per process, GPU and file.
pub fn helper_module(
    gpu: &crate::harness::device::Gpu,
    name: &'static str,
    code: &'static str,
) -> Result<Arc<cudarc::driver::CudaModule>> {
    type Loaded = Vec<(usize, &'static str, Arc<cudarc::driver::CudaModule>)>;
    static MODULES: OnceLock<Mutex<Loaded>> = OnceLock::new();
    let mut all = MODULES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, _, m)) = all.iter().find(|(ordinal, n, _)| *ordinal == gpu.ordinal && *n == name) {
        return Ok(m.clone());
    }
    let source = KernelSource { name: name.into(), code: code.into(), headers: &[] };
    let compiled = compile(&source, &[], &gpu.arch())?;
    let module = gpu.ctx.load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin.clone()))?;
    all.push((gpu.ordinal, name, module.clone()));
    Ok(module)
}

/// [`compile`] of `code`, the bytes NVRTC reads, which need not be UTF-8 (a lab submission with
/// a Latin-1 comment); `source` names them and is what later compiles of the same kernel ask for
/// (its text stands for the bytes: a lossy reading of them).
pub fn compile_bytes(source: &KernelSource, code: &[u8], defines: &[(&str, i64)], arch: &str) -> Result<Arc<Compiled>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Arc<Compiled>>>> = OnceLock::new();
    let key: CacheKey = (source.clone(), defines.iter().map(|(n, v)| (n.to_string(), *v)).collect(), arch.to_string());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(hit.clone());
    }
    let file = disk_cache_file(code, &key);
    // A kernel another process compiled: its CUBIN and log (the log holds the ptxas report).
    if let Some(f) = &file {
        if let (Ok(cubin), Ok(log)) = (std::fs::read(f), std::fs::read_to_string(f.with_extension("log"))) {
            let compiled = Arc::new(Compiled { cubin, resources: Resources::parse(&log), log, arch: arch.to_string() });
            cache.lock().unwrap_or_else(|p| p.into_inner()).insert(key, compiled.clone());
            return Ok(compiled);
        }
    }
    let compiled = Arc::new(compile_code(&source.name, code, &source.served(), defines, arch)?);
    if let Some(f) = &file {
        keep_on_disk(f, &compiled);
    }
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(key, compiled.clone());
    Ok(compiled)
}

/// Keeps a compile in the folder the user named, made if it is not there yet (a folder that does
/// not exist would otherwise keep nothing, silently). Best effort: the log first, so that a CUBIN
/// on disk always has its log.
fn keep_on_disk(file: &Path, compiled: &Compiled) {
    let _ = file.parent().map_or(Ok(()), std::fs::create_dir_all);
    let _ =
        std::fs::write(file.with_extension("log"), &compiled.log).and_then(|()| std::fs::write(file, &compiled.cubin));
}

fn cstring(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::BadInput(format!("{what} contains a NUL byte")))
}

/// [`compile`] with these headers served in place of the kernel's (their texts as of an older
/// commit), uncached.
pub fn compile_with_headers(
    source: &KernelSource,
    headers: &[(&str, &str)],
    defines: &[(&str, i64)],
    arch: &str,
) -> Result<Compiled> {
    compile_code(&source.name, source.code.as_bytes(), headers, defines, arch)
}

/// One compile of the bytes `code`, reported as `file`.
fn compile_code(
    file: &str,
    code: &[u8],
    headers: &[(&str, &str)],
    defines: &[(&str, i64)],
    arch: &str,
) -> Result<Compiled> {
    if !nvrtc_present() {
        return Err(Error::NoNvrtc);
    }
    let src = CString::new(code).map_err(|_| Error::BadInput(format!("{file} contains a NUL byte")))?;
    let name = cstring(file, "kernel file name")?;
    let header_texts: Vec<CString> = headers.iter().map(|(n, t)| cstring(t, n)).collect::<Result<_>>()?;
    let header_names: Vec<CString> = headers.iter().map(|(n, _)| cstring(n, n)).collect::<Result<_>>()?;
    let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();

    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "--ptxas-options=-v".to_string(),
        // Line info costs nothing at run time and lets Nsight Compute and compute-sanitizer
        // point at source lines.
        "-lineinfo".to_string(),
        // Functions without __device__ are device code: NVRTC compiles no host code anyway,
        // and a lambda with an `auto` parameter (step 9's K loop, compiled for two tile widths)
        // cannot be annotated.
        "-default-device".to_string(),
    ];
    options.extend(defines.iter().map(|(n, v)| format!("-D{n}={v}")));
    let include_dirs = cuda_include_dirs();
    options.extend(include_dirs.iter().map(|d| format!("--include-path={}", d.display())));
    let option_cs: Vec<CString> = options.iter().map(|o| cstring(o, "NVRTC option")).collect::<Result<_>>()?;
    let option_ptrs: Vec<*const c_char> = option_cs.iter().map(|c| c.as_ptr()).collect();

    let mut prog: nv::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: every pointer outlives the program, which is destroyed below on every path.
    unsafe {
        nv::nvrtcCreateProgram(
            &mut prog,
            src.as_ptr(),
            name.as_ptr(),
            headers.len() as i32,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
        .result()?;
        let status = nv::nvrtcCompileProgram(prog, option_ptrs.len() as i32, option_ptrs.as_ptr());
        let log = program_log(prog);
        let cubin = if status == nv::nvrtcResult::NVRTC_SUCCESS { get_cubin(prog) } else { Ok(Vec::new()) };
        nv::nvrtcDestroyProgram(&mut prog);
        let log = log?;
        if status != nv::nvrtcResult::NVRTC_SUCCESS {
            let mut log = log;
            if let Some(hint) = failure_hint(&log, include_dirs.is_empty()) {
                log.push_str(&hint);
            }
            return Err(Error::Compile { file: file.to_string(), arch: arch.to_string(), log });
        }
        Ok(Compiled { cubin: cubin?, resources: Resources::parse(&log), log, arch: arch.to_string() })
    }
}

/// The most a kernel's static `__shared__` arrays may hold; more needs dynamic shared memory.
const STATIC_SMEM_LIMIT: u32 = 48 * 1024;

/// A line that names the cause where NVRTC's log does not: missing headers, or a kernel that
/// ptxas rejected for its static shared memory (NVRTC 13 then logs the size and no error).
fn failure_hint(log: &str, no_include_dirs: bool) -> Option<String> {
    // NVRTC 12 says "cannot open", NVRTC 13 "could not open".
    let missing = log.contains("cannot open source file") || log.contains("could not open source file");
    if missing && no_include_dirs {
        return Some(format!(
            "\nhint: no CUDA headers were found; install them with `{}` (found beside a pip-installed \
             NVRTC, no paths to set), or set CUDA_HOME to your CUDA toolkit",
            crate::harness::toolkit::PIP_INSTALL
        ));
    }
    let smem = Resources::parse(log).smem_bytes;
    if smem > STATIC_SMEM_LIMIT {
        return Some(format!(
            "\nhint: the kernel's static __shared__ arrays take {smem} bytes, more than the {STATIC_SMEM_LIMIT} \
             a kernel may declare statically; declare `extern __shared__` memory instead and pass its size \
             in the launch (as steps 7-9 do)"
        ));
    }
    // ptxas fails on wgmma outside sm_90a with no error line, only advisories about sm_90a.
    if !log.contains("error") && log.contains("instead of .target 'sm_90'") {
        return Some(
            "\nhint: ptxas names no error, only instructions meant for sm_90a (wgmma, setmaxnreg, multicast \
             TMA): compile for sm_90a, the architecture steps 9-13 name"
                .to_string(),
        );
    }
    None
}

unsafe fn program_log(prog: nv::nvrtcProgram) -> Result<String> {
    let mut size = 0usize;
    // SAFETY: `prog` is a live program (caller).
    unsafe {
        nv::nvrtcGetProgramLogSize(prog, &mut size).result()?;
        let mut buf = vec![0 as c_char; size.max(1)];
        nv::nvrtcGetProgramLog(prog, buf.as_mut_ptr()).result()?;
        Ok(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned())
    }
}

unsafe fn get_cubin(prog: nv::nvrtcProgram) -> Result<Vec<u8>> {
    let mut size = 0usize;
    // SAFETY: `prog` compiled successfully (caller).
    unsafe {
        nv::nvrtcGetCUBINSize(prog, &mut size).result()?;
        let mut buf = vec![0u8; size];
        nv::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char).result()?;
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTXAS_LOG: &str = "ptxas info    : 0 bytes gmem\n\
        ptxas info    : Compiling entry function 'sgemm' for 'sm_90'\n\
        ptxas info    : Function properties for sgemm\n    \
        8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
        ptxas info    : Used 38 registers, used 1 barriers, 8192 bytes smem, 400 bytes cmem[0]\n";

    #[test]
    fn parses_ptxas_report() {
        let r = Resources::parse(PTXAS_LOG);
        assert_eq!(
            r,
            Resources { registers: 38, smem_bytes: 8192, stack_bytes: 8, spill_store_bytes: 4, spill_load_bytes: 12 }
        );
        assert_eq!(r.spills(), 16);
    }

    #[test]
    fn the_cubin_cache_makes_its_folder() {
        let dir = std::env::temp_dir().join(format!("sgemm-cubins-{}", std::process::id())).join("new");
        let _ = std::fs::remove_dir_all(dir.parent().unwrap());
        let compiled = Compiled {
            cubin: vec![1, 2, 3],
            log: PTXAS_LOG.into(),
            resources: Resources::parse(PTXAS_LOG),
            arch: "sm_90".into(),
        };
        keep_on_disk(&dir.join("k.cubin"), &compiled);
        assert_eq!(std::fs::read(dir.join("k.cubin")).unwrap(), vec![1, 2, 3]);
        assert_eq!(std::fs::read_to_string(dir.join("k.log")).unwrap(), PTXAS_LOG);
        let _ = std::fs::remove_dir_all(dir.parent().unwrap());
    }

    #[test]
    fn names_the_cause_nvrtc_leaves_out() {
        let too_big = "ptxas info    : Used 128 registers, used 1 barriers, 49920 bytes smem\n";
        assert!(failure_hint(too_big, false).unwrap().contains("49920 bytes"));
        assert!(failure_hint(PTXAS_LOG, false).is_none());
        let headers = "kernel.cu(1): catastrophic error: could not open source file \"mma.h\"";
        assert!(failure_hint(headers, true).unwrap().contains("no CUDA headers"));
        assert!(failure_hint(headers, false).is_none());
        let hopper = "ptxas application ptx input, line 5944; warning : Advisory: '.multicast::cluster' modifier on \
            instruction 'cp.async.bulk{.tensor}' should be used on .target 'sm_90a' instead of .target 'sm_90'\n";
        assert!(failure_hint(hopper, false).unwrap().contains("compile for sm_90a"));
    }

    #[test]
    fn hash_changes_with_source() {
        let a = KernelSource { name: "a.cu".into(), code: "x".into(), headers: &[] };
        let b = a.with_code("a.cu", "y");
        assert_ne!(a.hash(), b.hash());
        assert_eq!(a.hash().len(), 16);
    }

    /// A header included through another counts, one no text includes does not.
    #[test]
    fn hash_follows_nested_includes() {
        let k = KernelSource { name: "k.cu".into(), code: "#include \"a.cuh\"\n".into(), headers: &[] };
        let headers = |b: &'static str| [("a.cuh", "#include \"b.cuh\"\n"), ("b.cuh", b), ("c.cuh", "")];
        assert_ne!(k.hash_with(&headers("1")), k.hash_with(&headers("2")));
        let unused = [("a.cuh", "#include \"b.cuh\"\n"), ("b.cuh", "1"), ("c.cuh", "changed")];
        assert_eq!(k.hash_with(&headers("1")), k.hash_with(&unused));
    }
}
