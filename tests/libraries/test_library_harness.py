"""The library harness itself: it tells agreement from wrong, None and unexpected loud outcomes.

These programs are plain Array API code, no library; each behaves
differently on StrideWeave than on torch in one known way, so every verdict
the library suites rely on is shown to fire.
"""

import numpy as np
import pytest

pytest.importorskip("torch")

from _library_harness import CARRIERS, Case, Loud, check, namespace, reference, run

import strideweave as sw


def _doubled(x):
    return x * 2.0


def _forward_differs(x):
    return x * (3.0 if isinstance(x, sw.Tensor) else 2.0)


def _gradient_differs(x):
    # The same values, but on StrideWeave half of them come through a detached copy.
    return x.detach() + x if isinstance(x, sw.Tensor) else x * 2.0


def _history_cut(x):
    # A fresh Tensor from the native values, on the same carrier: the values, no history.
    return sw.tensor(x.to_array()) * 2.0 if isinstance(x, sw.Tensor) else x * 2.0


def _raises(x):
    if isinstance(x, sw.Tensor):
        raise ValueError(f"no such mode for {namespace(x).__name__}")
    return x * 2.0


def _tanh_mean(x):
    xp = namespace(x)
    return xp.tanh(x) - xp.mean(x, axis=0)


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize(("program", "kind"), [(_doubled, "agree"), (_tanh_mean, "agree"), (_forward_differs, "wrong"),
                                           (_gradient_differs, "wrong"), (_history_cut, "none"), (_raises, "loud")])
def test_each_verdict_fires(program, kind, carrier):
    case = Case("harness", program.__name__, program)
    outcome = run(case, carrier)
    assert outcome.kind == kind, outcome.detail
    if kind == "agree":
        check(case, carrier)
    else:
        with pytest.raises(AssertionError, match=case.id):
            check(case, carrier)


def test_a_declared_failure_is_accepted_only_with_its_type_and_message():
    accepted = Case("harness", "raises", _raises, loud=(Loud(ValueError, r"no such mode", "declared"),))
    check(accepted, "numpy")
    for wrong in (Loud(TypeError, r"no such mode", "other type"), Loud(ValueError, r"other message", "other text")):
        with pytest.raises(AssertionError, match="expected agreement or"):
            check(Case("harness", "raises", _raises, loud=(wrong,)), "numpy")


def test_the_torch_reference_matches_central_differences():
    case = Case("harness", "tanh_mean", _tanh_mean, domain="positive")
    ref = reference(case)
    assert ref.source == "torch"
    x0 = np.random.default_rng(1000).uniform(0.5, 2.0, (6, 4)).astype(np.float32).astype(np.float64)
    w = np.random.default_rng(7).standard_normal((6, 4)).astype(np.float32).astype(np.float64)
    # d/dx sum((tanh(x) - mean_0(x)) * w) = (1 - tanh(x)^2) w - mean_0(w)
    want = (1 - np.tanh(x0) ** 2) * w - w.mean(axis=0, keepdims=True)
    np.testing.assert_allclose(ref.grad, want, rtol=1e-12, atol=1e-12)
