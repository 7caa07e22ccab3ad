"""tapeflow: TensorFlow's GradientTape API on NumPy, and a compiler for gradient programs.

``import tapeflow as tf`` runs TensorFlow-style autodiff code eagerly with
TensorFlow's semantics. This module only re-exports; see docs/architecture.md.
"""
import sys as _sys

from .ir import defs as _defs  # noqa: F401  (registers every OpDef)
from .runtime import kernels as _kernels  # noqa: F401
from .autodiff import grads as _grads  # noqa: F401

from . import errors, random, debugging
from .ir.dtypes import (DType, as_dtype, bool_ as bool, float16, float32, float64, int8, int16,
                        int32, int64, uint8, uint16, uint32, uint64)
from .ir.dtypes import float16 as half, float64 as double  # noqa: F401  (TF's other names)
from .runtime.tensor import TensorShape, Variable, constant, convert_to_tensor
from .runtime.tensor import PublicTensor as Tensor  # isinstance is True for traced tensors too
from .autodiff.tape import GradientTape, UnconnectedGradients
from .autodiff.custom_gradient import RegisterGradient, custom_gradient, gradient_override_map
from .runtime.recorder import executing_eagerly, init_scope
from .runtime.stack import device, name_scope
from .ops.creation import *  # noqa: F401,F403
from .ops.math import *  # noqa: F401,F403
from .ops.reduce import *  # noqa: F401,F403
from .ops.array import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.clip import *  # noqa: F401,F403
from .ops.special import (acos, acosh, asin, asinh, atan, atan2, atanh, cosh, sinh,  # noqa: F401
                          truncatediv, truncatemod)
from .ops.scan import cumsum  # noqa: F401
from .ops.indexing import *  # noqa: F401,F403
from .ops.sort import argsort, sort  # noqa: F401
from .dtypes import saturate_cast  # noqa: F401,E402
from .ops.misc import *  # noqa: F401,F403,E402
from .ops.debug import (Assert, assert_equal, assert_greater, assert_less,  # noqa: F401,E402
                         assert_rank)
from .ops.io import print  # noqa: F401,A001
from .ops.tensor_array import TensorArray  # noqa: F401
from .ops.py_function import numpy_function, py_function  # noqa: F401
from .ops.samplers import random_index_shuffle  # noqa: F401  (tf.random_index_shuffle)
from .ops.conv import batch_to_space, space_to_batch  # noqa: F401  (tf.batch_to_space, tf.space_to_batch)
from .ops.dilated import required_space_to_batch_paddings, space_to_batch_nd  # noqa: F401
from .ops.conv_raw import *  # noqa: F401,F403  (tf.conv, the V2 backprops, volume patches)
from . import math, nn, linalg  # noqa: E402
from . import autodiff  # noqa: E402,F401  (tf.autodiff: GradientTape, ForwardAccumulator)
from .runtime.module import Module  # noqa: E402
from . import tracer  # noqa: E402
from .tracer import TensorSpec, function  # noqa: E402
from .tracer.compiled_grad import grad, value_and_grad  # noqa: E402
from .tracer.control import cond, while_loop  # noqa: E402
from .tracer.graph_gradients import gradients, hessians  # noqa: E402
from .tracer.switch_case import case, switch_case  # noqa: E402
from .autodiff.gradient_utils import AggregationMethod, no_gradient  # noqa: E402
from .ops.grouping import (control_dependencies, group, identity_n, no_op, shape_n,  # noqa: E402
                           tuple)
from .ops.static_values import (broadcast_dynamic_shape, broadcast_static_shape,  # noqa: E402
                                get_static_value, inside_function, is_symbolic_tensor, is_tensor)
from .ops.scopes import get_current_name_scope, get_logger  # noqa: E402
from .ops.tf_initializers import (constant_initializer, ones_initializer,  # noqa: E402
                                  random_normal_initializer, random_uniform_initializer,
                                  zeros_initializer)
from .tracer.vectorized_map import vectorized_map  # noqa: E402
from .tracer.functional import foldl, foldr, map_fn, scan  # noqa: E402
from .tracer.engine import set_backend  # noqa: E402
from . import autograph, config, data, dtypes, keras, nest, test  # noqa: E402,F401
from .keras import initializers, layers, losses, metrics, optimizers  # noqa: E402,F401

# ``tapeflow.layers`` *is* ``tapeflow.keras.layers`` (and so on), as TensorFlow's short names.
for _name in ("layers", "optimizers", "initializers", "losses", "metrics"):
    _sys.modules[f"{__name__}.{_name}"] = getattr(keras, _name)

from ._version import __version__  # noqa: E402
from . import saved_model  # noqa: E402,F401
from . import train  # noqa: E402,F401
from .gradient_wrappers import grad_pass_through, recompute_grad  # noqa: E402,F401
from .ops.indexed_slices import IndexedSlices, IndexedSlicesSpec  # noqa: E402,F401
from .runtime.type_spec import TypeSpec  # noqa: E402,F401
from .runtime.conversions import register_tensor_conversion_function  # noqa: E402,F401
from .runtime.variable_policy import (VariableAggregation, VariableSynchronization,  # noqa: E402,F401
                                      variable_creator_scope)
from .type_specs import TensorArraySpec, type_spec_from_value  # noqa: E402,F401
from .ops.debug import guarantee_const  # noqa: E402,F401
from .ops.data_dependent import *  # noqa: E402,F401,F403
from .ops.data_dependent import where_indices as _where_indices  # noqa: E402
from .ops.approx_top_k import approx_top_k  # noqa: E402,F401
from .ops.strided_slice_masks import strided_slice  # noqa: E402,F401
from .ops.bitcast import bitcast  # noqa: E402,F401
from .ops.parallel_stack import parallel_stack  # noqa: E402,F401
from .ops.linalg_extra import sqrtm as matrix_square_root  # noqa: E402,F401  (tf.matrix_square_root)
from .ops.math import where as _where_select  # noqa: E402


def where(condition, x=None, y=None, name=None) -> Tensor:
    """``tf.where``: elementwise select of ``x``/``y`` (with broadcasting), or with ``condition``
    alone the coordinates of its True entries (int64, one row per entry).

    >>> tf.where([True, False], [1, 2], [10, 20])
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 1, 20], dtype=int32)>
    """
    if x is None and y is None:
        return _where_indices(condition)
    return _where_select(condition, x, y)
