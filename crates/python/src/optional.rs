//! The optional Python packages (pyarrow, pandas, polars, NumPy), imported by the methods that
//! need them: a missing one raises `ModuleNotFoundError` that names what to install.

use pyo3::exceptions::{PyImportError, PyModuleNotFoundError};
use pyo3::prelude::*;
use pyo3::types::PyModule;

/// The `frames` extra of `pyproject.toml`: the readers a table converts to.
const FRAMES: &[&str] = &["pyarrow", "pandas", "polars"];

/// `packages`, imported in order; the first that is missing raises `ModuleNotFoundError`
/// saying that `what` needs them and how to install them (the import error as its cause).
/// Returns the first.
pub(crate) fn import<'py>(
    py: Python<'py>,
    what: &str,
    packages: &[&str],
) -> PyResult<Bound<'py, PyModule>> {
    let mut first = None;
    for p in packages {
        match py.import(*p) {
            Ok(m) => {
                first.get_or_insert(m);
            }
            Err(e) if e.is_instance_of::<PyImportError>(py) => {
                let err = PyModuleNotFoundError::new_err(message(what, packages, p));
                err.set_cause(py, Some(e));
                return Err(err);
            }
            Err(e) => return Err(e),
        }
    }
    first.ok_or_else(|| PyImportError::new_err(format!("{what}: no package to import")))
}

/// What [`import`] says when `missing`, one of `packages`, cannot be imported.
fn message(what: &str, packages: &[&str], missing: &str) -> String {
    let extra = if packages.iter().all(|p| FRAMES.contains(p)) {
        " (or install kernelab with its \"frames\" extra: pip install '.[frames]' in the checkout)"
    } else {
        ""
    };
    format!(
        "{what} needs {}, and {missing} is not installed: pip install {}{extra}",
        packages.join(" and "),
        packages.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::message;

    #[test]
    fn the_message_names_the_packages_to_install_and_the_extra() {
        assert_eq!(
            message("Table.to_pandas", &["pyarrow", "pandas"], "pyarrow"),
            "Table.to_pandas needs pyarrow and pandas, and pyarrow is not installed: pip install \
             pyarrow pandas (or install kernelab with its \"frames\" extra: pip install \
             '.[frames]' in the checkout)"
        );
        assert_eq!(
            message("an array", &["numpy"], "numpy"),
            "an array needs numpy, and numpy is not installed: pip install numpy"
        );
    }
}
