"""Keras optimizers (TF 2.11+ ``tf.keras.optimizers``): ``SGD``, ``Adam`` and ``RMSprop``.

Updates are the Keras formulas op for op in the variable's dtype (so float32
results match TensorFlow's bit for bit where the ops do), applied with
``assign``/``assign_add``/``assign_sub`` while the tapes are paused: an update
is state, not part of any gradient. An IndexedSlices gradient (a ``tf.gather``'s, an
``Embedding``'s) reaches ``update_step`` as slices where the class says
``sparse_updates``, which then follows Keras' rules for them (sparse_updates.py). As in
Keras, slot variables are made for the variables of the first ``apply_gradients`` (or
``build``) call, and a ``None`` gradient skips its variable with a warning naming it.
"""
import warnings

from ..autodiff.tape import GradientTape
from ..ir import dtypes as D
from ..ops import array, clip, creation, reduce
from ..ops.indexed_slices import IndexedSlices, dense
from ..ops import math as M
from ..runtime import stack
from ..runtime.tensor import STATE_paused, Variable
from ..tracer import control
from . import constraints, schedules
from . import sparse_updates as S


class CallableList(list):
    """A list that may also be called, for code written against ``optimizer.variables()``."""

    def __call__(self):
        return self


def filter_empty_gradients(grads_and_vars):
    """Drop pairs whose gradient is None, warning with their names; all None is an error."""
    grads_and_vars = tuple(grads_and_vars)
    filtered = tuple((g, v) for g, v in grads_and_vars if g is not None)
    if grads_and_vars and not filtered:
        names = ([v.name for _, v in grads_and_vars],)
        raise ValueError(f"No gradients provided for any variable: {names}. "
                         f"Provided `grads_and_vars` is {grads_and_vars}.")
    empty = [v.name for g, v in grads_and_vars if g is None]
    if empty:
        warnings.warn(f"Gradients do not exist for variables {empty} when minimizing the loss. If "
                      f"you're using `model.compile()`, did you forget to provide a `loss` argument?",
                      stacklevel=3)
    return filtered


class Optimizer:
    """The base class of Keras optimizers.

    Base class: iteration counter, learning-rate variable, slot variables, ``apply_gradients``.

    Subclasses implement ``update_step(gradient, variable)``; ``apply_gradients`` and
    ``minimize`` are shared.

    Args:
      learning_rate: a float (kept in a variable, ``learning_rate``).
      clipnorm, clipvalue, global_clipnorm: clip the gradients first, as Keras does.

    >>> opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.minimize(lambda: v * v, [v])
    >>> round(float(v.numpy()), 4), int(opt.iterations)
    (0.8, 1)
    """

    # whether ``update_step`` takes an IndexedSlices gradient as Keras 3 does (sparse_updates.py);
    # the others are given the dense gradient
    sparse_updates = False

    def __init__(self, name, learning_rate=0.001, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 weight_decay=None, use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None, **kwargs):
        if kwargs.pop("lr", None):
            warnings.warn("`lr` is deprecated in Keras optimizer and is ignored (as in TensorFlow), "
                          "please use `learning_rate`.", stacklevel=3)
        for k in kwargs:
            if k in ("decay", "gradient_aggregator", "gradient_transformers"):
                raise ValueError(f"{k} is deprecated in the new Keras optimizer, please check the "
                                 f"docstring for valid arguments.")
            if k not in ("jit_compile", "is_legacy_optimizer"):
                raise TypeError(f"{k} is not a valid argument, kwargs should be empty for "
                                f"`optimizer_experimental.Optimizer`.")
        if gradient_accumulation_steps and not gradient_accumulation_steps >= 2:
            raise ValueError(f"`gradient_accumulation_steps` must be an integer >= 2. Received: "
                             f"gradient_accumulation_steps={gradient_accumulation_steps}")
        if clipnorm is not None and global_clipnorm is not None:
            raise ValueError(f"At most one of `clipnorm` and `global_clipnorm` can be set. Received: "
                             f"clipnorm={clipnorm}, global_clipnorm={global_clipnorm}.")
        if use_ema and not 0 <= ema_momentum <= 1:
            raise ValueError(f"`ema_momentum` must be in the range [0, 1]. Received: "
                             f"ema_momentum={ema_momentum}")
        self.name = name
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.weight_decay, self.use_ema = weight_decay, use_ema
        self.ema_momentum, self.ema_overwrite_frequency = ema_momentum, ema_overwrite_frequency
        self.loss_scale_factor, self.gradient_accumulation_steps = loss_scale_factor, gradient_accumulation_steps
        self._exclude_ids, self._exclude_names = set(), ()
        self._variables = CallableList()
        self._iterations = Variable(0, name="iteration", dtype=D.int64, trainable=False)
        self._variables.append(self._iterations)
        self._schedule = None
        if isinstance(learning_rate, schedules.LearningRateSchedule) or callable(learning_rate):
            self._schedule = learning_rate
            learning_rate = 0.0
        self._learning_rate = Variable(float(learning_rate), name="learning_rate", dtype=D.float32,
                                       trainable=False)
        self._lr_value = self._learning_rate
        self._built = False

    # -- state -----------------------------------------------------------------------------
    @property
    def iterations(self):
        """How many times ``apply_gradients`` has updated variables (an int64 variable); with
        ``gradient_accumulation_steps``, the calls divided by the steps (Keras' "real" steps)."""
        if self.gradient_accumulation_steps:
            return M.floordiv(self._iterations, self.gradient_accumulation_steps)
        return self._iterations

    @property
    def learning_rate(self):
        """The learning-rate variable, or a schedule's value at the current step."""
        return self._current_learning_rate()

    @learning_rate.setter
    def learning_rate(self, value):
        if self._schedule is not None:
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object as its "
                            "`learning_rate` constructor argument, hence its learning rate is not "
                            "settable. If you need the learning rate to be settable, you should "
                            "instantiate the optimizer with a float `learning_rate` argument.")
        if isinstance(value, schedules.LearningRateSchedule):
            raise TypeError("cannot set a schedule on an optimizer built with a float learning rate")
        self._learning_rate.assign(M.cast(value, D.float32) if hasattr(value, "dtype") else float(value))

    def _current_learning_rate(self):
        if isinstance(self._schedule, schedules.LearningRateSchedule):
            return M.cast(self._schedule(self._iterations), D.float32)
        if self._schedule is not None:
            return M.cast(self._schedule(), D.float32)
        return self._learning_rate

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Variables (or variables whose name contains one of ``var_names``) weight decay skips."""
        if self._built:
            raise ValueError("`exclude_from_weight_decay()` can only be configured before the "
                             "optimizer is built.")
        self._exclude_ids = {v._id for v in (var_list or [])}
        self._exclude_names = tuple(var_names or ())

    def _use_weight_decay(self, variable):
        if variable._id in self._exclude_ids:
            return False
        return not any(n in variable.name for n in self._exclude_names)

    lr = learning_rate

    @property
    def variables(self):
        return CallableList(self._variables)

    def build(self, var_list):
        """Make the slot variables for ``var_list``; later calls are no-ops (as Keras)."""
        if self._built:
            return
        self._index = {v._id: i for i, v in enumerate(var_list)}
        self._built_variables = list(var_list)
        if self.use_ema:
            self._averages = [self.add_variable_from_reference(v, "average") for v in var_list]
        if self.gradient_accumulation_steps:
            self._accumulated_gradients = [self.add_variable_from_reference(v, "gradient_accumulator")
                                           for v in var_list]
        self._build_slots(list(var_list))
        self._built = True

    def _build_slots(self, var_list):
        pass

    def add_variable_from_reference(self, model_variable, variable_name, initial_value=None):
        """A zero slot shaped like ``model_variable``, named e.g. 'Adam/m/dense/kernel:0'."""
        if initial_value is None:
            initial_value = creation.zeros(model_variable.shape, model_variable.dtype)
        shared_name = model_variable.name.rsplit(":", 1)[0]
        v = Variable(initial_value, name=f"{variable_name}/{shared_name}", dtype=model_variable.dtype,
                     trainable=False)
        self._variables.append(v)
        return v

    def _slot(self, slots, variable):
        self._check_known(variable)
        return slots[self._index[variable._id]]

    def _check_known(self, variable):
        if variable._id not in self._index:
            raise KeyError(f"The optimizer cannot recognize variable {variable.name}. This usually "
                           f"means you are trying to call the optimizer to update different parts of "
                           f"the model separately. Please call `optimizer.build(variables)` with the "
                           f"full list of trainable variables before the training loop or use legacy "
                           f"optimizer `tf.keras.optimizers.legacy.{type(self).__name__}.")

    # -- updates ---------------------------------------------------------------------------
    def _clip(self, grads):
        if self.clipnorm and self.clipnorm > 0:
            return [clip.clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm and self.global_clipnorm > 0:
            return _clip_by_global_norm(grads, self.global_clipnorm)
        if self.clipvalue and self.clipvalue > 0:
            return [clip.clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return list(grads)

    def apply_gradients(self, grads_and_vars, name=None):
        """Update each variable from its gradient; returns the ``iterations`` variable.

        Args:
          grads_and_vars: pairs ``(gradient, variable)``; pairs with a None gradient are skipped.

        >>> opt = tf.keras.optimizers.SGD(learning_rate=0.5)
        >>> w = tf.Variable([1.0, 2.0])
        >>> with tf.GradientTape() as tape:
        ...     loss = tf.reduce_sum(w * w)
        >>> _ = opt.apply_gradients(zip([tape.gradient(loss, w)], [w]))
        >>> w.numpy()
        array([0., 0.], dtype=float32)
        """
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            return self._iterations
        variables = [v for _, v in grads_and_vars]
        with STATE_paused(), stack.name_scope(name or self.name or "optimizer"):
            self.build(variables)
            grads_and_vars = filter_empty_gradients(grads_and_vars)
            grads = [g for g, _ in grads_and_vars]
            if self.loss_scale_factor is not None:
                grads = [S.divide(g, M.cast(self.loss_scale_factor, g.dtype)) for g in grads]
            variables = [v for _, v in grads_and_vars]
            for v in variables:
                self._check_known(v)  # a KeyError before any variable changes
            if self.gradient_accumulation_steps:
                self._accumulate_or_update(grads, variables)
            else:
                self._update(grads, variables)
            if self.use_ema:
                self._update_averages()
            for _, v in grads_and_vars:
                constraint = constraints.of(v) or getattr(v, "constraint", None)
                if constraint is not None:
                    v.assign(constraint(v))
            self._iterations.assign_add(1)
        return self._iterations

    def scale_loss(self, loss):
        """The loss times ``loss_scale_factor`` (``fit`` differentiates this; the update divides
        the gradients by the factor again)."""
        if self.loss_scale_factor is not None:
            return M.multiply(loss, M.cast(self.loss_scale_factor, loss.dtype))
        return loss

    def _update(self, grads, variables):
        """Keras' step proper: clip, decay the weights, then each variable's ``update_step``."""
        # Keras 3 clips an IndexedSlices by its values, and keeps it for the optimizers whose
        # steps it updates sparsely (sparse_updates.py)
        grads = self._clip(grads)
        if not self.sparse_updates:
            grads = [dense(g) for g in grads]
        self._lr_value = self._current_learning_rate()
        self._apply_weight_decay(variables)
        self._update_all(grads, variables)

    def _apply_weight_decay(self, variables):
        if self.weight_decay:
            for v in variables:
                if self._use_weight_decay(v):
                    decay = M.multiply(M.cast(self.weight_decay, v.dtype), M.cast(self._lr_value, v.dtype))
                    v.assign(M.subtract(v, M.multiply(v, decay)))

    def _update_all(self, grads, variables):
        """Every variable's ``update_step`` (Keras' ``_backend_update_step``; Nadam adds to it)."""
        for g, v in zip(grads, variables, strict=True):
            self.update_step(g, v)

    def _accumulate_or_update(self, grads, variables):
        """Keras 3's ``gradient_accumulation_steps``: add the gradients to the accumulators, and on
        every ``steps``-th call update with the mean of the accumulated ones and zero them."""
        steps = self.gradient_accumulation_steps
        accumulators = [self._slot(self._accumulated_gradients, v) for v in variables]
        is_update_step = M.equal(M.floormod(M.add(self._iterations, 1), steps), 0)

        def update():
            mean = [M.divide(M.add(g, acc), M.cast(steps, g.dtype)) for g, acc in zip(grads, accumulators)]
            self._update(mean, variables)
            for acc in self._accumulated_gradients:
                acc.assign(creation.zeros(acc.shape, acc.dtype))
            return M.cast(0, D.int32)

        def accumulate():
            for g, acc in zip(grads, accumulators):
                acc.assign(M.add(g, acc))
            return M.cast(0, D.int32)

        control.cond(is_update_step, update, accumulate)

    def _update_averages(self):
        """Keras 3's EMA of the trained variables (taken as they are on the first step)."""
        first = M.cast(M.not_equal(self.iterations, 0), D.float32)
        for v, average in zip(self._built_variables, self._averages):
            momentum = M.multiply(M.cast(first, v.dtype), M.cast(self.ema_momentum, v.dtype))
            average.assign(M.add(M.multiply(momentum, average), M.multiply(M.subtract(1.0, momentum), v)))
        if self.ema_overwrite_frequency:
            every = self.ema_overwrite_frequency
            overwrite = M.equal(M.floormod(M.add(self.iterations, 1), every), 0)
            for v, average in zip(self._built_variables, self._averages):
                v.assign(M.where(overwrite, average.value(), v.value()))

    def finalize_variable_values(self, var_list):
        """Give the trained variables their moving averages (``use_ema``), as Keras at fit's end."""
        if self.use_ema and self._built:
            for v, average in zip(self._built_variables, self._averages):
                v.assign(average.value())

    def apply(self, grads, trainable_variables=None):
        """Keras 3's form: ``apply(grads, variables)``; without variables, those it was built for."""
        if trainable_variables is None:
            if not self._built:
                raise ValueError("When passing `grads` without `variables`, the optimizer must already "
                                 "be built on a list of variables. Call `optimizer.build("
                                 "trainable_variables)` first.")
            trainable_variables = self._built_variables
        return self.apply_gradients(zip(grads, trainable_variables))

    def update_step(self, gradient, variable):
        raise NotImplementedError

    def compute_gradients(self, loss, var_list, tape=None):
        """(gradient, variable) pairs of ``loss`` (a tensor with its tape, or a callable)."""
        if not callable(loss) and tape is None:
            raise ValueError(f"`tape` is required when a `Tensor` loss is passed. Received: "
                             f"loss={loss}, tape={tape}.")
        if tape is None:
            tape = GradientTape()
        if callable(loss):
            with tape:
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
                if callable(var_list):
                    var_list = var_list()
        grads = tape.gradient(loss, var_list)
        return list(zip(grads, var_list))

    def minimize(self, loss, var_list, tape=None):
        """``apply_gradients(compute_gradients(loss, var_list, tape))``."""
        self.apply_gradients(self.compute_gradients(loss, var_list, tape))

    def get_config(self):
        learning_rate = (schedules.serialize(self._schedule)
                         if isinstance(self._schedule, schedules.LearningRateSchedule)
                         else float(self._learning_rate.numpy()))
        return {"name": self.name, "learning_rate": learning_rate, "weight_decay": self.weight_decay,
                "clipnorm": self.clipnorm, "clipvalue": self.clipvalue,
                "global_clipnorm": self.global_clipnorm, "use_ema": self.use_ema,
                "ema_momentum": self.ema_momentum, "ema_overwrite_frequency": self.ema_overwrite_frequency,
                "loss_scale_factor": self.loss_scale_factor,
                "gradient_accumulation_steps": self.gradient_accumulation_steps,
                "is_legacy_optimizer": False}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config.pop("is_legacy_optimizer", None)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"], custom_objects)
        return cls(**config)


def _clip_by_global_norm(grads, clip_norm):
    """``tf.clip_by_global_norm``'s arithmetic: scale all by clip / max(global norm, clip)."""
    half_squares = [M.multiply(reduce.reduce_sum(M.square(
        g.values if isinstance(g, IndexedSlices) else g)), 0.5) for g in grads]
    norm = M.sqrt(M.multiply(reduce.reduce_sum(array.stack(half_squares)), 2.0))
    one = M.cast(1.0, norm.dtype)
    scale = M.multiply(clip_norm, M.minimum(M.truediv(1.0, norm), M.truediv(one, clip_norm)))
    scale = M.add(scale, M.subtract(norm, norm))  # an inf/nan norm makes every gradient nan
    return [M.multiply(g, M.cast(scale, g.dtype)) for g in grads]


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum.

    Gradient descent with optional (Nesterov) momentum, Keras's formulas.

    Args:
      learning_rate: the step size.
      momentum: 0 for plain gradient descent; in (0, 1] for momentum.
      nesterov: use Nesterov momentum.

    >>> opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.8
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        if isinstance(momentum, (int, float)) and (momentum < 0 or momentum > 1):
            raise ValueError("`momentum` must be between [0, 1].")
        self.momentum, self.nesterov = momentum, nesterov

    def _build_slots(self, var_list):
        self.momentums = [self.add_variable_from_reference(v, "m") for v in var_list]

    sparse_updates = True

    def update_step(self, gradient, variable):
        lr = M.cast(self._lr_value, variable.dtype)
        if not (isinstance(self.momentum, (int, float)) and self.momentum == 0):
            momentum = M.cast(self.momentum, variable.dtype)
            m = self._slot(self.momentums, variable)
            S.assign(m, S.subtract(M.multiply(m, momentum), S.multiply(gradient, lr)))
            if self.nesterov:
                S.assign_add(variable, S.subtract(M.multiply(m, momentum), S.multiply(gradient, lr)))
            else:
                S.assign_add(variable, m)
        else:   # Keras 3: no momentum, a (for slices: scatter) subtraction
            S.assign_sub(variable, S.multiply(gradient, lr))

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    """The Adam optimizer (adaptive first and second moment estimates).

    Adam with Keras's bias correction folded into the step size ``alpha``.

    Args:
      learning_rate: the step size.
      beta_1, beta_2: decay rates of the first and second moment estimates.
      epsilon: added to the denominator.
      amsgrad: use AMSGrad's maximum of past second moments.

    >>> opt = tf.keras.optimizers.Adam(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.9
    """

    sparse_updates = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 name="Adam", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad

    def _build_slots(self, var_list):
        self._momentums, self._velocities = [], []
        for v in var_list:
            self._momentums.append(self.add_variable_from_reference(v, "m"))
            self._velocities.append(self.add_variable_from_reference(v, "v"))
        if self.amsgrad:
            self._velocity_hats = [self.add_variable_from_reference(v, "vhat") for v in var_list]

    def update_step(self, gradient, variable):
        dtype = variable.dtype
        lr = M.cast(self._lr_value, dtype)
        local_step = M.cast(M.add(self.iterations, 1), dtype)
        beta_1_power = M.pow(M.cast(self.beta_1, dtype), local_step)
        beta_2_power = M.pow(M.cast(self.beta_2, dtype), local_step)
        m = self._slot(self._momentums, variable)
        v = self._slot(self._velocities, variable)
        alpha = M.truediv(M.multiply(lr, M.sqrt(M.subtract(1, beta_2_power))), M.subtract(1, beta_1_power))
        # Keras 3's ops on IndexedSlices (sparse_updates.py): the moments are dense updates,
        # the second of the sum of the squared slices
        S.assign_add(m, S.multiply(S.subtract(gradient, m), 1 - self.beta_1))
        S.assign_add(v, S.multiply(S.subtract(S.square(gradient), v), 1 - self.beta_2))
        if self.amsgrad:
            v_hat = self._slot(self._velocity_hats, variable)
            v_hat.assign(M.maximum(v_hat, v))
            v = v_hat
        variable.assign_sub(M.truediv(M.multiply(m, alpha), M.add(M.sqrt(v), self.epsilon)))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon, "amsgrad": self.amsgrad}


class RMSprop(Optimizer):
    """The RMSprop optimizer (gradients divided by a moving root mean square).

    RMSprop as Keras 3 writes it: a moving mean of squared gradients, optional momentum and centering.

    Args:
      learning_rate: the step size.
      rho: the decay of the moving mean of squared gradients.
      momentum: momentum on the update (0: none).
      epsilon: added to the denominator.
      centered: normalize by the gradients' estimated variance instead.

    >>> opt = tf.keras.optimizers.RMSprop(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.6838
    """

    sparse_updates = True

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 name="rmsprop", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered

    def _build_slots(self, var_list):
        self._velocities = [self.add_variable_from_reference(v, "velocity") for v in var_list]
        self._momentums = ([self.add_variable_from_reference(v, "momentum") for v in var_list]
                           if self.momentum > 0 else [])
        self._average_gradients = ([self.add_variable_from_reference(v, "average_gradient")
                                    for v in var_list] if self.centered else [])

    def update_step(self, gradient, variable):
        lr = M.cast(self._lr_value, variable.dtype)
        velocity = self._slot(self._velocities, variable)
        rho = self.rho
        S.assign(velocity, S.add(M.multiply(rho, velocity), S.multiply(1 - rho, S.square(gradient))))
        if self.centered:
            average_grad = self._slot(self._average_gradients, variable)
            S.assign(average_grad, S.add(M.multiply(rho, average_grad), S.multiply(1 - rho, gradient)))
            denominator = M.add(M.subtract(velocity, M.square(average_grad)), self.epsilon)
        else:
            denominator = M.add(velocity, self.epsilon)
        increment = S.divide(S.multiply(lr, gradient), M.sqrt(denominator))
        if self.momentum > 0:
            momentum = self._slot(self._momentums, variable)
            S.assign(momentum, S.add(M.multiply(self.momentum, momentum), increment))
            variable.assign_sub(momentum)
        else:   # Keras 3: for slices a scatter subtraction of the touched rows
            S.assign_sub(variable, increment)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum,
                "epsilon": self.epsilon, "centered": self.centered}


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop}


def serialize(optimizer):
    """Keras 3's config dict of an optimizer.

    >>> tf.keras.optimizers.serialize(tf.keras.optimizers.SGD(0.5))["config"]["learning_rate"]
    0.5
    """
    return {"module": "keras.optimizers", "class_name": type(optimizer).__name__,
            "config": optimizer.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None, use_legacy_format=False, **kwargs):
    """The optimizer a ``serialize`` dict (or a name) describes.

    >>> config = tf.keras.optimizers.serialize(tf.keras.optimizers.Adam(0.01))
    >>> type(tf.keras.optimizers.deserialize(config)).__name__
    'Adam'
    """
    if isinstance(config, str):
        return get(config)
    name = config.get("class_name") if isinstance(config, dict) else None
    cls = dict(custom_objects or {}).get(name) or (_BY_NAME.get(name.lower()) if isinstance(name, str) else None)
    if cls is None:
        raise ValueError(f"Could not interpret optimizer identifier: {config}")
    return cls.from_config(dict(config.get("config") or {}), custom_objects)


def get(identifier, **kwargs):
    """An optimizer from its name (``"sgd"``, ``"adam"``, ``"rmsprop"``) or an instance.

    An optimizer from 'sgd'/'adam' (any case) or an instance.

    >>> type(tf.keras.optimizers.get("adam")).__name__
    'Adam'
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()](**kwargs)
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")


__all__ = ["Optimizer", "SGD", "Adam", "RMSprop", "get", "serialize", "deserialize"]
