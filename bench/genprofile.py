"""Where `mscodegen new` spends its time: `python -m bench.genprofile CONFIG` prints one JSON line of
phase wall times (s), measured in this fresh process.

Phases, in the order `mscodegen new` runs them: import (mscodegen's config, plan and render modules:
pydantic schema classes, jinja2, yaml), load (read + validate the YAML), plan, render (Jinja compile
+ render of both variants), import_black, black (format both scripts, as mscodegen.output.generate does).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    marks = [("start", time.perf_counter())]
    from mscodegen import plan, render
    from mscodegen.config import load as config
    from mscodegen.render import fmt

    marks.append(("import", time.perf_counter()))
    loaded = config.load_config(Path(sys.argv[1]))
    marks.append(("load", time.perf_counter()))
    shared = plan.build_shared(
        loaded.config,
        source=loaded.path.as_posix(),
        config_dir=loaded.path.parent,
        out_dir=Path("generated") / loaded.name,
        name=loaded.name,
        config_sha256=loaded.sha256,
    )
    plans = [plan.variant_plan(loaded.config, shared, variant) for variant in plan.VARIANTS]
    marks.append(("plan", time.perf_counter()))
    sources = {plan.SCRIPT_NAMES[p.variant]: render.render(p) for p in plans}
    marks.append(("render", time.perf_counter()))
    import black  # noqa: F401

    marks.append(("import_black", time.perf_counter()))
    fmt.format_all(sources)
    marks.append(("black", time.perf_counter()))
    phases = {name: t - marks[i][1] for i, (name, t) in enumerate(marks[1:])}
    phases["total"] = marks[-1][1] - marks[0][1]
    print(json.dumps(phases))


if __name__ == "__main__":
    main()
