"""The two forms of a config, told apart before the schema sees it: one network (`network:`,
`optimizer:`, `loss:`, ...) or two trained against each other (`gan:`).

A tree that mixes them, or writes two networks into the one-network keys, would get the schema's
errors for the wrong form (`network: missing key 'kind'`); `form_problems` says what the other form
expects instead, and names the top-level keys whose schema errors it replaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mscodegen.schema import Config
from mscodegen.schema.gan import NOT_YET, GanConfig

GAN_FORM = (
    "gan: {generator: {network: {kind: builtin, name: dcgan_generator}, optimizer: {...}}, "
    "discriminator: {network: {kind: builtin, name: dcgan_discriminator}, optimizer: {...}}}"
)
GAN_NETWORK_NAMES = ("dcgan_generator", "dcgan_discriminator")
# One-network sections and what a gan config says instead.
REPLACED_BY_GAN = {
    "network": "the networks are gan.generator.network and gan.discriminator.network",
    "optimizer": "each network has its own: gan.generator.optimizer and gan.discriminator.optimizer",
    "loss": "the adversarial loss is gan.loss",
}
# The top-level keys only the one-network form has (a gan config's schema does not know them).
ONE_NETWORK_ONLY = ("network", "optimizer", "loss", "lr_schedule", "eval", "grad", "ema")

Violation = tuple[tuple[str | int, ...], str]


def root_model(tree: object) -> type[Config] | type[GanConfig]:
    """GanConfig for a tree with a `gan:` key, else Config."""
    return GanConfig if isinstance(tree, Mapping) and "gan" in tree else Config


def form_problems(tree: object) -> tuple[list[Violation], set[str]]:
    """(problems, top-level keys whose schema errors they replace) of a tree's form.

    A gan tree is validated without the ONE_NETWORK_ONLY keys, which its schema does not have.
    """
    if not isinstance(tree, Mapping):
        return [], set()
    if "gan" in tree:
        problems: list[Violation] = [
            ((key,), f"not with gan: {why}") for key, why in REPLACED_BY_GAN.items() if key in tree
        ]
        problems += _not_with_two_networks(tree)
        return problems, {str(path[0]) for path, _ in problems}
    return _two_networks_in_one(tree)


GAN_CLIP = ": each network clips its own, gan.generator.grad_clip and gan.discriminator.grad_clip"


def _not_with_two_networks(tree: Mapping[str, Any]) -> list[Violation]:
    """One-network sections a gan config cannot use yet, at the key that asks for them."""
    out: list[Violation] = []
    schedule = tree.get("lr_schedule")
    if "lr_schedule" in tree and not (isinstance(schedule, Mapping) and schedule.get("kind") == "constant"):
        out.append(
            (("lr_schedule",), f"a learning-rate schedule is {NOT_YET} (each optimizer's lr is constant)")
        )
    if "eval" in tree:
        out.append((("eval",), f"evaluation metrics are {NOT_YET} (the sample grid shows the progress)"))
    if "ema" in tree:
        out.append((("ema",), f"an EMA of the generator's weights is {NOT_YET}"))
    grad = tree.get("grad")
    if "grad" in tree and not isinstance(grad, Mapping):
        out.append((("grad",), f"gradient clipping, accumulation and processing are {NOT_YET}"))
    elif isinstance(grad, Mapping):
        what = {
            "clip": "gradient clipping",
            "process": "grad.process",
            "accumulation_steps": "gradient accumulation",
        }
        for key, value in grad.items():
            if key in what and value is not None and not (key == "accumulation_steps" and value == 1):
                out.append((("grad", key), f"{what[key]} is {NOT_YET}{GAN_CLIP if key == 'clip' else ''}"))
    return out


def _two_networks_in_one(tree: Mapping[str, Any]) -> tuple[list[Violation], set[str]]:
    """A one-network config that holds two networks (or optimizers), or a network only a gan has."""
    network, optimizer = tree.get("network"), tree.get("optimizer")
    problems: list[Violation] = []
    named = _several(network, "kind")
    if named is not None:
        roles = f" ({', '.join(named)})" if named else ""
        problems.append(
            (
                ("network",),
                f"several networks{roles} trained against each other go in a gan: section, each with its "
                f"own optimizer: {GAN_FORM}",
            )
        )
    elif isinstance(network, Mapping) and network.get("name") in GAN_NETWORK_NAMES:
        problems.append(
            (("network", "name"), f"{network['name']} is one of a GAN's two networks: {GAN_FORM}")
        )
    if _several(optimizer, "name") is not None and (problems or isinstance(optimizer, list)):
        problems.append(
            (
                ("optimizer",),
                "one optimizer per network: with two networks each goes under gan.<role>.optimizer",
            )
        )
    return problems, {str(key[0]) for key, _ in problems}


def _several(value: object, tag: str) -> list[str] | None:
    """The role names when `value` holds several entries instead of one (a list, or a mapping of
    mappings without `tag`); None when it is one entry (or not a collection at all)."""
    if isinstance(value, list) and len(value) > 1:
        return []
    if (
        isinstance(value, Mapping)
        and tag not in value
        and len(value) > 1
        and all(isinstance(v, Mapping) for v in value.values())
    ):
        return [str(k) for k in value]
    return None
