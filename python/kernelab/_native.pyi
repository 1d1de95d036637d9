"""Type stubs of ``kernelab._native`` (crates/python/src/lib.rs)."""

from typing import Any, Dict, List, Optional, Sequence, Tuple

__version__: str

class Error(Exception):
    """A kernelab error: ``str(e)`` is the CLI's message."""

    message: str
    file: Optional[str]
    line: Optional[int]
    byte: Optional[int]
    field: Optional[str]

class InputError(Error):
    """An input file kernelab cannot read, or reads as something it is not."""

class UsageError(Error):
    """A setting that is not valid."""

class Table:
    """An Arrow table (the Arrow PyCapsule interface: ``pyarrow.table(t)``, ``polars.DataFrame(t)``)."""

    @property
    def num_rows(self) -> int: ...
    @property
    def column_names(self) -> List[str]: ...
    def __len__(self) -> int: ...
    def __arrow_c_schema__(self) -> object: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...
    def to_pyarrow(self) -> Any: ...
    def to_pandas(self, **kwargs: Any) -> Any:
        """A pandas DataFrame through pyarrow (``split_blocks=True`` unless given)."""
        ...
    def to_polars(self) -> Any: ...

class Profile:
    """A ranked profile and the dispatch store it was made from."""

    @property
    def document(self) -> Dict[str, Any]: ...
    @property
    def summary(self) -> Dict[str, Any]: ...
    @property
    def sources(self) -> List[Dict[str, Any]]: ...
    @property
    def notes(self) -> List[str]: ...
    @property
    def kernels(self) -> Table: ...
    @property
    def phases(self) -> Table: ...
    @property
    def graphs(self) -> Table: ...
    @property
    def dispatches(self) -> Table: ...

# (path, "path", None), (label, "file", bytes or a NumPy byte view), (label, "array", ndarray).
TensorInput = Tuple[str, str, Any]
Triple = Tuple[float, float, Optional[str]]

def profile(
    paths: Sequence[str],
    group: str = "family",
    rules: Optional[str] = None,
    by_phase: bool = False,
    by_graph: bool = False,
    device: Optional[int] = None,
    stream: Optional[int] = None,
    time_range: Optional[str] = None,
    name: Optional[str] = None,
) -> Profile: ...
def compare(
    base: Sequence[str],
    cand: Sequence[str],
    control: Sequence[str] = ...,
    group: str = "family",
    rules: Optional[str] = None,
    device: Optional[int] = None,
    stream: Optional[int] = None,
    time_range: Optional[str] = None,
    name: Optional[str] = None,
    by_graph: bool = False,
) -> Dict[str, Any]: ...
def code_show(paths: Sequence[str], disassemble: bool = True, max_decompressed: Optional[int] = None) -> Dict[str, Any]: ...
def code_diff(base: str, cand: str, disassemble: bool = True, max_decompressed: Optional[int] = None) -> Dict[str, Any]: ...
def code_matrix(
    base: Sequence[str],
    cand: Sequence[str],
    base_dir: Optional[str] = None,
    cand_dir: Optional[str] = None,
    key: Optional[str] = None,
    disassemble: bool = False,
    max_decompressed: Optional[int] = None,
) -> Dict[str, Any]: ...
def check_bitwise(a: TensorInput, b: TensorInput, zero_equal: bool = False, nan_equal: bool = False, first: int = 10, dtype: Optional[str] = None, shape: Optional[List[int]] = None, max_decompressed: Optional[int] = None) -> Dict[str, Any]: ...
def check_close(a: TensorInput, b: TensorInput, oracle: bool = False, rtol: Optional[float] = None, atol: Optional[float] = None, ulp: Optional[int] = None, nan_equal: bool = False, dtype: Optional[str] = None, shape: Optional[List[int]] = None, max_decompressed: Optional[int] = None) -> Dict[str, Any]: ...
def check_files(gate: str, inputs: Sequence[TensorInput], dtype: Optional[str] = None, shape: Optional[List[int]] = None, max_decompressed: Optional[int] = None) -> Dict[str, Any]: ...
def ab_analyze(design: Dict[str, Any], pairs_: Optional[Sequence[Triple]] = None, aa: Optional[Sequence[Triple]] = None, file: Optional[str] = None, metric: Optional[str] = None) -> Dict[str, Any]: ...
def serve_analyze(samples: str) -> Dict[str, Any]: ...
def bundle_records(dir: str) -> Tuple[List[str], List[Tuple[str, str]]]: ...
def bundle_report(dir: str, format: str = "md", title: str = "kernelab evidence", strict: bool = False) -> Any: ...
def bundle_check(dir: str, note: Optional[str] = None, text: Optional[str] = None) -> Dict[str, Any]: ...
def kernel_orders(rounds: int) -> List[str]: ...
def kernel_batch(us: Sequence[float]) -> int: ...
def kernel_measured(
    measured_json: str,
    label: str,
    source: str,
    samples: Optional[str] = None,
    record: Optional[str] = None,
    argv: Sequence[str] = ...,
    started: str = "",
    inputs: Sequence[Tuple[str, Optional[str], Optional[int]]] = ...,
) -> Dict[str, Any]: ...
def kernel_text(doc_json: str, format: str = "table", width: Optional[int] = None) -> str: ...
def kernel_code_pair(
    base: str, base_symbol: str, cand: str, cand_symbol: str
) -> Tuple[bool, str, List[Optional[int]], List[Optional[int]]]: ...
def kernel_plan(path: str) -> Dict[str, Any]: ...
def main(argv: Sequence[str]) -> int: ...
