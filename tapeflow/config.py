"""``tapeflow.config``: TensorFlow's ``tf.config`` names that matter on one CPU."""
from typing import NamedTuple

from .tracer.compile_log import log_compiles, set_log_compiles
from .tracer.control_grads import loop_memory
from .tracer.function import functions_run_eagerly, run_functions_eagerly


class PhysicalDevice(NamedTuple):
    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    name: str
    device_type: str


def list_physical_devices(device_type=None):
    """The CPU, as TensorFlow lists it; no GPU or TPU (tapeflow runs on the CPU only)."""
    cpu = PhysicalDevice("/physical_device:CPU:0", "CPU")
    return [cpu] if device_type in (None, "CPU") else []


def list_logical_devices(device_type=None):
    cpu = LogicalDevice("/device:CPU:0", "CPU")
    return [cpu] if device_type in (None, "CPU") else []


__all__ = ["PhysicalDevice", "LogicalDevice", "list_physical_devices", "list_logical_devices",
           "run_functions_eagerly", "functions_run_eagerly", "set_log_compiles", "log_compiles",
           "loop_memory"]
