"""``model.summary()``: Keras 3's table as its ``rich`` console prints it to a file or a pipe.

The layout is the one Keras 3 prints outside a terminal (80 columns). Models whose
layers form a chain (Sequential, a functional chain, a subclassed model) get cells
of 31, 22 and 13 characters; a functional model that branches, merges or shares a
layer gets a fourth column, "Connected to" (``layer[node][tensor]`` of each input),
and cells of 19, 17, 10 and 17. Text is wrapped as rich wraps it: at spaces, a word
too long for its cell alone on its line and cut with an ellipsis.
"""
import math

import numpy as np

CHAIN = ((31, 22, 13), ("Layer (type)", "Output Shape", "Param #"), "<<>")
GRAPH = ((19, 17, 10, 17), ("Layer (type)", "Output Shape", "Param #", "Connected to"), "<<><")


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


def wrap(text, width):
    """rich's word wrap with ``overflow="ellipsis"``: the lines of ``text`` in ``width`` cells."""
    lines, line = [], ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if len(candidate) <= width or not line:
            line = candidate
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return [line if len(line) <= width else line[:width - 1] + "…" for line in lines]


def _row(cells, layout, left="│", mid="│", right="│"):
    widths, _, align = layout
    columns = [wrap(cell, w) for cell, w in zip(cells, widths, strict=True)]
    height = max(len(c) for c in columns)
    out = []
    for i in range(height):
        parts = [(c[i] if i < len(c) else "").ljust(w) if a == "<" else (c[i] if i < len(c) else "").rjust(w)
                 for c, w, a in zip(columns, widths, align, strict=True)]
        out.append(f"{left} " + f" {mid} ".join(parts) + f" {right}")
    return out


def _rule(widths, left, mid, right, fill):
    return left + mid.join(fill * (w + 2) for w in widths) + right


def is_chain(model):
    """Keras' ``sequential_like``: no depth holds two calls, no call takes two tensors, no
    layer is called twice."""
    depths = getattr(model, "_node_depths", None)
    if depths is None:
        return True
    nodes = [n for n in getattr(model, "_nodes", [])] + [t.node for t in model.inputs]
    by_depth = {}
    for node in nodes:
        by_depth.setdefault(depths.get(node.id), []).append(node)
    if any(len(v) > 1 or (len(v) == 1 and len(v[0].input_tensors) > 1) for v in by_depth.values()):
        return False
    layers = [node.layer for node in nodes]
    return len({id(layer) for layer in layers}) == len(layers)


def _connections(model, layer):
    nodes = [n for n in model._nodes if n.layer is layer]
    names = [f"{t.node.layer.name}[{t.node.index}][{t.index}]" for n in nodes for t in n.input_tensors]
    return ", ".join(names) or "-"


def summary_lines(model):
    """The lines ``summary()`` prints."""
    layout = CHAIN if is_chain(model) else GRAPH
    widths = layout[0]
    lines = [f'Model: "{model.name}"', _rule(widths, "┏", "┳", "┓", "━"),
             *_row(layout[1], layout, "┃", "┃", "┃"), _rule(widths, "┡", "╇", "┩", "━")]
    separator = _rule(widths, "├", "┼", "┤", "─")
    for i, layer in enumerate(model.layers):
        shape = output_shape(layer)
        params = f"{count_params(layer.weights):,}" if layer.built else "0 (unbuilt)"
        cells = [f"{layer.name} ({type(layer).__name__})",
                 _format_shape(shape) if shape is not None else "?", params]
        if layout is GRAPH:
            cells.append(_connections(model, layer))
        if i:
            lines.append(separator)
        lines.extend(_row(cells, layout))
    lines.append(_rule(widths, "└", "┴", "┘", "─"))
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
