"""onefit.explain(model, x, y, ...): runs the fit once, profiled, and says where its time went,
how much arithmetic it did, what it would cost on each device, which device finishes first and
why, and what in the set-up is probably a mistake (the `onefit explain` report, docs/explain.md)."""
import json
import os


class Explanation(dict):
    """The report as a dict (the JSON of `onefit explain --json`); .text is the printed report,
    .html the self-contained HTML one, which a notebook displays inline."""

    def __init__(self, report, text, html):
        super().__init__(report)
        self.text = text
        self.html = html

    def _repr_html_(self):
        return self.html

    def __str__(self):
        return self.text


def explain(model, x, y, batch_size=None, epochs=1, validation_data=None, validation_split=0.0, shuffle=True,
            steps_per_epoch=None, seed=None, device="cpu", report=None, recalibrate=False):
    """Fits `model` (compiled, an onefit.keras.Sequential) on x, y as model.fit would, once, and
    returns its Explanation; report="file.html" also writes the HTML report."""
    from onefit import _onefit
    from onefit._arrays import float32
    from onefit.keras.models import _fit_options

    if model._compiled is None:
        raise RuntimeError("explain: compile the model first")
    x, y = float32(x, "x"), float32(y, "y")
    model._build_for(x.shape)
    if validation_data is None and validation_split:
        # The explained fit takes validation rows as data: the last rows, as Keras's split takes them.
        split = int(len(x) * (1 - float(validation_split)))
        if split < 1 or split >= len(x):
            raise ValueError(f"validation_split {validation_split} of {len(x)} rows leaves no training or validation rows")
        x, y, validation_data = x[:split], y[:split], (x[split:], y[split:])
    options = _fit_options(batch_size, epochs, 0, 0, validation_data, 0.0, None, shuffle, steps_per_epoch, seed, device)
    val_rows = 0 if validation_data is None else len(validation_data[0])
    run = f"Python arrays ({len(x)} train / {val_rows} validation rows), {model!r}"
    text_json, text, html = _onefit.explain_fit(model._native, x, y, options, run, bool(recalibrate))
    if report is not None:
        with open(os.fspath(report), "w", encoding="utf-8") as f:
            f.write(html)
    return Explanation(json.loads(text_json), text, html)
