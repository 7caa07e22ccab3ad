"""Callbacks of ``fit``/``evaluate``/``predict``: ``History``, the progress bar, user callbacks.

``Progbar`` writes what Keras 3's does, byte for byte apart from the times:
``\\r`` and ANSI colours, a 20-wide bar of '━', "0s 2ms/step", then the logs
(``loss: 0.1234``, or ``%.4e`` at or below 1e-3), a redraw at most every 50 ms
that first erases the previous line with backspaces, and one final line per
epoch. ``verbose=2`` prints only that final line, without bar; ``verbose=0``
nothing. Keras decides "dynamic display" by ``"posix" in sys.modules``, true on
Linux, so the erasing form is what it prints there, to a terminal or not.
"""
import math
import sys
import time


class Progbar:
    """Keras 3's ``keras.utils.Progbar`` for the "stateful" logs fit passes (shown as given)."""

    def __init__(self, target, width=20, verbose=1, interval=0.05, unit_name="step"):
        self.target, self.width, self.verbose = target, width, verbose
        self.interval, self.unit_name = interval, unit_name
        self._values = {}
        self._start = time.time()
        self._last_update = 0
        self._time_after_first_step = None
        self._prev_total_width = 0

    def update(self, current, values=None, finalize=None):
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for k, v in values or []:
            self._values[k] = v
        now = time.time()
        time_per_unit = self._estimate_step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            message = "\b" * self._prev_total_width + "\r"
            special = 0
            if self.target is not None and self.target > 0:
                digits = int(math.log10(self.target)) + 1
                bar = f"\x1b[1m{current:{digits}d}/{self.target}\x1b[0m "
                special += 8
                done = int(self.width * float(current) / self.target)
                if done > 0:
                    bar += f"\33[32m{'━' * done}\x1b[0m"
                    special += 9
                bar += f"\33[37m{'━' * (self.width - done)}\x1b[0m"
                special += 9
            else:
                bar = "%7d/Unknown" % current
            message += bar
            if self.target is not None and self.target > 0 and not finalize:
                info = f" \x1b[1m{_eta(time_per_unit * (self.target - current))}\x1b[0m"
            else:
                info = f" \x1b[1m{now - self._start:.0f}s\x1b[0m"
            special += 8
            info += _format_time(time_per_unit, self.unit_name)
            for k, v in self._values.items():
                info += f" - {k}: {_format_value(v, abs(v))}"
            message += info
            total_width = len(bar) + len(info) - special
            if self._prev_total_width > total_width:
                message += " " * (self._prev_total_width - total_width)
            if finalize:
                message += "\n"
            _write(message)
            self._prev_total_width = total_width
        elif self.verbose == 2 and finalize and self.target is not None and self.target > 0:
            digits = int(math.log10(self.target)) + 1
            info = f"{current:{digits}d}/{self.target} - {now - self._start:.0f}s"
            info += f" -{_format_time(time_per_unit, self.unit_name)}"
            for k, v in self._values.items():
                info += f" - {k}: {_format_value(v, v)}"
            _write(info + "\n")
        self._last_update = now

    def _estimate_step_duration(self, current, now):
        """Seconds per step, leaving out the first (compiling) step once there are more."""
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_unit


def _format_value(value, magnitude):
    return f"{value:.4f}" if magnitude > 1e-3 else f"{value:.4e}"


def _eta(seconds):
    if seconds > 3600:
        return "%d:%02d:%02d" % (seconds // 3600, (seconds % 3600) // 60, seconds % 60)
    if seconds > 60:
        return "%d:%02d" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


def _format_time(per_unit, unit_name):
    if per_unit >= 1 or per_unit == 0:
        return f" {per_unit:.0f}s/{unit_name}"
    if per_unit >= 1e-3:
        return f" {per_unit * 1000.0:.0f}ms/{unit_name}"
    return f" {per_unit * 1000000.0:.0f}us/{unit_name}"


def _write(message):
    sys.stdout.write(message)
    sys.stdout.flush()


class Callback:
    """Base class: every hook is a no-op; ``model`` and ``params`` are set by ``fit``."""

    def __init__(self):
        self.model, self.params = None, {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_batch_begin(self, batch, logs=None): pass
    def on_batch_end(self, batch, logs=None): pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)   # Keras 3: the train hooks call the batch ones

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass


class History(Callback):
    """``history.history``: each log name -> its value per epoch (Python floats)."""

    def __init__(self):
        super().__init__()
        self.history, self.epoch = {}, []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        self.model.history = self


class ProgbarLogger(Callback):
    """Prints ``Epoch i/n`` and the progress bar; silent for the validation inside ``fit``."""

    def __init__(self):
        super().__init__()
        self.progbar, self.target, self.verbose, self.epochs = None, None, 1, 1
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        self.verbose = 1 if params["verbose"] == "auto" else params["verbose"]
        self.epochs, self.target = params["epochs"], params["steps"]

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._new_bar()

    def on_predict_begin(self, logs=None):
        self._new_bar()

    def on_epoch_begin(self, epoch, logs=None):
        self._new_bar()
        if self.verbose and self.epochs > 1:
            _write(f"Epoch {epoch + 1}/{self.epochs}\n")

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs=None):
        self._finalize(logs)

    def _new_bar(self):
        self.progbar = Progbar(self.target, verbose=self.verbose)
        self.seen = 0

    def _update(self, batch, logs):
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs):
        if self.target is None:
            self.target = self.progbar.target = self.seen
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)


# Keras 3's train batch hooks call the generic batch hooks by default
_BATCH_ALIASES = {"on_train_batch_begin": "on_batch_begin", "on_train_batch_end": "on_batch_end"}


def _overrides(callback, hook):
    """Whether ``callback``'s ``hook`` is not the base class's no-op (its class's method or
    one set on the instance, as ``LambdaCallback`` does)."""
    method = getattr(callback, hook, None)
    return getattr(method, "__func__", method) is not getattr(Callback, hook)


class CallbackList:
    """Calls each hook on every callback; adds ``History`` and the progress bar as ``fit`` does."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        self.callbacks = list(callbacks or [])
        if add_history:
            self.history = History()
            self.callbacks.append(self.history)
        if add_progbar:
            self.callbacks.append(ProgbarLogger())
        for c in self.callbacks:
            c.set_model(model)
            c.set_params(dict(params))

    def wants(self, hook):
        """Whether some callback does anything on ``hook``: ``fit``, ``evaluate`` and
        ``predict`` skip a batch hook no callback overrides, and the logs it would be given
        (the per-step cost of callbacks is zero unless one asks)."""
        names = (hook,) + ((_BATCH_ALIASES[hook],) if hook in _BATCH_ALIASES else ())
        return any(not isinstance(c, Callback) or any(_overrides(c, n) for n in names)
                   for c in self.callbacks)

    def __getattr__(self, hook):
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        indexed = hook.startswith(("on_epoch_", "on_batch_")) or "_batch_" in hook

        def call(*args, logs=None):
            # as Keras 3's CallbackList: every hook gets a dict of logs, the batch hooks as
            # logs=, the others positionally (a callback may name the parameter otherwise)
            index, rest = (args[:1], args[1:]) if indexed else ((), args)
            logs = (rest[0] if rest else logs) or {}
            for c in self.callbacks:
                if "_batch_" in hook or hook.startswith("on_batch_"):
                    getattr(c, hook)(*index, logs=logs)
                else:
                    getattr(c, hook)(*index, logs)
        return call


__all__ = ["Callback", "History", "ProgbarLogger", "Progbar", "CallbackList"]
