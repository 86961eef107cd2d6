"""Old vs new language labels on every shared file: `python bench/language_labels.py`.

The old rules: the importer took the language from the format (Math23K = zh ...), the
scorers called a text Chinese if it held any CJK character. The new rule is
`evalcore.dataset.language` (used by both); this counts the items on which each old rule
disagrees with it, and names the files.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalcore.dataset import parse_dataset  # noqa: E402

SHARED = ROOT.parent / "shared" / "datasets"
OLD_FORMAT_LANGUAGE = {"codah": "en", "flipkart": "en", "math23k": "zh", "translation": "en",
                       "truthfulqa_single": "en", "truthfulqa_multi": "en", "bbq": "en",
                       "cbbq": "zh"}
OLD_SCORING_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def main() -> None:
    total = by_import = by_scoring = 0
    files = sorted(p for p in SHARED.rglob("*")
                   if p.suffix in (".csv", ".jsonl") or p.name == "ambiguous.json")
    for path in files:
        parsed = parse_dataset(path)
        old = OLD_FORMAT_LANGUAGE[parsed.format.removesuffix("_attacked")]
        imp = sum(q.language != old for q in parsed.questions)
        sco = sum(("zh" if OLD_SCORING_CJK.search(q.question) else "en") != q.language
                  for q in parsed.questions)
        total, by_import, by_scoring = total + len(parsed.questions), by_import + imp, by_scoring + sco
        if imp or sco:
            print(f"{path.relative_to(SHARED)}: {len(parsed.questions)} items; old import label "
                  f"differs on {imp}, old scoring rule on {sco}")
    print(f"{len(files)} files, {total} items: old import labels differ on {by_import}, "
          f"the old scoring rule on {by_scoring}")


if __name__ == "__main__":
    main()
