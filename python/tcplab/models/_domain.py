"""Input checks shared by the closed-form models.

Every model converts its inputs with :func:`as_float_array` and checks its
domain with the ``require_*`` helpers, so a value outside the domain raises a
``ValueError`` that names the parameter, the domain and the offending value.
"""

from __future__ import annotations

import numpy as np


def as_float_array(name: str, value) -> np.ndarray:
    """`value` as a float ndarray; NaN is rejected (a model has no answer for it)."""
    arr = np.asarray(value, dtype=float)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must be a number, got NaN")
    return arr


def _first_bad(arr: np.ndarray, ok: np.ndarray):
    bad = np.asarray(arr)[~np.asarray(ok)]
    return bad.flat[0] if bad.size else None


def require(name: str, arr: np.ndarray, ok, domain: str) -> None:
    """Raise ValueError naming `name` and `domain` unless `ok` holds everywhere."""
    ok = np.broadcast_to(np.asarray(ok, dtype=bool), np.shape(arr))
    if not ok.all():
        raise ValueError(f"{name} must be {domain}, got {_first_bad(arr, ok):g}")


def open_unit(name: str, value) -> np.ndarray:
    """`value` checked to lie in the open interval (0, 1)."""
    arr = as_float_array(name, value)
    require(name, arr, (arr > 0) & (arr < 1), "in the open interval (0, 1)")
    return arr


def positive(name: str, value) -> np.ndarray:
    """`value` checked to be > 0 and finite."""
    arr = as_float_array(name, value)
    require(name, arr, (arr > 0) & np.isfinite(arr), "a finite number > 0")
    return arr


def non_negative(name: str, value) -> np.ndarray:
    """`value` checked to be >= 0 and finite."""
    arr = as_float_array(name, value)
    require(name, arr, (arr >= 0) & np.isfinite(arr), "a finite number >= 0")
    return arr


def count(name: str, value, minimum: int = 1) -> np.ndarray:
    """`value` checked to be a whole number >= `minimum`, returned as int64."""
    arr = as_float_array(name, value)
    require(
        name,
        arr,
        np.isfinite(arr) & (arr == np.round(arr)) & (arr >= minimum),
        f"a whole number >= {minimum}",
    )
    return arr.astype(np.int64)


def scalar_or_array(result: np.ndarray):
    """A 0-d result as a Python float, anything else unchanged."""
    result = np.asarray(result)
    return result.item() if result.ndim == 0 else result
