"""Keras 3's other optimizers: AdamW, Adagrad, Adadelta, Adamax, Nadam, Ftrl, Lion, Lamb and
Adafactor, each ``update_step`` Keras 3's formula op for op (``keras.src.optimizers``), with
slots named as Keras names them."""
from ..ir import dtypes as D
from ..ops import clip, creation, reduce
from ..ops import array as A
from ..ops import math as M
from ..runtime.tensor import Variable
from . import sparse_updates as S
from .optimizers import Adam, Optimizer


def _c(x, dtype):
    return M.cast(x, dtype)


class AdamW(Adam):
    """Adam with decoupled weight decay (``weight_decay=0.004`` by default).

    >>> opt = tf.keras.optimizers.AdamW(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.8996
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="adamw", **kwargs):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                         amsgrad=amsgrad, name=name, weight_decay=weight_decay, **kwargs)


class Adagrad(Optimizer):
    """Per-coordinate rates from the running sum of squared gradients.

    >>> opt = tf.keras.optimizers.Adagrad(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.9012
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="adagrad",
                 **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.initial_accumulator_value, self.epsilon = initial_accumulator_value, epsilon

    def _build_slots(self, var_list):
        self._accumulators = [self.add_variable_from_reference(
            v, "accumulator", creation.fill(v.shape, _c(self.initial_accumulator_value, v.dtype)))
            for v in var_list]

    sparse_updates = True   # as Keras 3: the accumulator and the variable touched row by row

    def update_step(self, gradient, variable):
        lr = _c(self._lr_value, variable.dtype)
        accumulator = self._slot(self._accumulators, variable)
        S.assign_add(accumulator, S.square(gradient))
        S.assign_sub(variable, S.divide(S.multiply(lr, gradient), M.sqrt(M.add(accumulator, self.epsilon))))

    def get_config(self):
        return {**super().get_config(), "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}


class Adadelta(Optimizer):
    """Steps scaled by the ratio of running RMS of updates to running RMS of gradients.

    >>> opt = tf.keras.optimizers.Adadelta(learning_rate=1.0)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.9986
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="adadelta", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def _build_slots(self, var_list):
        self._accumulated_grads = [self.add_variable_from_reference(v, "accumulated_grad") for v in var_list]
        self._accumulated_delta_vars = [self.add_variable_from_reference(v, "accumulated_delta_var")
                                        for v in var_list]

    def update_step(self, gradient, variable):
        lr = _c(self._lr_value, variable.dtype)
        rho = self.rho
        grad_acc = self._slot(self._accumulated_grads, variable)
        delta_acc = self._slot(self._accumulated_delta_vars, variable)

        def rms(x):
            return M.sqrt(M.add(x, self.epsilon))
        S.assign(grad_acc, S.add(M.multiply(rho, grad_acc), S.multiply(1 - rho, S.square(gradient))))
        delta = S.negative(S.divide(S.multiply(rms(delta_acc), gradient), rms(grad_acc)))
        S.assign(delta_acc, S.add(M.multiply(rho, delta_acc), S.multiply(1 - rho, S.square(delta))))
        S.assign_add(variable, S.multiply(lr, delta))

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}

    sparse_updates = True   # as Keras 3: the variable touched row by row


class Adamax(Optimizer):
    """Adam with the infinity norm in place of the second moment.

    >>> opt = tf.keras.optimizers.Adamax(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.9
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="adamax", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def _build_slots(self, var_list):
        self._m = [self.add_variable_from_reference(v, "momentum") for v in var_list]
        self._u = [self.add_variable_from_reference(v, "norm") for v in var_list]

    def update_step(self, gradient, variable):
        dtype = variable.dtype
        lr = _c(self._lr_value, dtype)
        local_step = _c(M.add(self.iterations, 1), dtype)
        beta_1_power = M.pow(_c(self.beta_1, dtype), local_step)
        m, u = self._slot(self._m, variable), self._slot(self._u, variable)
        m.assign_add(M.multiply(M.subtract(gradient, m), 1 - self.beta_1))
        u.assign(M.maximum(M.multiply(self.beta_2, u), M.abs(gradient)))
        variable.assign_sub(M.divide(M.multiply(lr, m),
                                     M.multiply(M.subtract(1.0, beta_1_power), M.add(u, self.epsilon))))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat's momentum schedule ``0.96 ** step``).

    >>> opt = tf.keras.optimizers.Nadam(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.8937
    """

    sparse_updates = True   # Keras 3's rules for slices (sparse_updates.py); dense updates

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="nadam", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def _build_slots(self, var_list):
        self._momentums = [self.add_variable_from_reference(v, "momentum") for v in var_list]
        self._velocities = [self.add_variable_from_reference(v, "velocity") for v in var_list]
        dtype = var_list[0].dtype if var_list else D.float32
        self._u_product = Variable(_c(1.0, dtype), name="variable", dtype=dtype, trainable=False)
        self._variables.append(self._u_product)

    def _update_all(self, grads, variables):
        dtype = self._u_product.dtype
        step = _c(M.add(self.iterations, 1), dtype)
        self._u_product.assign(M.multiply(M.multiply(self._u_product, self.beta_1), M.subtract(
            1.0, M.multiply(0.5, M.pow(_c(0.96, dtype), step)))))
        super()._update_all(grads, variables)

    def update_step(self, gradient, variable):
        dtype = variable.dtype
        lr = _c(self._lr_value, dtype)
        local_step = _c(M.add(self.iterations, 1), dtype)
        next_step = _c(M.add(self.iterations, 2), dtype)
        decay, beta_1, beta_2 = _c(0.96, dtype), _c(self.beta_1, dtype), _c(self.beta_2, dtype)
        u_t = M.multiply(beta_1, M.subtract(1.0, M.multiply(0.5, M.pow(decay, local_step))))
        u_t_1 = M.multiply(beta_1, M.subtract(1.0, M.multiply(0.5, M.pow(decay, next_step))))
        u_product_t = _c(self._u_product, dtype)
        u_product_t_1 = M.multiply(u_product_t, u_t_1)
        beta_2_power = M.pow(beta_2, local_step)
        m, v = self._slot(self._momentums, variable), self._slot(self._velocities, variable)
        S.assign_add(m, S.multiply(S.subtract(gradient, m), M.subtract(1.0, beta_1)))
        S.assign_add(v, S.multiply(S.subtract(S.square(gradient), v), M.subtract(1.0, beta_2)))
        m_hat = S.add(M.divide(M.multiply(u_t_1, m), M.subtract(1.0, u_product_t_1)),
                      S.divide(S.multiply(M.subtract(1.0, u_t), gradient), M.subtract(1.0, u_product_t)))
        v_hat = M.divide(v, M.subtract(1.0, beta_2_power))
        variable.assign_sub(M.divide(M.multiply(m_hat, lr), M.add(M.sqrt(v_hat), self.epsilon)))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Ftrl(Optimizer):
    """Follow-the-regularized-leader (McMahan et al.), with L1/L2/shrinkage regularization.

    >>> opt = tf.keras.optimizers.Ftrl(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.7451
    """

    sparse_updates = True   # Keras 3's rules for slices (sparse_updates.py); dense updates

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, name="ftrl", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        checks = {"initial_accumulator_value": initial_accumulator_value,
                  "l1_regularization_strength": l1_regularization_strength,
                  "l2_regularization_strength": l2_regularization_strength,
                  "l2_shrinkage_regularization_strength": l2_shrinkage_regularization_strength}
        for key, value in checks.items():
            if value < 0.0:
                raise ValueError(f"`{key}` needs to be positive or zero. Received: {key}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError(f"`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def _build_slots(self, var_list):
        self._accumulators = [self.add_variable_from_reference(
            v, "accumulator", creation.fill(v.shape, _c(self.initial_accumulator_value, v.dtype)))
            for v in var_list]
        self._linears = [self.add_variable_from_reference(v, "linear") for v in var_list]

    def update_step(self, gradient, variable):
        lr = _c(self._lr_value, variable.dtype)
        accum = self._slot(self._accumulators, variable)
        linear = self._slot(self._linears, variable)
        lr_power = self.learning_rate_power
        l2_reg = M.add(self.l2_regularization_strength, M.divide(self.beta, M.multiply(2.0, lr)))
        grad_to_use = S.add(gradient, M.multiply(2 * self.l2_shrinkage_regularization_strength, variable))
        new_accum = S.add(accum, S.square(gradient))
        p_new, p_old = M.pow(new_accum, _c(-lr_power, variable.dtype)), M.pow(accum, _c(-lr_power, variable.dtype))
        linear.assign_add(M.subtract(grad_to_use, M.multiply(M.divide(M.subtract(p_new, p_old), lr), variable)))
        quadratic = M.add(M.divide(p_new, lr), M.multiply(2.0, l2_reg))
        l1 = self.l1_regularization_strength
        linear_clipped = clip.clip_by_value(linear, _c(-l1, variable.dtype), _c(l1, variable.dtype))
        variable.assign(M.divide(M.subtract(linear_clipped, linear), quadratic))
        accum.assign(new_accum)

    def get_config(self):
        return {**super().get_config(), "learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
                "beta": self.beta}


class Lion(Optimizer):
    """Sign of an interpolated momentum (Chen et al., 2023).

    >>> opt = tf.keras.optimizers.Lion(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.9
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, name="lion", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(f"Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer "
                             f"degenerates to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1, self.beta_2 = beta_1, beta_2

    def _build_slots(self, var_list):
        self._momentums = [self.add_variable_from_reference(v, "momentum") for v in var_list]

    def update_step(self, gradient, variable):
        dtype = variable.dtype
        lr = _c(self._lr_value, dtype)
        beta_1, beta_2 = _c(self.beta_1, dtype), _c(self.beta_2, dtype)
        m = self._slot(self._momentums, variable)
        variable.assign_sub(M.multiply(lr, M.sign(M.add(M.multiply(m, beta_1),
                                                         M.multiply(gradient, M.subtract(1.0, beta_1))))))
        m.assign(M.add(M.multiply(m, beta_2), M.multiply(gradient, M.subtract(1.0, beta_2))))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2}


class Lamb(Optimizer):
    """Adam's step scaled per variable by ``||w|| / ||update||`` (You et al.).

    >>> opt = tf.keras.optimizers.Lamb(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.9
    """

    sparse_updates = True   # Keras 3's rules for slices (sparse_updates.py); dense updates

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="lamb", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def _build_slots(self, var_list):
        self._momentums = [self.add_variable_from_reference(v, "momentum") for v in var_list]
        self._velocities = [self.add_variable_from_reference(v, "velocity") for v in var_list]

    def update_step(self, gradient, variable):
        dtype = variable.dtype
        lr = _c(self._lr_value, dtype)
        local_step = _c(M.add(self.iterations, 1), dtype)
        beta_1_power = M.pow(_c(self.beta_1, dtype), local_step)
        beta_2_power = M.pow(_c(self.beta_2, dtype), local_step)
        m, v = self._slot(self._momentums, variable), self._slot(self._velocities, variable)
        m.assign_add(M.multiply(S.subtract(gradient, m), 1 - self.beta_1))
        v.assign_add(M.multiply(S.subtract(S.square(gradient), v), 1 - self.beta_2))
        m_hat = M.divide(m, M.subtract(1.0, beta_1_power))
        v_sqrt = M.add(M.sqrt(M.divide(v, M.subtract(1.0, beta_2_power))), self.epsilon)
        update = M.divide(m_hat, v_sqrt)
        w_norm = M.sqrt(reduce.reduce_sum(M.square(variable)))
        g_norm = M.sqrt(reduce.reduce_sum(M.square(update)))
        one = _c(1.0, dtype)
        safe_g = M.where(M.greater(g_norm, 0.0), g_norm, one)
        ratio = M.where(M.greater(w_norm, 0.0), M.where(M.greater(g_norm, 0.0), M.divide(w_norm, safe_g), one), one)
        variable.assign_sub(M.multiply(M.multiply(ratio, lr), update))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Adafactor(Optimizer):
    """Factored second moments (row and column means for matrices), Shazeer & Stern.

    >>> opt = tf.keras.optimizers.Adafactor(learning_rate=0.1)
    >>> v = tf.Variable(1.0)
    >>> _ = opt.apply_gradients([(tf.constant(2.0), v)])
    >>> round(float(v.numpy()), 4)
    0.9
    """

    sparse_updates = True   # as Keras 3: the variable touched row by row

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3,
                 clip_threshold=1.0, relative_step=True, name="adafactor", **kwargs):
        super().__init__(name, learning_rate, **kwargs)
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = beta_2_decay, epsilon_1, epsilon_2
        self.clip_threshold, self.relative_step = clip_threshold, relative_step

    def _build_slots(self, var_list):
        self._r, self._c, self._v = [], [], []
        for var in var_list:
            shape = tuple(var.shape)
            if len(shape) < 2:
                r = Variable(0.0, name=var.name.rsplit(":", 1)[0], dtype=var.dtype, trainable=False)
                c = Variable(0.0, name=var.name.rsplit(":", 1)[0], dtype=var.dtype, trainable=False)
            else:
                r = Variable(creation.zeros(shape[:-1], var.dtype), name=var.name.rsplit(":", 1)[0],
                             dtype=var.dtype, trainable=False)
                c = Variable(creation.zeros(shape[:-2] + shape[-1:], var.dtype),
                             name=var.name.rsplit(":", 1)[0], dtype=var.dtype, trainable=False)
            self._variables.extend([r, c])
            self._r.append(r)
            self._c.append(c)
            self._v.append(self.add_variable_from_reference(var, "velocity"))

    @staticmethod
    def _rms(x):
        if S.is_slices(x):   # Keras 3's mean of slices: their sum over the dense size
            total = reduce.reduce_sum(M.square(x.values))
            size = M.cast(reduce.reduce_prod(M.cast(x.dense_shape, D.int64)), total.dtype)
            return M.sqrt(M.divide(total, size))
        return M.sqrt(reduce.reduce_mean(M.square(x)))

    def update_step(self, gradient, variable):
        dtype = variable.dtype
        lr = _c(self._lr_value, dtype)
        eps2, one = _c(self.epsilon_2, dtype), _c(1.0, dtype)
        local_step = _c(M.add(self.iterations, 1), dtype)
        if self._schedule is None and self.relative_step:
            lr = M.minimum(lr, M.divide(one, M.sqrt(local_step)))
        r, c = self._slot(self._r, variable), self._slot(self._c, variable)
        v = self._slot(self._v, variable)
        rho_t = M.minimum(lr, M.divide(one, M.sqrt(local_step)))
        alpha_t = M.multiply(M.maximum(eps2, self._rms(variable)), rho_t)
        squared = S.add(S.square(gradient), self.epsilon_1)
        beta_2_t = M.subtract(one, M.pow(local_step, _c(self.beta_2_decay, dtype)))
        if len(variable.shape) >= 2:
            r.assign(M.add(M.multiply(beta_2_t, r), M.multiply(M.subtract(one, beta_2_t),
                                                                reduce.reduce_mean(squared, axis=-1))))
            c.assign(M.add(M.multiply(beta_2_t, c), M.multiply(M.subtract(one, beta_2_t),
                                                                reduce.reduce_mean(squared, axis=-2))))
            row = A.expand_dims(M.divide(r, reduce.reduce_mean(r, axis=-1, keepdims=True)), -1)
            v.assign(M.multiply(row, A.expand_dims(c, -2)))
        else:
            v.assign(M.add(M.multiply(beta_2_t, v), M.multiply(M.subtract(one, beta_2_t), squared)))
        u_t = S.divide(gradient, M.sqrt(v))
        u_t_hat = S.divide(u_t, M.maximum(one, M.divide(self._rms(u_t), self.clip_threshold)))
        S.assign_sub(variable, S.multiply(alpha_t, u_t_hat))

    def get_config(self):
        return {**super().get_config(), "beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1,
                "epsilon_2": self.epsilon_2, "clip_threshold": self.clip_threshold,
                "relative_step": self.relative_step}


CLASSES = [AdamW, Adagrad, Adadelta, Adamax, Nadam, Ftrl, Lion, Lamb, Adafactor]

__all__ = [c.__name__ for c in CLASSES] + ["CLASSES"]
