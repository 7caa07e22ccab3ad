"""``tapeflow.config``: TensorFlow's ``tf.config`` names that matter on one CPU."""
from __future__ import annotations

from typing import NamedTuple

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


__all__ = ["PhysicalDevice", "LogicalDevice", "list_physical_devices", "list_logical_devices",
           "run_functions_eagerly", "functions_run_eagerly", "set_log_compiles", "log_compiles",
           "loop_memory"]
