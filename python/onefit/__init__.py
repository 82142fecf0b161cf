"""onefit: Keras-shaped training whose whole fit runs as one compiled program.

    import onefit.keras as keras
    model = keras.Sequential([keras.layers.Dense(32, activation="relu", input_shape=(4,)),
                              keras.layers.Dense(3, activation="softmax")])
"""
from onefit._onefit import __version__, cpu_simd_target, cuda_available  # noqa: F401
from onefit import data, nn  # noqa: F401
from onefit.explain import Explanation, explain  # noqa: F401
from onefit.sweep import random_points, sweep  # noqa: F401
from onefit.warnings import OnefitWarning  # noqa: F401

__all__ = ["__version__", "cpu_simd_target", "cuda_available", "data", "explain", "Explanation", "keras", "nn",
           "OnefitWarning", "random_points", "sweep"]


def __getattr__(name):
    # onefit.keras on first use, so `import onefit` stays small.
    if name == "keras":
        import importlib

        return importlib.import_module("onefit.keras")
    raise AttributeError(f"module 'onefit' has no attribute {name!r}")
