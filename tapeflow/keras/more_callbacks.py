"""Keras 3's training callbacks: early stopping, checkpoints, learning-rate control, logging,
backups and EMA swapping, each following ``keras.src.callbacks`` step for step (the logs they
read are ``fit``'s epoch logs; ``learning_rate`` is added to them as Keras 3 adds it)."""
import collections
import csv
import json
import os
import shutil
import warnings

import numpy as np

from .callbacks import Callback, _write


class MonitorCallback(Callback):
    """Keras 3's base of callbacks that watch one logged value for improvement."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{self.__class__.__name__} mode '{mode}' is unknown, fallback to auto mode.",
                          stacklevel=2)
            mode = "auto"
        self.monitor, self.mode, self.best = monitor, mode, baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        less, greater = np.less, np.greater
        if self.mode == "min":
            self.monitor_op = less
        elif self.mode == "max":
            self.monitor_op = greater
        else:
            name = self.monitor.removeprefix("val_")
            if name == "loss":
                self.monitor_op = less
            for m in _compiled_metrics(self.model):
                if m.name == name and hasattr(m, "_direction"):
                    self.monitor_op = greater if m._direction == "up" else less
            if self.monitor_op is None:
                raise ValueError(f"{self.__class__.__name__} callback received monitor={self.monitor}, but "
                                 f"Keras isn't able to automatically determine whether that metric should "
                                 f"be maximized or minimized. Pass `mode='max'` in order to monitor based "
                                 f"on the highest metric value, or pass `mode='min'` in order to use the "
                                 f"lowest value.")
        if self.monitor_op is less:
            self.min_delta *= -1

    def _is_improvement(self, monitor_value, reference_value):
        if reference_value is None:
            return True
        return bool(self.monitor_op(monitor_value - self.min_delta, reference_value))


_UP = ("accuracy", "auc", "precision", "recall", "f1_score", "fbeta_score", "iou", "r2_score",
       "cosine_similarity", "pearson_correlation", "concordance_correlation", "true_positives",
       "true_negatives", "at_recall", "at_precision", "at_specificity", "at_sensitivity")


def _compiled_metrics(model):
    out = []
    for m in getattr(model, "metrics", []) or []:
        out.extend(getattr(m, "metrics", None) or [m])
    for m in out:
        if not hasattr(m, "_direction"):
            name = type(m).__name__.lower()
            up = any(key.replace("_", "") in name for key in _UP) or "accuracy" in m.name
            m._direction = "up" if up else "down"
    return out


class EarlyStopping(MonitorCallback):
    """Stop training when ``monitor`` stops improving for ``patience`` epochs (optionally
    restoring the weights of the best epoch at the end)."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience, self.verbose, self.baseline = patience, verbose, baseline
        self.wait, self.stopped_epoch = 0, 0
        self.restore_best_weights, self.best_weights = restore_best_weights, None
        self.start_from_epoch = start_from_epoch

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best, self.best_weights, self.best_epoch = 0, 0, None, None, 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            _write(f"Epoch {self.stopped_epoch + 1}: early stopping\n")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                _write(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.\n")
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs):
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                          f"Available metrics are: {','.join(list((logs or {}).keys()))}", stacklevel=2)
        return value


def _learning_rate(optimizer):
    return float(np.asarray(optimizer.learning_rate.numpy() if hasattr(optimizer.learning_rate, "numpy")
                            else optimizer.learning_rate))


class ReduceLROnPlateau(MonitorCallback):
    """Multiply the learning rate by ``factor`` after ``patience`` epochs without improvement."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        self.factor, self.min_lr, self.patience, self.verbose = factor, min_lr, patience, verbose
        self.cooldown, self.cooldown_counter, self.wait = cooldown, 0, 0

    def on_train_begin(self, logs=None):
        self.best, self.cooldown_counter, self.wait = None, 0, 0

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = logs if logs is not None else {}
        logs["learning_rate"] = _learning_rate(self.model.optimizer)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(list(logs.keys()))}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best, self.wait = current, 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old = _learning_rate(self.model.optimizer)
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    self.model.optimizer.learning_rate = new
                    if self.verbose > 0:
                        _write(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.\n")
                    self.cooldown_counter, self.wait = self.cooldown, 0


class LearningRateScheduler(Callback):
    """Set the learning rate at each epoch's start to ``schedule(epoch, lr)``."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        if not hasattr(optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        try:
            rate = self.schedule(epoch, _learning_rate(optimizer))
        except TypeError:
            rate = self.schedule(epoch)
        if not isinstance(rate, (float, np.float32, np.float64)):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {rate}")
        optimizer.learning_rate = rate
        if self.verbose > 0:
            _write(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {rate}.\n")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _learning_rate(self.model.optimizer)


class TerminateOnNaN(Callback):
    """Stop training (or raise) at the first batch whose loss is NaN or infinite."""

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            if self.raise_error:
                raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss}. "
                                   f"Terminating training immediately.")
            _write(f"Batch {batch}: Invalid loss, terminating training\n")
            self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback of the given functions (``on_epoch_end=lambda epoch, logs: ...``)."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end,
                 "on_train_batch_begin": on_train_batch_begin, "on_train_batch_end": on_train_batch_end}
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)


class CSVLogger(Callback):
    """Each epoch's logs as a CSV row (``epoch`` then the sorted log names)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep, self.filename, self.append = separator, os.fspath(filename), append
        self.writer, self.keys, self.append_header, self.csv_file = None, None, True, None

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")   # noqa: SIM115  (closed at train end)
        self.writer, self.keys = None, None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}

        def handle_value(k):
            if isinstance(k, str):
                return k
            if isinstance(k, collections.abc.Iterable) and not (isinstance(k, np.ndarray) and k.ndim == 0):
                return f'"[{", ".join(map(str, k))}]"'
            return k
        if self.keys is None:
            self.keys = sorted(logs.keys())
            if not any(key.startswith("val_") for key in self.keys) and self.keys:
                self.keys.extend([f"val_{k}" for k in self.keys])
        if not self.writer:
            sep = self.sep

            class Dialect(csv.excel):
                delimiter = sep
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=Dialect)
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict({"epoch": epoch})
        row.update((key, handle_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


class ModelCheckpoint(MonitorCallback):
    """Save the model (``.keras``) or its weights (``.weights.h5``) each epoch or every
    ``save_freq`` batches, to a path formatted with ``epoch`` and the logs."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose, self.filepath = verbose, os.fspath(filepath)
        self.save_best_only, self.save_weights_only, self.save_freq = save_best_only, save_weights_only, save_freq
        self._batches_seen_since_last_saving, self._last_batch_seen, self._current_epoch = 0, None, 0
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or integer "
                             f"values")
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError(f"When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided "
                             f"must end in `.weights.h5` (Keras weights format). Received: "
                             f"filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith((".keras", ".h5")):
            raise ValueError(f"The filepath provided must end in `.keras` (Keras model format). Received: "
                             f"filepath={self.filepath}")

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            add = batch + 1
        else:
            add = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += add
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _should_save(self, logs):
        if not self.save_best_only:
            return True
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=2)
            return True
        if self._is_improvement(current, self.best):
            self.best = current
            return True
        return False

    def _save_model(self, epoch, batch, logs):
        logs = logs or {}
        try:
            if batch is None or "batch" in logs:
                path = self.filepath.format(epoch=epoch + 1, **logs)
            else:
                path = self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e}') from e
        if not self._should_save(logs):
            return
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)
        if self.verbose > 0:
            _write(f"\nEpoch {epoch + 1}: saving model to {path}\n")


class BackupAndRestore(Callback):
    """Back the weights and the epoch up after each epoch; a later ``fit`` with the same
    directory resumes from there (the backup is deleted when training ends normally)."""

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Invalid value for argument `save_freq`. Received: save_freq={save_freq}. "
                             f"Expected either 'epoch' or an integer value.")
        self.backup_dir, self.save_freq = os.fspath(backup_dir), save_freq
        self.double_checkpoint, self.delete_checkpoint = double_checkpoint, delete_checkpoint
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._batches_seen_since_last_saving, self._last_batch_seen, self._current_epoch = 0, 0, 0

    def on_train_begin(self, logs=None):
        if os.path.exists(self._weights_path):
            if self.model.optimizer is not None:
                self.model.optimizer.build(self.model.trainable_weights)
            self.model.load_weights(self._weights_path)
        if os.path.exists(self._metadata_path):
            with open(self._metadata_path) as f:
                self.model._initial_epoch = int(json.loads(f.read())["epoch"])

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch, self._last_batch_seen = epoch + 1, 0
        if self.save_freq == "epoch":
            self._save()

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        add = batch + 1 if batch <= self._last_batch_seen else batch - self._last_batch_seen
        self._batches_seen_since_last_saving += add
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            self._save()

    def _save(self):
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint and os.path.exists(self._weights_path):
            shutil.copy(self._weights_path, self._weights_path + ".bkp")
        self.model.save_weights(self._weights_path, overwrite=True)
        with open(self._metadata_path, "w") as f:
            f.write(json.dumps({"epoch": self._current_epoch, "batch": self._last_batch_seen}))

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)


class SwapEMAWeights(Callback):
    """Evaluate (and predict) with the optimizer's moving averages (``use_ema=True``) in place
    of the weights; with ``swap_on_epoch`` also keep them in the model at each epoch's end."""

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch, self._ema_weights_in_model = swap_on_epoch, False

    def _pairs(self):
        optimizer = self.model.optimizer
        if not getattr(optimizer, "use_ema", False) or not getattr(optimizer, "_built", False):
            raise ValueError("SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. "
                             f"Received: use_ema={getattr(optimizer, 'use_ema', False)}")
        return list(zip(optimizer._built_variables, optimizer._averages))

    def _swap(self):
        for var, average in self._pairs():
            held = np.array(var.numpy(), copy=True)
            var.assign(average.numpy())
            average.assign(held)

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap()
            self._ema_weights_in_model = True
            if epoch == self.params["epochs"] - 1:
                for var, average in self._pairs():
                    average.assign(var.numpy())

    def on_test_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap()
            self._ema_weights_in_model = True

    def on_test_end(self, logs=None):
        if self._ema_weights_in_model:
            self._swap()
            self._ema_weights_in_model = False

    on_predict_begin = on_test_begin
    on_predict_end = on_test_end


CLASSES = [EarlyStopping, ReduceLROnPlateau, LearningRateScheduler, TerminateOnNaN, LambdaCallback,
           CSVLogger, ModelCheckpoint, BackupAndRestore, SwapEMAWeights]

__all__ = [c.__name__ for c in CLASSES] + ["MonitorCallback", "CLASSES"]
