"""Tensors: carriers seen through a placement layout, and what needs nothing but storage.

``tensor`` (the Tensor class), ``values`` (where a Tensor lives, its values as
rev arrays), ``broadcasting`` (top-level mode broadcasting over native arrays),
``creation`` (building Tensors: native conversions, never a recorded
operation), ``writes`` (raw writes into storage), ``copies`` (copy, deepcopy,
pickle) and ``compute`` (evaluating lazy Dask storage). Nothing here records
an operation: recording sits on the floor above.
"""

from .creation import arange, from_storage, from_subtensors, full, ones, tensor, zeros
from .tensor import Tensor

__all__ = ["Tensor", "arange", "from_storage", "from_subtensors", "full", "ones", "tensor", "zeros"]
