"""One labelling: reports name an option as the prompt did ("choice 3" / "选项 3")."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evalcore.prompt import format_choices, option_name


@given(choices=st.lists(st.text(min_size=1, max_size=10).filter(lambda t: "\n" not in t
                                                                  and "\r" not in t),
                        min_size=1, max_size=6),
       language=st.sampled_from(["en", "zh"]))
def test_each_rendered_option_starts_with_the_name_reports_use(choices, language):
    lines = format_choices(choices, language).split("\n")
    assert len(lines) == len(choices)
    for i, line in enumerate(lines):
        assert line.startswith(option_name(i, language))
    assert option_name(3) == "choice 3" and option_name(3, "zh") == "选项 3"
