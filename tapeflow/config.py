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


# -- device configuration of the one CPU (issue 29) -----------------------------------------

class LogicalDeviceConfiguration(NamedTuple):
    """How a physical device is split into logical ones (TF's; tapeflow runs every logical CPU
    on the same one, so the settings are recorded, not enforced).

    >>> tf.config.LogicalDeviceConfiguration(memory_limit=10).memory_limit
    10
    """
    memory_limit: int | None = None
    experimental_priority: int | None = None
    experimental_device_ordinal: int | None = None


_logical_configuration: dict = {}
_soft_device_placement = [True]


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The physical devices ops may run on: the CPU.

    >>> tf.config.get_visible_devices("GPU")
    []
    """
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type: str | None = None) -> None:
    """Accepts the CPU (alone or in a list); a device that is not listed is a ValueError, and
    hiding the CPU is refused (there would be nothing left to run on).

    >>> tf.config.set_visible_devices(tf.config.list_physical_devices("CPU"))
    """
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    known = list_physical_devices()
    for d in devices:
        if d not in known:
            raise ValueError(f"Unrecognized device: {d!r}")
    if not any(d.device_type == "CPU" for d in devices) and device_type in (None, "CPU"):
        raise ValueError("tapeflow runs on the CPU: the CPU cannot be made invisible")


def get_logical_device_configuration(device: PhysicalDevice) -> list | None:
    """The logical devices configured on ``device`` (None until set, as in TF).

    >>> tf.config.get_logical_device_configuration(tf.config.list_physical_devices()[0]) is None
    True
    """
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")
    return _logical_configuration.get(device.name)


def set_logical_device_configuration(device: PhysicalDevice, logical_devices) -> None:
    """Records the split of ``device``; like TF after its runtime started, a different split
    than the one recorded is a RuntimeError (every tapeflow op is the runtime).

    >>> cpu = tf.config.list_physical_devices("CPU")[0]
    >>> tf.config.set_logical_device_configuration(cpu, None)
    """
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")
    logical_devices = list(logical_devices) if logical_devices is not None else None
    current = _logical_configuration.get(device.name)
    if current is not None and current != logical_devices:
        raise RuntimeError("Virtual devices cannot be modified after being initialized")
    _logical_configuration[device.name] = logical_devices


def get_soft_device_placement() -> bool:
    """Whether an op may fall back to another device (True, as TF's default; there is one).

    >>> tf.config.get_soft_device_placement()
    True
    """
    return _soft_device_placement[0]


def set_soft_device_placement(enabled: bool) -> None:
    """Records whether ops may fall back to another device (there is only the CPU).

    >>> tf.config.set_soft_device_placement(True)
    """
    _soft_device_placement[0] = bool(enabled)


def experimental_run_functions_eagerly(run_eagerly: bool) -> None:
    """TF's deprecated name of ``run_functions_eagerly``.

    >>> tf.config.experimental_run_functions_eagerly(False)
    """
    run_functions_eagerly(run_eagerly)


def experimental_functions_run_eagerly() -> bool:
    """TF's deprecated name of ``functions_run_eagerly``.

    >>> tf.config.experimental_functions_run_eagerly()
    False
    """
    return functions_run_eagerly()

__all__ = ["PhysicalDevice", "LogicalDevice", "list_physical_devices", "list_logical_devices",
           "run_functions_eagerly", "functions_run_eagerly", "set_log_compiles", "log_compiles",
           "loop_memory", "threading", "LogicalDeviceConfiguration", "get_visible_devices",
           "set_visible_devices", "get_logical_device_configuration",
           "set_logical_device_configuration", "get_soft_device_placement",
           "set_soft_device_placement", "experimental_run_functions_eagerly",
           "experimental_functions_run_eagerly"]
