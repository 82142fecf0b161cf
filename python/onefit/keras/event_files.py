"""TensorBoard's event files, written without TensorFlow: a TFRecord stream (each record its length,
the length's masked CRC-32C, the bytes, their masked CRC-32C) of Event protocol buffers, encoded here
by hand: Event{wall_time = 1 (double), step = 2 (int64), file_version = 3 (string), summary = 5},
Summary{value = 1 (repeated)}, Summary.Value{tag = 1 (string), simple_value = 2 (float)}. TensorBoard
reads simple_value scalars as its Scalars (tensorboard's EventAccumulator, as tensorboardX writes)."""
import os
import socket
import struct
import time

_CRC32C_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1  # Castagnoli, reflected
    _CRC32C_TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(value):
    out = bytearray()
    value &= (1 << 64) - 1  # (a negative int64 is its two's complement)
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes_field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _event(wall_time, step=None, file_version=None, summary=None):
    out = _varint(1 << 3 | 1) + struct.pack("<d", wall_time)
    if step is not None:
        out += _varint(2 << 3 | 0) + _varint(int(step))
    if file_version is not None:
        out += _bytes_field(3, file_version.encode())
    if summary is not None:
        out += _bytes_field(5, summary)
    return out


def _scalar_summary(tag, value):
    summary_value = _bytes_field(1, tag.encode()) + _varint(2 << 3 | 5) + struct.pack("<f", float(value))
    return _bytes_field(1, summary_value)


class EventFileWriter:
    """One events.out.tfevents.* file in `log_dir` (made if missing), as TensorFlow names them."""

    _count = 0

    def __init__(self, log_dir):
        os.makedirs(log_dir, exist_ok=True)
        EventFileWriter._count += 1
        name = f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}.{os.getpid()}.{EventFileWriter._count}.v2"
        self.path = os.path.join(log_dir, name)
        self._file = open(self.path, "wb")
        self._write(_event(time.time(), file_version="brain.Event:2"))

    def _write(self, data):
        header = struct.pack("<Q", len(data))
        self._file.write(header + struct.pack("<I", _masked_crc(header)) + data + struct.pack("<I", _masked_crc(data)))

    def scalar(self, tag, value, step):
        self._write(_event(time.time(), step=step, summary=_scalar_summary(tag, value)))

    def flush(self):
        self._file.flush()

    def close(self):
        if not self._file.closed:
            self._file.close()
