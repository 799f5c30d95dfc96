"""lib.model.gguf_header: a GGUF file's header read in plain Python, no weight touched.

A small file written here by the format's own rules (llama.cpp's docs/gguf.md) is read back whole;
damaged ones get one line; SmolLM2's real file reads as the `gguf` package reads it.
"""
import struct

import pytest

from lib.errors import CourseError
from lib.model import catalog
from lib.model.gguf_header import read_header


def _string(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _file(version=3, items=(), tensors=()) -> bytes:
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(items))
    for key, kind, payload in items:
        out += _string(key) + struct.pack("<I", kind) + payload
    for name, dims, kind in tensors:
        out += _string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, 0)
    return out


ITEMS = [("general.name", 8, _string("tiny")),
         ("llama.block_count", 4, struct.pack("<I", 2)),
         ("llama.rope.freq_base", 6, struct.pack("<f", 10000.0)),
         ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + _string("a") + _string("b") + _string("日本")),
         ("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, 3) + struct.pack("<3i", 1, 1, 3))]
TENSORS = [("token_embd.weight", (64, 3), 2), ("output_norm.weight", (64,), 0)]


def test_a_small_file_reads_back_whole(tmp_path):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(_file(items=ITEMS, tensors=TENSORS) + b"\0" * 64)
    h = read_header(path)
    assert h.version == 3 and h.metadata["general.name"] == "tiny" and h.metadata["llama.block_count"] == 2
    assert abs(h.metadata["llama.rope.freq_base"] - 10000.0) < 1e-3
    # arrays are counted, not kept, unless asked for
    assert h.lengths == {"tokenizer.ggml.tokens": 3, "tokenizer.ggml.token_type": 3}
    assert "tokenizer.ggml.tokens" not in h.metadata
    # shapes in torch's order ([out, in]), and the parameters counted from them
    assert h.tensors == {"token_embd.weight": ((3, 64), 2), "output_norm.weight": ((64,), 0)}
    assert h.parameters == 3 * 64 + 64
    kept = read_header(path, arrays=("tokenizer.ggml.tokens", "tokenizer.ggml.token_type"))
    assert kept.metadata["tokenizer.ggml.tokens"] == ["a", "b", "日本"]
    assert kept.metadata["tokenizer.ggml.token_type"] == [1, 1, 3]


@pytest.mark.parametrize("data, says", [
    (b"PK\x03\x04" + b"\0" * 40, "does not start with GGUF"),
    (_file(version=1), "GGUF version 1 is not 2 or 3"),
    (_file(items=ITEMS)[:-5], "cannot be read as a GGUF file"),
    (_file(items=[("x", 13, b"")]), "unknown value type 13"),
    (b"", "cannot be read as a GGUF file"),
])
def test_a_damaged_file_is_one_line(tmp_path, data, says):
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(CourseError, match=says) as e:
        read_header(path)
    assert "\n" not in str(e.value) and str(path) in str(e.value)


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(CourseError, match="cannot be read as a GGUF file"):
        read_header(tmp_path / "none.gguf")


@pytest.mark.skipif(catalog.smollm2_file() is None, reason=f"{catalog.SMOLLM2_PACKAGE} is not installed")
def test_smollm2_s_header_is_what_the_gguf_package_reads():
    from lib.model.smollm2 import gguf_reader_class

    path = catalog.smollm2_file()
    h = read_header(path)
    reader = gguf_reader_class()(path)
    for key in ("llama.block_count", "llama.attention.head_count", "llama.attention.head_count_kv",
                "llama.embedding_length", "llama.context_length"):
        assert h.metadata[key] == reader.fields[key].contents(), key
    assert h.lengths["tokenizer.ggml.tokens"] == len(reader.fields["tokenizer.ggml.tokens"].data) == 49152
    assert {t.name: tuple(int(d) for d in reversed(t.shape)) for t in reader.tensors} == \
           {name: shape for name, (shape, _) in h.tensors.items()}
    assert h.parameters == sum(int(t.n_elements) for t in reader.tensors) == 134_515_008
