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
