//! cuBLASLt through dynamic loading (libloading): dense matrix products on the tensor cores for
//! `kernelab ceilings`, with no link-time dependency on the CUDA toolkit. The library is
//! looked up as `$KERNELAB_CUBLASLT`, then `libcublasLt.so.13`, `.12`, `.11` and `.so`.

use crate::error::{Error, Result};
use crate::gpu::GemmType;
use std::ffi::c_void;

type Status = i32;
type Handle = *mut c_void;
type Desc = *mut c_void;
type Layout = *mut c_void;
type Pref = *mut c_void;

/// `cublasLtMatmulHeuristicResult_t`: the algorithm (8 × u64), workspace size, state, waves
/// count and four reserved ints.
#[repr(C)]
#[derive(Clone, Copy)]
struct Heuristic {
    algo: [u64; 8],
    workspace: usize,
    state: Status,
    waves: f32,
    reserved: [i32; 4],
}

// cudaDataType_t and cublasComputeType_t values from library_types.h and cublas_api.h.
const CUDA_R_32F: i32 = 0;
const CUDA_R_16F: i32 = 2;
const CUDA_R_16BF: i32 = 14;
const CUDA_R_8F_E4M3: i32 = 28;
const CUBLAS_COMPUTE_32F: i32 = 68;
// cublasLtMatmulDescAttributes_t and cublasLtMatmulPreferenceAttributes_t.
const DESC_TRANSA: i32 = 3;
const PREF_MAX_WORKSPACE_BYTES: i32 = 1;
const CUBLAS_OP_T: i32 = 1;

/// Workspace given to cuBLASLt, bytes.
pub(crate) const WORKSPACE: usize = 32 << 20;

type FnCreate = unsafe extern "C" fn(*mut Handle) -> Status;
type FnDescCreate = unsafe extern "C" fn(*mut Desc, i32, i32) -> Status;
type FnDescSet = unsafe extern "C" fn(Desc, i32, *const c_void, usize) -> Status;
type FnLayoutCreate = unsafe extern "C" fn(*mut Layout, i32, u64, u64, i64) -> Status;
type FnPrefCreate = unsafe extern "C" fn(*mut Pref) -> Status;
type FnPrefSet = unsafe extern "C" fn(Pref, i32, *const c_void, usize) -> Status;
type FnHeuristic = unsafe extern "C" fn(
    Handle,
    Desc,
    Layout,
    Layout,
    Layout,
    Layout,
    Pref,
    i32,
    *mut Heuristic,
    *mut i32,
) -> Status;
type FnMatmul = unsafe extern "C" fn(
    Handle,
    Desc,
    *const c_void,
    *const c_void,
    Layout,
    *const c_void,
    Layout,
    *const c_void,
    *const c_void,
    Layout,
    *mut c_void,
    Layout,
    *const c_void,
    *mut c_void,
    usize,
    *mut c_void,
) -> Status;

/// The loaded library and a handle.
pub(crate) struct CublasLt {
    // Kept alive for the function pointers below.
    _lib: libloading::Library,
    handle: Handle,
    desc_create: FnDescCreate,
    desc_set: FnDescSet,
    layout_create: FnLayoutCreate,
    pref_create: FnPrefCreate,
    pref_set: FnPrefSet,
    heuristic: FnHeuristic,
    matmul: FnMatmul,
}

/// A planned product: descriptors, algorithm and device buffers.
pub(crate) struct Plan {
    desc: Desc,
    layouts: [Layout; 3],
    algo: [u64; 8],
    /// Device pointers of A, B, D (C = D, β = 0) and the workspace.
    pub ptrs: [u64; 4],
}

fn check(what: &str, s: Status) -> Result<()> {
    if s == 0 {
        Ok(())
    } else {
        Err(Error::gpu(
            format!("cuBLASLt {what}"),
            format!("status {s}"),
        ))
    }
}

impl CublasLt {
    /// Loads cuBLASLt and creates a handle (on the current CUDA context).
    pub(crate) fn open() -> Result<CublasLt> {
        let mut names: Vec<String> = std::env::var("KERNELAB_CUBLASLT").into_iter().collect();
        names.extend(
            [
                "libcublasLt.so.13",
                "libcublasLt.so.12",
                "libcublasLt.so.11",
                "libcublasLt.so",
            ]
            .map(String::from),
        );
        // SAFETY: loading cuBLASLt runs its initialisers, as linking it would; the library is
        // kept in the struct for as long as its function pointers are.
        #[allow(unsafe_code)]
        let lib = names
            .iter()
            .find_map(|n| unsafe { libloading::Library::new(n) }.ok())
            .ok_or(Error::NoRuntime {
                what: "cuBLASLt (set KERNELAB_CUBLASLT to its path)",
                library: "libcublasLt.so",
            })?;
        // SAFETY: each symbol is cuBLASLt's exported C function of the signature written in
        // its type alias above (cublasLt.h, CUDA 11 to 13); the pointers are copied out while
        // `lib` lives and are used only while the struct (which keeps `lib`) lives.
        #[allow(unsafe_code)]
        unsafe {
            fn sym<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T> {
                // SAFETY: see the caller.
                let s: libloading::Symbol<T> = unsafe { lib.get(name.as_bytes()) }
                    .map_err(|e| Error::gpu("cuBLASLt", format!("{name}: {e}")))?;
                Ok(*s)
            }
            let create: FnCreate = sym(&lib, "cublasLtCreate")?;
            let mut handle = std::ptr::null_mut();
            check("create", create(&mut handle))?;
            Ok(CublasLt {
                desc_create: sym(&lib, "cublasLtMatmulDescCreate")?,
                desc_set: sym(&lib, "cublasLtMatmulDescSetAttribute")?,
                layout_create: sym(&lib, "cublasLtMatrixLayoutCreate")?,
                pref_create: sym(&lib, "cublasLtMatmulPreferenceCreate")?,
                pref_set: sym(&lib, "cublasLtMatmulPreferenceSetAttribute")?,
                heuristic: sym(&lib, "cublasLtMatmulAlgoGetHeuristic")?,
                matmul: sym(&lib, "cublasLtMatmul")?,
                handle,
                _lib: lib,
            })
        }
    }

    /// Plans D(m×n) = op(A)ᵀ… : A is k×m transposed (the layout FP8 needs), B k×n, D m×n, all
    /// column-major, on buffers `ptrs` = [A, B, D, workspace] the caller allocated.
    pub(crate) fn plan(
        &self,
        ty: GemmType,
        m: u64,
        n: u64,
        k: u64,
        ptrs: [u64; 4],
    ) -> Result<Plan> {
        let (ab, d) = match ty {
            GemmType::Bf16 => (CUDA_R_16BF, CUDA_R_16BF),
            GemmType::Fp16 => (CUDA_R_16F, CUDA_R_16F),
            GemmType::Fp8 => (CUDA_R_8F_E4M3, CUDA_R_16BF),
        };
        let ld = |x: u64| i64::try_from(x).map_err(|_| Error::Internal("size".into()));
        // SAFETY: the out-pointers point at locals; attribute buffers are locals of the size
        // passed; the handle is live; heuristic results are written into an array of the count
        // requested.
        #[allow(unsafe_code)]
        unsafe {
            let mut desc = std::ptr::null_mut();
            check(
                "matmul descriptor",
                (self.desc_create)(&mut desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
            )?;
            let t: i32 = CUBLAS_OP_T;
            check(
                "transpose A",
                (self.desc_set)(desc, DESC_TRANSA, (&t as *const i32).cast(), 4),
            )?;
            let mut la = std::ptr::null_mut();
            let mut lb = std::ptr::null_mut();
            let mut ldd = std::ptr::null_mut();
            check("layout A", (self.layout_create)(&mut la, ab, k, m, ld(k)?))?;
            check("layout B", (self.layout_create)(&mut lb, ab, k, n, ld(k)?))?;
            check("layout D", (self.layout_create)(&mut ldd, d, m, n, ld(m)?))?;
            let mut pref = std::ptr::null_mut();
            check("preference", (self.pref_create)(&mut pref))?;
            let ws: u64 = WORKSPACE as u64;
            check(
                "workspace preference",
                (self.pref_set)(
                    pref,
                    PREF_MAX_WORKSPACE_BYTES,
                    (&ws as *const u64).cast(),
                    8,
                ),
            )?;
            let mut h = [Heuristic {
                algo: [0; 8],
                workspace: 0,
                state: 0,
                waves: 0.0,
                reserved: [0; 4],
            }];
            let mut found = 0i32;
            check(
                "algorithm heuristic",
                (self.heuristic)(
                    self.handle,
                    desc,
                    la,
                    lb,
                    ldd,
                    ldd,
                    pref,
                    1,
                    h.as_mut_ptr(),
                    &mut found,
                ),
            )?;
            if found < 1 {
                return Err(Error::gpu(
                    "cuBLASLt algorithm heuristic",
                    "no algorithm for this product",
                ));
            }
            Ok(Plan {
                desc,
                layouts: [la, lb, ldd],
                algo: h[0].algo,
                ptrs,
            })
        }
    }

    /// Launches a planned product on `stream`.
    pub(crate) fn launch(&self, p: &Plan, stream: *mut c_void) -> Result<()> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let [a, b, d, ws] = p.ptrs;
        let [la, lb, ld] = p.layouts;
        // SAFETY: the descriptors and algorithm come from `plan`; the device pointers were
        // allocated by the caller for these layouts (A k×m, B k×n, D m×n) and a workspace of
        // `WORKSPACE` bytes; α and β outlive the call (host pointer mode).
        #[allow(unsafe_code)]
        let s = unsafe {
            (self.matmul)(
                self.handle,
                p.desc,
                (&alpha as *const f32).cast(),
                a as *const c_void,
                la,
                b as *const c_void,
                lb,
                (&beta as *const f32).cast(),
                d as *const c_void,
                ld,
                d as *mut c_void,
                ld,
                p.algo.as_ptr().cast(),
                ws as *mut c_void,
                WORKSPACE,
                stream,
            )
        };
        check("matmul", s)
    }
}
