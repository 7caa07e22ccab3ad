"""What ``compile`` was given, made per model output: ``CompileLoss`` and ``CompileMetrics``.

A model with several outputs (a functional model with a list or dict of outputs) takes
``loss``, ``loss_weights`` and ``metrics`` as one value for every output, a list in output
order or a dict by output name (the name of the layer that makes the output), as Keras 3.
The loss is the weighted sum of the per-output losses; each per-output loss is also
tracked, unweighted, as ``<output>_loss``, and each metric is logged as
``<output>_<metric>``. Both are made on first use (``build``), when the shapes of the
targets and predictions are known (``"accuracy"`` picks its kind from them).
"""
from .. import _nest
from ..ops import math as M
from . import losses as losses_module
from . import metrics as metrics_module


def loss_object(identifier):
    loss = losses_module.get(identifier)
    if isinstance(loss, losses_module.Loss):
        return loss
    name = identifier if isinstance(identifier, str) else getattr(loss, "__name__", None)
    return losses_module.LossFunctionWrapper(loss, name=name)


def _is_binary_or_sparse_categorical(y_true, y_pred):
    binary = y_pred.shape[-1] == 1
    sparse = len(y_true.shape) < len(y_pred.shape) or (y_true.shape[-1] == 1 and y_pred.shape[-1] > 1)
    return binary, sparse


def metric_object(identifier, y_true, y_pred):
    """Keras 3's ``compile_utils.get_metric``: 'accuracy' picks binary/sparse/categorical by shapes."""
    if str(identifier).lower() in ("accuracy", "acc"):
        binary, sparse = _is_binary_or_sparse_categorical(y_true, y_pred)
        cls = (metrics_module.BinaryAccuracy if binary else
               metrics_module.SparseCategoricalAccuracy if sparse else metrics_module.CategoricalAccuracy)
        metric = cls(name=str(identifier))
    else:
        metric = metrics_module.get(identifier)
    if not isinstance(metric, metrics_module.Metric):
        metric = metrics_module.MeanMetricWrapper(metric)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


def output_names(model, y_pred):
    """The names of the model's outputs: their layers' names (functional), else output_<i>."""
    if isinstance(y_pred, dict):
        return sorted(y_pred)
    outputs = getattr(model, "outputs", None)
    flat = _nest.flatten(y_pred)
    if outputs is not None and len(outputs) == len(flat):
        return [t.node.layer.name for t in outputs]
    return [f"output_{i}" for i in range(len(flat))]


def by_output(y, names, what="y"):
    """Targets (or predictions, or weights) as a list in output order: from a list or a dict."""
    if isinstance(y, dict):
        missing = [n for n in names if n not in y]
        if missing:
            raise ValueError(f"Expected keys {names} in {what}, but found {what}.keys()={sorted(y)}")
        return [y[n] for n in names]
    flat = list(y) if isinstance(y, (list, tuple)) else [y]
    if len(flat) != len(names):
        raise ValueError(f"{what} has {len(flat)} entries, but the model has {len(names)} outputs "
                         f"{names}")
    return flat


def per_output_spec(spec, names, what):
    """``loss``/``loss_weights``/``metrics`` as one entry per output (None where none is given)."""
    if isinstance(spec, dict):
        unknown = [k for k in spec if k not in names]
        if unknown:
            raise ValueError(f"Expected keys {names} in {what} dict, but found {what}.keys()="
                             f"{list(spec)}")
        return [spec.get(n) for n in names]
    if isinstance(spec, (list, tuple)) and len(names) == 1 and len(spec) == 1 and what != "metrics":
        return list(spec)
    if isinstance(spec, (list, tuple)) and len(names) > 1:
        if len(spec) != len(names):
            raise ValueError(f"Invalid `{what}`. `{what}` should either be a dict or a list matching "
                             f"the output names of the functional model {names}. Received: "
                             f"{what}={list(spec)}")
        return list(spec)
    return [spec] * len(names)


class CompileLoss:
    """``loss(y, y_pred, sample_weight)``: the weighted sum over outputs; trackers per output."""

    def __init__(self, loss, loss_weights=None):
        self._loss, self._loss_weights = loss, loss_weights
        self.built, self.losses, self.weights, self.trackers, self.names = False, [], [], [], []

    def build(self, model, y_pred):
        names = output_names(model, y_pred)
        self.names = names
        losses = per_output_spec(self._loss, names, "loss")
        self.losses = [None if spec is None else loss_object(spec) for spec in losses]
        if all(loss is None for loss in self.losses):
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        if self._loss_weights is None:
            self.weights = [None] * len(names)
        elif len(names) == 1 and isinstance(self._loss_weights, (int, float)):
            self.weights = [float(self._loss_weights)]
        else:
            self.weights = per_output_spec(self._loss_weights, names, "loss_weights")
        self.trackers = ([metrics_module.Mean(name=f"{n}_loss") if loss is not None else None
                          for n, loss in zip(names, self.losses, strict=True)] if len(names) > 1 else [])
        self.built = True

    @property
    def metrics(self):
        return [t for t in self.trackers if t is not None]

    def __call__(self, y_true, y_pred, sample_weight=None):
        if len(self.names) == 1:
            pairs = [(y_true, y_pred)]
        else:
            pairs = list(zip(by_output(y_true, self.names, "y"), by_output(y_pred, self.names, "y_pred"),
                             strict=True))
        weights = (by_output(sample_weight, self.names, "sample_weight")
                   if isinstance(sample_weight, (list, tuple, dict)) else [sample_weight] * len(pairs))
        total = None
        for k, ((y, p), loss, weight, sw) in enumerate(zip(pairs, self.losses, self.weights, weights,
                                                          strict=True)):
            if loss is None:
                continue
            value = loss(y, p, sw)
            if self.trackers:
                self.trackers[k].update_state(value, sample_weight=_nest.flatten(p)[0].shape[0])
            if weight is not None:
                value = M.multiply(value, M.cast(weight, value.dtype))
            total = value if total is None else M.add(total, value)
        return total


class CompileMetrics(metrics_module.Metric):
    """The ``metrics`` and ``weighted_metrics`` given to ``compile``, made on first use (their
    kind may depend on shapes). As Keras 3: only ``weighted_metrics`` see ``sample_weight``
    (and so ``class_weight``); a weighted metric named like an unweighted one of the same
    output is logged as ``weighted_<name>``."""

    def __init__(self, metrics, weighted_metrics=None):
        super().__init__(name="compile_metrics")
        self._specs = (metrics, weighted_metrics)
        self.metrics, self.built, self.names = [], False, []
        self._entries = []  # (output index, metric, weighted, log name)

    @staticmethod
    def _as_list(spec):
        return [] if spec is None else list(spec) if isinstance(spec, (list, tuple)) else [spec]

    def build(self, y_true, y_pred, model=None):
        names = output_names(model, y_pred)
        self.names = names
        if len(names) == 1:
            ys, ps, prefixes = [y_true], [y_pred], [""]
            specs = [[self._as_list(spec)] for spec in self._specs]
        else:
            ys, ps = by_output(y_true, names, "y"), by_output(y_pred, names, "y_pred")
            prefixes = [f"{n}_" for n in names]
            specs = [[self._as_list(s) for s in per_output_spec(spec, names, what)]
                     if spec is not None else [[] for _ in names]
                     for spec, what in zip(self._specs, ("metrics", "weighted_metrics"), strict=True)]
        self._entries = []
        for k, (y, p, prefix) in enumerate(zip(ys, ps, prefixes, strict=True)):
            plain_names = set()
            for weighted, per_output in ((False, specs[0]), (True, specs[1])):
                for identifier in per_output[k]:
                    metric = metric_object(identifier, y, p)
                    name = metric.name
                    if weighted and name in plain_names:
                        name = f"weighted_{name}"
                    elif not weighted:
                        plain_names.add(name)
                    self._entries.append((k, metric, weighted, prefix + name))
        self.metrics = [metric for _, metric, _, _ in self._entries]
        self.built = True

    @property
    def variables(self):
        return [v for m in self.metrics for v in m.variables]

    def update_state(self, y_true, y_pred, sample_weight=None):
        if len(self.names) == 1:
            ys, ps, weights = [y_true], [y_pred], [sample_weight]
        else:
            ys, ps = by_output(y_true, self.names, "y"), by_output(y_pred, self.names, "y_pred")
            weights = (by_output(sample_weight, self.names, "sample_weight")
                       if isinstance(sample_weight, (list, tuple, dict)) else [sample_weight] * len(ys))
        for k, metric, weighted, _ in self._entries:
            metric.update_state(ys[k], ps[k], sample_weight=weights[k] if weighted else None)

    def result(self):
        return {name: metric.result() for _, metric, _, name in self._entries}

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()


__all__ = ["CompileLoss", "CompileMetrics", "loss_object", "metric_object", "output_names"]
