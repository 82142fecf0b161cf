"""PyTorch on the same GPU: the MNIST-shaped MLP (784-256-10, batch 128, Adam with Keras's
epsilon placement, sparse cross entropy), eager and, if it works, with CUDA graphs.
Prints `name: value unit` lines for bench/gpu_check.sh."""
import sys
import time

import torch


def main():
    if not torch.cuda.is_available():
        print("# torch: no CUDA device")
        return 1
    dev = torch.device("cuda")
    n, batch = 60000, 128
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.rand(n, 784, generator=g).to(dev)
    y = (torch.arange(n) % 10).to(dev)
    w1 = (torch.rand(784, 256, device=dev) * 2 - 1) * (6 / (784 + 256)) ** 0.5
    w2 = (torch.rand(256, 10, device=dev) * 2 - 1) * (6 / (256 + 10)) ** 0.5
    params = [w1.requires_grad_(), torch.zeros(256, device=dev, requires_grad=True),
              w2.requires_grad_(), torch.zeros(10, device=dev, requires_grad=True)]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    step = torch.zeros((), device=dev)

    def train_step(xb, yb):
        z = torch.relu(xb @ params[0] + params[1]) @ params[2] + params[3]
        loss = torch.nn.functional.cross_entropy(z, yb)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            step.add_(1)
            alpha = 1e-3 * torch.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
            for p, gr, mi, vi in zip(params, grads, m, v):
                mi.mul_(0.9).add_(gr, alpha=0.1)
                vi.mul_(0.999).addcmul_(gr, gr, value=0.001)
                p.sub_(alpha * mi / (vi.sqrt() + 1e-7))
        return loss

    def epoch(fn):
        perm = torch.randperm(n, device=dev)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for i in range(0, n - batch + 1, batch):  # full batches (the graph needs fixed shapes)
            idx = perm[i:i + batch]
            fn(x[idx], y[idx])
        torch.cuda.synchronize()
        return time.perf_counter() - t

    steps = n // batch
    epoch(train_step)
    eager = sorted(epoch(train_step) for _ in range(3))[1]
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name()}: eager, {steps} full batches per epoch")
    print(f"torch_gpu_mlp_mnist_samples_per_s: {steps * batch / eager:.0f} samples/s")
    try:
        sx = torch.zeros(batch, 784, device=dev)
        sy = torch.zeros(batch, dtype=torch.long, device=dev)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                train_step(sx, sy)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            train_step(sx, sy)

        def replay(xb, yb):
            sx.copy_(xb)
            sy.copy_(yb)
            graph.replay()
        epoch(replay)
        graphed = sorted(epoch(replay) for _ in range(3))[1]
        print(f"torch_gpu_graph_mlp_mnist_samples_per_s: {steps * batch / graphed:.0f} samples/s")
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"# torch CUDA graphs failed: {type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
