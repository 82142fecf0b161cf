"""PyTorch peer of bench_iris_fit and bench_mlp_mnist: the same two workloads, eager mode, CPU.

  torch_iris_fit_us            the seed's Iris fit (as bench/iris_fit.cpp), median of IRIS_FITS fits
  torch_mlp_mnist_samples_per_s  one epoch of the 784-256-10 MLP (as bench/mlp_mnist.cpp), median epoch

Adam is Keras's rule written out (torch.optim.Adam adds epsilon before the bias correction of
the step size, Keras after), so both sides do the same arithmetic. Each workload runs with 1 and
with 2 intra-op threads and quotes the faster: the peer's best honest setting.
Run: python3 bench/peers/torch_peer.py   (bench/run.sh unsets OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE for it)
"""
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import synthetic

IRIS_WARMUP, IRIS_FITS = 5, 20
MNIST_WARMUP, MNIST_EPOCHS = 1, 5
THREADS = (1, 2)


class KerasAdam:
    """Keras's Adam: lr_t = lr sqrt(1 - b2^t) / (1 - b1^t); w -= lr_t m / (sqrt(v) + eps)."""

    def __init__(self, params, lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
        self.params = list(params)
        self.lr, self.b1, self.b2, self.eps = lr, beta_1, beta_2, epsilon
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    @torch.no_grad()
    def step(self):
        self.t += 1
        lr_t = self.lr * math.sqrt(1 - self.b2**self.t) / (1 - self.b1**self.t)
        grads = [p.grad for p in self.params]
        # foreach: one call per update over all tensors, as torch.optim does by default.
        torch._foreach_lerp_(self.m, grads, 1 - self.b1)  # m += (g - m)(1 - b1)
        torch._foreach_mul_(self.v, self.b2)
        torch._foreach_addcmul_(self.v, grads, grads, 1 - self.b2)  # v = b2 v + (1 - b2) g^2
        denom = torch._foreach_sqrt(self.v)
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(self.params, self.m, denom, -lr_t)
        for p in self.params:
            p.grad = None


def dense_params(sizes, generator):
    """Keras's defaults: glorot_uniform kernels (stored (out, in) for F.linear), zero biases."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        w = (torch.rand(fan_out, fan_in, generator=generator) * 2 - 1) * limit
        params += [w.requires_grad_(), torch.zeros(fan_out, requires_grad=True)]
    return params


def mlp_logits(params, x):
    w1, b1, w2, b2 = params
    return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)


# --- (a) the seed's Iris fit -------------------------------------------------------------

def log_cosh(pred, label):
    """Keras log_cosh with tf.keras 2's broadcast: labels (N, 1) against predictions (N, 3)."""
    x = pred - label[:, None]
    return (x + F.softplus(-2.0 * x) - math.log(2.0)).mean(dim=-1).mean()


def iris_fit(x_train, y_train, x_val, y_val, seed):
    """Times the seed's fit only (model built before, like bench_iris_fit's iris_fit_us)."""
    params = dense_params([4, 32, 3], torch.Generator().manual_seed(seed))
    opt = KerasAdam(params, lr=0.1)
    batch, n, n_val = 20, x_train.shape[0], x_val.shape[0]
    t0 = time.perf_counter()
    for _ in range(20):
        train_sum = torch.zeros(())
        for i in range(0, n, batch):
            loss = log_cosh(torch.softmax(mlp_logits(params, x_train[i:i + batch]), dim=-1), y_train[i:i + batch])
            loss.backward()
            opt.step()
            train_sum += loss.detach() * min(batch, n - i)
        with torch.no_grad():  # validation each epoch, in batches of batch_size like Keras
            val_sum = torch.zeros(())
            for i in range(0, n_val, batch):
                pred = torch.softmax(mlp_logits(params, x_val[i:i + batch]), dim=-1)
                val_sum += log_cosh(pred, y_val[i:i + batch]) * min(batch, n_val - i)
        logs = (train_sum.item() / n, val_sum.item() / n_val)
    return (time.perf_counter() - t0) * 1e6, logs[1]


def bench_iris():
    from sklearn.datasets import load_iris
    iris = load_iris()
    x = torch.tensor(iris.data, dtype=torch.float32)
    y = torch.tensor(iris.target, dtype=torch.float32)
    n_test = math.ceil(0.3 * len(x))  # sklearn's train_test_split(test_size=0.3, shuffle=False)
    x_train, x_val, y_train, y_val = x[:-n_test], x[-n_test:], y[:-n_test], y[-n_test:]
    best = None
    for threads in THREADS:
        torch.set_num_threads(threads)
        for i in range(IRIS_WARMUP):
            iris_fit(x_train, y_train, x_val, y_val, seed=i)
        runs = [iris_fit(x_train, y_train, x_val, y_val, seed=i) for i in range(IRIS_FITS)]
        us = statistics.median(r[0] for r in runs)
        print(f"# torch iris, {threads} thread(s): {us:.1f} us (median val_loss {statistics.median(r[1] for r in runs):.4f})")
        if best is None or us < best[0]:
            best = (us, threads)
    print(f"# torch iris: Iris {len(x_train)}/{len(x_val)} unshuffled, 4-32(relu)-3(softmax), Keras-rule Adam(0.1), "
          f"log_cosh with (N,1) labels, batch 20, 20 epochs + validation, eager; median of {IRIS_FITS} fits "
          f"after {IRIS_WARMUP} warm-ups; torch threads: {best[1]}")
    print(f"torch_iris_fit_us: {best[0]:.1f} us")


# --- (b) one epoch of the MNIST-sized MLP --------------------------------------------------

def synthetic_mnist(samples=60000, features=784, classes=10):
    x, y = synthetic.mnist(samples, features, classes)
    return torch.from_numpy(x), torch.from_numpy(y)


def mnist_epoch(params, opt, x, y, batch=128):
    t0 = time.perf_counter()
    perm = torch.randperm(x.shape[0])  # shuffle on, as the onefit bench
    total = torch.zeros(())
    for i in range(0, x.shape[0], batch):
        idx = perm[i:i + batch]
        loss = F.cross_entropy(mlp_logits(params, x[idx]), y[idx])  # softmax + sparse CE, fused
        loss.backward()
        opt.step()
        total += loss.detach() * idx.numel()
    mean_loss = total.item() / x.shape[0]
    return time.perf_counter() - t0, mean_loss


def bench_mnist():
    x, y = synthetic_mnist()
    best = None
    for threads in THREADS:
        torch.set_num_threads(threads)
        torch.manual_seed(0)
        params = dense_params([784, 256, 10], torch.Generator().manual_seed(0))
        opt = KerasAdam(params, lr=1e-3)
        for _ in range(MNIST_WARMUP):
            mnist_epoch(params, opt, x, y)
        runs = [mnist_epoch(params, opt, x, y) for _ in range(MNIST_EPOCHS)]
        s = statistics.median(r[0] for r in runs)
        print(f"# torch mlp_mnist, {threads} thread(s): {s:.4f} s/epoch (last loss {runs[-1][1]:.4f})")
        if best is None or s < best[0]:
            best = (s, threads)
    print(f"# torch mlp_mnist: 60000 synthetic samples (same hash as bench_mlp_mnist), 784-256(relu)-10, "
          f"F.cross_entropy on logits, Keras-rule Adam(1e-3), batch 128, randperm shuffle, eager; median of "
          f"{MNIST_EPOCHS} epochs after {MNIST_WARMUP} warm-up; torch threads: {best[1]}")
    print(f"torch_mlp_mnist_epoch_s: {best[0]:.4f} s")
    print(f"torch_mlp_mnist_samples_per_s: {60000 / best[0]:.0f} samples/s")


# --- (c) Keras's MNIST convnet ---------------------------------------------------------------

def cnn_params(generator):
    """Conv 1->32 3x3, conv 32->64 3x3, dense 1600->10; glorot-uniform-like, zero biases."""
    def uniform(shape, fan_in, fan_out):
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        return ((torch.rand(shape, generator=generator) * 2 - 1) * limit).requires_grad_()
    zeros = lambda n: torch.zeros(n, requires_grad=True)
    return [uniform((32, 1, 3, 3), 9, 288), zeros(32), uniform((64, 32, 3, 3), 288, 576), zeros(64),
            uniform((10, 1600), 1600, 10), zeros(10)]


def cnn_logits(params, x, training):
    w1, b1, w2, b2, w3, b3 = params
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
    h = F.dropout(h.flatten(1), 0.5, training)
    return F.linear(h, w3, b3)


def bench_cnn(samples, epochs=1):
    x, y = synthetic_mnist(samples)
    x = x.reshape(samples, 1, 28, 28)  # torch's own layout (NCHW), its fast path
    best = None
    for threads in THREADS:
        torch.set_num_threads(threads)
        torch.manual_seed(0)
        params = cnn_params(torch.Generator().manual_seed(0))
        opt = KerasAdam(params, lr=1e-3)

        def epoch():
            t0 = time.perf_counter()
            perm = torch.randperm(samples)
            for i in range(0, samples, 128):
                idx = perm[i:i + 128]
                F.cross_entropy(cnn_logits(params, x[idx], True), y[idx]).backward()
                opt.step()
            return time.perf_counter() - t0

        epoch()  # warm-up
        s = statistics.median(epoch() for _ in range(epochs))
        print(f"# torch cnn_mnist, {threads} thread(s): {s:.4f} s/epoch")
        if best is None or s < best[0]:
            best = (s, threads)
    print(f"# torch cnn_mnist: {samples} synthetic 28x28 images, the Keras convnet in NCHW, F.conv2d/max_pool2d, "
          f"Keras-rule Adam(1e-3), batch 128, eager; torch threads: {best[1]}")
    print(f"torch_cnn_mnist_epoch_s: {best[0]:.4f} s")
    print(f"torch_cnn_mnist_samples_per_s: {samples / best[0]:.0f} samples/s")


def describe_backend():
    print(f"torch_version: {torch.__version__}")
    env = {k: os.environ.get(k, "(unset)") for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")}
    config = torch.__config__.show()
    blas = next((line.strip(" -") for line in config.splitlines() if "Math Kernel Library" in line), "BLAS: see torch.__config__")
    cpu = next((line.strip(" -") for line in config.splitlines() if "CPU capability" in line), "")
    print(f"# torch: python {sys.version.split()[0]}, numpy {np.__version__}, {torch.get_num_threads()} default "
          f"threads; {blas} (linked into torch); {cpu}; " + ", ".join(f"{k}={v}" for k, v in env.items()))
    try:  # the shared BLAS/OpenMP libraries loaded (torch's MKL is static, so it is not among them)
        from threadpoolctl import threadpool_info
        torch.ones(64, 64) @ torch.ones(64, 64)
        np.ones((64, 64)) @ np.ones((64, 64))
        for lib in threadpool_info():
            print(f"# threadpool: {lib['internal_api']} {lib.get('version') or ''} ({os.path.basename(lib['filepath'])})"
                  + (f" kernel {lib['architecture']}" if lib.get("architecture") else ""))
    except ImportError:
        print("# threadpool: threadpoolctl not installed")


if __name__ == "__main__":
    describe_backend()
    which = sys.argv[1:] or ["iris", "mnist"]
    if "iris" in which:
        bench_iris()
    if "mnist" in which:
        bench_mnist()
    if "cnn" in which:
        bench_cnn(int(os.environ.get("CNN_SAMPLES", "60000")))
