//! The HIP backend: `libamdhip64` loaded at run time through `libloading` (no HIP crate binds
//! module loading, events and graphs with dynamic loading, so the dozen entry points used are
//! declared here by hand from `hip_runtime_api.h`).
//!
//! Not run on AMD hardware by this project's CI (no AMD GPU there): what is tested is that the
//! binary builds, that a missing runtime is a clear error, and the shared launcher logic (via
//! the CUDA backend and a host mock).

use crate::error::{Error, Result};
use crate::gpu::{DevicePtr, EventId, EventPool, Geometry, Gpu, GraphId, KernelId, Telemetry};
use libloading::{Library, Symbol};
use std::ffi::{c_char, c_int, c_uint, c_void, CString};

type Handle = *mut c_void;
type HipError = c_int;

/// A HIP device with one stream.
pub struct Hip {
    lib: Library,
    name: String,
    l2: Option<usize>,
    stream: Handle,
    kernels: Vec<Handle>,
    graphs: Vec<Handle>,
    events: EventPool<Handle>,
}

// hipDeviceAttributeL2CacheSize in hip_runtime_api.h (ROCm 6.x enum order).
const HIP_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: c_int = 40;
// hipStreamCaptureModeThreadLocal.
const HIP_STREAM_CAPTURE_MODE_THREAD_LOCAL: c_int = 1;
// hipMemcpyHostToDevice / hipMemcpyDeviceToHost.
const HOST_TO_DEVICE: c_int = 1;
const DEVICE_TO_HOST: c_int = 2;

/// Whether the HIP runtime library loads.
#[allow(unsafe_code)]
pub(crate) fn runtime_present() -> Result<()> {
    // SAFETY: loading the HIP runtime runs its initialisers, as every HIP program does; the
    // handle is dropped straight away.
    let found = ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7"]
        .iter()
        .any(|n| unsafe { Library::new(n) }.is_ok());
    if found {
        Ok(())
    } else {
        Err(Error::NoRuntime {
            what: "HIP runtime",
            library: "libamdhip64.so",
        })
    }
}

#[allow(unsafe_code)]
impl Hip {
    /// Opens device `ordinal`; a clear error where the HIP runtime is not installed.
    pub fn open(ordinal: i32) -> Result<Hip> {
        // SAFETY: loading the HIP runtime runs its initialisers, as every HIP program does.
        let lib = ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7"]
            .iter()
            .find_map(|n| unsafe { Library::new(n) }.ok())
            .ok_or(Error::NoRuntime {
                what: "HIP runtime",
                library: "libamdhip64.so",
            })?;
        let mut h = Hip {
            lib,
            name: String::new(),
            l2: None,
            stream: std::ptr::null_mut(),
            kernels: Vec::new(),
            graphs: Vec::new(),
            events: EventPool::default(),
        };
        h.call(
            "hipSetDevice",
            // SAFETY: `hipSetDevice` has this signature and takes the ordinal by value.
            |f: Symbol<unsafe extern "C" fn(c_int) -> HipError>| unsafe { f(ordinal) },
        )?;
        let mut name = [0 as c_char; 256];
        h.call(
            "hipDeviceGetName",
            // SAFETY: the out-buffer is a local of the 256 bytes the call is told.
            |f: Symbol<unsafe extern "C" fn(*mut c_char, c_int, c_int) -> HipError>| unsafe {
                f(name.as_mut_ptr(), 256, ordinal)
            },
        )?;
        // SAFETY: hipDeviceGetName wrote a NUL-terminated string into the 256-byte buffer.
        h.name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut l2: c_int = 0;
        if h.call(
            "hipDeviceGetAttribute",
            // SAFETY: the out-pointer points at a local.
            |f: Symbol<unsafe extern "C" fn(*mut c_int, c_int, c_int) -> HipError>| unsafe {
                f(&mut l2, HIP_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ordinal)
            },
        )
        .is_ok()
        {
            h.l2 = usize::try_from(l2).ok().filter(|&v| v > 0);
        }
        let mut stream: Handle = std::ptr::null_mut();
        h.call(
            "hipStreamCreate",
            // SAFETY: the out-pointer points at a local.
            |f: Symbol<unsafe extern "C" fn(*mut Handle) -> HipError>| unsafe { f(&mut stream) },
        )?;
        h.stream = stream;
        Ok(h)
    }

    /// Looks up `name` and calls it through `f`; a non-zero status becomes an error naming it.
    fn call<T, F>(&self, name: &str, f: F) -> Result<()>
    where
        F: FnOnce(Symbol<T>) -> HipError,
    {
        call(&self.lib, name, f)
    }
}

/// [`Hip::call`] on the library alone, for use while another field is borrowed.
#[allow(unsafe_code)]
fn call<T, F>(lib: &Library, name: &str, f: F) -> Result<()>
where
    F: FnOnce(Symbol<T>) -> HipError,
{
    // SAFETY: each caller names the entry point with the signature hip_runtime_api.h gives it.
    let sym: Symbol<T> = unsafe { lib.get(name.as_bytes()) }
        .map_err(|e| Error::gpu(format!("HIP {name}"), format!("not found ({e})")))?;
    match f(sym) {
        0 => Ok(()),
        code => Err(Error::gpu(
            format!("HIP {name}"),
            format!("failed with error {code}"),
        )),
    }
}

type Launch = unsafe extern "C" fn(
    Handle,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    Handle,
    *mut *mut c_void,
    *mut *mut c_void,
) -> HipError;

/// `hipGraphInstantiate(exec, graph, error_node, log, log_size)`.
type GraphInstantiate =
    unsafe extern "C" fn(*mut Handle, Handle, Handle, *mut c_char, usize) -> HipError;

// SAFETY (every `unsafe` block below): handles and device pointers were created by this struct
// through the same runtime; host slices outlive the synchronous copies that read or write them;
// `kernelParams` points at `params`, which the launch copies before it returns.
#[allow(unsafe_code)]
impl Gpu for Hip {
    fn device_name(&self) -> String {
        self.name.clone()
    }
    fn l2_bytes(&self) -> Option<usize> {
        self.l2
    }
    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr> {
        let mut p: Handle = std::ptr::null_mut();
        self.call(
            "hipMalloc",
            // SAFETY: the out-pointer points at a local.
            |f: Symbol<unsafe extern "C" fn(*mut Handle, usize) -> HipError>| unsafe {
                f(&mut p, bytes.max(1))
            },
        )?;
        Ok(p as DevicePtr)
    }
    fn upload(&mut self, dst: DevicePtr, data: &[u8]) -> Result<()> {
        // SAFETY: `dst` comes from `alloc` and the launcher sizes `data` from the same buffer's
        // byte count; the copy is synchronous.
        self.call("hipMemcpy", |f: Symbol<unsafe extern "C" fn(Handle, *const c_void, usize, c_int) -> HipError>| unsafe {
            f(dst as Handle, data.as_ptr().cast(), data.len(), HOST_TO_DEVICE)
        })
    }
    fn download(&mut self, src: DevicePtr, out: &mut [u8]) -> Result<()> {
        self.sync()?;
        // SAFETY: `src` comes from `alloc` and the launcher sizes `out` from the same buffer's byte
        // count; the copy is synchronous.
        self.call("hipMemcpy", |f: Symbol<unsafe extern "C" fn(Handle, *const c_void, usize, c_int) -> HipError>| unsafe {
            f(out.as_mut_ptr().cast(), src as *const c_void, out.len(), DEVICE_TO_HOST)
        })
    }
    fn fill(&mut self, dst: DevicePtr, value: u8, bytes: usize) -> Result<()> {
        let s = self.stream;
        // SAFETY: `dst` comes from `alloc`, `bytes` is that buffer's size, and the stream is ours.
        self.call(
            "hipMemsetAsync",
            |f: Symbol<unsafe extern "C" fn(Handle, c_int, usize, Handle) -> HipError>| unsafe {
                f(dst as Handle, c_int::from(value), bytes, s)
            },
        )
    }
    fn load(&mut self, image: &[u8], symbol: &str, _shared: u32) -> Result<KernelId> {
        let mut module: Handle = std::ptr::null_mut();
        self.call(
            "hipModuleLoadData",
            // SAFETY: `image` is a whole code object, alive across the call; the out-pointer points
            // at a local.
            |f: Symbol<unsafe extern "C" fn(*mut Handle, *const c_void) -> HipError>| unsafe {
                f(&mut module, image.as_ptr().cast())
            },
        )?;
        let name = CString::new(symbol)
            .map_err(|_| Error::spec(format!("symbol {symbol:?} contains NUL")))?;
        let mut func: Handle = std::ptr::null_mut();
        // SAFETY: `module` was just loaded, `name` is a NUL-terminated string and the out-pointer a
        // local.
        self.call("hipModuleGetFunction", |f: Symbol<unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> HipError>| unsafe {
            f(&mut func, module, name.as_ptr())
        })
        .map_err(|e| Error::NoKernel {
            symbol: symbol.to_string(),
            source: Box::new(e),
        })?;
        self.kernels.push(func);
        Ok(KernelId(self.kernels.len() - 1))
    }
    fn param_sizes(&mut self, _k: KernelId) -> Option<Vec<usize>> {
        None
    }
    fn launch(&mut self, k: KernelId, g: Geometry, params: &[Vec<u8>]) -> Result<()> {
        let func = *self
            .kernels
            .get(k.0)
            .ok_or_else(|| Error::Internal(format!("unknown kernel {}", k.0)))?;
        let mut ptrs: Vec<*mut c_void> = params.iter().map(|p| p.as_ptr() as *mut c_void).collect();
        let s = self.stream;
        // SAFETY: `func` is a loaded function and the stream ours; each pointer in `ptrs` points at
        // one argument's bytes in `params`, alive across the call (the runtime copies them).
        self.call("hipModuleLaunchKernel", |f: Symbol<Launch>| unsafe {
            f(
                func,
                g.grid[0],
                g.grid[1],
                g.grid[2],
                g.block[0],
                g.block[1],
                g.block[2],
                g.shared,
                s,
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }
    fn capture(&mut self, k: KernelId, g: Geometry, params: &[Vec<u8>]) -> Result<GraphId> {
        let s = self.stream;
        self.call(
            "hipStreamBeginCapture",
            // SAFETY: the stream is ours and not capturing: every capture begun here is ended
            // below.
            |f: Symbol<unsafe extern "C" fn(Handle, c_int) -> HipError>| unsafe {
                f(s, HIP_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            },
        )?;
        let launched = self.launch(k, g, params);
        let mut graph: Handle = std::ptr::null_mut();
        self.call(
            "hipStreamEndCapture",
            // SAFETY: ends the capture begun above on the same stream; the out-pointer points at a
            // local.
            |f: Symbol<unsafe extern "C" fn(Handle, *mut Handle) -> HipError>| unsafe {
                f(s, &mut graph)
            },
        )?;
        launched?;
        let mut exec: Handle = std::ptr::null_mut();
        self.call(
            "hipGraphInstantiate",
            // SAFETY: `graph` is the graph just captured; a null log of size 0 asks for no log.
            |f: Symbol<GraphInstantiate>| unsafe {
                f(
                    &mut exec,
                    graph,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                )
            },
        )?;
        self.graphs.push(exec);
        Ok(GraphId(self.graphs.len() - 1))
    }
    fn replay(&mut self, graph: GraphId) -> Result<()> {
        let g = *self
            .graphs
            .get(graph.0)
            .ok_or_else(|| Error::Internal(format!("unknown graph {}", graph.0)))?;
        let s = self.stream;
        // SAFETY: `g` is a graph instantiated here and the stream is ours.
        self.call(
            "hipGraphLaunch",
            |f: Symbol<unsafe extern "C" fn(Handle, Handle) -> HipError>| unsafe { f(g, s) },
        )
    }
    fn record(&mut self) -> Result<EventId> {
        let lib = &self.lib;
        let (id, e) = self.events.take(|| {
            let mut e: Handle = std::ptr::null_mut();
            call(
                lib,
                "hipEventCreate",
                // SAFETY: the out-pointer points at a local.
                |f: Symbol<unsafe extern "C" fn(*mut Handle) -> HipError>| unsafe { f(&mut e) },
            )?;
            Ok(e)
        })?;
        let s = self.stream;
        self.call(
            "hipEventRecord",
            // SAFETY: `e` was created by the pool through this runtime; the stream is ours.
            |f: Symbol<unsafe extern "C" fn(Handle, Handle) -> HipError>| unsafe { f(e, s) },
        )?;
        Ok(id)
    }
    fn elapsed_ms(&mut self, start: EventId, end: EventId) -> Result<f64> {
        let (a, b) = (self.events.get(start)?, self.events.get(end)?);
        self.call(
            "hipEventSynchronize",
            // SAFETY: `b` is an event of ours that was recorded on the stream.
            |f: Symbol<unsafe extern "C" fn(Handle) -> HipError>| unsafe { f(b) },
        )?;
        let mut ms: f32 = 0.0;
        self.call(
            "hipEventElapsedTime",
            // SAFETY: `a` and `b` are events of ours, both recorded, and `b` has completed; the
            // out-pointer is a local.
            |f: Symbol<unsafe extern "C" fn(*mut f32, Handle, Handle) -> HipError>| unsafe {
                f(&mut ms, a, b)
            },
        )?;
        self.events.reset();
        Ok(f64::from(ms))
    }
    fn sync(&mut self) -> Result<()> {
        self.events.reset();
        let s = self.stream;
        // SAFETY: the stream is ours.
        self.call(
            "hipStreamSynchronize",
            |f: Symbol<unsafe extern "C" fn(Handle) -> HipError>| unsafe { f(s) },
        )
    }
    fn telemetry(&mut self) -> Telemetry {
        // rocm-smi/amdsmi sampling is not wired up: reported as unavailable.
        Telemetry::default()
    }
}
