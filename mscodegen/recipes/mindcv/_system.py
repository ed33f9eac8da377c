"""Rules for the system arguments: `mode`, `seed` -> runtime; `distribute` with `--devices N` -> parallel."""

from __future__ import annotations

from mscodegen.recipes.mindcv._converter import Converter


def runtime(c: Converter) -> None:
    mode = c.int_("mode")
    if mode in (0, 1):
        default = "" if c.given("mode") else " (mindcv default)"
        c.put("runtime.mode", "graph" if mode == 0 else "pynative", f"mode {mode}{default}")
        c.mapped("mode")
    else:
        c.unconverted("mode", "mindcv knows 0 (GRAPH_MODE) and 1 (PYNATIVE_MODE)")
    c.put("runtime.device_target", "CPU", "mindcv uses the device MindSpore finds: set GPU or Ascend here")
    c.put("runtime.seed", c.int_("seed"), c.source("seed", "runtime.seed"))
    c.mapped("seed")


def parallel(c: Converter) -> None:
    distribute = c.bool_("distribute")
    c.mapped("distribute")
    if distribute and c.devices > 1:
        c.put(
            "parallel",
            {"mode": "data_parallel", "workers": c.devices},
            f"distribute: true, on --devices {c.devices} (mindcv also averages the gradients)",
        )
    elif distribute:
        c.result.notes.append(
            "distribute is true but --devices is 1: converted for one device "
            "(pass --devices N for the number of devices the recipe was run on)"
        )
        c.put("parallel", {"mode": "stand_alone"}, "distribute: true, converted for --devices 1")
    elif c.devices > 1:
        c.result.notes.append(
            f"--devices {c.devices} ignored: distribute is false, mindcv trains on one device"
        )
