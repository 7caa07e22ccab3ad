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
    """The CPU as a logical device, as TensorFlow lists it (no GPU or TPU); as many CPUs as
    ``set_logical_device_configuration`` split it into.

    >>> tf.config.list_logical_devices("CPU")
    [LogicalDevice(name='/device:CPU:0', device_type='CPU')]
    """
    if device_type not in (None, "CPU"):
        return []
    n = len(_logical_config) if _logical_config else 1
    return [LogicalDevice(f"/device:CPU:{i}", "CPU") for i in range(n)]


class LogicalDeviceConfiguration(NamedTuple):
    """How to split a physical device into logical ones (TensorFlow's
    ``tf.config.LogicalDeviceConfiguration``); on the CPU only their number counts.

    >>> tf.config.LogicalDeviceConfiguration(memory_limit=5)
    LogicalDeviceConfiguration(memory_limit=5, experimental_priority=None, experimental_device_ordinal=None)
    """
    memory_limit: int | None = None
    experimental_priority: int | None = None
    experimental_device_ordinal: int | None = None


_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_logical_config: list[LogicalDeviceConfiguration] | None = None
_soft_placement = True


def _check_device(device):
    if not isinstance(device, PhysicalDevice) or device != _CPU:
        raise ValueError(f"Unrecognized device: {device!r}")


def get_logical_device_configuration(device: PhysicalDevice) -> list | None:
    """The logical devices ``device`` is split into, or None if it was never split.

    >>> cpu = tf.config.list_physical_devices("CPU")[0]
    >>> tf.config.get_logical_device_configuration(cpu) is None
    True
    """
    _check_device(device)
    return None if _logical_config is None else list(_logical_config)


def set_logical_device_configuration(device: PhysicalDevice, logical_devices: list | None) -> None:
    """Split the CPU into ``len(logical_devices)`` logical CPUs ``/device:CPU:0``, ...
    (as TensorFlow does to test distribution on one machine); None undoes it. They share
    the one NumPy/Numba runtime, so the split changes names, not speed.

    >>> cpu = tf.config.list_physical_devices("CPU")[0]
    >>> c = tf.config.LogicalDeviceConfiguration()
    >>> tf.config.set_logical_device_configuration(cpu, [c, c])
    >>> [d.name for d in tf.config.list_logical_devices()]
    ['/device:CPU:0', '/device:CPU:1']
    >>> tf.config.set_logical_device_configuration(cpu, None)
    """
    global _logical_config
    _check_device(device)
    if logical_devices is None:
        _logical_config = None
        return
    logical_devices = list(logical_devices)
    if not all(isinstance(d, LogicalDeviceConfiguration) for d in logical_devices):
        raise ValueError(f"logical_devices must be LogicalDeviceConfiguration objects, got "
                         f"{logical_devices!r}")
    _logical_config = logical_devices or None


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The physical devices the runtime may use: the CPU (no GPU or TPU here).

    >>> tf.config.get_visible_devices()
    [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    >>> tf.config.get_visible_devices("GPU")
    []
    """
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type: str | None = None) -> None:
    """Say which physical devices the runtime may use. The CPU cannot be hidden: as in
    TensorFlow, leaving it out of ``devices`` keeps it visible.

    >>> tf.config.set_visible_devices(tf.config.list_physical_devices("CPU"))
    """
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for d in devices:
        _check_device(d)
        if device_type is not None and d.device_type != device_type:
            raise ValueError(f"Device {d!r} is not of type {device_type!r}")


def get_soft_device_placement() -> bool:
    """Whether an op that cannot run on the requested device runs elsewhere (default True).
    tapeflow runs everything on the CPU, whatever ``tf.device`` names.

    >>> tf.config.get_soft_device_placement()
    True
    """
    return _soft_placement


def set_soft_device_placement(enabled: bool) -> None:
    """Set what ``get_soft_device_placement`` answers (TensorFlow's switch; tapeflow places
    every op on the CPU either way).

    >>> tf.config.set_soft_device_placement(True)
    """
    global _soft_placement
    _soft_placement = bool(enabled)


def experimental_run_functions_eagerly(run_eagerly: bool) -> None:
    """The deprecated name of ``run_functions_eagerly``.

    >>> tf.config.experimental_run_functions_eagerly(False)
    """
    run_functions_eagerly(run_eagerly)


def experimental_functions_run_eagerly() -> bool:
    """The deprecated name of ``functions_run_eagerly``.

    >>> tf.config.experimental_functions_run_eagerly()
    False
    """
    return functions_run_eagerly()


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
           "loop_memory", "threading", "LogicalDeviceConfiguration",
           "get_logical_device_configuration", "set_logical_device_configuration",
           "get_visible_devices", "set_visible_devices", "get_soft_device_placement",
           "set_soft_device_placement", "experimental_run_functions_eagerly",
           "experimental_functions_run_eagerly"]
