"""Plan of a GAN's predict.py: samples from the trained generator, and its export (to be built)."""

from __future__ import annotations

from mscodegen.plan.predict import PredictPlan
from mscodegen.schema.gan import GanConfig


def build_gan_predict(_cfg: GanConfig, _shared: object, _train_script: str) -> PredictPlan | None:
    """No predict.py for a GAN yet."""
    return None
