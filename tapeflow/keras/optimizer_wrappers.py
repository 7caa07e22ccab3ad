"""Keras 3's optimizers that wrap others: ``LossScaleOptimizer`` (dynamic loss scaling for
low-precision training) and ``MultiOptimizer`` with its ``OptimizerMap`` (a different optimizer
per variable), as ``keras/src/optimizers/loss_scale_optimizer.py`` and ``multi_optimizer.py``
write them. The branches Keras takes with ``ops.cond`` are ``tf.cond`` here, so a compiled
``fit`` step stays one program."""
import re
from collections.abc import MutableMapping

from ..ir import dtypes as D
from ..ops import array as A
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.tensor import STATE_paused, Variable
from ..tracer import control
from . import optimizers
from . import sparse_updates as S
from .optimizers import CallableList, Optimizer
from .recent_optimizers import variable_path

_BASE_DEFAULTS = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None,
                  "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                  "loss_scale_factor": None, "gradient_accumulation_steps": None}


def _done():
    return M.cast(0, D.int32)   # what a cond branch that only assigns returns


class LossScaleOptimizer(Optimizer):
    """Dynamic loss scaling around ``inner_optimizer``: ``fit`` multiplies the loss by
    ``dynamic_scale``; a step whose gradients are all finite is unscaled and applied, and after
    ``dynamic_growth_steps`` such steps the scale doubles; a step with an inf or nan gradient
    changes no variable and halves the scale.

    >>> opt = tf.keras.optimizers.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), initial_scale=4.0)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(4.0), v)])     # 4 / scale 4 = 1
    >>> round(float(v.numpy()), 4), float(opt.dynamic_scale.numpy())
    (0.9, 4.0)
    >>> _ = opt.apply_gradients([(tf.constant(float("inf")), v)])
    >>> round(float(v.numpy()), 4), float(opt.dynamic_scale.numpy())
    (0.9, 2.0)
    """

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None,
                 **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                             "`loss_scale_factor` directly on the `inner_optimizer`.")
        for arg, default in _BASE_DEFAULTS.items():
            if arg in kwargs and kwargs.pop(arg) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{arg}`. Instead, set `{arg}` on "
                                 f"the `inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"inner_optimizer must be a Keras Optimizer instance. Received: "
                            f"{inner_optimizer}")
        super().__init__(name or "loss_scale_optimizer", learning_rate=0.0)
        self.inner_optimizer = inner_optimizer
        self.initial_scale, self.dynamic_growth_steps = initial_scale, dynamic_growth_steps
        self.inner_optimizer.loss_scale_factor = None   # else the gradients are unscaled twice

    def build(self, var_list):
        if self._built:
            return
        self.step_counter = Variable(0, name="step_counter", dtype=D.int64, trainable=False)
        self.dynamic_scale = Variable(float(self.initial_scale), name="dynamic_scale", dtype=D.float32,
                                      trainable=False)
        self._variables.extend([self.step_counter, self.dynamic_scale])
        self.inner_optimizer.build(var_list)
        super().build(var_list)

    @property
    def variables(self):
        return CallableList(list(self._variables) + list(self.inner_optimizer.variables))

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    def check_finite(self, grads):
        """A boolean scalar: every element of every (non-None) gradient is finite."""
        finite = [R.reduce_all(M.is_finite(g)) for g in grads if g is not None]
        return R.reduce_all(A.stack(finite)) if finite else M.cast(True, D.bool)

    def scale_loss(self, loss):
        scale = self.dynamic_scale if self._built else self.initial_scale
        return M.multiply(loss, M.cast(scale, loss.dtype))

    def apply_gradients(self, grads_and_vars, name=None):
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            return self.iterations
        grads = [g for g, _ in grads_and_vars]
        variables = [v for _, v in grads_and_vars]
        with STATE_paused():
            self.build(variables)
            control.cond(self.check_finite(grads), lambda: self._finite_step(grads, variables),
                         self._nonfinite_step)
        return self.iterations

    def _finite_step(self, grads, variables):
        # Keras 3 divides an IndexedSlices by the scale as slices (sparse_updates.py)
        unscaled = [None if g is None else S.divide(g, M.cast(self.dynamic_scale, g.dtype)) for g in grads]
        self.inner_optimizer.apply_gradients(zip(unscaled, variables))

        def upscale():
            self.step_counter.assign(0)
            self.dynamic_scale.assign(M.multiply(self.dynamic_scale, 2.0))
            return _done()

        def increment():
            self.step_counter.assign_add(1)
            return _done()

        control.cond(M.equal(self.step_counter, self.dynamic_growth_steps - 1), upscale, increment)
        return _done()

    def _nonfinite_step(self):
        self.step_counter.assign(0)
        self.dynamic_scale.assign(M.multiply(self.dynamic_scale, 0.5))
        return _done()

    def finalize_variable_values(self, var_list):
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self):
        return {"name": self.name, "inner_optimizer": optimizers.serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        inner = optimizers.deserialize(config.pop("inner_optimizer"), custom_objects)
        return cls(inner, **config)


class OptimizerMap(MutableMapping):
    """Variable paths (exact, else a regular expression matching the whole path) to optimizers,
    with ``default_optimizer`` for the rest. Called on a variable, it answers for its path
    (tapeflow's paths are ``layer/weight``, without Keras' enclosing-model prefix).

    >>> m = tf.keras.optimizers.OptimizerMap(tf.keras.optimizers.SGD(), {"enc/.*": tf.keras.optimizers.Adam()})
    >>> type(m["enc/dense/kernel"]).__name__, type(m["dec/dense/kernel"]).__name__
    ('Adam', 'SGD')
    """

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(f"default_optimizer must be a Keras Optimizer instance. Received: "
                            f"{default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = optimizer_map or {}

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [p for p in self._optimizer_map if re.fullmatch(p, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value "
                             f"{self._optimizer_map[key]}. Please make sure to not use duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(f"optimizer must be a Keras Optimizer instance. Received: {optimizer}")
        if isinstance(optimizer, LossScaleOptimizer):
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[variable_path(variable)]

    def get_config(self):
        return {"default_optimizer": optimizers.serialize(self._default_optimizer),
                "optimizer_map": {k: optimizers.serialize(o) for k, o in self._optimizer_map.items()}}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        default = optimizers.deserialize(config["default_optimizer"], custom_objects)
        mapping = {k: optimizers.deserialize(o, custom_objects) for k, o in config["optimizer_map"].items()}
        return cls(default, mapping)


class MultiOptimizer(Optimizer):
    """Each variable updated by the optimizer an ``OptimizerMap`` (or a function of the
    variable) picks; ``iterations`` counts this optimizer's steps, each inner optimizer counts
    its own. It has no single ``learning_rate`` (ask ``.optimizers``).

    >>> sgd, adam = tf.keras.optimizers.SGD(0.5), tf.keras.optimizers.Adam(0.1)
    >>> opt = tf.keras.optimizers.MultiOptimizer(tf.keras.optimizers.OptimizerMap(sgd, {"a": adam}))
    >>> a, b = tf.Variable(1.0, name="a"), tf.Variable(1.0, name="b")
    >>> _ = opt.apply_gradients([(tf.constant(2.0), a), (tf.constant(2.0), b)])
    >>> round(float(a.numpy()), 4), round(float(b.numpy()), 4)
    (0.9, 0.0)
    """

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        super().__init__(name or "multi_optimizer", learning_rate=0.0, loss_scale_factor=loss_scale_factor)
        self._optimizer_map = optimizer_map
        self._inner_optimizers = []
        candidates = list(optimizer_map.values()) if hasattr(optimizer_map, "values") else []
        candidates.append(getattr(optimizer_map, "default_optimizer", None))
        for opt in candidates:
            if opt is not None and opt not in self._inner_optimizers:
                opt.loss_scale_factor = loss_scale_factor
                self._inner_optimizers.append(opt)

    @property
    def loss_scale_factor(self):
        return getattr(self, "_loss_scale_factor", None)

    @loss_scale_factor.setter
    def loss_scale_factor(self, value):
        self._loss_scale_factor = value
        for opt in getattr(self, "_inner_optimizers", ()):
            opt.loss_scale_factor = value

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the learning "
                             "rate on the individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the learning rate on "
                             "the individual sub-optimizers instead.")

    @property
    def optimizers(self):
        return self._inner_optimizers

    @property
    def variables(self):
        out = list(self._variables)
        for opt in self._inner_optimizers:
            out.extend(opt.variables)
        return CallableList(out)

    def build(self, var_list):
        if self._built:
            return
        self._optimizer_of = {}
        groups = [[] for _ in self._inner_optimizers]
        for var in var_list:
            opt = self._optimizer_map(var)
            if not isinstance(opt, Optimizer):
                raise ValueError(f"Optimizer for variable {var.name} is not an Optimizer instance.")
            if isinstance(opt, LossScaleOptimizer):
                raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
            if isinstance(opt, MultiOptimizer):
                raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")
            if opt not in self._inner_optimizers:
                opt.loss_scale_factor = self.loss_scale_factor
                self._inner_optimizers.append(opt)
                groups.append([])
            index = self._inner_optimizers.index(opt)
            self._optimizer_of[var._id] = index
            groups[index].append(var)
        for opt, variables in zip(self._inner_optimizers, groups):
            if variables:
                opt.build(variables)
        super().build(var_list)

    def apply_gradients(self, grads_and_vars, name=None):
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            return self._iterations
        with STATE_paused():
            self.build([v for _, v in grads_and_vars])
            if len(grads_and_vars) != len(self._optimizer_of):
                raise ValueError(f"Gradients must match trainable variables one-to-one. Received "
                                 f"{len(grads_and_vars)} gradients and {len(self._optimizer_of)} variables.")
            groups = [[] for _ in self._inner_optimizers]
            for g, v in grads_and_vars:
                self._check_known(v)
                groups[self._optimizer_of[v._id]].append((g, v))
            for opt, pairs in zip(self._inner_optimizers, groups):
                if pairs:
                    opt.apply_gradients(pairs)
            self._iterations.assign_add(1)
        return self._iterations

    def finalize_variable_values(self, var_list):
        groups = [[] for _ in self._inner_optimizers]
        for v in var_list:
            groups[self._optimizer_of[v._id]].append(v)
        for opt, variables in zip(self._inner_optimizers, groups):
            if variables:
                opt.finalize_variable_values(variables)

    def get_config(self):
        if isinstance(self._optimizer_map, OptimizerMap):
            mapping = {"module": "keras.optimizers", "class_name": "OptimizerMap",
                       "config": self._optimizer_map.get_config(), "registered_name": None}
        else:   # a function: saved by name, found again through custom_objects (as Keras)
            mapping = {"module": getattr(self._optimizer_map, "__module__", None), "class_name": "function",
                       "config": getattr(self._optimizer_map, "__name__", None), "registered_name": "function"}
        return {"optimizer_map": mapping, "loss_scale_factor": self.loss_scale_factor, "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        mapping = config["optimizer_map"]
        if isinstance(mapping, dict) and mapping.get("class_name") == "OptimizerMap":
            config["optimizer_map"] = OptimizerMap.from_config(mapping["config"], custom_objects)
        elif isinstance(mapping, dict) and mapping.get("class_name") == "function":
            fn = dict(custom_objects or {}).get(mapping.get("config"))
            if fn is None:
                raise ValueError(f"Could not locate function '{mapping.get('config')}'. Make sure custom "
                                 f"classes and functions are passed via `custom_objects`.")
            config["optimizer_map"] = fn
        return cls(**config)


CLASSES = [LossScaleOptimizer, MultiOptimizer, OptimizerMap]

__all__ = ["LossScaleOptimizer", "MultiOptimizer", "OptimizerMap", "CLASSES"]
