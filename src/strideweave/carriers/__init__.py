"""Carriers: flat, 1-D, typed storage buffers over Array API namespaces.

The only package that touches a native array library.  Importing it imports
numpy and array_api_compat but never torch or jax: those load on first use
(``resolve("torch")``, ``TorchCarrier.allocate``, ...).
"""

from .array_api_carrier import ArrayAPICarrier
from .base import Carrier
from .dask_carrier import DaskCarrier, compute
from .jax_carrier import JaxCarrier
from .numpy_carrier import NumpyCarrier
from .registry import (
    CarrierKind,
    carrier_for_array,
    get_default_carrier,
    kind_for_array,
    resolve,
    set_default_carrier,
    transfer,
)
from .torch_carrier import TorchCarrier

__all__ = [
    "Carrier",
    "NumpyCarrier",
    "TorchCarrier",
    "JaxCarrier",
    "ArrayAPICarrier",
    "DaskCarrier",
    "compute",
    "CarrierKind",
    "resolve",
    "set_default_carrier",
    "get_default_carrier",
    "carrier_for_array",
    "kind_for_array",
    "transfer",
]
