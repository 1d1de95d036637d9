//! The formats kernelab reads: one registry ([`Format::ALL`]) that help, errors and detection
//! name them from. A leaf module: it imports nothing of the crate, so the error messages can
//! list the formats without an import circle.

/// An input format kernelab recognizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// PyTorch profiler / Kineto Chrome-trace JSON (plain or gzip).
    Kineto,
    /// A rocprof or rocprofv3 CSV.
    RocprofCsv(CsvKind),
    /// A SQLite database (rocpd or Nsight Systems; told apart by its tables).
    Sqlite,
    /// Nsight Compute `--csv` output.
    NcuCsv,
    /// `nsys stats` CSV output.
    NsysStatsCsv,
    /// An Nsight Systems report (`.nsys-rep`), read through its SQLite export.
    NsysRep,
    /// An XPlane protobuf (`.xplane.pb`, JAX / TensorFlow / XLA profiler).
    Xplane,
    /// rocprofv3 `-f json` output (`*_results.json`, top level `rocprofiler-sdk-tool`).
    RocprofJson,
    /// A Triton Proton profile (hatchet JSON: a call tree with per-kernel time and count).
    Proton,
    /// A Triton Proton Chrome trace (`data="trace"`, `*.chrome_trace`): kernel events with
    /// their call stacks, read by the Kineto reader.
    ProtonTrace,
}

impl Format {
    /// A short stable name, used in output.
    pub fn name(self) -> &'static str {
        match self {
            Format::Kineto => "kineto",
            Format::RocprofCsv(CsvKind::KernelTrace) => "rocprofv3-kernel-trace",
            Format::RocprofCsv(CsvKind::KernelStats) => "rocprofv3-kernel-stats",
            Format::RocprofCsv(CsvKind::LegacyStats) => "rocprof-stats",
            Format::RocprofCsv(CsvKind::MemoryCopyTrace) => "rocprofv3-memory-copy-trace",
            Format::RocprofCsv(CsvKind::ApiTrace) => "rocprofv3-api-trace",
            Format::RocprofCsv(CsvKind::KernelTop) => "rocprof-compute-kernel-top",
            Format::Sqlite => "sqlite",
            Format::NcuCsv => "ncu-csv",
            Format::NsysStatsCsv => "nsys-stats-csv",
            Format::NsysRep => "nsys-rep",
            Format::Xplane => "xplane",
            Format::RocprofJson => "rocprofv3-json",
            Format::Proton => "proton-hatchet",
            Format::ProtonTrace => "proton-chrome-trace",
        }
    }
}

impl Format {
    /// Every format kernelab reads, in the order help and errors list them (the registry they
    /// are written from; `every_format_is_listed` fails until a new format is added here).
    pub const ALL: [Format; 15] = [
        Format::Kineto,
        Format::RocprofCsv(CsvKind::KernelTrace),
        Format::RocprofCsv(CsvKind::KernelStats),
        Format::RocprofCsv(CsvKind::MemoryCopyTrace),
        Format::RocprofCsv(CsvKind::ApiTrace),
        Format::Sqlite,
        Format::RocprofCsv(CsvKind::LegacyStats),
        Format::RocprofCsv(CsvKind::KernelTop),
        Format::NsysRep,
        Format::NcuCsv,
        Format::NsysStatsCsv,
        Format::Xplane,
        Format::RocprofJson,
        Format::Proton,
        Format::ProtonTrace,
    ];

    /// What a person knows the format by: the file, and the tool that writes it.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Kineto => {
                "PyTorch profiler (Kineto) or legacy rocprof results.json Chrome-trace JSON, plain or gzip"
            }
            Format::RocprofCsv(CsvKind::KernelTrace) => {
                "rocprofv3 kernel_trace.csv (every layout, rocpd convert, rocprof-compute timestamps.csv)"
            }
            Format::RocprofCsv(CsvKind::KernelStats) => "rocprofv3 kernel_stats.csv",
            Format::RocprofCsv(CsvKind::MemoryCopyTrace) => "rocprofv3 memory_copy_trace.csv",
            Format::RocprofCsv(CsvKind::ApiTrace) => {
                "rocprofv3 hip_api_trace.csv and marker_api_trace.csv"
            }
            Format::Sqlite => {
                "rocpd SQLite (*_results.db), rocprof-compute analyze --output-format db, or Nsight Systems SQLite export"
            }
            Format::RocprofCsv(CsvKind::LegacyStats) => "legacy rocprof results.stats.csv",
            Format::RocprofCsv(CsvKind::KernelTop) => "rocprof-compute pmc_kernel_top.csv",
            Format::NsysRep => "Nsight Systems .nsys-rep (through nsys export)",
            Format::NcuCsv => "Nsight Compute --csv (details or raw page)",
            Format::NsysStatsCsv => "nsys stats cuda_gpu_kern_sum CSV",
            Format::Xplane => "JAX / TensorFlow / XLA .xplane.pb",
            Format::RocprofJson => "rocprofv3 -f json *_results.json (rocprofiler-sdk-tool)",
            Format::Proton => "Triton Proton hatchet JSON (proton.finalize)",
            Format::ProtonTrace => "Triton Proton Chrome trace (data=\"trace\", *.chrome_trace)",
        }
    }
}

/// Which rocprof CSV a header belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvKind {
    /// Per-dispatch kernel trace (rocprofv3 any layout, rocpd convert, omniperf timestamps).
    KernelTrace,
    /// Per-kernel statistics with min/max/stddev (rocprofv3 `kernel_stats.csv`).
    KernelStats,
    /// Per-kernel statistics without min/max (legacy rocprof `results.stats.csv`).
    LegacyStats,
    /// Memory copies (rocprofv3 `memory_copy_trace.csv`).
    MemoryCopyTrace,
    /// Host API calls and markers (rocprofv3 `hip_api_trace.csv`, `marker_api_trace.csv`).
    ApiTrace,
    /// Per-kernel statistics of a rocprof-compute workload (`pmc_kernel_top.csv`).
    KernelTop,
}

/// Every format kernelab reads ([`Format::ALL`]), as one list for help and errors.
pub fn formats_read() -> String {
    Format::ALL
        .iter()
        .map(|f| f.describe())
        .collect::<Vec<_>>()
        .join("; ")
}
