//! What the launcher needs from a GPU API, so that the gate and timing logic is written once
//! and tested without a GPU (a host mock implements this trait in the tests).

use crate::error::{Error, Result};
pub use kernelab_model::kernel_run::Telemetry;

/// A device pointer.
pub type DevicePtr = u64;

/// A loaded kernel (index into the backend's own table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelId(pub usize);

/// A captured graph (index into the backend's own table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphId(pub usize);

/// A recorded event (index into the backend's own table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventId(pub usize);

/// Launch geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Grid.
    pub grid: [u32; 3],
    /// Block.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u32,
}

/// A prepared matrix product (index into the backend's own table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmId(pub usize);

/// Element type of a matrix product's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GemmType {
    /// bfloat16 inputs and output, FP32 accumulation.
    Bf16,
    /// float16 inputs and output, FP32 accumulation.
    Fp16,
    /// FP8 e4m3 inputs, bfloat16 output, FP32 accumulation.
    Fp8,
}

/// Who the device is, beyond its name: what the API can tell.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Identity {
    /// Compute capability (`9.0`) or architecture (`gfx942`).
    pub arch: Option<String>,
    /// Multiprocessors (compute units).
    pub multiprocessors: Option<u32>,
    /// Device memory, bytes.
    pub memory_bytes: Option<u64>,
    /// Driver version.
    pub driver: Option<String>,
    /// Maximum SM clock, MHz.
    pub sm_max_mhz: Option<u32>,
    /// Memory clock, MHz.
    pub memory_mhz: Option<u32>,
}

/// The operations the launcher uses.
pub trait Gpu {
    /// The device's name.
    fn device_name(&self) -> String;
    /// L2 cache size in bytes, when known.
    fn l2_bytes(&self) -> Option<usize>;
    /// Allocates device memory.
    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr>;
    /// Copies host bytes to the device.
    fn upload(&mut self, dst: DevicePtr, data: &[u8]) -> Result<()>;
    /// Copies device bytes to the host.
    fn download(&mut self, src: DevicePtr, out: &mut [u8]) -> Result<()>;
    /// Sets `bytes` bytes to `value` (asynchronously, on the launch stream).
    fn fill(&mut self, dst: DevicePtr, value: u8, bytes: usize) -> Result<()>;
    /// Loads a code object and looks up a kernel; `shared` is the dynamic shared memory the
    /// launches will ask for (raising the function's limit when it is above the default).
    fn load(&mut self, image: &[u8], symbol: &str, shared: u32) -> Result<KernelId>;
    /// The byte sizes of the kernel's parameters, when the API can tell.
    fn param_sizes(&mut self, k: KernelId) -> Option<Vec<usize>>;
    /// Launches on the stream (asynchronous).
    fn launch(&mut self, k: KernelId, g: Geometry, params: &[Vec<u8>]) -> Result<()>;
    /// Captures one launch into a graph.
    fn capture(&mut self, k: KernelId, g: Geometry, params: &[Vec<u8>]) -> Result<GraphId>;
    /// Replays a graph on the stream.
    fn replay(&mut self, graph: GraphId) -> Result<()>;
    /// Records an event on the stream.
    fn record(&mut self) -> Result<EventId>;
    /// Milliseconds between two recorded events (waits for the second).
    fn elapsed_ms(&mut self, start: EventId, end: EventId) -> Result<f64>;
    /// Waits for the stream.
    fn sync(&mut self) -> Result<()>;
    /// Clock, temperature and power now.
    fn telemetry(&mut self) -> Telemetry;
    /// Architecture, size, driver and clocks, where the API tells them.
    fn identity(&mut self) -> Identity {
        Identity::default()
    }
    /// Prepares an `m`×`n`×`k` matrix product of random inputs on the matrix units; an error
    /// where the backend offers none.
    fn gemm_prepare(&mut self, dtype: GemmType, m: usize, n: usize, k: usize) -> Result<GemmId> {
        let _ = (dtype, m, n, k);
        Err(Error::gpu(
            "matrix product",
            "this backend offers no matrix-product library",
        ))
    }
    /// Launches a prepared matrix product on the stream (asynchronous).
    fn gemm_launch(&mut self, id: GemmId) -> Result<()> {
        Err(Error::Internal(format!("unknown matrix product {}", id.0)))
    }
}

/// Events reused from sample to sample: a backend records into the next free one and frees
/// them all once it has waited for the last (`reset`), so a run of any length holds a few.
#[derive(Debug)]
pub struct EventPool<E> {
    events: Vec<E>,
    next: usize,
}

impl<E: Copy> Default for EventPool<E> {
    fn default() -> Self {
        EventPool {
            events: Vec::new(),
            next: 0,
        }
    }
}

impl<E: Copy> EventPool<E> {
    /// The next free event, made with `create` when every one is in use.
    pub fn take(&mut self, create: impl FnOnce() -> Result<E>) -> Result<(EventId, E)> {
        if self.next == self.events.len() {
            self.events.push(create()?);
        }
        self.next += 1;
        Ok((EventId(self.next - 1), self.events[self.next - 1]))
    }
    /// The event behind an id.
    pub fn get(&self, id: EventId) -> Result<E> {
        self.events
            .get(id.0)
            .copied()
            .ok_or_else(|| Error::Internal(format!("unknown event {}", id.0)))
    }
    /// Frees every event (the stream has been waited for).
    pub fn reset(&mut self) {
        self.next = 0;
    }
    /// Every event made, for destruction.
    pub fn all(&self) -> &[E] {
        &self.events
    }
}
