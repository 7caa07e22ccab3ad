"""Keras 3's newest optimizers: ``Muon`` (Newton-Schulz orthogonalized momentum for matrices,
AdamW for the rest) and ``ScheduleFreeAdamW`` (Defazio et al.'s interpolation and averaging in
place of a schedule), each ``update_step`` Keras 3.15's formula op for op
(``keras/src/optimizers/muon.py``, ``schedule_free_adamw.py``)."""
import re

from ..ops import linalg as L
from ..ops import math as M
from ..ops import reduce as R
from ..ops import array as A
from .optimizers import Optimizer


def variable_path(variable):
    """Keras 3's ``variable.path`` as tapeflow names variables: the name without ``:0``
    (``dense/kernel``; Keras prefixes the enclosing model, ``sequential/dense/kernel``)."""
    path = getattr(variable, "path", None)
    return path if isinstance(path, str) else variable.name.rsplit(":", 1)[0]


def _c(x, dtype):
    return M.cast(x, dtype)


def _transpose_last(x):
    order = list(range(len(x.shape)))
    order[-2], order[-1] = order[-1], order[-2]
    return A.transpose(x, order)


class Muon(Optimizer):
    """Muon: momentum orthogonalized by a quintic Newton-Schulz iteration for 2-D variables;
    AdamW for the others, for embeddings (``exclude_embeddings``) and for variables whose path
    matches one of ``exclude_layers`` (regular expressions).

    >>> opt = tf.keras.optimizers.Muon(learning_rate=0.1)
    >>> w = tf.Variable([[1.0, 0.0], [0.0, 1.0]])
    >>> _ = opt.apply_gradients([(tf.constant([[1.0, 0.0], [0.0, 0.0]]), w)])
    >>> np.round(w.numpy(), 4).tolist()
    [[0.9799000024795532, 0.0], [0.0, 0.9995999932289124]]
    """

    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999, adam_weight_decay=0.004,
                 epsilon=1e-7, weight_decay=0.004, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, exclude_layers=None, exclude_embeddings=True,
                 muon_a=3.4445, muon_b=-4.7750, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95, ns_steps=5,
                 nesterov=True, rms_rate=0.2, **kwargs):
        super().__init__(name or "muon", learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.adam_beta_1, self.adam_beta_2, self.epsilon = adam_beta_1, adam_beta_2, epsilon
        self.muon_a, self.muon_b, self.muon_c = muon_a, muon_b, muon_c
        self.adam_lr_ratio, self.momentum, self.ns_steps = adam_lr_ratio, momentum, ns_steps
        self.nesterov, self.exclude_embeddings = nesterov, exclude_embeddings
        self.exclude_layers = exclude_layers or []
        self.adam_weight_decay, self.rms_rate = adam_weight_decay, rms_rate

    def _should_use_adamw(self, variable):
        if len(variable.shape) != 2:
            return True
        path = variable_path(variable)
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def _build_slots(self, var_list):
        self._momentums = [self.add_variable_from_reference(v, "momentum") for v in var_list]
        self._adam_velocities = [self.add_variable_from_reference(v, "velocity")
                                 if self._should_use_adamw(v) else None for v in var_list]

    def _apply_weight_decay(self, variables):
        for variable in variables:
            if not self._use_weight_decay(variable):
                continue
            decay = self.adam_weight_decay if self._should_use_adamw(variable) else self.weight_decay
            if decay is None:
                continue
            wd, lr = _c(decay, variable.dtype), _c(self._lr_value, variable.dtype)
            variable.assign(M.subtract(variable, M.multiply(M.multiply(variable, wd), lr)))

    def update_step(self, gradient, variable):
        m = self._slot(self._momentums, variable)
        v = self._slot(self._adam_velocities, variable)
        if v is not None:
            self._adamw_update_step(gradient, variable, M.multiply(self._lr_value, self.adam_lr_ratio), m, v)
        else:
            self._muon_update_step(gradient, variable, self._lr_value, m)

    def _muon_update_step(self, gradient, variable, lr, m):
        m.assign_add(M.add(gradient, M.multiply(m, self.momentum - 1)))
        g = M.add(gradient, M.multiply(self.momentum, m)) if self.nesterov else m.value()
        update = self.zeropower_via_newtonschulz5(g, self.ns_steps)
        variable.assign_sub(self.lr_adjust(M.multiply(_c(lr, update.dtype), update)))

    def _adamw_update_step(self, gradient, variable, learning_rate, m, v):
        dtype = variable.dtype
        lr = _c(learning_rate, dtype)
        local_step = _c(M.add(self.iterations, 1), dtype)
        beta_1_power = M.pow(_c(self.adam_beta_1, dtype), local_step)
        beta_2_power = M.pow(_c(self.adam_beta_2, dtype), local_step)
        alpha = M.divide(M.multiply(lr, M.sqrt(M.subtract(1.0, beta_2_power))), M.subtract(1.0, beta_1_power))
        m.assign_add(M.multiply(M.subtract(gradient, m), 1 - self.adam_beta_1))
        v.assign_add(M.multiply(M.subtract(M.square(gradient), v), 1 - self.adam_beta_2))
        variable.assign_sub(M.divide(M.multiply(m, alpha), M.add(M.sqrt(v), self.epsilon)))

    def lr_adjust(self, x):
        """The update times ``sqrt(max(rows, cols)) * rms_rate`` (Moonlight's scaling)."""
        if self.rms_rate is None:
            return x
        return M.multiply(M.multiply(x, float(max(x.shape[0], x.shape[1])) ** 0.5), self.rms_rate)

    def zeropower_via_newtonschulz5(self, x, steps):
        """``x`` pushed towards the nearest semi-orthogonal matrix by ``steps`` quintic
        Newton-Schulz iterations (coefficients ``muon_a, muon_b, muon_c``)."""
        shape = tuple(x.shape)
        if len(shape) < 2:
            raise ValueError(f"Expected gradient or momentum to have at least 2 dimensions. "
                             f"Received: shape={shape}")
        a, b, c = self.muon_a, self.muon_b, self.muon_c
        tall = shape[-2] > shape[-1]
        if tall:
            x = _transpose_last(x)
        norm = M.sqrt(R.reduce_sum(M.square(x), axis=[-2, -1], keepdims=True))
        x = M.divide(x, M.add(norm, 1e-7))
        for _ in range(steps):
            temp_a = L.matmul(x, _transpose_last(x))
            temp_b = M.add(M.multiply(b, temp_a), L.matmul(M.multiply(c, temp_a), temp_a))
            x = M.add(M.multiply(a, x), L.matmul(temp_b, x))
        return _transpose_last(x) if tall else x

    def get_config(self):
        return {**super().get_config(), "adam_beta_1": self.adam_beta_1, "adam_beta_2": self.adam_beta_2,
                "epsilon": self.epsilon, "exclude_layers": self.exclude_layers, "muon_a": self.muon_a,
                "muon_b": self.muon_b, "muon_c": self.muon_c, "adam_lr_ratio": self.adam_lr_ratio,
                "momentum": self.momentum, "ns_steps": self.ns_steps, "nesterov": self.nesterov,
                "exclude_embeddings": self.exclude_embeddings,
                "adam_weight_decay": self.adam_weight_decay, "rms_rate": self.rms_rate}


class ScheduleFreeAdamW(Optimizer):
    """Schedule-Free AdamW: Adam steps on a ``momentum`` sequence, the variable kept at an
    interpolation between it and their running average (no learning-rate schedule needed;
    ``warmup_steps`` ramps the rate up linearly). ``momentum`` starts at the weights' values
    when the optimizer is built, as Keras writes it; Keras-TF's ``fit`` builds it inside the
    traced step, where that copy is lost and it starts at zero, while tapeflow's ``fit`` builds
    it before tracing (as Keras-TF does for an optimizer built before ``fit``).

    >>> opt = tf.keras.optimizers.ScheduleFreeAdamW(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.9
    """

    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8, warmup_steps=0,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        super().__init__(name or "schedule_free_adam_w", learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         use_ema=use_ema, ema_momentum=ema_momentum,
                         ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.warmup_steps = beta_1, beta_2, epsilon, warmup_steps

    def _build_slots(self, var_list):
        # the momentum sequence starts at the variable's value when the optimizer is built
        self._momentums = [self.add_variable_from_reference(v, "momentum", initial_value=v.numpy())
                           for v in var_list]
        self._velocities = [self.add_variable_from_reference(v, "velocity") for v in var_list]

    def update_step(self, gradient, variable):
        dtype = variable.dtype
        lr = _c(self._lr_value, dtype)
        local_step = _c(M.add(self.iterations, 1), dtype)
        beta_1, beta_2, epsilon = _c(self.beta_1, dtype), _c(self.beta_2, dtype), _c(self.epsilon, dtype)
        if self.warmup_steps > 0:
            lr = M.multiply(lr, M.minimum(M.divide(local_step, _c(self.warmup_steps, dtype)), 1.0))
        momentum = self._slot(self._momentums, variable)
        velocity = self._slot(self._velocities, variable)
        bias_correction_2 = M.subtract(1.0, M.pow(beta_2, local_step))
        velocity.assign_add(M.multiply(M.subtract(M.square(gradient), velocity), M.subtract(1.0, beta_2)))
        denom = M.add(M.sqrt(M.divide(velocity, bias_correction_2)), epsilon)
        momentum.assign_sub(M.divide(M.multiply(lr, gradient), denom))
        weight = M.divide(1.0, local_step)
        # Keras reads the momentum here after its update (its `momentum.value` is the variable)
        x_old = M.divide(M.subtract(variable, M.multiply(M.subtract(1.0, beta_1), momentum)), beta_1)
        x_new = M.add(M.multiply(M.subtract(1.0, weight), x_old), M.multiply(weight, momentum))
        variable.assign(M.add(M.multiply(M.subtract(1.0, beta_1), momentum), M.multiply(beta_1, x_new)))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon, "warmup_steps": self.warmup_steps}


CLASSES = [Muon, ScheduleFreeAdamW]

__all__ = ["Muon", "ScheduleFreeAdamW", "variable_path", "CLASSES"]
