"""`mscodegen plot`: curves from the JSON lines `mscodegen record` (or `parity --keep`) writes.

`series()` is pure (logs -> numbers to draw) so it can be tested without a picture; `draw()`
imports matplotlib (Agg) lazily, so the CLI starts fast and matplotlib stays an optional extra.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# One quantity of one log: (x values, y values).
Series = dict[str, tuple[list[float], list[float]]]

# per-step quantities in a loss.jsonl record, in the order their subplots are drawn; any other number
# a record holds (a GAN's d_loss, g_loss, d_lr, ...) is drawn too
STEP_KEYS = ("loss", "lr", "loss_scale")
# what `-o` may name: formats matplotlib writes without extra packages
IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
NOT_DRAWN = ("step", "epoch")


class PlotError(Exception):
    """A log that cannot be read, or matplotlib missing."""


def output_path(path: Path) -> Path:
    """The file `-o` names, with `.png` added when it has no suffix; PlotError for another image type."""
    if not path.suffix:
        return path.with_name(path.name + ".png")
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise PlotError(
            f"{path}: cannot write a {path.suffix!r} image; name a {', '.join(IMAGE_SUFFIXES)} file"
        )
    return path


def read_log(path: Path) -> list[dict[str, Any]]:
    """Records of one JSON-lines log; PlotError names file:line of a bad line, or why it cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PlotError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = raw.count(b"\n", 0, exc.start) + 1
        raise PlotError(
            f"{path}:{where}: byte 0x{raw[exc.start]:02x} is not UTF-8: not a loss.jsonl/eval.jsonl record"
        ) from None
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PlotError(
                f"{path}:{number}:{exc.colno}: not a JSON line ({exc.msg}): not a loss.jsonl/eval.jsonl record"
            ) from None
        if not isinstance(record, dict):
            raise PlotError(f"{path}:{number}:1: expected a JSON object")
        records.append(record)
    return records


def _numbers(value: object, prefix: str) -> dict[str, float]:
    """Flatten a metric result (number, list of one number, or dict of them) to {name: value}."""
    if isinstance(value, dict):
        out: dict[str, float] = {}
        for key, sub in value.items():
            out.update(_numbers(sub, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return {}
    return {prefix: float(value)}


def series(records: list[dict[str, Any]]) -> Series:
    """{quantity: (x, y)} of one log: each number of a step (loss, lr, ...) against the step,
    `eval <metric>` against the epoch."""
    out: Series = {}
    for record in records:
        if "metrics" in record:
            for name, value in _numbers(record["metrics"], "").items():
                xs, ys = out.setdefault(f"eval {name}", ([], []))
                xs.append(float(record.get("epoch", len(xs) + 1)))
                ys.append(value)
            continue
        for key in record:
            reading = record[key]
            if key not in NOT_DRAWN and isinstance(reading, int | float) and not isinstance(reading, bool):
                xs, ys = out.setdefault(key, ([], []))
                xs.append(float(record.get("step", len(xs) + 1)))
                ys.append(float(reading))
    return out


def draw(curves: dict[str, Series], png: Path) -> None:
    """One subplot per quantity, one labelled line per log ({label: series(...)})."""
    try:
        import matplotlib
    except ImportError:
        raise PlotError(
            "matplotlib is not installed; install the plot extra: pip install -e '.[plot]' in the mscodegen checkout"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = {q for s in curves.values() for q in s}
    quantities = [q for q in (*STEP_KEYS, "loss diff") if q in found]
    # a GAN's: d_loss, g_loss, their diffs, then d_lr, g_lr, ...; the evaluations last
    rest = found - set(quantities)
    quantities += sorted(
        rest, key=lambda q: (q.startswith("eval "), q.startswith("eval ") or "loss" not in q, q)
    )
    if not quantities:
        raise PlotError("the logs hold nothing to plot (no loss, lr, loss_scale or metrics)")
    fig, axes = plt.subplots(len(quantities), 1, figsize=(8, 2.6 * len(quantities)), squeeze=False)
    for ax, quantity in zip(axes[:, 0], quantities, strict=True):
        for label, data in curves.items():
            if quantity in data:
                xs, ys = data[quantity]
                ax.plot(xs, ys, marker="o" if len(xs) < 20 else None, label=label)
        ax.set_ylabel(quantity)
        ax.set_xlabel("epoch" if quantity.startswith("eval ") else "step")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=100)
    plt.close(fig)


def plot_logs(paths: list[Path], png: Path) -> None:
    """`mscodegen plot`: every log a curve labelled by its file name."""
    draw({path.as_posix(): series(read_log(path)) for path in paths}, png)


def parity_curves(model: list[dict[str, Any]], native: list[dict[str, Any]]) -> dict[str, Series]:
    """Both variants' series plus their per-step loss difference (parity --plot)."""
    a, b = series(model), series(native)
    diff: Series = {}
    for key in sorted(set(a) & set(b)):
        if key == "loss" or key.endswith("_loss"):  # a GAN's d_loss and g_loss
            xs = [x for x, _ in zip(a[key][0], b[key][0], strict=False)]
            ys = [ya - yb for ya, yb in zip(a[key][1], b[key][1], strict=False)]
            diff[f"{key} diff"] = (xs, ys)
    return {"model": a, "native": b, "model - native": diff}
