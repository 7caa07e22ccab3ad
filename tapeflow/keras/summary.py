"""``model.summary()``: Keras 3's table as its ``rich`` console prints it to a file or a pipe.

The layout is the one Keras 3 prints outside a terminal (80 columns: cells of
31, 22 and 13 characters), for models whose layers form a chain (Sequential,
a functional chain, a subclassed model); the "Connected to" column of
branching functional graphs is not drawn. Names longer than their cell are
not wrapped as rich would wrap them.
"""
import math

import numpy as np

WIDTHS = (31, 22, 13)


def output_shape(layer):
    """From the layer's last call on Keras tensors, else its shape rule on the shape it was built for."""
    shape = getattr(layer, "_keras_output_shape", None)
    if shape is None and getattr(layer, "_build_input_shape", None) is not None:
        try:
            shape = layer.compute_output_shape(layer._build_input_shape)
        except (NotImplementedError, TypeError, ValueError):
            shape = None
    return None if shape is None else tuple(shape)


def _format_shape(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


def count_params(weights):
    return int(sum(math.prod(tuple(w.shape)) for w in weights))


def memory_size(weights):
    unique = {id(w): w for w in weights}.values()
    return sum(math.prod(tuple(w.shape)) * np.dtype(w.dtype.np).itemsize for w in unique)


def readable_memory_size(size):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _row(cells, left="│", mid="│", right="│"):
    name, shape, params = cells
    return (f"{left} {name:<{WIDTHS[0]}} {mid} {shape:<{WIDTHS[1]}} {mid} "
            f"{params:>{WIDTHS[2]}} {right}")


def _rule(left, mid, right, fill):
    return left + mid.join(fill * (w + 2) for w in WIDTHS) + right


def summary_lines(model):
    """The lines ``summary()`` prints."""
    lines = [f'Model: "{model.name}"', _rule("┏", "┳", "┓", "━"),
             _row(("Layer (type)", "Output Shape", "Param #"), "┃", "┃", "┃"), _rule("┡", "╇", "┩", "━")]
    rows = []
    for layer in model.layers:
        shape = output_shape(layer)
        params = f"{count_params(layer.weights):,}" if layer.built else "0 (unbuilt)"
        rows.append(_row((f"{layer.name} ({type(layer).__name__})",
                          _format_shape(shape) if shape is not None else "?", params)))
    separator = _rule("├", "┼", "┤", "─")
    for i, row in enumerate(rows):
        if i:
            lines.append(separator)
        lines.append(row)
    lines.append(_rule("└", "┴", "┘", "─"))
    trainable, non_trainable = model.trainable_weights, model.non_trainable_weights
    optimizer = getattr(model, "optimizer", None)
    optimizer_vars = list(optimizer.variables) if optimizer is not None and getattr(
        optimizer, "_built", False) else None
    total = count_params(trainable) + count_params(non_trainable) + count_params(optimizer_vars or [])
    total_size = memory_size(trainable) + memory_size(non_trainable) + memory_size(optimizer_vars or [])
    lines.append(f" Total params: {total:,} ({readable_memory_size(total_size)})")
    lines.append(f" Trainable params: {count_params(trainable):,} "
                 f"({readable_memory_size(memory_size(trainable))})")
    lines.append(f" Non-trainable params: {count_params(non_trainable):,} "
                 f"({readable_memory_size(memory_size(non_trainable))})")
    if optimizer_vars is not None:
        lines.append(f" Optimizer params: {count_params(optimizer_vars):,} "
                     f"({readable_memory_size(memory_size(optimizer_vars))})")
    return lines


__all__ = ["summary_lines", "count_params", "readable_memory_size"]
