"""Optimizers given IndexedSlices gradients (a ``tf.gather``'s, an ``Embedding``'s) step as
Keras 3 does (keras/sparse_updates.py): its ops' rules for slices, scatter updates of the
touched rows where Keras makes them, values equal to Keras' exactly.

The gradient names row 0 twice (as an embedding lookup of a repeated token does), so a
dense step of the summed gradient would differ (Adam's second moment, RMSprop's velocity,
Adagrad's accumulator get the sum of the squared slices in Keras 3). Each case runs three
steps eagerly and three inside one ``tf.function`` (interpreted; the compiled programs of
these ops are checked by the codegen tests).

Constants marked "TF 2.21" were printed by TensorFlow 2.21.0 (Keras 3.15.1) running the same
program with ``import tensorflow as tf``.
"""
import numpy as np
import pytest

import tapeflow as tf

K = tf.keras

OPTIMIZERS = {
    "sgd": lambda: K.optimizers.SGD(0.1),
    "sgd_m": lambda: K.optimizers.SGD(0.1, momentum=0.5),
    "rmsprop": lambda: K.optimizers.RMSprop(0.1),
    "rmsprop_m": lambda: K.optimizers.RMSprop(0.1, momentum=0.5, centered=True),
    "adagrad": lambda: K.optimizers.Adagrad(0.1),
    "adadelta": lambda: K.optimizers.Adadelta(0.5),
    "adam": lambda: K.optimizers.Adam(0.1),
    "adamw": lambda: K.optimizers.AdamW(0.1),
    "nadam": lambda: K.optimizers.Nadam(0.1),
    "adamax": lambda: K.optimizers.Adamax(0.1),
    "lion": lambda: K.optimizers.Lion(0.1),
    "adafactor": lambda: K.optimizers.Adafactor(0.1, clip_threshold=0.5),
    "ftrl": lambda: K.optimizers.Ftrl(0.1),
    "lamb": lambda: K.optimizers.Lamb(0.1),
    "lso_sgd": lambda: K.optimizers.LossScaleOptimizer(K.optimizers.SGD(0.1)),
}
# Keras 3 updates only the named rows of the variable for these (its optimizer_sparse_test)
ROWS_ONLY = {"sgd", "rmsprop", "adagrad", "adadelta", "adafactor", "lso_sgd"}
INIT = np.arange(15, dtype=np.float32).reshape(5, 3) * np.float32(0.1) + np.float32(0.3)
INDICES = [0, 2, 0]

# TF 2.21: the variable after 3 steps of IndexedSlices(sin(arange(9) + step).reshape(3, 3),
# [0, 2, 0], [5, 3]) from INIT
TF_SPARSE = {
    "sgd": [[-0.011769749224185944, 0.004964835941791534, 0.38489294052124023], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0574607849121094, 1.1995142698287964, 1.1581354141235352], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "sgd_m": [[-0.06573647260665894, -0.20235225558280945, 0.21483184397220612], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.084716796875, 1.3042206764221191, 1.244025468826294], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "rmsprop": [[-0.16745427250862122, -0.5064092874526978, 0.18337556719779968], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.1468995809555054, 1.6448665857315063, 1.3230068683624268], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "rmsprop_m": [[-0.23532253503799438, -1.2838921546936035, -0.3409992754459381], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0750160217285156, 2.090327262878418, 1.6467682123184204], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adagrad": [[0.1282491683959961, 0.1258602738380432, 0.3997988700866699], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0257028341293335, 1.189881443977356, 1.1685121059417725], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adadelta": [[0.2978200316429138, 0.3974817395210266, 0.4994239807128906], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [0.901374876499176, 1.0017917156219482, 1.1004091501235962], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adam": [[0.20490074157714844, -0.006667286157608032, 0.21172957122325897], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [0.9401540160179138, 1.289467215538025, 1.3050016164779663], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adamw": [[0.20449453592300415, -0.006978519260883331, 0.21129052340984344], [0.5992802977561951, 0.6991603374481201, 0.7990403771400452], [0.9391300678253174, 1.2881476879119873, 1.3035681247711182], [1.1985605955123901, 1.2984405755996704, 1.3983206748962402], [1.49820077419281, 1.5980808734893799, 1.6979608535766602]],
    "nadam": [[0.14651498198509216, 0.0823376327753067, 0.37082988023757935], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [0.9805716276168823, 1.2260289192199707, 1.1912332773208618], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adamax": [[0.2974891662597656, 0.1423650085926056, 0.32291948795318604], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [0.9025108814239502, 1.2576348781585693, 1.2770804166793823], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "lion": [[0.20000001788139343, 0.10000001639127731, 0.4000000059604645], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0, 1.3000000715255737, 1.2000000476837158], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adafactor": [[0.07952383160591125, 0.09463244676589966, 0.45296889543533325], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0574262142181396, 1.218042254447937, 1.1335536241531372], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "ftrl": [[-0.09656427055597305, 0.012254374101758003, 0.28526121377944946], [0.0, 0.0, 0.0], [0.2038273811340332, 0.8043383359909058, 0.8240103721618652], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    "lamb": [[0.07539160549640656, -0.3107249140739441, 0.02780206874012947], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0190777778625488, 1.50596284866333, 1.4359416961669922], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "lso_sgd": [[0.29999053478240967, 0.39998799562454224, 0.49999651312828064], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [0.9000048637390137, 1.000006079673767, 1.1000018119812012], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
}


def _values(step):
    return np.sin(np.arange(9, dtype=np.float32) + np.float32(step)).reshape(3, 3)


def _slices(values):
    return tf.IndexedSlices(values, tf.constant(INDICES), tf.constant([5, 3]))


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_indexed_slices_steps_give_keras_values_eager_and_in_function(name, numpy_backend):
    want = np.array(TF_SPARSE[name], np.float32)
    eager_v, eager_opt = tf.Variable(INIT), OPTIMIZERS[name]()
    for step in range(3):
        eager_opt.apply([_slices(tf.constant(_values(step)))], [eager_v])
    traced_v, traced_opt = tf.Variable(INIT), OPTIMIZERS[name]()
    apply = tf.function(lambda values: traced_opt.apply([_slices(values)], [traced_v]))
    for step in range(3):
        apply(tf.constant(_values(step)))
    rtol = 1e-6 if name in ("nadam", "ftrl") else 0   # within an ulp (as their dense steps)
    for v, opt in ((eager_v, eager_opt), (traced_v, traced_opt)):
        np.testing.assert_allclose(v.numpy(), want, rtol=rtol, atol=0)
        assert int(opt.iterations.numpy()) == 3
    if name in ROWS_ONLY:
        untouched = [1, 3, 4]
        np.testing.assert_array_equal(eager_v.numpy()[untouched], INIT[untouched])


# TF 2.21: History and embedding table of the fit below (before this module, tapeflow stepped
# on the dense gradient: losses 1.1039, 1.1074, 0.8977)
TF_EMBEDDING_LOSS = [1.1038923263549805, 0.9709897041320801, 0.7880070209503174]
TF_EMBEDDING_TABLE = [[0.0, 0.8414710164070129], [1.2116687297821045, 0.08786113560199738],
                      [-0.756802499294281, -0.9589242935180664],
                      [-0.279415488243103, 0.6569865942001343],
                      [0.5708129405975342, 0.4658236801624298],
                      [-0.5440210700035095, -0.9999902248382568]]


def test_fit_of_an_embedding_with_repeated_tokens_gives_keras_history_and_table(numpy_backend):
    model = K.Sequential([K.Input((3,), dtype="int32"), K.layers.Embedding(6, 2),
                          K.layers.Flatten(), K.layers.Dense(1)])
    model.set_weights([np.sin(np.arange(12, dtype=np.float32)).reshape(6, 2),
                       np.cos(np.arange(6, dtype=np.float32)).reshape(6, 1) * 0.5,
                       np.zeros(1, np.float32)])
    model.compile(optimizer=K.optimizers.RMSprop(0.05), loss="mse")
    history = model.fit(np.array([[1, 1, 4], [4, 1, 1]], np.int32),
                        np.array([[1.0], [-1.0]], np.float32), epochs=3, batch_size=2, verbose=0,
                        shuffle=False)
    np.testing.assert_allclose(history.history["loss"], TF_EMBEDDING_LOSS, rtol=1e-6)
    table = model.get_weights()[0]
    np.testing.assert_allclose(table, TF_EMBEDDING_TABLE, rtol=1e-6)
    untouched = [0, 2, 3, 5]     # Keras 3's RMSprop scatters into the named rows only
    np.testing.assert_array_equal(table[untouched], np.sin(np.arange(12, dtype=np.float32))
                                  .reshape(6, 2)[untouched])


WITH_OPTIONS = {
    "sgd_gclip": lambda: K.optimizers.SGD(0.1, global_clipnorm=1.0),
    "adam_clipnorm": lambda: K.optimizers.Adam(0.1, clipnorm=0.5),
    "rms_clipvalue": lambda: K.optimizers.RMSprop(0.1, clipvalue=0.3),
    "adam_accum": lambda: K.optimizers.Adam(0.1, gradient_accumulation_steps=2),
    "sgd_ema": lambda: K.optimizers.SGD(0.1, use_ema=True),
    "adagrad_wd": lambda: K.optimizers.Adagrad(0.1, weight_decay=0.1),
}
# TF 2.21: the variable after 4 such steps, with clipping, accumulation, EMA, weight decay
TF_SPARSE_WITH_OPTIONS = {
    "sgd_gclip": [[0.1262318342924118, 0.2769632041454315, 0.5408140420913696], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [0.9877623319625854, 1.0621402263641357, 1.0793867111206055], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adam_clipnorm": [[0.09931967407464981, -0.059950727969408035, 0.2496711164712906], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0159451961517334, 1.3275878429412842, 1.2779595851898193], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "rms_clipvalue": [[-0.26357775926589966, -0.33301758766174316, 0.32945317029953003], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.269831657409668, 1.555537223815918, 1.2680507898330688], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adam_accum": [[0.10354457795619965, 0.25056374073028564, 0.4192151129245758], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0964547395706177, 1.1494359970092773, 1.1807847023010254], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "sgd_ema": [[-0.06709359586238861, 0.13504719734191895, 0.5807843804359436], [0.6000000238418579, 0.7000000476837158, 0.800000011920929], [1.0854023694992065, 1.1338156461715698, 1.059199571609497], [1.2000000476837158, 1.2999999523162842, 1.4000000953674316], [1.5, 1.6000001430511475, 1.7000000476837158]],
    "adagrad_wd": [[0.08773915469646454, 0.18078173696994781, 0.47282978892326355], [0.5763576030731201, 0.6724172830581665, 0.7684767842292786], [1.0103765726089478, 1.100693702697754, 1.059875726699829], [1.1527152061462402, 1.248774766921997, 1.344834566116333], [1.4408940076828003, 1.5369536876678467, 1.633013367652893]],
}


def test_clipping_accumulation_ema_and_weight_decay_keep_keras_values_on_slices(numpy_backend):
    for name, make in WITH_OPTIONS.items():
        v, opt = tf.Variable(INIT), make()
        for step in range(4):
            opt.apply([_slices(tf.constant(_values(step)))], [v])
        np.testing.assert_allclose(v.numpy(), TF_SPARSE_WITH_OPTIONS[name], rtol=1e-6, atol=1e-7,
                                   err_msg=name)
