"""onefit.sweep(model, x, y, grid={"learning_rate": [...], "seed": [...]}): every grid point
trained in one call (the C++ onefit::sweep, members side by side on the cores), each member
bit-identical to the same model built with that seed, compiled at that rate and fitted alone."""


def sweep(model, x, y, grid=None, batch_size=None, epochs=1, validation_data=None, validation_split=0.0,
          shuffle=True, steps_per_epoch=None, seed=None):
    """`model`: a compiled onefit.keras.Sequential, the members' layers, optimizer, loss and
    metrics. Returns one dict per member, learning rate major: its learning_rate and seed, the
    last epoch's logs ("loss", "val_loss", ...), its "history" (dict of per-epoch lists) and its
    "weights" (Keras layout). An axis left out of `grid` is the model's own value."""
    from onefit import _onefit
    from onefit._arrays import float32
    from onefit.keras.models import _fit_options

    if model._compiled is None:
        raise RuntimeError("sweep: compile the model first (its optimizer, loss and metrics are the members')")
    axes = dict(grid or {})
    rates = [float(v) for v in axes.pop("learning_rate", [])]
    seeds = [int(v) for v in axes.pop("seed", [model._seed])]
    if axes:
        raise ValueError(f"sweep: onefit sweeps learning_rate and seed so far, not {', '.join(sorted(axes))}")
    x, y = float32(x, "x"), float32(y, "y")
    model._build(model._input_shape or x.shape[1:])
    optimizer, loss, metrics = model._compiled
    options = _fit_options(batch_size, epochs, 0, 0, validation_data, validation_split, None, shuffle, steps_per_epoch,
                           seed)
    members = _onefit.sweep(model._native, optimizer._native(), loss, metrics, x, y, options, rates, seeds)
    results = []
    for learning_rate, member_seed, history, weights in members:
        history = dict(history)
        results.append({"learning_rate": learning_rate, "seed": member_seed,
                        **{k: v[-1] for k, v in history.items() if v}, "history": history, "weights": list(weights)})
    return results
