"""A GGUF file's header read in plain Python: its metadata and its tensors' shapes, no weight touched.

The command line lists SmolLM2 (`python -m lib models`) and checks a prompt against its sizes before it
loads anything; the `gguf` package would read the same header through NumPy, and loading the model
dequantizes 540 MB. This reader walks the header once, through a memory map (only the pages it reads
are touched: about 2 MB of a 100 MB file), keeping every scalar and the length of every array (the
49,152 tokens and 48,900 merges are skipped over, not kept, unless asked for by `arrays`).

GGUF version 2 and 3 (llama.cpp's docs/gguf.md): the magic "GGUF", a version, the tensor count and the
metadata count, then each metadata item (a key, a type, a value; an array is an item type, a count
and the items), then each tensor's name, dimensions, type and offset.
"""
from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path

from lib.errors import CourseError

# value types: struct format of a fixed-size scalar (8: a string, 9: an array)
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# ggml's block sizes and bytes per block, for the tensors' sizes in the file (types the course meets)
_BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36)}


@dataclass
class Header:
    version: int
    metadata: dict = field(default_factory=dict)      # key -> scalar, string, or kept array
    lengths: dict = field(default_factory=dict)       # an array's key -> its count
    tensors: dict = field(default_factory=dict)       # name -> (shape [out, in], ggml type)

    def numbers(self, name: str) -> int:
        n = 1
        for d in self.tensors[name][0]:
            n *= d
        return n

    @property
    def parameters(self) -> int:
        return sum(self.numbers(t) for t in self.tensors)


class _Cursor:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt: str):
        value = struct.unpack_from(fmt, self.data, self.at)[0]
        self.at += struct.calcsize(fmt)
        return value

    def string(self, keep: bool = True):
        n = self.take("<Q")
        if self.at + n > len(self.data):
            raise ValueError("a string runs past the end of the file")
        start, self.at = self.at, self.at + n
        return bytes(self.data[start:self.at]).decode("utf-8", errors="replace") if keep else None

    def value(self, kind: int, keep: bool = True):
        if kind in _SCALAR:
            return self.take(_SCALAR[kind])
        if kind == _STRING:
            return self.string(keep)
        raise ValueError(f"unknown value type {kind}")


def read_header(path: Path, arrays: tuple[str, ...] = ()) -> Header:
    """The header of the GGUF file at `path`: every scalar, the arrays named in `arrays` whole and every
    other array's length, and each tensor's shape ([out, in], torch's order) and type."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[:4] != b"GGUF":
                raise ValueError("it does not start with GGUF")
            c = _Cursor(data)
            c.at = 4
            version = c.take("<I")
            if version not in (2, 3):
                raise ValueError(f"GGUF version {version} is not 2 or 3")
            n_tensors, n_items = c.take("<Q"), c.take("<Q")
            out = Header(version)
            for _ in range(n_items):
                key = c.string()
                kind = c.take("<I")
                if kind != _ARRAY:
                    out.metadata[key] = c.value(kind)
                    continue
                item, count = c.take("<I"), c.take("<Q")
                out.lengths[key] = count
                keep = key in arrays
                if item in _SCALAR and not keep:
                    c.at += count * struct.calcsize(_SCALAR[item])
                    if c.at > len(data):
                        raise ValueError(f"the array {key!r} runs past the end of the file")
                    continue
                values = [c.value(item, keep) for _ in range(count)]
                if keep:
                    out.metadata[key] = values
            for _ in range(n_tensors):
                name = c.string()
                dims = [c.take("<Q") for _ in range(c.take("<I"))]
                kind = c.take("<I")
                c.take("<Q")                                  # offset in the data section
                out.tensors[name] = (tuple(reversed(dims)), kind)
            return out
    except (OSError, ValueError, struct.error) as e:
        raise CourseError(f"{path} cannot be read as a GGUF file ({e})") from None
