"""``tf.debugging.set_log_device_placement``: with it on, each executed op says where it ran,
in TensorFlow 2.21's words. Every op runs on the one CPU, so the device is always
``/job:localhost/replica:0/task:0/device:CPU:0``; the lines let a program that reads them
(or a user comparing logs with TensorFlow's) see what ran.

- An eager op: ``Executing op AddV2 in device /job:.../device:CPU:0`` on stderr, once per
  execution, with the header of TensorFlow's log lines (``I0000 00:00:<seconds> <thread>
  <file>:<line>] ``: the file and line are this module's).
- A variable's ops, as TensorFlow's eager ones: ``VarHandleOp`` and ``AssignVariableOp`` when
  it is created, ``ReadVariableOp`` per read, ``AssignVariableOp``/``AssignAddVariableOp``/
  ``AssignSubVariableOp`` per write (a function writing a variable writes it back after its
  call, so that logs an ``AssignVariableOp`` TensorFlow's function runs inside).
- A function call that runs a program (not one inlined into a function being traced):
  ``Executing op __inference_<name>_<n> in device ...``, once per call; before its first
  such call, the placement of each node of its graph, as TensorFlow's placer prints them when
  it first runs a function: ``<node>: (<op>): <device>`` on stdout and, with the header, on
  stderr. The nodes are named as ``ConcreteFunction.graph.get_operations()`` names them
  (arguments by their parameter names, ops by their type numbered ``Mul``, ``Mul_1``, as
  TensorFlow numbers repeated names), arguments listed as ``_Arg`` and results as
  ``identity_RetVal``, ``identity_1_RetVal`` (``_Retval``), as TensorFlow's function graphs
  return each result through an ``Identity``. ``<n>`` numbers the functions in the order they
  are first logged (TensorFlow's is its own counter).

Not logged, unlike TensorFlow: the placer's lines for the one-op functions TensorFlow builds
the first time it runs an op eagerly (an artifact of its kernel cache), and the
``_EagerConst`` TensorFlow runs to convert a Python value (tapeflow converts without an op).
TensorFlow 2.21 reads the switch once, when its runtime starts (a switch turned on after the
first op logs nothing, one turned off later keeps logging); tapeflow's takes effect at once,
as the documentation of ``set_log_device_placement`` says.

Off, the cost is one flag read per eager op (``ENABLED[0]`` in ``dispatch.apply``), per
variable read or write and per function call.
"""
import itertools
import operator
import sys
import threading
import time
import weakref

import numpy as np

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"

# [on?]: a list so dispatch and the tracer read it as one global and see changes (as
# numerics_check.ENABLED).
ENABLED = [False]

_names = weakref.WeakKeyDictionary()     # function -> its __inference_ name, once logged
_numbers = itertools.count(1)
_lock = threading.Lock()


def set_log_device_placement(enabled) -> None:
    """Turn logging of each executed op's device on or off.

    ``tf.debugging.set_log_device_placement``. ``enabled`` is a bool (or an integer, as
    TensorFlow's pybind conversion takes; None is False).

    >>> tf.debugging.set_log_device_placement(True)
    >>> tf.debugging.get_log_device_placement()
    True
    >>> tf.debugging.set_log_device_placement(False)
    """
    if enabled is None:
        enabled = False
    elif not isinstance(enabled, (bool, np.bool_)):
        try:
            enabled = operator.index(enabled)
        except TypeError:
            raise TypeError(f"set_log_device_placement(): enabled must be a bool, got "
                            f"{type(enabled).__name__} {enabled!r}") from None
    ENABLED[0] = bool(enabled)


def get_log_device_placement() -> bool:
    """Whether each executed op's device is logged (``set_log_device_placement``); False by
    default.

    ``tf.debugging.get_log_device_placement``.

    >>> tf.debugging.get_log_device_placement()
    False
    """
    return ENABLED[0]


def _log(message):
    """One line on stderr with the header of TensorFlow's (absl's) log lines."""
    where = f"placement_log.py:{sys._getframe().f_lineno}"
    sys.stderr.write(f"I0000 00:00:{time.time():.6f} {threading.get_native_id():>7} "
                     f"{where}] {message}\n")


def executed(op):
    """An op ran eagerly: TensorFlow's line for it."""
    _log(f"Executing op {op} in device {DEVICE}")


def function_called(function):
    """``function`` (a ConcreteFunction) runs its program: its graph's placement the first
    time, then the line for the call."""
    name = _names.get(function)
    if name is None:
        with _lock:
            name = _names.get(function)
            if name is None:
                name = _names[function] = f"__inference_{function.name}_{next(_numbers)}"
                _placement(function.graph)
    _log(f"Executing op {name} in device {DEVICE}")


def placement_lines(graph):
    """``<node>: (<op>): <device>`` per argument, node and result of ``graph`` (a FuncGraph),
    in that order."""
    ops = graph.get_operations()
    n_in = len(graph.inputs)
    lines = [f"{op.name}: (_Arg): {DEVICE}" for op in ops[:n_in]]
    lines += [f"{op.name}: ({op.type}): {DEVICE}" for op in ops[n_in:]]
    lines += [f"identity{'' if k == 0 else f'_{k}'}_RetVal: (_Retval): {DEVICE}"
              for k in range(len(graph.outputs))]
    return lines


def _placement(graph):
    lines = placement_lines(graph)
    sys.stdout.write("".join(line + "\n" for line in lines))
    for line in lines:
        _log(line)


__all__ = ["set_log_device_placement", "get_log_device_placement"]
