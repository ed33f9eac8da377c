"""The templates print what the plan decided: few conditions, each on one fact (issue 33).

A new `{% if %}` is a decision made in a template; make it a plan field or property instead and
let the template print it. The ceiling is the issue's; today's count is lower.
"""

from __future__ import annotations

import re

from conftest import REPO

CONDITION = re.compile(r"\{%-?\s*(if|elif)\b")
CEILING = 150
PREDICT_CEILING = 40


def conditions(text: str) -> int:
    return len(CONDITION.findall(text))


def test_the_counter_sees_if_and_elif_with_or_without_whitespace_control():
    assert conditions("{% if a %}x{%- elif b %}y{% else %}z{% endif %}{{ 'q' if c }}") == 2


def counts(predict: bool) -> dict[str, int]:
    return {
        p.name: conditions(p.read_text(encoding="utf-8"))
        for p in sorted((REPO / "templates").glob("*.j2"))
        if p.name.startswith("predict") == predict
    }


def test_the_training_templates_hold_at_most_150_conditions():
    assert sum(counts(predict=False).values()) <= CEILING, counts(predict=False)


def test_the_predict_templates_hold_at_most_40_conditions():
    """predict.py (issue 31) came after the ceiling: its own, each condition one optional feature."""
    assert sum(counts(predict=True).values()) <= PREDICT_CEILING, counts(predict=True)


def test_no_template_branches_on_a_combination_of_facts():
    """`{% if a and not b %}` is a decision: the plan names it (`Plan.eval_every`, `Step.scaled`, ...)."""
    combined = [
        f"{p.name}:{n}"
        for p in sorted((REPO / "templates").glob("*.j2"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\{%-?\s*(if|elif)\b[^%]*\b(and|or)\b", line)
    ]
    assert combined == []
