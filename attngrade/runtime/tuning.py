"""Process settings for a grading process, made before the library is imported."""

from __future__ import annotations

import gc
import importlib
import os
from types import ModuleType

# Threads for numpy's BLAS, unless the user chose (by any of the names a BLAS reads): one.
# attngrade's arrays are a few rows long and its work is split over processes; more BLAS threads
# only spin after each call.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS",
                "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")

# Allocations (less deallocations) between two collections of the youngest generation. Grading
# makes millions of short-lived objects and few cycles: at the default threshold the young
# generations are collected hundreds of times a run to find them.
YOUNG_COLLECTION = 10_000


def for_grading() -> None:
    """One BLAS thread (before numpy is imported: it reads them once) and a lazier collector."""
    if not any(name in os.environ for name in BLAS_THREADS):
        os.environ.update(dict.fromkeys(BLAS_THREADS, "1"))
    gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])


def import_frozen(module: str) -> ModuleType:
    """Import `module` with the cyclic collector off, then freeze what the import made.

    Importing sympy and numpy makes a few hundred thousand objects that live as long as the
    process; the collector's passes over them while they are made find nothing to free, and
    frozen, no later collection walks them either."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(module)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def exit_without_collecting() -> None:
    """At exit the interpreter collects every cycle once more, which frees nothing the OS does not
    take back anyway: freeze everything first. atexit handlers, flushes and finalizers still run."""
    gc.freeze()
