//! The CUDA backend: the driver API through `cudarc` with dynamic loading (so the binary builds
//! and runs its other commands where no CUDA is installed), telemetry through NVML.

use crate::cublaslt::{self, CublasLt};
use crate::error::{Error, Result};
use crate::gpu::{
    DevicePtr, EventId, EventPool, GemmId, GemmType, Geometry, Gpu, GraphId, Identity, KernelId,
    Telemetry,
};
use cudarc::driver::{result, sys};
use std::ffi::{c_void, CString};

/// A CUDA context on one device with one stream.
pub struct Cuda {
    name: String,
    l2: Option<usize>,
    stream: sys::CUstream,
    modules: Vec<sys::CUmodule>,
    kernels: Vec<sys::CUfunction>,
    graphs: Vec<sys::CUgraphExec>,
    events: EventPool<sys::CUevent>,
    allocations: Vec<DevicePtr>,
    nvml: Option<(nvml_wrapper::Nvml, u32)>,
    dev: sys::CUdevice,
    lt: Option<CublasLt>,
    gemms: Vec<cublaslt::Plan>,
}

fn err(what: &str) -> impl Fn(result::DriverError) -> Error + '_ {
    move |e| Error::gpu(format!("CUDA {what}"), words(&e))
}

/// A driver error in words: "an illegal memory access was encountered
/// (CUDA_ERROR_ILLEGAL_ADDRESS)", never the Debug form `DriverError(…)`.
fn words(e: &result::DriverError) -> String {
    let text = |c: std::result::Result<&std::ffi::CStr, result::DriverError>| {
        c.ok().and_then(|c| c.to_str().ok()).map(str::to_string)
    };
    let name = text(e.error_name()).unwrap_or_else(|| format!("CUDA error {}", e.0 as i32));
    match text(e.error_string()) {
        Some(t) => format!("{t} ({name})"),
        None => name,
    }
}

/// Whether the CUDA driver library loads.
pub(crate) fn driver_present() -> Result<()> {
    // SAFETY: loading the system's CUDA driver library runs its initialisers, which is what
    // every CUDA program does; the handle is dropped straight away (cudarc loads its own).
    #[allow(unsafe_code)]
    let found = ["libcuda.so.1", "libcuda.so", "nvcuda.dll"]
        .iter()
        .any(|n| unsafe { libloading::Library::new(n) }.is_ok());
    if found {
        Ok(())
    } else {
        Err(Error::NoRuntime {
            what: "CUDA driver",
            library: "libcuda.so.1",
        })
    }
}

impl Cuda {
    /// Opens device `ordinal`; a clear error (no panic) where no CUDA driver is installed.
    pub fn open(ordinal: i32) -> Result<Cuda> {
        // cudarc panics when it cannot load libcuda; look for it first.
        driver_present()?;
        // cudarc also panics when a symbol it binds is missing from an older driver.
        let init = std::panic::catch_unwind(result::init).map_err(|_| Error::OldDriver)?;
        init.map_err(err("init"))?;
        let dev = result::device::get(ordinal).map_err(err("device"))?;
        // SAFETY: `dev` is a valid device handle from cuDeviceGet; the primary context is
        // retained for the life of the process and made current on this thread only.
        #[allow(unsafe_code)]
        let l2 = unsafe {
            let ctx = result::primary_ctx::retain(dev).map_err(err("context"))?;
            result::ctx::set_current(ctx).map_err(err("context"))?;
            result::device::get_attribute(
                dev,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
            )
            .ok()
            .and_then(|v| usize::try_from(v).ok())
        };
        let name = result::device::get_name(dev).map_err(err("device name"))?;
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(err("stream"))?;
        let nvml = nvml_wrapper::Nvml::init().ok().map(|n| (n, ordinal as u32));
        Ok(Cuda {
            name,
            l2,
            stream,
            modules: Vec::new(),
            kernels: Vec::new(),
            graphs: Vec::new(),
            events: EventPool::default(),
            allocations: Vec::new(),
            nvml,
            dev,
            lt: None,
            gemms: Vec::new(),
        })
    }
}

// SAFETY (for every `unsafe` block below): the handles passed to the driver were all created by
// this struct on the current context and are only destroyed in `Drop`; device pointers come from
// `alloc` and the byte counts passed with them never exceed the allocation (the caller sizes
// host buffers from the same `Buffer::bytes`); `kernelParams` points at `params`, which outlives
// the call (cuLaunchKernel copies the values before returning).
#[allow(unsafe_code)]
impl Gpu for Cuda {
    fn device_name(&self) -> String {
        self.name.clone()
    }
    fn l2_bytes(&self) -> Option<usize> {
        self.l2
    }
    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr> {
        // SAFETY: a plain allocation on the current context; the pointer is freed once, in `Drop`.
        let p = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(err("allocation"))?;
        self.allocations.push(p);
        Ok(p)
    }
    fn upload(&mut self, dst: DevicePtr, data: &[u8]) -> Result<()> {
        // SAFETY: `dst` comes from `alloc` and the launcher sizes `data` from the same buffer's
        // byte count.
        unsafe { result::memcpy_htod_sync(dst, data) }.map_err(err("copy to device"))?;
        // A copy from pageable memory may return before its DMA lands, and the launch stream
        // does not synchronise with the legacy stream: wait for the whole context.
        result::ctx::synchronize().map_err(err("copy to device"))
    }
    fn download(&mut self, src: DevicePtr, out: &mut [u8]) -> Result<()> {
        self.sync()?;
        // SAFETY: `src` comes from `alloc` and the launcher sizes `out` from the same buffer's byte
        // count.
        unsafe { result::memcpy_dtoh_sync(out, src) }.map_err(err("copy to host"))
    }
    fn fill(&mut self, dst: DevicePtr, value: u8, bytes: usize) -> Result<()> {
        // SAFETY: `dst` comes from `alloc`, `bytes` is that buffer's size, and the stream is ours
        // until `Drop`.
        unsafe { result::memset_d8_async(dst, value, bytes, self.stream) }.map_err(err("memset"))
    }
    fn load(&mut self, image: &[u8], symbol: &str, shared: u32) -> Result<KernelId> {
        // The driver reads the image up to its own size field; a NUL-terminated copy keeps PTX
        // text safe too.
        let mut owned = image.to_vec();
        owned.push(0);
        // SAFETY: `owned` is a NUL-terminated copy of the image, alive until the driver has loaded
        // it.
        let module = unsafe { result::module::load_data(owned.as_ptr() as *const c_void) }
            .map_err(err(
                "module load (is the code object for this GPU's architecture?)",
            ))?;
        self.modules.push(module);
        let name = CString::new(symbol)
            .map_err(|_| Error::spec(format!("symbol {symbol:?} contains NUL")))?;
        // SAFETY: `module` was just loaded (unloaded only in `Drop`) and `name` is a NUL-terminated
        // string.
        let f =
            unsafe { result::module::get_function(module, name) }.map_err(|e| Error::NoKernel {
                symbol: symbol.to_string(),
                source: Box::new(err("get function")(e)),
            })?;
        if shared > 48 * 1024 {
            // SAFETY: `f` is a function of a loaded module; the attribute's value is an int.
            unsafe {
                result::function::set_function_attribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared as i32,
                )
            }
            .map_err(err("dynamic shared memory limit"))?;
        }
        self.kernels.push(f);
        Ok(KernelId(self.kernels.len() - 1))
    }
    fn param_sizes(&mut self, k: KernelId) -> Option<Vec<usize>> {
        let f = *self.kernels.get(k.0)?;
        let mut sizes = Vec::new();
        for i in 0..4096 {
            let r = std::panic::catch_unwind(move || {
                let (mut off, mut size) = (0usize, 0usize);
                // SAFETY: `f` is a function of a loaded module; the out-pointers point at locals.
                let r = unsafe { sys::cuFuncGetParamInfo(f, i, &mut off, &mut size) };
                (r, size)
            })
            .ok()?;
            if r.0 != sys::CUresult::CUDA_SUCCESS {
                break;
            }
            sizes.push(r.1);
        }
        Some(sizes)
    }
    fn launch(&mut self, k: KernelId, g: Geometry, params: &[Vec<u8>]) -> Result<()> {
        let f = *self
            .kernels
            .get(k.0)
            .ok_or_else(|| Error::Internal(format!("unknown kernel {}", k.0)))?;
        let mut ptrs: Vec<*mut c_void> = params.iter().map(|p| p.as_ptr() as *mut c_void).collect();
        // SAFETY: `f` is a loaded function and the stream ours; each pointer in `ptrs` points at
        // one argument's bytes in `params`, alive across the call (the driver copies them), sized
        // to the kernel's parameters where the driver tells them (`run::load`).
        unsafe {
            result::launch_kernel(
                f,
                (g.grid[0], g.grid[1], g.grid[2]),
                (g.block[0], g.block[1], g.block[2]),
                g.shared,
                self.stream,
                &mut ptrs,
            )
        }
        .map_err(err("launch"))
    }
    fn capture(&mut self, k: KernelId, g: Geometry, params: &[Vec<u8>]) -> Result<GraphId> {
        // SAFETY: the stream is ours and not capturing: every capture begun here is ended below.
        unsafe {
            result::stream::begin_capture(
                self.stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }
        .map_err(err("graph capture"))?;
        let launched = self.launch(k, g, params);
        // SAFETY: ends the capture begun above on the same stream.
        let graph =
            unsafe { result::stream::end_capture(self.stream) }.map_err(err("graph capture"))?;
        launched?;
        let mut exec = std::mem::MaybeUninit::uninit();
        // SAFETY: `graph` is the graph just captured; the call writes `exec` before it is read.
        unsafe { sys::cuGraphInstantiateWithFlags(exec.as_mut_ptr(), graph, 0).result() }
            .map_err(err("graph instantiate"))?;
        // SAFETY: the instantiation succeeded, so `exec` is written; the captured graph is not used
        // again.
        unsafe {
            let _ = result::graph::destroy(graph);
            self.graphs.push(exec.assume_init());
        }
        Ok(GraphId(self.graphs.len() - 1))
    }
    fn replay(&mut self, graph: GraphId) -> Result<()> {
        let g = *self
            .graphs
            .get(graph.0)
            .ok_or_else(|| Error::Internal(format!("unknown graph {}", graph.0)))?;
        // SAFETY: `g` is a graph instantiated here, destroyed only in `Drop`; the stream is ours.
        unsafe { result::graph::launch(g, self.stream) }.map_err(err("graph launch"))
    }
    fn record(&mut self) -> Result<EventId> {
        let (id, e) = self.events.take(|| {
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(err("event"))
        })?;
        // SAFETY: `e` was created on this context by the pool, destroyed only in `Drop`; the stream
        // is ours.
        unsafe { result::event::record(e, self.stream) }.map_err(err("event record"))?;
        Ok(id)
    }
    fn elapsed_ms(&mut self, start: EventId, end: EventId) -> Result<f64> {
        let (a, b) = (self.events.get(start)?, self.events.get(end)?);
        // SAFETY: `b` is an event of ours that was recorded on the stream.
        unsafe { result::event::synchronize(b) }.map_err(err("event wait"))?;
        // SAFETY: `a` and `b` are events of ours, both recorded, and `b` has completed.
        let ms = unsafe { result::event::elapsed(a, b) }.map_err(err("event time"))?;
        self.events.reset();
        Ok(f64::from(ms))
    }
    fn sync(&mut self) -> Result<()> {
        self.events.reset();
        // SAFETY: the stream is ours, alive until `Drop`.
        unsafe { result::stream::synchronize(self.stream) }.map_err(err("kernel execution"))
    }
    fn identity(&mut self) -> Identity {
        use nvml_wrapper::enum_wrappers::device::Clock;
        use sys::CUdevice_attribute as A;
        // SAFETY: `self.dev` is the handle from cuDeviceGet; the call only reads an attribute.
        let attr = |a| unsafe { result::device::get_attribute(self.dev, a) }.ok();
        let arch = match (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
        ) {
            (Some(a), Some(b)) => Some(format!("{a}.{b}")),
            _ => None,
        };
        let mut version = 0i32;
        // SAFETY: the out-pointer points at a local.
        let driver = (unsafe { sys::cuDriverGetVersion(&mut version) }
            == sys::CUresult::CUDA_SUCCESS)
            .then(|| format!("CUDA {}.{}", version / 1000, version % 1000 / 10));
        let nvml = self
            .nvml
            .as_ref()
            .and_then(|(n, i)| n.device_by_index(*i).ok());
        Identity {
            arch,
            multiprocessors: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .and_then(|v| u32::try_from(v).ok()),
            // SAFETY: `self.dev` is the handle from cuDeviceGet; the call only reads its size.
            memory_bytes: unsafe { result::device::total_mem(self.dev) }
                .ok()
                .map(|b| b as u64),
            driver,
            sm_max_mhz: nvml.as_ref().and_then(|d| d.max_clock_info(Clock::SM).ok()),
            memory_mhz: nvml.as_ref().and_then(|d| d.clock_info(Clock::Memory).ok()),
        }
    }
    fn gemm_prepare(&mut self, dtype: GemmType, m: usize, n: usize, k: usize) -> Result<GemmId> {
        if self.lt.is_none() {
            self.lt = Some(CublasLt::open()?);
        }
        let elem = if dtype == GemmType::Fp8 { 1 } else { 2 };
        let a = self.alloc(k * m * elem)?;
        let b = self.alloc(k * n * elem)?;
        let d = self.alloc(m * n * 2)?;
        let ws = self.alloc(cublaslt::WORKSPACE)?;
        for (p, count) in [(a, k * m), (b, k * n)] {
            let data = random_elements(dtype, count, p);
            self.upload(p, &data)?;
        }
        let lt = self
            .lt
            .as_ref()
            .ok_or_else(|| Error::Internal("cuBLASLt not loaded".into()))?;
        let plan = lt.plan(dtype, m as u64, n as u64, k as u64, [a, b, d, ws])?;
        self.gemms.push(plan);
        Ok(GemmId(self.gemms.len() - 1))
    }
    fn gemm_launch(&mut self, id: GemmId) -> Result<()> {
        let (Some(lt), Some(p)) = (self.lt.as_ref(), self.gemms.get(id.0)) else {
            return Err(Error::Internal(format!("unknown matrix product {}", id.0)));
        };
        lt.launch(p, self.stream.cast())
    }
    fn telemetry(&mut self) -> Telemetry {
        use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
        let Some((nvml, i)) = &self.nvml else {
            return Telemetry::default();
        };
        let Ok(d) = nvml.device_by_index(*i) else {
            return Telemetry::default();
        };
        Telemetry {
            sm_mhz: d.clock_info(Clock::SM).ok(),
            temp_c: d.temperature(TemperatureSensor::Gpu).ok(),
            power_w: d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
        }
    }
}

/// `count` uniform random elements of `dtype` in about [-1, 1] (seeded by `seed`): products of
/// random data, not zeros, which run faster than real data on the tensor cores.
fn random_elements(dtype: GemmType, count: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::with_capacity(count * 2);
    for _ in 0..count {
        let r = next();
        let u = (r >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
        match dtype {
            GemmType::Bf16 => out.extend(half::bf16::from_f32(u).to_le_bytes()),
            GemmType::Fp16 => out.extend(half::f16::from_f32(u).to_le_bytes()),
            // e4m3 with the top exponent bit clear: magnitudes below 1, never NaN.
            GemmType::Fp8 => out.push((r >> 32) as u8 & 0xB7),
        }
    }
    out
}

#[allow(unsafe_code)]
impl Drop for Cuda {
    fn drop(&mut self) {
        // SAFETY: every handle was created by this struct and is destroyed once, after the
        // stream has drained.
        unsafe {
            let _ = result::stream::synchronize(self.stream);
            for &g in &self.graphs {
                let _ = result::graph::exec_destroy(g);
            }
            for &e in self.events.all() {
                let _ = result::event::destroy(e);
            }
            for &p in &self.allocations {
                let _ = result::free_sync(p);
            }
            for &m in &self.modules {
                let _ = result::module::unload(m);
            }
            let _ = result::stream::destroy(self.stream);
        }
    }
}
