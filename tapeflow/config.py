"""``tapeflow.config``: TensorFlow's ``tf.config`` names that matter on one CPU."""
from __future__ import annotations

from typing import NamedTuple

from .runtime import blas_threads
from .tracer.compile_log import log_compiles, set_log_compiles
from .tracer.control_grads import loop_memory
from .tracer.function import functions_run_eagerly, run_functions_eagerly


class PhysicalDevice(NamedTuple):
    """A device as ``list_physical_devices`` names it (TensorFlow's ``tf.config.PhysicalDevice``).

    >>> tf.config.list_physical_devices()[0].device_type
    'CPU'
    """
    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """A device as ``list_logical_devices`` names it (TensorFlow's ``tf.config.LogicalDevice``).

    >>> tf.config.list_logical_devices()[0].name
    '/device:CPU:0'
    """
    name: str
    device_type: str


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The CPU, as TensorFlow lists it; no GPU or TPU (tapeflow runs on the CPU only).

    >>> tf.config.list_physical_devices()
    [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    >>> tf.config.list_physical_devices("GPU")
    []
    """
    cpu = PhysicalDevice("/physical_device:CPU:0", "CPU")
    return [cpu] if device_type in (None, "CPU") else []


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """The CPU as a logical device, as TensorFlow lists it (no GPU or TPU).

    >>> tf.config.list_logical_devices("CPU")
    [LogicalDevice(name='/device:CPU:0', device_type='CPU')]
    """
    cpu = LogicalDevice("/device:CPU:0", "CPU")
    return [cpu] if device_type in (None, "CPU") else []


class _Threading:
    """``tf.config.threading``: how many threads one op may use (runtime/blas_threads.py).

    The intra-op count bounds OpenBLAS's and Numba's pools (0, the default, leaves the
    machine's count, with small products on one thread); the inter-op count is recorded
    (tapeflow runs one op at a time). Unlike TensorFlow, both may be changed after the first op.

    >>> tf.config.threading.get_intra_op_parallelism_threads()
    0
    """

    @staticmethod
    def set_intra_op_parallelism_threads(num_threads: int) -> None:
        blas_threads.set_intra_op_threads(num_threads)

    @staticmethod
    def get_intra_op_parallelism_threads() -> int:
        return blas_threads.intra_op_threads()

    @staticmethod
    def set_inter_op_parallelism_threads(num_threads: int) -> None:
        blas_threads.set_inter_op_threads(num_threads)

    @staticmethod
    def get_inter_op_parallelism_threads() -> int:
        return blas_threads.inter_op_threads()


threading = _Threading()

__all__ = ["PhysicalDevice", "LogicalDevice", "list_physical_devices", "list_logical_devices",
           "run_functions_eagerly", "functions_run_eagerly", "set_log_compiles", "log_compiles",
           "loop_memory", "threading"]
