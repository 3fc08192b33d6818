"""Which writes that bypass StrideWeave each carrier sees, exactly as docs/user-guide.md's table says.

"Seen" means backward fails with the in-place error; a write that is not
seen gives the gradient the docs print (neither the old nor the new one).
If a row of the table changes, this file and the table change together.
"""

import numpy as np
import pytest

import strideweave as sw
from strideweave.testing import available_carriers

CARRIERS = available_carriers()
MIXED = [51.0, 12.0]  # d/dx sum(x * x * x) at [1, 2] after x[0] = 5 between forward and backward, unseen


def _after_write(x, write):
    loss = sw.sum(x * x * x)
    write()
    try:
        loss.backward()
    except RuntimeError as err:
        if "in-place modification" not in str(err):
            raise
        return "seen"
    return x.grad.tolist()


@pytest.mark.parametrize("carrier", CARRIERS)
def test_writes_through_strideweave_and_its_native_views_are_seen(carrier):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    assert _after_write(x, lambda: x.__setitem__(0, 5.0)) == "seen"
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    if carrier == "jax":  # immutable: nothing can write through a JAX array
        with pytest.raises(TypeError):
            x.to_array()[0] = 5.0
        return
    array = x.to_array()
    assert _after_write(x, lambda: array.__setitem__(0, 5.0)) == "seen"


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("export", ["numpy", "asarray"])
def test_a_numpy_export_is_watched_except_of_torch_storage(carrier, export):
    x = sw.tensor([1.0, 2.0], carrier=carrier)
    host = x.numpy() if export == "numpy" else np.asarray(x)
    if carrier == "jax":
        assert not host.flags.writeable
        return

    def write():
        host[0] = 5.0

    expected = MIXED if carrier == "torch" else "seen"
    assert _after_write(x, write) == expected
    if carrier == "torch":
        assert x.tolist()[0] == 5.0  # the export shares the torch storage: the write landed


@pytest.mark.parametrize(("path", "seen"), [("host.add_", True), ("host[0]", True), ("host.detach()", True),
                                        ("host.data", False), ("host.numpy()", False)])
def test_writes_to_a_wrapped_torch_tensor(path, seen):
    torch = pytest.importorskip("torch")
    host = torch.tensor([1.0, 2.0])
    x = sw.tensor(host)
    writes = {"host.add_": lambda: host.add_(torch.tensor([4.0, 0.0])),
              "host[0]": lambda: host.__setitem__(0, 5.0),
              "host.detach()": lambda: host.detach().__setitem__(0, 5.0),
              "host.data": lambda: host.data.__setitem__(0, 5.0),
              "host.numpy()": lambda: host.numpy().__setitem__(0, 5.0)}
    assert _after_write(x, writes[path]) == ("seen" if seen else MIXED)
