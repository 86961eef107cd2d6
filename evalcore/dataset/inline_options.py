"""Options written into an attacked question: "stem choice0:first.choice1:second...".

The method's word and character attacks of choice items attack the question with its options
glued on, each after a "choice<k>:" marker, while the file's option columns stay clean. Read
as one question, every item looks changed beyond recognition (and the model would see each
option twice). Splitting the markers back out gives the attacked stem and the attacked
options, each comparable with its original.
"""
from __future__ import annotations

from collections.abc import Sequence


def split_marked_options(text: str, positions: Sequence[int]
                         ) -> tuple[str, list[str]] | None:
    """(stem, options) of `text` whose options follow "choice<p>:" markers for the file
    positions `positions` (in the order the options are shown), or None when the markers
    are not all there, once each and in file order, or a marker for another column is."""
    if not positions:
        return None
    starts = {}
    for p in positions:
        marker = f"choice{p}:"
        at = text.find(marker)
        if at < 0 or text.find(marker, at + 1) >= 0:
            return None
        starts[p] = at
    in_file_order = sorted(starts)
    if [starts[p] for p in in_file_order] != sorted(starts.values()):
        return None
    wider = max(in_file_order) + 1
    if f"choice{wider}:" in text:
        return None  # more markers than the row has options: not this layout
    ends = [starts[p] for p in in_file_order[1:]] + [len(text)]
    segments = {p: text[starts[p] + len(f"choice{p}:"):end].strip()
                for p, end in zip(in_file_order, ends)}
    stem = text[:starts[in_file_order[0]]].strip()
    if not stem or not all(segments.values()):
        return None
    return stem, [segments[p] for p in positions]
