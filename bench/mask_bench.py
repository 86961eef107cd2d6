"""CPU per model reply spent in `evalcore.masking.mask_text`, with one API key known (as in
a run): `.venv/bin/python bench/mask_bench.py [OTHER/masking.py]` prints, per reply, its
size and the microseconds per call (the least of 7 rounds of 1,000 calls, process CPU
time), and beside it those of another version of the module (e.g. main's) when named."""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]

KEY = "sk-proj-Zq8Wd3Lp6Rt1Yx4Mn7Bv2Kc5Hs9Gf0Ja3Ue6Io1Pw"
ENGLISH = ("The answer is B. To see why, compare the two options: option A assumes the rate "
           "stays at 5% per year, while option B accounts for compounding over 10 years, "
           "which gives 1.05^10 = 1.629, so the total grows by about 62.9%. ") * 4
CHINESE = ("答案是 B。原因如下：选项 A 假设利率每年保持 5%，而选项 B 考虑了十年的复利，"
           "1.05 的 10 次方约等于 1.629，因此总额增长约 62.9%。") * 6
JSON = ('{"answer": "B", "confidence": 0.82, "reason": "compounding over 10 years: '
        '1.05^10 = 1.629 \\u2248 +62.9%"}')
REPLIES = {"english 1 KB": ENGLISH, "chinese 1 KB": CHINESE, "json 100 B": JSON,
           "english 1 KB + spaced key": ENGLISH + " ".join(KEY)}


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_call_us(module: ModuleType, text: str, calls: int = 1000) -> float:
    rounds = []
    for _ in range(7):
        start = time.process_time()
        for _ in range(calls):
            module.mask_text(text, [KEY])
        rounds.append((time.process_time() - start) / calls * 1e6)
    return min(rounds)


def main() -> None:
    versions = {"this": load(ROOT / "evalcore" / "masking.py", "masking_this")}
    if len(sys.argv) > 1:
        versions["other"] = load(Path(sys.argv[1]), "masking_other")
    for name, text in REPLIES.items():
        cells = "\t".join(f"{label} {per_call_us(m, text):.1f} us" for label, m in versions.items())
        print(f"{name}\t{len(text.encode())} B\t{cells}")


if __name__ == "__main__":
    main()
