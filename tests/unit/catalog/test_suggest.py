"""The "did you mean" matcher: close spellings yes, a key with another meaning no."""

from __future__ import annotations

from mscodegen.catalog.suggest import close_matches, did_you_mean


def test_a_misspelt_key_gets_its_suggestion():
    assert did_you_mean("every_epoch", ["every_epochs", "metrics"]) == "; did you mean 'every_epochs'?"
    assert close_matches("acc", ["accuracy", "loss"]) == ["accuracy"]


def test_a_key_in_another_unit_is_not_suggested():
    """eval.every_steps is not a typo of eval.every_epochs: suggesting it would change what the user meant."""
    assert did_you_mean("every_steps", ["every_epochs", "metrics"]) == ""
    assert did_you_mean("log_every_epochs", ["log_every_steps"]) == ""
    assert did_you_mean("every_step", ["every_steps", "every_epochs"]) == "; did you mean 'every_steps'?"
