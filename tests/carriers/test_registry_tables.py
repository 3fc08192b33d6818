"""Every table of carrier names is the registry's: one entry in ``carriers/registry.py`` adds a carrier to each."""

import pickle

import numpy as np

import strideweave.array_api as xp
from conformance.runner import CARRIERS
from strideweave.array_api import _devices
from strideweave.autograd import cotangents
from strideweave.carriers import REGISTERED, carrier_names, resolve
from strideweave.carriers import registry as _registry
from strideweave.tensors import broadcasting
from strideweave.testing import available_carriers


def test_the_name_tables_are_the_registry_entries():
    names = [entry.name for entry in REGISTERED]
    assert list(carrier_names()) == names == list(CARRIERS) == sorted(_registry._BY_NAME, key=names.index)
    assert list(_devices._NAMES) == [entry.name for entry in REGISTERED if not entry.lazy]
    assert {entry.cls.backend for entry in REGISTERED if entry.eager} == cotangents._EAGER
    assert {m for entry in REGISTERED for m in entry.reshape_modules} == broadcasting._RESHAPE_LIBRARIES
    lazy = {entry.name for entry in REGISTERED if entry.lazy}
    assert set(available_carriers()) <= set(names) - lazy
    assert set(available_carriers(lazy=True)) - set(available_carriers()) <= lazy


def test_each_installed_entry_resolves_names_its_arrays_and_round_trips_a_pickle():
    for name in available_carriers(lazy=True):
        entry = next(e for e in REGISTERED if e.name == name)
        kind = resolve(name)
        assert kind.cls is entry.cls
        t = xp.asarray([1.0, 2.0], device=kind)
        native = t.carrier.array
        assert _registry.carrier_for_array(native) is entry.cls
        back = pickle.loads(pickle.dumps(t.detach()))
        assert back.carrier.kind.cls is entry.cls and np.array_equal(back.numpy(), [1.0, 2.0])
        if not entry.lazy:
            assert xp.ones(1, device=name).carrier.kind.cls is entry.cls
