"""resolve(), the default carrier, carrier_for_array and missing backends."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import strideweave.carriers as C
from strideweave.carriers import (
    ArrayAPICarrier,
    CarrierKind,
    JaxCarrier,
    NumpyCarrier,
    TorchCarrier,
    carrier_for_array,
    get_default_carrier,
    kind_for_array,
    resolve,
    set_default_carrier,
)
from strideweave.dtypes import DType

NAMES = {"numpy": NumpyCarrier, "torch": TorchCarrier, "jax": JaxCarrier, "array_api_strict": ArrayAPICarrier}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_resolve_every_spec_form(name):
    module = pytest.importorskip(name)
    cls = NAMES[name]
    by_name = resolve(name)
    assert isinstance(by_name, CarrierKind) and by_name.cls is cls
    modules = [module]
    if name == "jax":
        modules.append(pytest.importorskip("jax.numpy"))
    if name in ("numpy", "torch"):
        modules.append(__import__(f"array_api_compat.{name}", fromlist=["x"]))
    for spec in [cls, *modules, by_name]:
        assert resolve(spec) == by_name, spec
    carrier = by_name.allocate(3, DType.Float32)
    assert type(carrier) is cls
    assert resolve(carrier) == by_name
    assert by_name.from_array(carrier.array).array is carrier.array
    with pytest.raises(AttributeError):
        by_name.cls = NumpyCarrier  # immutable


def test_resolve_other_namespace_is_array_api_carrier():
    import array_api_compat.numpy as cnp
    kind = resolve(ArrayAPICarrier.allocate(2, DType.Float32, namespace=cnp))
    assert kind.cls is ArrayAPICarrier and kind.namespace is cnp


@pytest.mark.parametrize("bad", ["numpyy", 3, object(), sys, C.Carrier])
def test_resolve_unknown_spec(bad):
    with pytest.raises(TypeError, match=r"carrier|namespace"):
        resolve(bad)


def test_resolve_unknown_name_is_named():
    with pytest.raises(TypeError, match="'cupyy'"):
        resolve("cupyy")


def test_resolve_device():
    assert resolve("numpy", device="cpu").device == "cpu"
    with pytest.raises(ValueError, match="'cuda'"):
        resolve("numpy", device="cuda")


def test_default_carrier_plain_and_context_manager():
    assert get_default_carrier().cls is NumpyCarrier
    assert resolve(None) == get_default_carrier()
    with set_default_carrier("array_api_strict") as kind:
        assert kind.cls is ArrayAPICarrier and resolve(None) == kind
        with set_default_carrier(NumpyCarrier):
            assert resolve(None).cls is NumpyCarrier
        assert resolve(None).cls is ArrayAPICarrier
    assert get_default_carrier().cls is NumpyCarrier
    set_default_carrier("array_api_strict")
    try:
        assert get_default_carrier().cls is ArrayAPICarrier
    finally:
        set_default_carrier(None)
    assert get_default_carrier().cls is NumpyCarrier


def test_default_carrier_restored_on_error():
    with pytest.raises(RuntimeError), set_default_carrier("array_api_strict"):
        raise RuntimeError
    assert get_default_carrier().cls is NumpyCarrier
    with pytest.raises(TypeError):
        set_default_carrier("nope")
    assert get_default_carrier().cls is NumpyCarrier


def test_carrier_for_array():
    assert carrier_for_array(np.zeros(2)) is NumpyCarrier
    torch = pytest.importorskip("torch")
    assert carrier_for_array(torch.zeros(2)) is TorchCarrier
    jnp = pytest.importorskip("jax.numpy")
    assert carrier_for_array(jnp.zeros(2)) is JaxCarrier
    xp = pytest.importorskip("array_api_strict")
    assert carrier_for_array(xp.zeros(2)) is ArrayAPICarrier
    assert kind_for_array(xp.zeros(2)) == resolve("array_api_strict")
    with pytest.raises(TypeError, match="list"):
        carrier_for_array([1.0])


@pytest.mark.parametrize("name", sorted(NAMES))
def test_kind_holds_exactly_its_own_carriers(name):
    pytest.importorskip(name)
    if name == "numpy":
        pytest.importorskip("jax")
    kind = resolve(name)
    carrier = kind.allocate(2, DType.Float32)
    assert kind.holds(carrier) and carrier.kind.holds(carrier)
    assert kind.holds(kind.from_array(carrier.array))
    other = resolve("jax" if name == "numpy" else "numpy")
    assert not other.holds(carrier) and not kind.holds(other.allocate(2, DType.Float32))
    assert not kind._replace(namespace=object()).holds(carrier)  # same class, another namespace
    assert not kind._replace(device="elsewhere").holds(carrier)  # same class and namespace, another device


def test_kind_holds_tells_generic_namespaces_apart():
    import array_api_compat.numpy as cnp

    pytest.importorskip("array_api_strict")
    strict = resolve("array_api_strict")
    generic = CarrierKind(ArrayAPICarrier, cnp, "cpu")
    assert not generic.holds(strict.allocate(1, DType.Float32))
    assert generic.holds(generic.allocate(1, DType.Float32))


@pytest.mark.parametrize(("name", "module", "extra"), [
    ("torch", "torch_carrier", "strideweave[torch]"),
    ("jax", "jax_carrier", "strideweave[jax]"),
    ("array_api_strict", None, "strideweave[strict]"),
])
def test_missing_backend_names_the_extra(monkeypatch, name, module, extra):
    monkeypatch.setitem(sys.modules, name, None)  # makes `import name` raise ImportError
    if module is not None:
        mod = sys.modules[f"strideweave.carriers.{module}"]
        for attr in ("jnp", "torch", "jax"):
            if hasattr(mod, attr):
                monkeypatch.setattr(mod, attr, None)
        monkeypatch.setattr(NAMES[name], "_loaded", None)  # as before the first use
        if name == "jax":
            monkeypatch.setitem(sys.modules, "jax.numpy", None)
        if name == "torch":
            monkeypatch.setitem(sys.modules, "array_api_compat.torch", None)
    with pytest.raises(ImportError, match=extra.replace("[", r"\[").replace("]", r"\]")):
        resolve(name)
