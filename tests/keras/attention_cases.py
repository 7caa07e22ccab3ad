"""The attention/normalization programs whose TensorFlow 2.21 answers attention_facts.py holds.

Plain code over a ``tf`` module argument (run on TensorFlow to make the facts, on tapeflow
by test_attention.py). Weights are set from a fixed formula in ``layer.weights`` order (Keras
3's layout). ``run_case`` returns the outputs and the gradients of a fixed contraction of
them with respect to every input and weight.
"""
import numpy as np

from recurrent_cases import flatten, seeds, weight_value

B, TQ, TV, D = 2, 3, 4, 4


def tensors():
    q = np.sin(np.arange(B * TQ * D) * 0.7).reshape(B, TQ, D).astype(np.float32)
    v = np.cos(np.arange(B * TV * D) * 0.45 + 0.3).reshape(B, TV, D).astype(np.float32)
    k = np.sin(np.arange(B * TV * D) * 0.31 - 0.2).reshape(B, TV, D).astype(np.float32)
    x4 = np.cos(np.arange(B * 2 * 3 * D) * 0.5).reshape(B, 2, 3, D).astype(np.float32)
    vmask = np.array([[True, True, False, True], [True, False, True, False]])
    qmask = np.array([[True, False, True], [True, True, True]])
    amask = np.array([[[1, 0, 1, 1], [1, 1, 0, 1], [0, 1, 1, 1]],
                      [[1, 1, 1, 0], [0, 1, 1, 1], [1, 0, 0, 1]]], dtype=np.int32)
    return {"q": q, "v": v, "k": k, "x4": x4, "vmask": vmask, "qmask": qmask, "amask": amask}


def cases(tf):
    L = tf.keras.layers
    c = tf.constant

    def mha(**kw):
        return lambda: L.MultiHeadAttention(num_heads=2, key_dim=3, **kw)

    return {
        # name: (layer factory, call(layer, tensors dict of tf constants) -> outputs, inputs used)
        "mha_self": (mha(), lambda l, t: l(t["q"], t["q"]), ["q"]),
        "mha_cross_key": (mha(value_dim=2), lambda l, t: l(t["q"], t["v"], t["k"]),
                          ["q", "v", "k"]),
        "mha_scores": (mha(), lambda l, t: l(t["q"], t["v"], return_attention_scores=True),
                       ["q", "v"]),
        "mha_causal": (mha(), lambda l, t: l(t["q"], t["q"], use_causal_mask=True), ["q"]),
        "mha_causal_scores": (mha(), lambda l, t: l(t["q"], t["q"], use_causal_mask=True,
                                                    return_attention_scores=True), ["q"]),
        "mha_attention_mask": (mha(), lambda l, t: l(t["q"], t["v"],
                                                     attention_mask=t["amask"]), ["q", "v"]),
        "mha_attention_mask_scores": (
            mha(), lambda l, t: l(t["q"], t["v"], attention_mask=t["amask"],
                                  return_attention_scores=True), ["q", "v"]),
        "mha_value_mask": (mha(), lambda l, t: l(t["q"], t["v"], value_mask=t["vmask"]),
                           ["q", "v"]),
        "mha_output_shape_nobias": (mha(output_shape=5, use_bias=False),
                                    lambda l, t: l(t["q"], t["v"]), ["q", "v"]),
        "mha_axes": (mha(attention_axes=(1, 2)), lambda l, t: l(t["x4"], t["x4"]), ["x4"]),
        "mha_axes_last": (mha(attention_axes=2), lambda l, t: l(t["x4"], t["x4"],
                                                                return_attention_scores=True),
                          ["x4"]),
        "gqa": (lambda: L.GroupQueryAttention(head_dim=2, num_query_heads=4,
                                              num_key_value_heads=2),
                lambda l, t: l(t["q"], t["v"]), ["q", "v"]),
        "gqa_causal_scores": (lambda: L.GroupQueryAttention(head_dim=2, num_query_heads=4,
                                                            num_key_value_heads=2),
                              lambda l, t: l(t["q"], t["q"], use_causal_mask=True,
                                             return_attention_scores=True), ["q"]),
        "attention_dot": (lambda: L.Attention(), lambda l, t: l([t["q"], t["v"]]), ["q", "v"]),
        "attention_scaled_masks": (
            lambda: L.Attention(use_scale=True),
            lambda l, t: l([t["q"], t["v"], t["k"]], mask=[t["qmask"], t["vmask"]],
                           return_attention_scores=True), ["q", "v", "k"]),
        "attention_concat_causal": (lambda: L.Attention(score_mode="concat"),
                                    lambda l, t: l([t["q"], t["q"]], use_causal_mask=True),
                                    ["q"]),
        "additive": (lambda: L.AdditiveAttention(), lambda l, t: l([t["q"], t["v"]],
                                                                  mask=[None, t["vmask"]]),
                     ["q", "v"]),
        "einsum_dense": (lambda: L.EinsumDense("abc,cd->abd", output_shape=(None, 5),
                                               bias_axes="d", activation="tanh"),
                         lambda l, t: l(t["q"]), ["q"]),
        "einsum_dense_heads": (lambda: L.EinsumDense("...b,bcd->...cd", output_shape=(2, 3),
                                                     bias_axes="cd"),
                               lambda l, t: l(t["x4"]), ["x4"]),
        "group_norm": (lambda: L.GroupNormalization(groups=2), lambda l, t: l(t["x4"]), ["x4"]),
        "group_norm_axis1": (lambda: L.GroupNormalization(groups=1, axis=1, epsilon=0.1),
                             lambda l, t: l(t["q"] * 3.0), ["q"]),
        "instance_norm": (lambda: L.GroupNormalization(groups=-1), lambda l, t: l(t["q"]),
                          ["q"]),
        "rms_norm": (lambda: L.RMSNormalization(), lambda l, t: l(t["q"]), ["q"]),
        "rms_norm_axes": (lambda: L.RMSNormalization(axis=[2, 3], epsilon=0.01),
                          lambda l, t: l(t["x4"]), ["x4"]),
        "unit_norm": (lambda: L.UnitNormalization(), lambda l, t: l(t["q"]), ["q"]),
        "unit_norm_axes": (lambda: L.UnitNormalization(axis=[1, 2]), lambda l, t: l(t["x4"]),
                           ["x4"]),
    }


def run_case(tf, case):
    make, call, used = case
    values = tensors()
    t = {k: tf.constant(v) for k, v in values.items()}
    layer = make()
    call(layer, t)                                    # builds
    for k, w in enumerate(layer.weights):
        w.assign(weight_value(k, tuple(w.shape)))
    sources = [t[name] for name in used]
    with tf.GradientTape() as tape:
        tape.watch(sources)
        flat = flatten(call(layer, t))
        loss = tf.add_n([tf.reduce_sum(o * seeds(k, tuple(o.shape))) for k, o in enumerate(flat)])
    grads = tape.gradient(loss, sources + list(layer.weights))
    return ([o.numpy() for o in flat], [g.numpy() for g in grads[:len(sources)]],
            [g.numpy() for g in grads[len(sources):]])
