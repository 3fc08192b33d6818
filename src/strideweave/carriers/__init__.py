"""Carriers: flat, 1-D, typed storage buffers over Array API namespaces.

The only package that touches a native array library.  Importing it imports
numpy and array_api_compat but never torch or jax: those load on first use
(``resolve("torch")``, ``TorchCarrier.allocate``, ...).

The package imports only the value modules below it (layout, dtypes, _marks,
_locks), and its modules import one another in one direction:
``_indexing`` < ``kind`` < ``watch`` < ``generic`` < ``base`` < the backends
< ``registry``.
"""

from . import registry as _registry
from .array_api_carrier import ArrayAPICarrier
from .base import Carrier
from .dask_carrier import DaskCarrier
from .jax_carrier import JaxCarrier
from .kind import CarrierKind, NamedDevice, default_int, missing_wide_types, named_device
from .numpy_carrier import NumpyCarrier
from .registry import (
    REGISTERED,
    Registered,
    TracerError,
    carrier_for_array,
    carrier_names,
    get_default_carrier,
    kind_for_array,
    resolve,
    segment_sum,
    set_default_carrier,
    transfer,
)
from .torch_carrier import TorchCarrier
from .watch import ContentWatch, one_call

# Also importable from here for the rest of the package (not public API): ContentWatch, one_call,
# NamedDevice, named_device, default_int, missing_wide_types, TracerError, segment_sum.

# The carrier classes and ``registry``'s public functions (its ``__all__``, the one list of them).
__all__ = ["ArrayAPICarrier", "Carrier", "DaskCarrier", "JaxCarrier", "NumpyCarrier", "TorchCarrier",
           *_registry.__all__]
