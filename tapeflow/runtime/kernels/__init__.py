"""NumPy kernels by family; importing this package fills ``registry.KERNELS``."""
from . import array, control, custom, debug, io, linalg, indexing, lists, loops, math, nn, random, reduce, samplers, scan, sort, special  # noqa: F401
from . import conv  # noqa: F401  (the convolution and pooling family)
from . import segment  # noqa: F401  (segment max, min and product)
from . import lrn  # noqa: F401  (LRN and LRNGrad)
from . import isotonic  # noqa: F401  (IsotonicRegression)
from . import bitcast  # noqa: F401  (Bitcast)
from . import parallel_concat  # noqa: F401  (ParallelConcat)
from . import morphology  # noqa: F401  (Dilation2D and its backprops)
from . import fractional_pool  # noqa: F401  (FractionalMaxPool, FractionalAvgPool, their gradients)
from . import conv_raw  # noqa: F401  (the generic Conv op of tf.conv)
