"""The Markdown: docs/compat.md (`--page`), and the table printed after every run."""

from __future__ import annotations

from typing import Any

from mscodegen import __version__
from mscodegen.tools.compat._compare import Cell
from mscodegen.tools.compat._envs import REFERENCE, version_key
from mscodegen.tools.compat._runs import EXAMPLES

Results = dict[str, Any]  # results.json


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {round(seconds % 60):02d} s"


def _row(*cells: str) -> str:
    return "| " + " | ".join(cells) + " |"


def table(results: Results, cells: list[Cell]) -> str:
    """Version x example -> the cell text."""
    by_key = {(c.version, c.example): c.text for c in cells}
    examples = results["examples"]
    lines = [_row("MindSpore", *examples), "|---" * (len(examples) + 1) + "|"]
    for version in sorted(results["versions"], key=version_key):
        lines.append(_row(version, *(by_key.get((version, e), _not_run(results, version)) for e in examples)))
    return "\n".join(lines)


def _not_run(results: Results, version: str) -> str:
    env = results["envs"].get(version)
    if env and env["how"] == "failed":
        return "no environment: `" + str(env["error"]).replace("`", "'").replace("|", "\\|")[:160] + "`"
    return "not run"


def timings(results: Results, cells: list[Cell]) -> str:
    """Seconds per environment and per parity run, for each version."""
    examples = results["examples"]
    seconds = {(c.version, c.example): c.seconds for c in cells}
    lines = [_row("MindSpore", "environment", *examples, "total"), "|---" * (len(examples) + 3) + "|"]
    for version in sorted(results["versions"], key=version_key):
        env = results["envs"].get(version, {})
        row = [seconds.get((version, e)) for e in examples]
        total = env.get("seconds", 0) + sum(s for s in row if s)
        cols = [f"{s:.0f} s" if s is not None else "-" for s in row]
        how = f"{env.get('how', '-')} ({env.get('seconds', 0):.0f} s)"
        lines.append(_row(version, how, *cols, _minutes(total)))
    return "\n".join(lines)


def load_line(results: Results) -> str:
    load = results["load"]
    return f"{min(load):.1f}-{max(load):.1f} (1-minute load average, {sum(load) / len(load):.1f} on average)"


def api_lines(apis: dict[str, dict[str, str]]) -> list[str]:
    """One bullet per version whose MindSpore lacks a name or keyword the generated scripts use."""
    return [
        f"- {version}: " + "; ".join(f"`{name}` {problem}" for name, problem in problems.items())
        for version, problems in sorted(apis.items(), key=lambda item: version_key(item[0]))
        if problems
    ]


def summary(results: Results, cells: list[Cell], apis: dict[str, dict[str, str]]) -> str:
    """What the command prints at the end."""
    found = api_lines(apis)
    check = (
        "API check:\n" + "\n".join(found) if found else "API check: every name and keyword in every version"
    )
    return (
        f"\n{table(results, cells)}\n\n{timings(results, cells)}\n\n{check}\n\n"
        f"wall time {_minutes(_wall(results))} on {results['machine']['cores']} cores, load {load_line(results)}"
    )


def _apart(cells: list[Cell]) -> list[Cell]:
    """The cells whose numbers are not the reference's (though model == native)."""
    return [
        c
        for c in cells
        if (c.logs is not None and not c.logs.identical) or (c.weights is not None and not c.weights.equal)
    ]


def differences(cells: list[Cell]) -> list[str]:
    """One bullet per example and set of versions whose numbers are apart from the reference's alike."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for c in _apart(cells):
        assert c.logs is not None
        if c.logs.identical:
            losses = f"every logged step == {REFERENCE}'s"
        else:
            losses = (
                f"{c.logs.differing} of {c.logs.steps} logged steps differ, the first at {c.logs.first}, "
                f"by at most {c.logs.max_ulps} ulp (|difference| up to {c.logs.max_abs:.2g})"
            )
        losses += "".join(f"; {p}" for p in c.logs.problems[:3])
        grouped.setdefault((c.example, f"{losses}; {_weights_note(c)}"), []).append(c.version)
    return [f"- {example} on {', '.join(versions)}: {text}" for (example, text), versions in grouped.items()]


def _weights_note(c: Cell) -> str:
    w = c.weights
    if w is None:
        return "final weights not compared (the parity run kept none)"
    if w.problems:
        return f"final weights: {w.problems[0]}"
    if w.equal:
        return f"final weights == {REFERENCE}'s"
    return (
        f"final weights: {w.differ:,} of {w.values:,} values differ, by at most {w.max_ulps} ulp at their tensor's scale "
        f"(|difference| up to {w.max_abs:.2g})"
    )


def _logs_only(cells: list[Cell]) -> str:
    """Which examples were compared with the reference by their logs alone (parity kept no weights)."""
    names = sorted({c.example for c in cells if c.logs is not None and c.weights is None})
    return f" ({', '.join(names)}: the logs only, no final weights were kept)" if names else ""


def why(cells: list[Cell]) -> str:
    """What the measurements say about the differences (only what they show)."""
    apart = _apart(cells)
    versions = sorted({c.version for c in cells if c.version != REFERENCE}, key=version_key)
    differing = sorted({c.version for c in apart}, key=version_key)
    same = [v for v in versions if v not in differing and not any(c.failed for c in cells if c.version == v)]
    firsts = [c.logs.first_step for c in apart if c.logs is not None and c.logs.first_step]
    text = ["Why:"]
    if firsts and min(firsts) > 1:
        text.append(
            f"the data and the initial weights are the same on every version (step 1's loss is `==` to "
            f"{REFERENCE}'s everywhere, the first difference is at step {min(firsts)} or later)."
        )
    text.append(
        "Each version is deterministic: its two variants are `==`, and a run stopped and resumed equals the "
        "whole run (the resume column)."
    )
    compared = [c.weights for c in apart if c.weights is not None and not c.weights.problems]
    if compared and all(not w.equal for w in compared):
        changed = (
            f" between {differing[-1]} and {same[0]}"
            if same and version_key(differing[-1]) < version_key(same[0])
            else ""
        )
        text.append(
            f"The final weights of {', '.join(differing)} differ from {REFERENCE}'s wherever they are compared "
            f"(by up to {max(w.max_ulps for w in compared)} ulp at their tensor's scale), also in examples whose "
            "logged losses all agree: the updates round differently in their last bits (the computation changed"
            f"{changed}, not the data), the weights drift apart, and the loss, a mean over the batch, shows it "
            "now and then by a few ulp."
        )
    if same:
        text.append(
            f"{', '.join(same)} {'gives' if len(same) == 1 else 'give'} {REFERENCE}'s numbers exactly."
        )
    text.append(
        "Which steps differ depends on the CPU kernels oneDNN picks (`ONEDNN_MAX_CPU_ISA`). For scale: one "
        "float32 ulp of a loss near 2.3 is 2.4e-07."
    )
    return " ".join(text)


def page(results: Results, cells: list[Cell], names: int, apis: dict[str, dict[str, str]]) -> str:
    diffs = differences(cells)
    failed = [c for c in cells if c.failed]
    machine = results["machine"]
    parts = [
        "# MindSpore versions",
        "",
        "<!-- Written by `make compat` (python -m mscodegen.tools.compat --page docs/compat.md). "
        "Do not edit: run it again. -->",
        "",
        f"The generated scripts run on every MindSpore release that PyPI offers for Python {machine['python'][:4]}: "
        f"`pip install -e '.[run]'` accepts `mindspore>=2.7,<2.11`. The test suite and the golden files use "
        f"{REFERENCE}. This table is `make compat`: one environment per version, and in each "
        "`mscodegen parity --python <env>/bin/python` on five examples (the generator runs in the project's "
        "environment, the scripts in the version's). Then every per-step log and final weights file is compared "
        f"with {REFERENCE}'s.",
        "",
        f"Last run: {results['started'][:10]}, mscodegen {__version__} at {results['source'] or 'an unknown commit'}, "
        f"Python {machine['python']} on {machine['cores']} CPU cores (CPU only), ONEDNN_MAX_CPU_ISA="
        f"{machine['onednn_max_cpu_isa'] or 'unset'} as in the test suite. "
        f"**Wall time {_minutes(_wall(results))}** ({_minutes(results['wall_s'])} of parity runs and "
        f"environments, {results.get('report_s', 0):.0f} s of comparisons and the API check), one run at a time, "
        f"at load {load_line(results)}.",
        "",
        table(results, cells),
        "",
        "- **identical**: parity passed on that version (model and native variants `==` at every step, in every "
        f"evaluation and in the final weights), and every per-step log and final weights file is `==` to "
        f"{REFERENCE}'s{_logs_only(cells)}.",
        f"- **identical variants; vs {REFERENCE}: ...**: parity passed, but the numbers are not {REFERENCE}'s: "
        "`losses ≤ N ulp (k/n steps)` means k of the n logged steps differ, by at most N float32 units in the "
        "last place; `weights ≤ M ulp`: the final weights differ by at most M ulps of the largest value in "
        "their parameter tensor.",
        "- **fails**: parity failed; the cell holds the first line of the failure.",
        "",
    ]
    if failed:
        parts += [
            f"{len(failed)} of {len(cells)} runs failed. Their logs are kept under the runs directory.",
            "",
        ]
    if diffs:
        parts += ["## Differences from " + REFERENCE, "", *diffs, "", why(cells), ""]
    parts += [
        "## Every name the scripts use",
        "",
        f"Beyond the runs: the {names} MindSpore names (modules, functions, classes, constants) that the scripts "
        "in `generated/` use, read with `ast`, and the keywords they pass to each, looked up in every version "
        "(`mscodegen/tools/compat/_apis.py`; methods called on objects are not seen, the runs cover those).",
        "",
        *(
            api_lines(apis)
            or [f"Every name and keyword is there in {', '.join(sorted(apis, key=version_key))}."]
        ),
        "",
        "## The examples",
        "",
    ]
    for e in EXAMPLES:
        if e.name in results["examples"]:
            options = " ".join(e.options)
            parts.append(
                f"- **{e.name}**: `mscodegen parity {e.config}{' ' + options if options else ''}`: {e.what}."
            )
    parts += [
        "",
        "## Timings",
        "",
        "Seconds per parity run (both variants, and for resume the whole, stopped and resumed runs of each), "
        "and for each environment whether it was built (uv or pip) or reused.",
        "",
        timings(results, cells),
        "",
        RUNNING.format(wall=_minutes(_wall(results)), cores=machine["cores"]),
    ]
    return "\n".join(parts)


def _wall(results: Results) -> float:
    return float(results["wall_s"]) + float(results.get("report_s", 0))


RUNNING = """\
## Running it

`make compat` runs the whole matrix and rewrites this page. It runs before each release, not in CI: it took
{wall} here on {cores} cores, well over the 15 minutes CI can give it, and each environment is about 2.7 GB.

```bash
make compat                                       # every version, every example; rewrites docs/compat.md
make compat VERSIONS="2.7.0 2.8.0" EXAMPLES=resume  # a subset, printed only (2.10.0 always runs)
python -m mscodegen.tools.compat --help           # the driver: --envs DIR, --installer, --rebuild, --timeout
```

The environments live in `~/.cache/mscodegen-compat/envs/ms-<version>` (or `$MSCODEGEN_COMPAT_DIR`), outside
git, and are reused while they hold their MindSpore version. They are built with `uv` when it is installed
(the dev extra installs it) or with pip. Measured when the matrix was set up: uv builds one in 2-5 s with a
warm uv cache and 12-25 s cold; pip takes 50-120 s each, every time (the registry's responses carry no caching
headers, so pip's cache keeps nothing). Every
parity run's scripts, logs and weights stay in `runs/<version>/<example>/` beside them.

To check one version by hand: `mscodegen parity CONFIG --python /path/to/env/bin/python`. A new MindSpore
release goes into `VERSIONS` in `mscodegen/tools/compat/_envs.py` and into the `[run]` range in
`pyproject.toml`, then `make compat`."""
