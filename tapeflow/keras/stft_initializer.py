"""Keras 3's ``STFT`` initializer (``keras.initializers.STFT``, alias ``STFTInitializer`` and
``stft``): convolution kernels whose output is the real or imaginary part of a windowed
short-time Fourier transform (``keras/src/initializers/constant_initializers.py``), computed
in the kernel's dtype op for op as Keras does; windows by name come from
``scipy.signal.get_window``."""
import numpy as np

from ..ir import dtypes as D
from ..runtime.tensor import constant as _tensor_constant
from .initializers import Initializer


# scipy.signal's general cosine windows, written out: importing scipy.signal costs seconds
_COSINE_WINDOWS = {"hann": (0.5, 0.5), "hamming": (0.54, 0.46), "blackman": (0.42, 0.50, 0.08),
                   "boxcar": (1.0,)}


def _window(name, length, periodic):
    """``scipy.signal.get_window(name, length, fftbins=periodic)``."""
    if name in _COSINE_WINDOWS and length >= 1:
        if length == 1:
            return np.ones(1)
        n = length + 1 if periodic else length      # a periodic window: one point more, dropped
        fac = np.linspace(-np.pi, np.pi, n)
        w = np.zeros(n)
        for k, a in enumerate(_COSINE_WINDOWS[name]):
            w += a * np.cos(k * fac)
        return w[:-1] if periodic else w
    import scipy.signal  # noqa: PLC0415  (import cost: only for the other windows)
    return scipy.signal.get_window(name, length, periodic)


class STFT(Initializer):
    """Kernels of shape ``(frame_length, 1, fft_length // 2 + 1)``: ``cos`` (``side="real"``)
    or ``sin`` (``"imag"``) of ``-2 pi t f / fft_length``, times a window, over the window's L2
    (``scaling="density"``) or L1 (``"spectrum"``) norm.

    >>> k = tf.keras.initializers.STFT("real", window=None)(shape=(4, 1, 3))
    >>> np.round(k.numpy()[:, 0, :], 4).tolist()
    [[1.0, 1.0, 1.0], [1.0, -0.0, -1.0], [1.0, -1.0, 1.0], [1.0, 0.0, -1.0]]
    """

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        if side not in ("real", "imag"):
            raise ValueError(f"side should be 'real' or 'imag', not {side}")
        if isinstance(window, str):
            _window(window, 1, False)       # an unknown name fails here, as in Keras
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. "
                             f"Received scaling={scaling}")
        self.side, self.window, self.scaling, self.periodic = side, window, scaling, periodic

    def __call__(self, shape, dtype=None):
        dt = np.dtype(D.as_dtype(dtype or D.float32).as_numpy_dtype)
        frame_length, _, fft_length = (int(d) for d in shape)
        win, scaling = None, None
        if self.window is not None:
            win = self.window
            if isinstance(win, str):
                win = _window(win, frame_length, self.periodic)
            win = np.asarray(win).astype(dt)
            if win.ndim != 1 or win.shape[-1] != frame_length:
                raise ValueError(f"The shape of `window` must be equal to [frame_length].Received: "
                                 f"window shape={win.shape}")
            win = win.reshape(frame_length, 1, 1)
            if self.scaling == "density":
                scaling = np.sqrt(np.sum(np.square(win)))
            elif self.scaling == "spectrum":
                scaling = np.sum(np.abs(win))
        freq = np.arange(fft_length, dtype=dt).reshape(1, 1, fft_length) / dt.type((fft_length - 1) * 2)
        time = np.arange(frame_length, dtype=dt).reshape(frame_length, 1, 1)
        args = (dt.type(-2) * time) * freq * np.arccos(dt.type(-1))
        kernel = (np.cos(args) if self.side == "real" else np.sin(args)).astype(dt)
        if win is not None:
            kernel = kernel * win
            if scaling is not None:
                kernel = kernel / scaling
        return _tensor_constant(kernel.astype(dt))

    def get_config(self):
        window = self.window.tolist() if isinstance(self.window, np.ndarray) else self.window
        return {"side": self.side, "window": window, "periodic": self.periodic, "scaling": self.scaling}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


STFTInitializer = stft = STFT

__all__ = ["STFT", "STFTInitializer", "stft"]
