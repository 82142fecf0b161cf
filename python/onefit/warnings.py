"""onefit's warnings as Python warnings: one UserWarning subclass per kind, so each can be
filtered (warnings.filterwarnings("ignore", category=onefit.warnings.UnshuffledSplitWarning))."""
import warnings as _warnings


class OnefitWarning(UserWarning):
    """Something about the data or the set-up that is probably a mistake."""


class LabelWarning(OnefitWarning):
    """Labels that do not fit the output (broadcast, out of range, missing classes)."""


class UnshuffledSplitWarning(OnefitWarning):
    """A validation split of ordered data: the last rows may hold other classes than the rest."""


class NonFiniteLossWarning(OnefitWarning):
    """The loss became NaN or infinite and training stopped (as Keras's TerminateOnNaN)."""


def _kind(text):
    lowered = text.lower()
    if "the loss became" in lowered:
        return NonFiniteLossWarning
    if "validation" in lowered and ("shuffl" in lowered or "sorted" in lowered or "order" in lowered):
        return UnshuffledSplitWarning
    if "label" in lowered or "class" in lowered or "broadcast" in lowered:
        return LabelWarning
    return OnefitWarning


def emit(texts, stacklevel=3):
    """Raises each of onefit's warning texts as the Python warning of its kind."""
    for text in texts:
        _warnings.warn(text, _kind(text), stacklevel=stacklevel)
