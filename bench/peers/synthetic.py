"""The synthetic MNIST-shaped data of bench_mlp_mnist and bench_cnn_mnist, in numpy, for the peers."""
import numpy as np


def splitmix64(i):
    """bench/mlp_mnist.cpp's hash, vectorised (numpy's uint64 arithmetic wraps like C++'s)."""
    with np.errstate(over="ignore"):
        z = (i + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def mnist(samples=60000, features=784, classes=10):
    """(samples, features) float32 in [0, 1) and int64 labels, as bench/mnist_bench.hpp builds them."""
    x = np.empty(samples * features, dtype=np.float32)
    chunk = 1 << 22
    for k in range(0, x.size, chunk):
        idx = np.arange(k, min(k + chunk, x.size), dtype=np.uint64)
        x[k:k + chunk] = (splitmix64(idx) >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
    y = splitmix64(np.uint64(1 << 40) + np.arange(samples, dtype=np.uint64)) % np.uint64(classes)
    return x.reshape(samples, features), y.astype(np.int64)
