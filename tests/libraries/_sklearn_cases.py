"""scikit-learn functions with Array API support, each as a case for the library harness.

Every program is written as a user of scikit-learn writes it; ``x`` is the
(6, 4) input the gradient is taken with respect to. Constants (targets,
labels) are made in ``x``'s namespace and device, as scikit-learn requires
under ``array_api_dispatch``.
"""

from __future__ import annotations

import numpy as np
from _library_harness import VERSION_RULE, Case, Loud, constant, float64_cut

LIB = "scikit-learn"
TARGETS = np.random.default_rng(11).standard_normal((6, 4))
LABELS = np.array([0, 1, 0, 1, 1, 0])
LABELS3 = np.array([0, 1, 2, 0, 1, 2])


def _pairwise(name, **kwargs):
    def program(x):
        from sklearn.metrics import pairwise

        return getattr(pairwise, name)(x, **kwargs)
    return program


def _pairwise_xy(name, **kwargs):
    """A kernel between x and its first three rows scaled, so the Y argument carries gradient too."""
    def program(x):
        from sklearn.metrics import pairwise

        return getattr(pairwise, name)(x, x[:3, :] * 0.5, **kwargs)
    return program


def _metric(name, **kwargs):
    def program(x):
        import sklearn.metrics

        return getattr(sklearn.metrics, name)(constant(x, TARGETS), x, multioutput="raw_values", **kwargs)
    return program


def _transformer(make):
    def program(x):
        return make().fit_transform(x)
    return program


def standard_scaler():
    from sklearn.preprocessing import StandardScaler
    return StandardScaler()


def min_max_scaler():
    from sklearn.preprocessing import MinMaxScaler
    return MinMaxScaler()


def max_abs_scaler():
    from sklearn.preprocessing import MaxAbsScaler
    return MaxAbsScaler()


def normalizer():
    from sklearn.preprocessing import Normalizer
    return Normalizer()


def pca():
    from sklearn.decomposition import PCA
    return PCA(n_components=2, svd_solver="full")


def kernel_centerer(x):
    from sklearn.preprocessing import KernelCenterer
    return KernelCenterer().fit_transform(x @ x.T)


def normalize(x):
    from sklearn.preprocessing import normalize as fn
    return fn(x)


def normalize_l1(x):
    from sklearn.preprocessing import normalize as fn
    return fn(x, norm="l1")


def row_norms(x):
    from sklearn.utils.extmath import row_norms as fn
    return fn(x, squared=True)


def paired_euclidean(x):
    from sklearn.metrics.pairwise import paired_euclidean_distances
    return paired_euclidean_distances(x[:3, :], x[3:, :])


def manhattan(x):
    from sklearn.metrics import pairwise_distances
    return pairwise_distances(x, x[:3, :] * 0.5, metric="manhattan")


def pairwise_poly(x):
    from sklearn.metrics.pairwise import pairwise_kernels
    return pairwise_kernels(x, metric="poly", degree=2)


def polynomial_features(x):
    from sklearn.preprocessing import PolynomialFeatures
    return PolynomialFeatures(degree=2).fit_transform(x)


def pca_covariance_eigh():
    from sklearn.decomposition import PCA
    return PCA(n_components=2, svd_solver="covariance_eigh")


def nystroem():
    from sklearn.kernel_approximation import Nystroem
    return Nystroem(n_components=3, gamma=0.3, random_state=0)


def ridge_classifier(x):
    from sklearn.linear_model import RidgeClassifier
    return RidgeClassifier(alpha=1.0).fit(x, constant(x, LABELS)).decision_function(x)


def softmax(x):
    from sklearn.utils.extmath import softmax as fn
    return fn(x)


def safe_sparse_dot(x):
    from sklearn.utils.extmath import safe_sparse_dot as fn
    return fn(x, x.T)


def ridge(x):
    from sklearn.linear_model import Ridge
    return Ridge(alpha=1.0).fit(x, constant(x, TARGETS[:, 0])).predict(x)


def ridge_cv(x):
    from sklearn.linear_model import RidgeCV
    return RidgeCV(alphas=(0.1, 1.0)).fit(x, constant(x, TARGETS[:, 0])).predict(x)


def lda(x):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    return LinearDiscriminantAnalysis().fit(x, constant(x, LABELS)).predict_proba(x)


def lda_transform(x):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    return LinearDiscriminantAnalysis().fit(x, constant(x, LABELS3)).transform(x)


def gaussian_nb(x):
    from sklearn.naive_bayes import GaussianNB
    return GaussianNB().fit(x, constant(x, LABELS)).predict_proba(x)


# euclidean_distances upcasts Float32 blocks to Float64 (_euclidean_distances_upcast), by design.
PAIRWISE_FLOAT64 = float64_cut(r"sklearn/metrics/pairwise\.py",
                               "euclidean_distances computes Float32 blocks in Float64")

CASES = [
    Case(LIB, "pairwise.linear_kernel", _pairwise("linear_kernel")),
    Case(LIB, "pairwise.polynomial_kernel", _pairwise("polynomial_kernel", degree=3)),
    Case(LIB, "pairwise.sigmoid_kernel", _pairwise("sigmoid_kernel")),
    Case(LIB, "pairwise.rbf_kernel", _pairwise_xy("rbf_kernel", gamma=0.3), loud=(PAIRWISE_FLOAT64,)),
    Case(LIB, "pairwise.laplacian_kernel", _pairwise_xy("laplacian_kernel", gamma=0.3)),
    Case(LIB, "pairwise.cosine_similarity", _pairwise_xy("cosine_similarity")),
    Case(LIB, "pairwise.euclidean_distances", _pairwise_xy("euclidean_distances"), loud=(PAIRWISE_FLOAT64,)),
    Case(LIB, "pairwise.paired_euclidean_distances", paired_euclidean),
    Case(LIB, "pairwise_distances(manhattan)", manhattan),
    Case(LIB, "pairwise_kernels(poly)", pairwise_poly),
    Case(LIB, "pairwise.chi2_kernel", _pairwise_xy("chi2_kernel"), domain="positive"),
    Case(LIB, "pairwise.additive_chi2_kernel", _pairwise_xy("additive_chi2_kernel"), domain="positive"),
    Case(LIB, "preprocessing.normalize", normalize),
    Case(LIB, "preprocessing.normalize(l1)", normalize_l1),
    Case(LIB, "StandardScaler.fit_transform", _transformer(standard_scaler),
         loud=(float64_cut(r"sklearn/(preprocessing|utils)/", "StandardScaler accumulates in Float64"),)),
    Case(LIB, "MinMaxScaler.fit_transform", _transformer(min_max_scaler)),
    Case(LIB, "MaxAbsScaler.fit_transform", _transformer(max_abs_scaler)),
    Case(LIB, "Normalizer.fit_transform", _transformer(normalizer)),
    # transform sums K (axis=1), then writes K -= ...: the spec checks the version of every saved
    # input, and sum saved K; torch's sum saves no input, so torch differentiates it.
    Case(LIB, "KernelCenterer.fit_transform", kernel_centerer,
         loud=(Loud(RuntimeError, VERSION_RULE + r".*storage saved by Sum",
                    "the spec's version rule: xp.sum(K) saved K, then K -= ... overwrote it (torch's sum saves "
                    "no input)"),)),
    Case(LIB, "extmath.softmax", softmax),
    Case(LIB, "extmath.safe_sparse_dot", safe_sparse_dot),
    Case(LIB, "extmath.row_norms", row_norms),
    Case(LIB, "PolynomialFeatures.fit_transform", polynomial_features),
    Case(LIB, "metrics.r2_score", _metric("r2_score")),
    Case(LIB, "metrics.mean_squared_error", _metric("mean_squared_error")),
    Case(LIB, "metrics.mean_absolute_error", _metric("mean_absolute_error")),
    Case(LIB, "metrics.explained_variance_score", _metric("explained_variance_score")),
    Case(LIB, "metrics.mean_absolute_percentage_error", _metric("mean_absolute_percentage_error")),
    Case(LIB, "metrics.d2_absolute_error_score", _metric("d2_absolute_error_score")),
    Case(LIB, "Ridge.predict", ridge),
    Case(LIB, "RidgeCV.predict", ridge_cv,
         loud=(float64_cut(r"sklearn/(linear_model|utils)/", "RidgeCV (GCV) casts to Float64"),)),
    Case(LIB, "RidgeClassifier.decision_function", ridge_classifier),
    # Two features: with four, six points separate perfectly, the decision values reach +-5000 and
    # expit's Float32 gradient overflows (NaN in torch's Float32 as well).
    Case(LIB, "LinearDiscriminantAnalysis.predict_proba", lda, shape=(6, 2)),
    Case(LIB, "LinearDiscriminantAnalysis(3 classes).transform", lda_transform),
    Case(LIB, "PCA.fit_transform", _transformer(pca)),
    Case(LIB, "PCA(covariance_eigh).fit_transform", _transformer(pca_covariance_eigh)),
    Case(LIB, "Nystroem.fit_transform", _transformer(nystroem), loud=(PAIRWISE_FLOAT64,)),
    Case(LIB, "GaussianNB.predict_proba", gaussian_nb),
]
