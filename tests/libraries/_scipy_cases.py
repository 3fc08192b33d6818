"""SciPy functions with Array API support (``SCIPY_ARRAY_API=1``), each as a case for the library harness.

``x`` is the (6, 4) input the gradient is taken with respect to. Where SciPy
has no Array API implementation for a namespace it does not know, it runs
the function on NumPy (``np.asarray`` in, ``xp.asarray`` out); on a Tensor
with a history that implicit export is refused (``SCIPY_ON_NUMPY``), and
those cases say so.
"""

from __future__ import annotations

import numpy as np
from _library_harness import SCIPY_ON_NUMPY, Case, constant, float64_cut

LIB = "scipy"
OTHER = np.random.default_rng(12).uniform(0.5, 2.0, (6, 4))
KERNEL = np.array([0.25, -0.5, 1.0])


def _special(name, *args, **kwargs):
    def program(x):
        import scipy.special
        return getattr(scipy.special, name)(x, *args, **kwargs)
    return program


def _special_with(name):
    """A binary special function with a constant second argument."""
    def program(x):
        import scipy.special
        return getattr(scipy.special, name)(x, constant(x, OTHER))
    return program


def _stats(name, *args, **kwargs):
    def program(x):
        import scipy.stats
        return getattr(scipy.stats, name)(x, *args, **kwargs)
    return program


def zmap(x):
    import scipy.stats
    return scipy.stats.zmap(x, x[:3, :] * 2.0, axis=0)


def describe(x):
    import scipy.stats
    d = scipy.stats.describe(x, axis=0)
    return d.mean + d.variance + d.skewness + d.kurtosis


def convolve(x):
    import scipy.signal
    return scipy.signal.convolve(x[:, 0], constant(x, KERNEL), mode="same")


def correlate(x):
    import scipy.signal
    return scipy.signal.correlate(x[:, 1], x[:3, 2], mode="full")


def fftconvolve(x):
    import scipy.signal
    return scipy.signal.fftconvolve(x[:, 0], constant(x, KERNEL), mode="full")


def dct(x):
    import scipy.fft
    return scipy.fft.dct(x, axis=1, norm="ortho")


def ndimage_gaussian(x):
    import scipy.ndimage
    return scipy.ndimage.gaussian_filter(x, sigma=1.0)


def ndimage_uniform(x):
    import scipy.ndimage
    return scipy.ndimage.uniform_filter(x, size=3)


def whiten(x):
    import scipy.cluster.vq
    return scipy.cluster.vq.whiten(x)


def trapezoid(x):
    import scipy.integrate
    return scipy.integrate.trapezoid(x, axis=1)


def cumulative_trapezoid(x):
    import scipy.integrate
    return scipy.integrate.cumulative_trapezoid(x, axis=1)


def rosen(x):
    import scipy.optimize
    return scipy.optimize.rosen(x)


def pearsonr(x):
    import scipy.stats
    return scipy.stats.pearsonr(x[:, 0], x[:, 1]).statistic


# fftconvolve goes through rfftn / irfftn: complex intermediates carry no gradient (spec: Float32 only).
FFT_COMPLEX = float64_cut(r"scipy/(fft|signal)/", "fftconvolve computes through complex rfftn")

CASES = [
    Case(LIB, "special.logsumexp", _special("logsumexp", axis=1)),
    Case(LIB, "special.softmax", _special("softmax", axis=1)),
    Case(LIB, "special.log_softmax", _special("log_softmax", axis=0)),
    Case(LIB, "special.expit", _special("expit"), loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "special.logit", _special("logit"), domain="unit", loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "special.erf", _special("erf"), loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "special.ndtr", _special("ndtr"), loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "special.gammaln", _special("gammaln"), domain="positive", loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "special.xlogy", _special_with("xlogy"), domain="positive", loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "special.entr", _special("entr"), domain="positive", loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "special.rel_entr", _special_with("rel_entr"), domain="positive", loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "stats.zscore", _stats("zscore", axis=1)),
    Case(LIB, "stats.zmap", zmap),
    Case(LIB, "stats.moment", _stats("moment", order=3, axis=0)),
    Case(LIB, "stats.skew", _stats("skew", axis=0)),
    Case(LIB, "stats.kurtosis", _stats("kurtosis", axis=0)),
    Case(LIB, "stats.variation", _stats("variation", axis=0), domain="positive"),
    Case(LIB, "stats.gmean", _stats("gmean", axis=0), domain="positive"),
    Case(LIB, "stats.hmean", _stats("hmean", axis=0), domain="positive"),
    Case(LIB, "stats.pmean", _stats("pmean", 2.0, axis=0), domain="positive"),
    Case(LIB, "stats.sem", _stats("sem", axis=0)),
    Case(LIB, "stats.tmean", _stats("tmean", axis=None)),
    Case(LIB, "stats.tvar", _stats("tvar", axis=0)),
    Case(LIB, "stats.tstd", _stats("tstd", axis=0)),
    Case(LIB, "stats.trim_mean", _stats("trim_mean", 0.2, axis=0)),
    Case(LIB, "stats.gstd", _stats("gstd", axis=0), domain="positive"),
    Case(LIB, "stats.quantile", _stats("quantile", 0.3, axis=0)),
    Case(LIB, "stats.iqr", _stats("iqr", axis=0)),
    Case(LIB, "stats.kstat", _stats("kstat", 3, axis=0)),
    Case(LIB, "stats.circmean", _stats("circmean", axis=0)),
    Case(LIB, "stats.lmoment", _stats("lmoment", axis=0), loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "stats.pearsonr", pearsonr, loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "stats.entropy", _stats("entropy", axis=0), domain="positive", loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "stats.describe", describe),
    Case(LIB, "signal.convolve", convolve, loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "signal.correlate", correlate, loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "signal.fftconvolve", fftconvolve, loud=(FFT_COMPLEX,)),
    Case(LIB, "fft.dct", dct, loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "ndimage.gaussian_filter", ndimage_gaussian, loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "ndimage.uniform_filter", ndimage_uniform, loud=(SCIPY_ON_NUMPY,)),
    Case(LIB, "cluster.vq.whiten", whiten),
    Case(LIB, "integrate.trapezoid", trapezoid),
    Case(LIB, "integrate.cumulative_trapezoid", cumulative_trapezoid),
    Case(LIB, "optimize.rosen", rosen),
]
