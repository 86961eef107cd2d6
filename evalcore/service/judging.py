"""Judge passes over a finished run (re-judge, meaning judge, judge analysis): queue one
(checked actions), what it would cost, and how reliable the passes were."""
from __future__ import annotations

from evalcore.actions.runs import queue_judge_analysis, queue_meaning_judge, queue_rejudge
from evalcore.runner.meaning_judge import cost_line as meaning_cost_line
from evalcore.runner.meaning_judge import meaning_cost
from evalcore.runner.rejudge import rejudge_passes, reliability_line

__all__ = ["meaning_cost", "meaning_cost_line", "queue_judge_analysis", "queue_meaning_judge",
           "queue_rejudge", "rejudge_passes", "reliability_line"]
