//! Argument marshalling: host data for every buffer, and the parameter list of each build
//! (buffers, scalars, null pointers, Triton's trailing scratch pointers) ready to pack into the
//! driver's `kernelParams` array.

use crate::error::{Error, Result};
use crate::spec::{eval, Arg, ArgKind, Build, Init, Role, Size, Spec};
use kernelab_model::Location;
use kernelab_tensor::{encode_e4m3fn, encode_e5m2, DType};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One device buffer to allocate.
#[derive(Clone, Debug)]
pub struct Buffer {
    /// Argument name.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Shape.
    pub shape: Vec<usize>,
    /// Role.
    pub role: Role,
    /// Initial contents (inputs and in/out buffers); `None` for outputs (poisoned instead).
    pub init: Option<Vec<u8>>,
}

impl Buffer {
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        // Checked when the buffer was made (`buffers`), so the product cannot overflow here.
        self.shape.iter().product::<usize>() * self.dtype.size()
    }
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// The device address of buffer `i`.
    Buffer(usize),
    /// A scalar, as its little-endian bytes.
    Scalar(Vec<u8>),
    /// A null pointer.
    Null,
    /// A scratch allocation of this many bytes (Triton's global/profile scratch).
    Scratch(usize),
}

/// A build ready to load and launch.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// `baseline` or `candidate`.
    pub label: &'static str,
    /// The code object.
    pub code: PathBuf,
    /// Kernel symbol.
    pub symbol: String,
    /// Grid.
    pub grid: [u32; 3],
    /// Block.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u32,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Where Triton settings came from, when they did.
    pub triton: Option<PathBuf>,
}

/// The fields of Triton's compile metadata JSON that a launch needs.
#[derive(Clone, Debug, Deserialize)]
pub struct TritonMeta {
    /// Kernel name.
    pub name: String,
    /// Warps per program.
    pub num_warps: u32,
    /// Dynamic shared memory, bytes.
    #[serde(default)]
    pub shared: u32,
    /// Global scratch bytes per program (Triton ≥ 3.3 passes a pointer for it).
    pub global_scratch_size: Option<u64>,
    /// Profile scratch bytes (Triton ≥ 3.5 passes a second pointer).
    pub profile_scratch_size: Option<u64>,
    /// Threads per warp (Triton ≥ 3.5 writes it at the top level).
    #[serde(default)]
    pub warp_size: Option<u32>,
    /// The compile target (every Triton 3.x writes `{"backend", "arch", "warp_size"}`).
    #[serde(default)]
    pub target: Option<TritonTarget>,
}

/// The `target` of Triton's compile metadata.
#[derive(Clone, Debug, Deserialize)]
pub struct TritonTarget {
    /// Threads per warp: 32 on NVIDIA and RDNA, 64 on CDNA (MI300, MI355X).
    #[serde(default)]
    pub warp_size: Option<u32>,
}

/// Largest Triton metadata JSON read: 1 MiB (Triton writes a few KiB).
pub const MAX_TRITON_META_BYTES: u64 = 1 << 20;

impl TritonMeta {
    /// Reads a metadata JSON: a regular file (a FIFO or device is refused without blocking) of
    /// at most [`MAX_TRITON_META_BYTES`].
    pub fn read(path: &Path) -> Result<TritonMeta> {
        let text =
            kernelab_model::read_regular_text(path, MAX_TRITON_META_BYTES).map_err(|source| {
                Error::Read {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        serde_json::from_str(&text).map_err(|source| Error::Triton {
            location: Location::line(source.line() as u64).with_path(path),
            source,
        })
    }

    /// Threads per warp: the metadata's `warp_size`, else its target's, else 32.
    pub fn threads_per_warp(&self) -> u32 {
        self.warp_size
            .or_else(|| self.target.as_ref().and_then(|t| t.warp_size))
            .unwrap_or(32)
    }

    /// The trailing pointer parameters Triton appends, sized for `programs` programs.
    pub fn trailing(&self, programs: u64) -> Vec<Param> {
        let scratch = |size: u64| {
            if size == 0 {
                Param::Null
            } else {
                Param::Scratch((size * programs) as usize)
            }
        };
        let mut out = Vec::new();
        if let Some(g) = self.global_scratch_size {
            out.push(scratch(g));
        }
        if let Some(p) = self.profile_scratch_size {
            out.push(scratch(p));
        }
        out
    }
}

/// The buffers of a spec with their initial contents.
pub fn buffers(spec: &Spec) -> Result<Vec<Buffer>> {
    spec_buffers(spec, true).map_err(|e| spec.locate(e))
}

/// Bytes of host memory available for the buffers' initial values (`MemAvailable` of
/// /proc/meminfo), when the system says.
fn host_memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The buffers of a spec, checked (shapes, overflow, host memory) but without their initial
/// values: what a dry run shows, at no cost in time or memory.
pub fn buffer_layout(spec: &Spec) -> Result<Vec<Buffer>> {
    spec_buffers(spec, false).map_err(|e| spec.locate(e))
}

fn spec_buffers(spec: &Spec, with_data: bool) -> Result<Vec<Buffer>> {
    let mut total: u64 = 0;
    let host = host_memory_available();
    let mut out = Vec::new();
    for (i, a) in spec.args.iter().enumerate() {
        let ArgKind::Buffer(dtype) = ArgKind::of(a)? else {
            continue;
        };
        let shape = a
            .shape
            .iter()
            .flatten()
            .map(|s| dim(s, spec, &a.name))
            .collect::<Result<Vec<_>>>()?;
        let too_big = || {
            Error::spec(format!(
                "argument `{}`: shape {shape:?} of {dtype:?} overflows 64-bit sizes",
                a.name
            ))
        };
        let n = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(too_big)?;
        let bytes = n.checked_mul(dtype.size()).ok_or_else(too_big)?;
        total = total.checked_add(bytes as u64).ok_or_else(too_big)?;
        // Every buffer's initial values are made on the host first: refuse what cannot fit
        // rather than be killed for it.
        if let Some(h) = host.filter(|&h| total > h) {
            return Err(Error::spec(format!(
                "the buffers need {total} bytes of host memory up to argument `{}`; this machine has {h} bytes available",
                a.name
            )));
        }
        let role = a.role.unwrap_or(Role::In);
        let init = match (&a.init, role) {
            _ if !with_data => None,
            (None, Role::Out) => None,
            (None, _) => Some(fill(
                &Init::Normal {
                    mean: 0.0,
                    std: 1.0,
                },
                dtype,
                n,
                seed(a, i),
            )),
            (Some(Init::File { path, key }), _) => {
                Some(from_file(&spec.resolve(path), key, a, dtype, n)?)
            }
            (Some(init), _) => Some(fill(init, dtype, n, seed(a, i))),
        };
        out.push(Buffer {
            name: a.name.clone(),
            dtype,
            shape,
            role,
            init,
        });
    }
    Ok(out)
}

fn seed(a: &Arg, i: usize) -> u64 {
    a.seed.unwrap_or(i as u64 + 1)
}

fn dim(s: &Size, spec: &Spec, name: &str) -> Result<usize> {
    let v = eval(s, &spec.sizes).map_err(|e| e.within(format_args!("argument `{name}`")))?;
    usize::try_from(v).map_err(|_| Error::spec(format!("argument `{name}`: negative size {v}")))
}

fn from_file(
    path: &Path,
    key: &Option<String>,
    a: &Arg,
    dtype: DType,
    n: usize,
) -> Result<Vec<u8>> {
    let f = kernelab_tensor::open(path, &Default::default())?;
    let t = match key {
        Some(k) => f.tensors.iter().find(|t| &t.name == k),
        None => f.tensors.first(),
    }
    .ok_or_else(|| {
        Error::spec_in(
            path,
            format!("no tensor {:?} for argument `{}`", key, a.name),
        )
    })?;
    if t.dtype != dtype || t.elements() != n {
        return Err(Error::spec_in(
            path,
            format!(
                "tensor `{}` is {:?} with {} elements; argument `{}` needs {:?} with {n}",
                t.name,
                t.dtype,
                t.elements(),
                a.name,
                dtype
            ),
        ));
    }
    Ok(t.bytes().to_vec())
}

/// SplitMix64: a small, well-known generator, enough for reproducible test data (written by
/// hand so that the bytes of a seeded input never change with a dependency's version).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Fills `n` elements of `dtype` from an initialiser (not `File`).
pub fn fill(init: &Init, dtype: DType, n: usize, seed: u64) -> Vec<u8> {
    let mut rng = SplitMix(seed);
    let mut out = Vec::with_capacity(n * dtype.size());
    for _ in 0..n {
        let v = match init {
            Init::Normal { mean, std } => {
                // Box–Muller; 1 − u keeps the logarithm finite.
                let (u, w) = (1.0 - rng.unit(), rng.unit());
                mean + std * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * w).cos()
            }
            Init::Uniform { low, high } => low + (high - low) * rng.unit(),
            Init::Int { low, high } => {
                // In i128: `high - low + 1` overflows i64 for the widest ranges.
                let span = (i128::from(*high) - i128::from(*low) + 1).max(1) as u128;
                (i128::from(*low) + (u128::from(rng.next()) % span) as i128) as f64
            }
            Init::Constant { value } => *value,
            Init::File { .. } => 0.0,
        };
        encode(dtype, v, &mut out);
    }
    out
}

/// Appends `v` as one element of `dtype` (round to nearest even, saturating integers).
pub fn encode(dtype: DType, v: f64, out: &mut Vec<u8>) {
    match dtype {
        DType::F64 => out.extend_from_slice(&v.to_le_bytes()),
        DType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
        DType::F16 => out.extend_from_slice(&half::f16::from_f64(v).to_le_bytes()),
        DType::BF16 => out.extend_from_slice(&half::bf16::from_f64(v).to_le_bytes()),
        // fp8 as ml_dtypes casts a float64 (ties to even; out of range: NaN or infinity).
        DType::F8E5M2 => out.push(encode_e5m2(v)),
        DType::F8E4M3 => out.push(encode_e4m3fn(v)),
        DType::I8 => out.push(v as i8 as u8),
        DType::U8 | DType::Bool => out.push(v as u8),
        DType::I16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
        DType::U16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
        DType::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
        DType::U32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
        DType::I64 => out.extend_from_slice(&(v as i64).to_le_bytes()),
        DType::U64 => out.extend_from_slice(&(v as u64).to_le_bytes()),
        // DType is non-exhaustive; a type added later is written as zero bytes of its size.
        _ => out.extend(std::iter::repeat_n(0u8, dtype.size())),
    }
}

fn dims3(v: &Option<Vec<Size>>, spec: &Spec, what: &str) -> Result<Option<[u32; 3]>> {
    let Some(v) = v else { return Ok(None) };
    if v.is_empty() || v.len() > 3 {
        return Err(Error::spec(format!("{what}: give 1 to 3 sizes")));
    }
    let mut out = [1u32; 3];
    for (o, s) in out.iter_mut().zip(v) {
        let x = eval(s, &spec.sizes).map_err(|e| e.within(what))?;
        *o = u32::try_from(x)
            .ok()
            .filter(|&x| x > 0)
            .ok_or_else(|| Error::spec(format!("{what}: {x} is not a positive 32-bit size")))?;
    }
    Ok(Some(out))
}

/// Resolves one build: symbol, geometry and parameters, reading Triton metadata when present.
pub fn resolve(spec: &Spec, build: &Build, label: &'static str) -> Result<Resolved> {
    resolve_build(spec, build, label).map_err(|e| spec.locate(e))
}

fn resolve_build(spec: &Spec, build: &Build, label: &'static str) -> Result<Resolved> {
    let code = spec.resolve(&build.code);
    let (b, l) = (&build.launch, &spec.launch);
    let triton_path = b
        .triton
        .as_ref()
        .or(l.triton.as_ref())
        .map(|p| spec.resolve(p))
        .or_else(|| Some(code.with_extension("json")).filter(|p| p.is_file()));
    let meta = triton_path.as_deref().map(TritonMeta::read).transpose()?;
    let ctx = |m: &str| Error::spec(format!("{label}: {m}"));
    let symbol = b
        .symbol
        .clone()
        .or_else(|| l.symbol.clone())
        .or_else(|| meta.as_ref().map(|m| m.name.clone()))
        .ok_or_else(|| ctx("no kernel symbol: set launch.symbol"))?;
    let grid = dims3(&b.grid, spec, "grid")?
        .or(dims3(&l.grid, spec, "grid")?)
        .ok_or_else(|| ctx("no grid: set launch.grid"))?;
    let block = match (
        dims3(&b.block, spec, "block")?.or(dims3(&l.block, spec, "block")?),
        &meta,
    ) {
        (Some(x), _) => x,
        (None, Some(m)) => [m.num_warps.saturating_mul(m.threads_per_warp()), 1, 1],
        (None, None) => return Err(ctx("no block: set launch.block")),
    };
    let wide = |d: [u32; 3]| d.map(u64::from);
    if let Some((key, m)) = crate::spec::geometry_problem(wide(grid), wide(block)) {
        return Err(spec.at_key(key, format!("{label}: {m}")));
    }
    let shared = match (b.shared.as_ref().or(l.shared.as_ref()), &meta) {
        (Some(s), _) => {
            u32::try_from(eval(s, &spec.sizes)?).map_err(|_| ctx("shared: out of range"))?
        }
        (None, Some(m)) => m.shared,
        (None, None) => 0,
    };
    // Each argument's buffer index (its position among the buffers of `[[arg]]`), then the
    // build's own list of arguments (default: every `[[arg]]` in order).
    let mut index = Vec::with_capacity(spec.args.len());
    let mut buffers = 0;
    for a in &spec.args {
        let is_buffer = matches!(ArgKind::of(a)?, ArgKind::Buffer(_));
        index.push(is_buffer.then_some(buffers));
        buffers += usize::from(is_buffer);
    }
    let order: Vec<usize> = match &build.args {
        None => (0..spec.args.len()).collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                spec.args
                    .iter()
                    .position(|a| &a.name == n)
                    .ok_or_else(|| ctx(&format!("args: `{n}` is not an [[arg]]")))
            })
            .collect::<Result<_>>()?,
    };
    let mut params = Vec::new();
    for i in order {
        let a = &spec.args[i];
        params.push(match ArgKind::of(a)? {
            ArgKind::Buffer(_) => Param::Buffer(index[i].unwrap_or(0)),
            ArgKind::Null => Param::Null,
            ArgKind::Scalar(dt) => {
                let s = b
                    .values
                    .get(&a.name)
                    .or(a.value.as_ref())
                    .ok_or_else(|| ctx(&format!("scalar `{}` has no value", a.name)))?;
                let v = match s {
                    Size::Float(f) if dt.is_float() => *f,
                    _ => eval(s, &spec.sizes)
                        .map_err(|e| e.within(format_args!("{label}: scalar `{}`", a.name)))?
                        as f64,
                };
                let mut bytes = Vec::new();
                encode(dt, v, &mut bytes);
                Param::Scalar(bytes)
            }
        });
    }
    if let Some(m) = &meta {
        let programs = grid.iter().map(|&g| u64::from(g)).product();
        params.extend(m.trailing(programs));
    }
    Ok(Resolved {
        label,
        code,
        symbol,
        grid,
        block,
        shared,
        params,
        triton: triton_path,
    })
}

/// Packs parameters into the values `kernelParams` points at, given buffer and scratch
/// addresses (scratch addresses in the order the scratch parameters appear).
pub fn pack(params: &[Param], buffers: &[u64], scratch: &[u64]) -> Result<Vec<Vec<u8>>> {
    let mut s = scratch.iter();
    params
        .iter()
        .map(|p| match p {
            Param::Buffer(i) => buffers
                .get(*i)
                .map(|a| a.to_le_bytes().to_vec())
                .ok_or_else(|| Error::Internal(format!("buffer {i} not allocated"))),
            Param::Scalar(b) => Ok(b.clone()),
            Param::Null => Ok(0u64.to_le_bytes().to_vec()),
            Param::Scratch(_) => s
                .next()
                .map(|a| a.to_le_bytes().to_vec())
                .ok_or_else(|| Error::Internal("scratch not allocated".into())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_warp_size_comes_from_the_metadata_or_its_target() {
        let meta = |json: &str| serde_json::from_str::<TritonMeta>(json).expect("parses");
        let cdna = r#"{"name":"k","num_warps":4,"target":{"backend":"hip","arch":"gfx942","warp_size":64}}"#;
        assert_eq!(meta(cdna).threads_per_warp(), 64);
        let top = r#"{"name":"k","num_warps":4,"warp_size":32,"target":{"warp_size":64}}"#;
        assert_eq!(meta(top).threads_per_warp(), 32);
        assert_eq!(meta(r#"{"name":"k","num_warps":4}"#).threads_per_warp(), 32);
    }

    use super::{encode, fill, Init, TritonMeta};
    use kernelab_tensor::DType;

    fn one(dtype: DType, v: f64) -> Vec<u8> {
        let mut out = Vec::new();
        encode(dtype, v, &mut out);
        out
    }

    /// fp8 scalars and fills round to the nearest code, ties to even (the E5M2 byte used to be
    /// the truncated top byte of an f16: 1.2 became 1.0), with ml_dtypes' overflow rules.
    #[test]
    fn fp8_values_round_to_nearest_even() {
        assert_eq!(one(DType::F8E5M2, 1.2), [0x3d]); // 1.25
        assert_eq!(one(DType::F8E4M3, 1.2), [0x3a]); // 1.25
        assert_eq!(one(DType::F8E4M3, 1.0625), [0x38]); // tie -> even 1.0
        assert_eq!(one(DType::F8E4M3, -500.0), [0xff]); // past 464: NaN, as ml_dtypes
        assert_eq!(one(DType::F8E5M2, 1e6), [0x7c]); // +inf
        let bytes = fill(&Init::Constant { value: 1.2 }, DType::F8E5M2, 3, 0);
        assert_eq!(bytes, [0x3d; 3]);
    }
}
