"""scikit-learn peer of bench_sweep: the same learning-rate x seed grid searched with
GridSearchCV(MLPClassifier), n_jobs=-1, the way scikit-learn users search it.

The members have the seed's shape and schedule: one hidden layer of 32 relu units, Adam, batch
20, 20 epochs, unshuffled, on the seed's 105 training rows, scored on its 45 test rows
(PredefinedSplit), no refit. MLPClassifier has its own loss (log loss over a softmax), not
logcosh, so the work per member is alike, not identical. 1000 members take minutes, so it runs
MEMBERS of them (10 rates x MEMBERS/10 seeds) and extrapolates linearly:

  sklearn_sweep_1000_iris_ms   1000 x the median per-member time over ROUNDS searches
Run: python3 bench/peers/sklearn_sweep_peer.py [MEMBERS]
"""
import statistics
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from sklearn.neural_network import MLPClassifier

ROUNDS = 3


def main():
    members = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    seeds = max(1, members // 10)
    iris = load_iris()
    x, y = iris.data.astype(np.float32), iris.target
    fold = np.r_[np.full(105, -1), np.zeros(45, dtype=int)]  # train on the first 105, score on the last 45
    grid = {"learning_rate_init": [0.001 * 2**i for i in range(10)], "random_state": list(range(seeds))}
    model = MLPClassifier(hidden_layer_sizes=(32,), activation="relu", solver="adam", batch_size=20, max_iter=20,
                          shuffle=False, tol=0.0, n_iter_no_change=1000)
    per_member_ms = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 20 epochs is the seed's schedule, not convergence
        for _ in range(ROUNDS):
            search = GridSearchCV(model, grid, cv=PredefinedSplit(fold), n_jobs=-1, refit=False)
            t0 = time.perf_counter()
            search.fit(x, y)
            per_member_ms.append((time.perf_counter() - t0) * 1e3 / (10 * seeds))
    print(f"# sklearn peer: GridSearchCV(MLPClassifier(32 relu, adam, batch 20, 20 epochs)), n_jobs=-1, "
          f"{10 * seeds} members per search, {ROUNDS} searches, extrapolated to 1000 members")
    print(f"sklearn_sweep_1000_iris_ms: {1000 * statistics.median(per_member_ms):.1f} ms")


if __name__ == "__main__":
    main()
