"""Review-queue actions: a viewer reads a queue's figures but cannot review; what a
reviewer does is recorded under their signed-in identity, each step in the audit log."""
from __future__ import annotations

import pytest

from evalcore import actions
from evalcore.auth import PermissionDenied, audit
from tests.auth.conftest import team_actor
from tests.fakes.review_sets import seed_attack_set


def test_viewers_read_stats_reviewers_review_as_themselves(engine) -> None:
    set_id, _ = seed_attack_set(engine, 2)
    reviewer, viewer = team_actor("reviewer", "rita@x.com"), team_actor("viewer", "vic@x.com")
    queue = actions.create_review_queue(reviewer, engine, attack_set_id=set_id,
                                        guidelines="Keep the meaning.")
    with pytest.raises(PermissionDenied, match="role reviewer or higher"):
        actions.review_next(viewer, engine, queue)
    card = actions.review_next(reviewer, engine, queue)
    assert card["guidelines"] == "Keep the meaning." and card["attacked"].endswith("attacked")
    actions.review_submit(reviewer, engine, queue, card["item_id"], "approve")
    stats = actions.review_stats(viewer, engine, queue)
    assert stats["by_reviewer"] == {"rita@x.com": 1} and stats["mine"] == 0
    assert actions.review_stats(reviewer, engine, queue)["mine"] == 1
    done = [(e.actor, e.action) for e in audit.list_events(engine)]
    assert ("rita@x.com", "review_queue.create") in done
    assert ("rita@x.com", "review_queue.approve") in done
    assert ("vic@x.com", "denied.review_next") in done
