"""The recurrent-layer programs whose TensorFlow 2.21 answers recurrent_facts.py holds.

Plain code over a ``tf`` module argument, so the same programs run on TensorFlow (to make
the facts: run_case below with TensorFlow's tf) and on tapeflow (tests/keras/test_recurrent.py).
Weights are set from a fixed formula in the order ``layer.weights`` lists them, which is
Keras 3's layout: a layout that differs gives other outputs.
"""
import numpy as np

B, T, F = 2, 4, 3


def inputs():
    x = np.cos(np.arange(B * T * F) * 0.9).reshape(B, T, F).astype(np.float32)
    mask = np.array([[True, True, False, True], [True, False, False, True]])
    return x, mask


def weight_value(k, shape):
    size = int(np.prod(shape))
    return (0.3 * np.sin(1.7 * np.arange(size) + 0.5 * k + 0.2)).reshape(shape).astype(np.float32)


def seeds(k, shape):
    """The cotangent the loss contracts output ``k`` with."""
    size = int(np.prod(shape))
    return np.cos(0.37 * np.arange(size) + k).reshape(shape).astype(np.float32)


def cases(tf):
    L = tf.keras.layers

    class MinimalRNNCell(L.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.state_size = units

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
            self.recurrent_kernel = self.add_weight(shape=(self.units, self.units),
                                                    name="recurrent_kernel")

        def call(self, inputs, states):
            prev = states[0]
            out = tf.matmul(inputs, self.kernel) + tf.tanh(tf.matmul(prev, self.recurrent_kernel))
            return out, [out]

    def call(layer, **kw):
        return lambda x, mask: layer(x, **kw)

    def masked(layer, **kw):
        return lambda x, mask: layer(x, mask=tf.constant(mask), **kw)

    def with_state(layer):
        h0 = tf.constant(np.linspace(-0.5, 0.5, B * 2).reshape(B, 2).astype(np.float32))
        c0 = tf.constant(np.linspace(0.3, -0.2, B * 2).reshape(B, 2).astype(np.float32))
        n = 2 if isinstance(layer, L.LSTM) else 1
        return lambda x, mask: layer(x, initial_state=[h0, c0][:n])

    def masking_model():
        model = tf.keras.Sequential([L.Masking(mask_value=0.0),
                                     L.LSTM(2, return_sequences=True, return_state=True)])
        return model, lambda x, mask: model(x * tf.constant(mask[..., None], tf.float32))

    def embedding_model():
        ids = np.array([[3, 1, 0, 0], [2, 5, 4, 0]], dtype=np.int32)    # 0: padding
        model = tf.keras.Sequential([L.Embedding(6, 3, mask_zero=True),
                                     L.Bidirectional(L.LSTM(2, return_sequences=True)),
                                     L.Dense(1)])
        return model, lambda x, mask: model(tf.constant(ids)) * (1.0 + tf.reduce_mean(x))

    def _made(layer, fn, kw):
        obj = layer()
        return obj, fn(obj, **kw)

    return {
        "simple_rnn_seq": lambda: _made(lambda: L.SimpleRNN(2, return_sequences=True), call, {}),
        "simple_rnn_back_state": lambda: _made(
            lambda: L.SimpleRNN(2, go_backwards=True, return_state=True), call, {}),
        "simple_rnn_init_state": lambda: _made(lambda: L.SimpleRNN(2), lambda l: with_state(l), {}),
        "lstm_seq_state": lambda: _made(
            lambda: L.LSTM(2, return_sequences=True, return_state=True), call, {}),
        "lstm_back": lambda: _made(lambda: L.LSTM(2, go_backwards=True), call, {}),
        "lstm_mask": lambda: _made(
            lambda: L.LSTM(2, return_sequences=True, return_state=True), masked, {}),
        "lstm_mask_back": lambda: _made(lambda: L.LSTM(2, go_backwards=True, return_sequences=True),
                                        masked, {}),
        "lstm_unroll": lambda: _made(lambda: L.LSTM(2, unroll=True, return_sequences=True),
                                     call, {}),
        "lstm_init_state": lambda: _made(lambda: L.LSTM(2, return_sequences=True),
                                         lambda l: with_state(l), {}),
        "gru_seq": lambda: _made(lambda: L.GRU(2, return_sequences=True), call, {}),
        "gru_before_state": lambda: _made(lambda: L.GRU(2, reset_after=False, return_state=True),
                                          call, {}),
        "gru_mask_back": lambda: _made(
            lambda: L.GRU(2, go_backwards=True, return_sequences=True), masked, {}),
        "gru_no_bias_relu": lambda: _made(
            lambda: L.GRU(2, use_bias=False, activation="relu", return_sequences=True), call, {}),
        "bidi_lstm_concat": lambda: _made(
            lambda: L.Bidirectional(L.LSTM(2, return_sequences=True)), call, {}),
        "bidi_gru_sum": lambda: _made(lambda: L.Bidirectional(L.GRU(2), merge_mode="sum"),
                                      call, {}),
        "bidi_simple_ave_mask": lambda: _made(
            lambda: L.Bidirectional(L.SimpleRNN(2, return_sequences=True), merge_mode="ave"),
            masked, {}),
        "bidi_lstm_none_state": lambda: _made(
            lambda: L.Bidirectional(L.LSTM(2, return_sequences=True, return_state=True),
                                    merge_mode=None), call, {}),
        "bidi_gru_mul": lambda: _made(lambda: L.Bidirectional(L.GRU(2), merge_mode="mul"),
                                      call, {}),
        "stacked": lambda: _made(
            lambda: L.RNN([L.SimpleRNNCell(3), L.LSTMCell(2)], return_sequences=True,
                          return_state=True), call, {}),
        "stacked_cells_class": lambda: _made(
            lambda: L.RNN(L.StackedRNNCells([L.GRUCell(2), L.GRUCell(2)]), go_backwards=True),
            call, {}),
        "custom_cell": lambda: _made(lambda: L.RNN(MinimalRNNCell(2), return_sequences=True),
                                     call, {}),
        "time_distributed": lambda: _made(lambda: L.TimeDistributed(L.Dense(2, activation="tanh")),
                                          call, {}),
        "masking_model": lambda: masking_model(),
        "embedding_mask_zero_bidi": lambda: embedding_model(),
    }


def flatten(out):
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in flatten(o)]
    return [out]


def run_case(tf, make):
    """(outputs, gradient w.r.t. the inputs, gradients w.r.t. the weights) of one case."""
    x_value, mask = inputs()
    layer, fn = make()
    x = tf.constant(x_value)
    fn(x, mask)                                   # builds
    for k, w in enumerate(layer.weights):
        w.assign(weight_value(k, tuple(w.shape)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = fn(x, mask)
        flat = flatten(out)
        loss = tf.add_n([tf.reduce_sum(o * seeds(k, tuple(o.shape))) for k, o in enumerate(flat)])
    grads = tape.gradient(loss, [x] + list(layer.weights))
    return ([o.numpy() for o in flat], grads[0].numpy(),
            [tf.convert_to_tensor(g).numpy() for g in grads[1:]])
