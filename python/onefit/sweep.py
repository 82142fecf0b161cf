"""onefit.sweep(model, x, y, grid={"learning_rate": [...], "seed": [...]}, kfold=5): every grid
point (and fold) trained in one call (the C++ onefit::sweep: members of one shape stacked in SIMD
lanes, spread over the cores), each member bit-identical to the same model built with that seed,
compiled at that rate and fitted alone."""


def random_points(count, low, high, log=True, first_seed=0, draw_seed=0):
    """`count` grid points for `sweep(grid=...)`: learning rates drawn from [low, high],
    log-uniformly with `log` (as learning rates are searched), seeds first_seed, first_seed + 1,
    ...; the same draws for the same draw_seed."""
    from onefit import _onefit
    from onefit.keras.layers import _float32_shortest

    return [{"learning_rate": _float32_shortest(rate), "seed": seed}
            for rate, seed in _onefit.random_points(int(count), float(low), float(high), bool(log), int(first_seed),
                                                    int(draw_seed))]


_AXES = ("learning_rate", "seed", "optimizer", "loss", "units", "dropout", "batch_size", "epochs")
# A member's value of an axis is in its row when the grid swept that axis.
_SWEPT_BY = {"optimizer": "optimizers", "loss_function": "losses", "units": "units", "dropout": "dropouts", "batch_size": "batch_sizes",
             "epochs": "epochs"}


def _optimizer_name(value):
    """A Keras optimizer name from a name or an optimizer object (its kind; its learning rate is the grid's)."""
    return value if isinstance(value, str) else type(value).__name__.lower()


def _grid(grid, model_seed):
    """(learning_rates, seeds, points, other axes) from a dict of axes or a list of points."""
    if isinstance(grid, (list, tuple)):
        points = []
        for p in grid:
            extra = set(p) - {"learning_rate", "seed"}
            if extra or "learning_rate" not in p:
                raise ValueError(f"sweep: a grid point needs learning_rate (and seed), got {sorted(p)}")
            points.append((float(p["learning_rate"]), int(p.get("seed", model_seed))))
        if not points:
            raise ValueError("sweep: the list of grid points is empty")
        return [], [], points, {}
    axes = dict(grid or {})
    unknown = set(axes) - set(_AXES)
    if unknown:
        raise ValueError(f"sweep: unknown grid axes {', '.join(sorted(unknown))}; the axes are {', '.join(_AXES)}")
    rates = [float(v) for v in axes.pop("learning_rate", [])]
    seeds = [int(v) for v in axes.pop("seed", [model_seed])]
    others = {"optimizers": [_optimizer_name(v) for v in axes.pop("optimizer", [])],
              "losses": [str(v) for v in axes.pop("loss", [])],
              "units": [int(v) for v in axes.pop("units", [])],
              "dropouts": [float(v) for v in axes.pop("dropout", [])],
              "batch_sizes": [int(v) for v in axes.pop("batch_size", [])],
              "epochs": [int(v) for v in axes.pop("epochs", [])]}
    return rates, seeds, [], others


def sweep(model, x, y, grid=None, kfold=None, batch_size=None, epochs=1, validation_data=None,
          validation_split=0.0, shuffle=True, steps_per_epoch=None, seed=None, as_frame=False, shuffle_splits=None,
          split_size=0.2, bootstrap=None, split_seed=0, shuffle_folds=False):
    """`model`: a compiled onefit.keras.Sequential, the members' layers, optimizer, loss and
    metrics. `grid`: a dict of axes ({"learning_rate": [...], "seed": [...], "optimizer": ["adam",
    "sgd"], "loss": [...] (Keras names; the row's "loss_function"), "units": [...] (every hidden Dense layer), "dropout": [...] (every Dropout layer),
    "batch_size": [...], "epochs": [...]}, every combination; an axis left out is the model's or
    the call's own value) or a list of points ([{"learning_rate": ...,
    "seed": ...}, ...], e.g. random_points()). `kfold`: k-fold cross-validation, each point
    trained once per fold on the other folds' rows and validated on the fold's (stratified, as
    scikit-learn's StratifiedKFold, when the labels are classes; KFold otherwise). Or instead
    `shuffle_splits`: that many random splits (ShuffleSplit), each validating on `split_size` of
    the rows; or `bootstrap`: that many bootstrap samples, each validated on the rows it left out
    (seeds split_seed, split_seed + 1, ...). Rows carry the sample's index as "fold".
    shuffle_folds: k-fold's rows drawn at random by split_seed (scikit-learn's shuffle=True).

    Returns one dict per member (the other axes major, then learning rate, then seed), each
    point's folds together: its learning_rate, seed, the value of every other axis swept, (with
    kfold) its fold, the last epoch's logs ("loss", "val_loss", ...), its
    "history" (dict of per-epoch lists) and its "weights" (Keras layout). With as_frame=True, a
    pandas DataFrame of the same rows (as scikit-learn's loaders' as_frame)."""
    from onefit import _onefit
    from onefit._arrays import float32
    from onefit.keras.layers import _float32_shortest
    from onefit.keras.models import _fit_options

    if model._compiled is None:
        raise RuntimeError("sweep: compile the model first (its optimizer, loss and metrics are the members')")
    rates, seeds, points, others = _grid(grid, model._seed)
    if kfold is not None and (isinstance(kfold, bool) or int(kfold) < 2):
        raise ValueError(f"sweep: kfold must be a number of folds, 2 or more, got {kfold!r}")
    for name, count in (("shuffle_splits", shuffle_splits), ("bootstrap", bootstrap)):
        if count is not None and (isinstance(count, bool) or int(count) < 1):
            raise ValueError(f"sweep: {name} must be a number of samples, 1 or more, got {count!r}")
    resampled = bool(kfold or shuffle_splits or bootstrap)
    x, y = float32(x, "x"), float32(y, "y")
    model._build_for(x.shape)
    optimizer, loss, metrics = model._compiled
    options = _fit_options(batch_size, epochs, 0, 0, validation_data, validation_split, None, shuffle, steps_per_epoch,
                           seed)
    members = _onefit.sweep(model._native, optimizer._native(), loss, metrics, x, y, options, rates, seeds, points,
                            others.get("optimizers", []), others.get("losses", []), others.get("units", []), others.get("dropouts", []),
                            others.get("batch_sizes", []), others.get("epochs", []), int(kfold or 0),
                            int(shuffle_splits or 0), float(split_size), int(bootstrap or 0), int(split_seed),
                            bool(shuffle_folds))
    results = []
    for learning_rate, member_seed, fold, config, history, weights in members:
        history = dict(history)
        # float32 values by their shortest decimals: 0.01 as given, not 0.009999999776482582
        row = {"learning_rate": _float32_shortest(learning_rate), "seed": member_seed}
        if resampled:
            row["fold"] = fold
        row.update({axis: _float32_shortest(value) if isinstance(value, float) else value
                    for axis, value in dict(config).items() if others.get(_SWEPT_BY[axis])})
        row.update({k: v[-1] for k, v in history.items() if v})
        results.append({**row, "history": history, "weights": list(weights)})
    if as_frame:
        import pandas

        return pandas.DataFrame(results)
    return results
