"""``keras.optimizers.schedules``: learning rates as functions of the optimizer's step.

Each schedule is Keras 3's formula written in tapeflow ops of the step, so an optimizer built
with one evaluates it from its ``iterations`` variable inside the compiled train step: the rate
changes every step without a retrace.
"""
import math

from ..ir import dtypes as D
from ..ops import math as M
from ..runtime.tensor import convert_to_tensor
from .config_dicts import class_config, from_class_config


def _f32(x):
    return M.cast(convert_to_tensor(x), D.float32)


def _ceil(x):
    return M.negative(M.floor(M.negative(x)))


class LearningRateSchedule:
    """Base class: ``schedule(step)`` is the learning rate at that step."""

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must override "
                                  f"`__call__(self, step)`.")

    def get_config(self):
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must override "
                                  f"`get_config()` in order to be serializable.")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _check_steps(name, value):
    if value <= 0:
        raise ValueError(f"Argument `{name}` must be > 0. Received: {name}={value}")


class _RateDecay(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments, their progress
    ``step / decay_steps`` (floored with ``staircase``) and their config."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase, name):
        _check_steps("decay_steps", decay_steps)
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.decay_rate, self.staircase, self.name = decay_rate, staircase, name

    def _progress(self, step):
        p = M.divide(_f32(step), _f32(self.decay_steps))
        return M.floor(p) if self.staircase else p

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_RateDecay):
    """``initial * decay_rate ** (step / decay_steps)`` (the exponent floored with ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        p = self._progress(step)
        return M.multiply(_f32(self.initial_learning_rate), M.pow(_f32(self.decay_rate), p))


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[i]`` for steps in ``(boundaries[i-1], boundaries[i]]``."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"The length of boundaries should be 1 less than the length of values. "
                             f"Received: boundaries={boundaries} of length {len(boundaries)}, and "
                             f"values={values} of length {len(values)}.")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        step = _f32(step)
        values = [_f32(v) for v in self.values]
        bounds = [float(b) for b in self.boundaries]
        result = M.multiply(M.cast(M.less_equal(step, bounds[0]), D.float32), values[0])
        result = M.add(result, M.multiply(M.cast(M.greater(step, bounds[-1]), D.float32), values[-1]))
        for low, high, value in zip(bounds[:-1], bounds[1:], values[1:-1]):
            inside = M.logical_and(M.greater(step, low), M.less_equal(step, high))
            result = M.add(result, M.multiply(M.cast(inside, D.float32), value))
        return result

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """From ``initial`` to ``end_learning_rate`` along ``(1 - step / decay_steps) ** power``."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0,
                 cycle=False, name="PolynomialDecay"):
        _check_steps("decay_steps", decay_steps)
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power, self.cycle, self.name = end_learning_rate, power, cycle, name

    def __call__(self, step):
        initial, end = _f32(self.initial_learning_rate), _f32(self.end_learning_rate)
        step, decay_steps = _f32(step), _f32(self.decay_steps)
        if self.cycle:
            multiplier = M.where(M.equal(step, 0.0), _f32(1.0), _ceil(M.divide(step, decay_steps)))
            decay_steps = M.multiply(decay_steps, multiplier)
        else:
            step = M.minimum(step, decay_steps)
        p = M.divide(step, decay_steps)
        return M.add(M.multiply(M.subtract(initial, end), M.pow(M.subtract(1.0, p), _f32(self.power))), end)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class InverseTimeDecay(_RateDecay):
    """``initial / (1 + decay_rate * step / decay_steps)`` (floored with ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        p = self._progress(step)
        return M.divide(_f32(self.initial_learning_rate), M.add(_f32(1.0), M.multiply(_f32(self.decay_rate), p)))


class CosineDecay(LearningRateSchedule):
    """Half a cosine from the rate down to ``alpha`` times it over ``decay_steps``, after an
    optional linear warmup to ``warmup_target`` over ``warmup_steps``."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        _check_steps("decay_steps", decay_steps)
        self.initial_learning_rate, self.decay_steps, self.alpha = initial_learning_rate, decay_steps, alpha
        self.name, self.warmup_target, self.warmup_steps = name, warmup_target, warmup_steps

    def _decay(self, step, decay_steps, decay_from):
        fraction = M.divide(step, decay_steps)
        cosine = M.multiply(0.5, M.add(1.0, M.cos(M.multiply(_f32(math.pi), fraction))))
        return M.multiply(decay_from, M.add(M.multiply(1.0 - self.alpha, cosine), _f32(self.alpha)))

    def __call__(self, step):
        initial = _f32(self.initial_learning_rate)
        decay_steps, step = _f32(self.decay_steps), _f32(step)
        if self.warmup_target is None:
            return self._decay(M.minimum(step, decay_steps), decay_steps, initial)
        target, warmup = _f32(self.warmup_target), _f32(self.warmup_steps)
        step = M.minimum(step, M.add(decay_steps, warmup))
        warm = M.add(M.multiply(M.subtract(target, initial), M.divide(step, M.maximum(warmup, 1e-30))), initial)
        decayed = self._decay(M.subtract(step, warmup), decay_steps, target)
        return M.where(M.less(step, warmup), warm, decayed)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay restarted after ``first_decay_steps``, each period ``t_mul`` times longer
    and ``m_mul`` times lower (SGDR)."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                 name="SGDRDecay"):
        _check_steps("first_decay_steps", first_decay_steps)
        self.initial_learning_rate, self.first_decay_steps = initial_learning_rate, first_decay_steps
        self._t_mul, self._m_mul, self.alpha, self.name = t_mul, m_mul, alpha, name

    def __call__(self, step):
        fraction = M.divide(_f32(step), _f32(self.first_decay_steps))
        t_mul = _f32(self._t_mul)
        if self._t_mul == 1.0:
            i_restart = M.floor(fraction)
            fraction = M.subtract(fraction, i_restart)
        else:
            i_restart = M.floor(M.divide(M.log(M.subtract(1.0, M.multiply(fraction, M.subtract(1.0, t_mul)))),
                                         M.log(t_mul)))
            sum_r = M.divide(M.subtract(1.0, M.pow(t_mul, i_restart)), M.subtract(1.0, t_mul))
            fraction = M.divide(M.subtract(fraction, sum_r), M.pow(t_mul, i_restart))
        m_fac = M.pow(_f32(self._m_mul), i_restart)
        cosine = M.multiply(M.multiply(0.5, m_fac), M.add(1.0, M.cos(M.multiply(_f32(math.pi), fraction))))
        decayed = M.add(M.multiply(1.0 - self.alpha, cosine), _f32(self.alpha))
        return M.multiply(_f32(self.initial_learning_rate), decayed)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul, "m_mul": self._m_mul,
                "alpha": self.alpha, "name": self.name}


CLASSES = {c.__name__: c for c in (LearningRateSchedule, ExponentialDecay, PiecewiseConstantDecay,
                                   PolynomialDecay, InverseTimeDecay, CosineDecay, CosineDecayRestarts)}


def serialize(learning_rate_schedule):
    return class_config(learning_rate_schedule, "keras.optimizers.schedules")


def deserialize(config, custom_objects=None):
    objects = dict(custom_objects or {})
    name = config.get("class_name") if isinstance(config, dict) else None
    cls = objects.get(name) or CLASSES.get(name)
    if cls is None:
        raise ValueError(f"Unknown decay: '{name}'. Please ensure you are using a "
                         f"`keras.utils.custom_object_scope` and that this object is included in the scope.")
    return from_class_config(config, cls)


__all__ = list(CLASSES) + ["serialize", "deserialize"]
