"""``compile``/``fit``/``evaluate``/``predict`` (Keras 3's ``Trainer``) on NumPy arrays.

``fit`` runs ``train_step`` once per batch, compiled with ``tapeflow.function``
(a ``GradientTape`` around the forward pass and the loss, then
``optimizer.apply_gradients``, then the metrics' ``update_state``): the
variables it reads are captured and its assigns (weights, optimizer slots,
metric totals) written back, so a step is one compiled program. A last batch
smaller than the others is one more trace. Before the first step the model is
run once eagerly on the first batch (``training=False``, tapes paused) so that
every variable exists before tracing: the layers' weights, the optimizer's
slots and the metrics' totals; Keras 3 builds the same things symbolically.

Logs are what Keras 3 reports: the loss is a ``Mean`` weighted by batch size
(so an epoch's loss is the mean over samples of the per-batch losses), each
compiled metric is a running mean over the epoch, the keys are sorted, and
validation logs are prefixed ``val_``. ``validation_split`` takes the last
fraction of the arrays, before shuffling, as Keras does.

Each step runs with denormals flushed to zero, as TensorFlow's kernels do
(runtime/denormals.py: without it Adam's decaying moments made W14's steps several
times slower). A batch hook no callback overrides is not called (``CallbackList.wants``).
"""
import math
import warnings

import numpy as np

from .. import _nest
from ..autodiff.tape import GradientTape
from ..ir import dtypes as D
from ..ops import math as M
from ..ops import reduce as R
from ..runtime.denormals import flush_denormals
from ..runtime.tensor import STATE_paused
from ..tracer import function as _function
from . import callbacks as callbacks_module
from . import metrics as metrics_module
from . import optimizers as optimizers_module
from .compile_utils import CompileLoss, CompileMetrics
from .data_adapters import ArrayAdapter, adapter, arrays, num_samples, unpack


# -- data ---------------------------------------------------------------------------------

def _class_weights(y, class_weight, sample_weight):
    """Keras 3's ``class_weight_to_sample_weights``: each sample weighs its class's weight (the
    argmax of a one-hot row, else the rounded label), 1 for classes ``class_weight`` omits."""
    if sample_weight is not None:
        raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
    if not isinstance(class_weight, dict):
        raise ValueError(f"Expected `class_weight` to be a dict with keys from 0 to one less than the "
                         f"number of classes, found {class_weight}")
    if isinstance(y, (list, tuple, dict)):
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    y = np.asarray(y)
    if y.ndim > 2:
        raise ValueError("`class_weight` not supported for 3+ dimensional targets.")
    if y.ndim > 1:
        y = np.argmax(y, axis=-1) if y.shape[-1] != 1 else np.squeeze(y, axis=-1)
    labels = np.round(y).astype("int64")
    return np.array([float(class_weight.get(int(label), 1.0)) for label in labels.reshape(-1)],
                    dtype=np.float32).reshape(labels.shape[:1])


def _pythonify(logs):
    """Sorted Python floats, nested dicts (a ``compile_metrics`` result) flattened, as Keras 3."""
    out = {}
    for k, v in sorted(logs.items()):
        if isinstance(v, dict):
            out.update(_pythonify(v))
        else:
            out[k] = float(np.asarray(v.numpy() if hasattr(v, "numpy") else v))
    return out


def _split(data, validation_split):
    n = num_samples([d for d in data if d is not None])
    at = int(math.floor(n * (1.0 - validation_split)))
    if at == 0 or at == n:
        raise ValueError(f"Training data contains {n} samples, which is not sufficient to split it "
                         f"into a validation and training set as specified by "
                         f"`validation_split={validation_split}`. Either provide more data, or a "
                         f"different value for the `validation_split` argument.")

    train = tuple(None if d is None else _nest.map_structure(lambda a: a[:at], d) for d in data)
    val = tuple(None if d is None else _nest.map_structure(lambda a: a[at:], d) for d in data)
    return train, val


def _present(batch):
    return tuple(b for b in batch if b is not None)


# -- the Trainer mixin ---------------------------------------------------------------------

class Trainer:
    """What ``Model`` adds to a layer for training: Keras 3's compile/fit/evaluate/predict."""

    compiled = False
    optimizer = None
    _compile_loss = None
    _compile_metrics = None
    _loss_tracker = None
    train_function = test_function = predict_function = None

    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1, jit_compile="auto",
                auto_scale_loss=True):
        self._compile_config = {"loss": loss, "loss_weights": loss_weights, "metrics": metrics,
                                "weighted_metrics": weighted_metrics}
        self.optimizer = optimizers_module.get(optimizer)
        self._compile_loss = CompileLoss(loss, loss_weights) if loss is not None else None
        self.loss = loss
        self._compile_metrics = (CompileMetrics(metrics, weighted_metrics)
                                 if metrics is not None or weighted_metrics is not None else None)
        self._loss_tracker = metrics_module.Mean(name="loss")
        self.run_eagerly = run_eagerly
        self.stop_training = False
        self.compiled = True
        self.train_function = self.test_function = self.predict_function = None

    # -- metrics ---------------------------------------------------------------------------
    @property
    def metrics(self):
        out = []
        if self.compiled:
            out.append(self._loss_tracker)
            if self._compile_metrics is not None:
                out.append(self._compile_metrics)
            if self._compile_loss is not None:
                out.extend(self._compile_loss.metrics)
        return out

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def get_metrics_result(self):
        results = {}
        for m in self.metrics:
            r = m.result()
            results.update(r if isinstance(r, dict) else {m.name: r})
        return results

    def _get_metrics_result_or_logs(self, logs):
        """The metrics' results, unless a custom step returned other keys: then its last logs."""
        results = self.get_metrics_result()
        if isinstance(logs, dict) and set(logs) == set(results):
            return results
        return logs

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        losses = []
        if self._compile_loss is not None:
            if not self._compile_loss.built:
                self._compile_loss.build(self, y_pred)
            losses.append(self._compile_loss(y, y_pred, sample_weight))
        for loss in self.losses:    # add_loss and regularizers, summed as Keras 3 does
            losses.append(M.cast(R.reduce_sum(loss), losses[0].dtype if losses else D.float32))
        if not losses:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        total = losses[0]
        for loss in losses[1:]:
            total = M.add(total, loss)
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    # -- steps -----------------------------------------------------------------------------
    def train_step(self, data):
        x, y, sample_weight = unpack(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=True)
            scaled = loss   # times loss_scale_factor, or LossScaleOptimizer's scale
            if self.optimizer is not None and hasattr(self.optimizer, "scale_loss"):
                scaled = self.optimizer.scale_loss(loss)
        self._loss_tracker.update_state(loss, sample_weight=_nest.flatten(x)[0].shape[0])
        trainable = self.trainable_weights
        if trainable:
            gradients = tape.gradient(scaled, trainable)
            self.optimizer.apply_gradients(zip(gradients, trainable))
        else:
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data):
        x, y, sample_weight = unpack(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=False)
        self._loss_tracker.update_state(loss, sample_weight=_nest.flatten(x)[0].shape[0])
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack(data)
        return self(x, training=False)

    def _compiled(self, step):
        return step if getattr(self, "run_eagerly", False) else _function(step)

    def make_train_function(self):
        if self.train_function is None:
            self.train_function = self._compiled(self.train_step)
        return self.train_function

    def make_test_function(self):
        if self.test_function is None:
            self.test_function = self._compiled(self.test_step)
        return self.test_function

    def make_predict_function(self):
        if self.predict_function is None:
            self.predict_function = self._compiled(self.predict_step)
        return self.predict_function

    def _build_for(self, data):
        """Make every variable the steps use before they are traced (see the module docstring)."""
        x, y, _ = unpack(data)
        metrics_pending = self._compile_metrics is not None and not self._compile_metrics.built
        loss_pending = self._compile_loss is not None and not self._compile_loss.built
        if not self.built or metrics_pending or loss_pending:
            with STATE_paused():
                y_pred = self(x, training=False)
            if metrics_pending and y is not None:
                self._compile_metrics.build(y, y_pred, model=self)
            if loss_pending:
                self._compile_loss.build(self, y_pred)
        if self.optimizer is not None:
            self.optimizer.build(self.trainable_weights)

    def _assert_compiled(self, method):
        if not self.compiled:
            raise ValueError(f"You must call `compile()` before using the model. (`{method}()`)")

    # -- fit / evaluate / predict ----------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        self._assert_compiled("fit")
        class_weights = None if class_weight is None else (
            lambda y_, w_: _class_weights(y_, class_weight, w_))
        data = adapter(x, y, sample_weight, batch_size, bool(shuffle), steps_per_epoch, class_weights)
        if validation_split and validation_data is None:
            if not isinstance(data, ArrayAdapter):
                raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays, "
                                 f"found following types in the input: {[type(x)]}")
            train, validation_data = _split(data.data, validation_split)
            data = ArrayAdapter(train, data.batch_size, data.shuffle, steps_per_epoch)
        callbacks = callbacks_module.CallbackList(callbacks, add_history=True, add_progbar=verbose != 0,
                                                  model=self, verbose=verbose, epochs=epochs,
                                                  steps=data.steps)
        self._build_for(data.first())
        train_function = self.make_train_function()
        self.stop_training = False
        self._initial_epoch = None
        callbacks.on_train_begin()
        initial_epoch = self._initial_epoch or initial_epoch   # BackupAndRestore resumes here
        raw, training_logs = {}, None
        batch_begin = callbacks.wants("on_train_batch_begin")
        batch_end = callbacks.wants("on_train_batch_end")
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            for step, batch in data.epoch():
                if batch_begin:
                    callbacks.on_train_batch_begin(step)
                with flush_denormals():
                    raw = train_function(_present(batch))
                if batch_end:
                    callbacks.on_train_batch_end(step, _pythonify(raw))
                if self.stop_training:
                    break
            epoch_logs = _pythonify(self._get_metrics_result_or_logs(raw))
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                if not hasattr(self, "_eval_data") or self._eval_data[0] is not validation_data:
                    if isinstance(validation_data, (tuple, list)):
                        val_x, val_y, val_weight = unpack(tuple(validation_data))
                    else:
                        val_x, val_y, val_weight = validation_data, None, None
                    self._eval_data = (validation_data, adapter(
                        val_x, val_y, val_weight, validation_batch_size or batch_size, False,
                        validation_steps))
                val_logs = self.evaluate(verbose=0, return_dict=True, _callbacks=callbacks,
                                         _data=self._eval_data[1])
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        if hasattr(self, "_eval_data"):
            del self._eval_data
        if self.optimizer is not None and epochs > 0 and hasattr(self.optimizer, "finalize_variable_values"):
            self.optimizer.finalize_variable_values(self.trainable_weights)
        callbacks.on_train_end(logs=training_logs)
        return callbacks.history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False, _callbacks=None, _data=None):
        self._assert_compiled("evaluate")
        data = _data if _data is not None else adapter(x, y, sample_weight, batch_size, False, steps)
        if _callbacks is None:
            _callbacks = callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                                       verbose=verbose, epochs=1, steps=data.steps)
        self._build_for(data.first())
        test_function = self.make_test_function()
        _callbacks.on_test_begin()
        self.reset_metrics()
        logs = {}
        batch_begin = _callbacks.wants("on_test_batch_begin")
        batch_end = _callbacks.wants("on_test_batch_end")
        for step, batch in data.epoch():
            if batch_begin:
                _callbacks.on_test_batch_begin(step)
            with flush_denormals():
                logs = test_function(_present(batch))
            if batch_end:
                _callbacks.on_test_batch_end(step, _pythonify(logs))
        logs = _pythonify(self._get_metrics_result_or_logs(logs))
        _callbacks.on_test_end(logs)
        if return_dict:
            return logs
        return self._flatten_metrics_in_order(logs)

    def _flatten_metrics_in_order(self, logs):
        names = []
        for m in self.metrics:
            names += [s.name for s in m.metrics] if isinstance(m, CompileMetrics) else [m.name]
        results = [logs[n] for n in names if n in logs] + [logs[k] for k in sorted(logs) if k not in names]
        return results[0] if len(results) == 1 else results

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        data = adapter(x, None, None, batch_size, False, steps)
        callbacks = callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                                  verbose=verbose, epochs=1, steps=data.steps)
        predict_function = self.make_predict_function()
        callbacks.on_predict_begin()
        outputs = []
        batch_begin = callbacks.wants("on_predict_batch_begin")
        batch_end = callbacks.wants("on_predict_batch_end")
        for step, batch in data.epoch():
            if batch_begin:
                callbacks.on_predict_batch_begin(step)
            with flush_denormals():
                out = predict_function(_present(batch[:1]))
            outputs.append(_nest.map_structure(lambda t: np.asarray(t.numpy()), out))
            if batch_end:
                callbacks.on_predict_batch_end(step, {"outputs": out})
        callbacks.on_predict_end()
        leaves = [_nest.flatten(o) for o in outputs]
        return _nest.pack_sequence_as(outputs[0], [np.concatenate(parts) for parts in zip(*leaves)])


__all__ = ["Trainer", "CompileMetrics"]
