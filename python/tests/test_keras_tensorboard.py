"""callbacks.TensorBoard writes each epoch's logs as the scalar curves Keras 3 writes
(log_dir/train and log_dir/validation, "epoch_<name>" at step = epoch, the learning rate too),
read back here with the tensorboard package's own event reader; the event stream's CRC-32C is
checked against published test vectors; what it cannot write is refused by name."""
import os

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import onefit.keras as keras
from onefit.keras import event_files


def test_crc32c_is_the_castagnoli_checksum():
    # RFC 3720's test vectors (iSCSI): 32 bytes of zeros, of ones, and 0..31.
    assert event_files.crc32c(bytes(32)) == 0x8A9136AA
    assert event_files.crc32c(bytes([0xFF] * 32)) == 0x62A8AB43
    assert event_files.crc32c(bytes(range(32))) == 0x46DD794E
    assert event_files.crc32c(b"123456789") == 0xE3069283


def read(directory):
    accumulator = EventAccumulator(str(directory))
    accumulator.Reload()
    return {tag: [(e.step, e.value) for e in accumulator.Scalars(tag)] for tag in accumulator.Tags()["scalars"]}


def test_epoch_scalars_are_what_the_fit_logged(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 4)).astype(np.float32), (np.arange(40) % 3).astype(np.float32)
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=4, batch_size=8, validation_split=0.25, verbose=0,
                        callbacks=[keras.callbacks.TensorBoard(log_dir=tmp_path)]).history
    train, validation = read(tmp_path / "train"), read(tmp_path / "validation")
    assert set(train) == {"epoch_loss", "epoch_accuracy", "epoch_learning_rate"}
    assert set(validation) == {"epoch_loss", "epoch_accuracy"}
    for tag, key in (("epoch_loss", "loss"), ("epoch_accuracy", "accuracy")):
        assert [s for s, _ in train[tag]] == [0, 1, 2, 3]
        np.testing.assert_allclose([v for _, v in train[tag]], history[key], rtol=1e-6)
        np.testing.assert_allclose([v for _, v in validation[tag]], history["val_" + key], rtol=1e-6)
    np.testing.assert_allclose([v for _, v in train["epoch_learning_rate"]], [0.01] * 4, rtol=1e-6)
    # Another fit into the same folder adds a new file, as TensorFlow's writer does.
    model.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.TensorBoard(log_dir=tmp_path)])
    assert len(os.listdir(tmp_path / "train")) == 2


def test_what_it_cannot_write_is_refused():
    for setting in (dict(histogram_freq=1), dict(update_freq="batch"), dict(write_images=True), dict(profile_batch=2),
                    dict(embeddings_freq=1)):
        with pytest.raises(ValueError, match=f"{next(iter(setting))}=.* is not supported"):
            keras.callbacks.TensorBoard(**setting)
