"""StrideWeave benchmark harness (``python -m benchmarks``).

Importing this package pins every numeric backend to one thread.  It must
happen before numpy / torch / jax are imported, which is why it lives in the
package ``__init__`` (run by ``python -m benchmarks`` before ``__main__``).
"""
import os

SINGLE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu"),
    "TF_CPP_MIN_LOG_LEVEL": "2",
}
os.environ.update(SINGLE_THREAD_ENV)
