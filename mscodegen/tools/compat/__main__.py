"""`make compat`: build (or reuse) one environment per MindSpore version, run parity there, write the table.

Examples:
  python -m mscodegen.tools.compat --page docs/compat.md
  python -m mscodegen.tools.compat --versions 2.7.0 2.8.0 --examples quickstart resume
  python -m mscodegen.tools.compat --envs /work/compat/envs --report-only --page docs/compat.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mscodegen.tools.compat._envs import (
    REFERENCE,
    VERSIONS,
    Env,
    default_dir,
    ensure_env,
    requirements,
    run_extra,
    version_key,
)
from mscodegen.tools.compat._runs import EXAMPLES, Example, Run, run_example

REPO = Path(__file__).resolve().parents[3]
RESULTS = "results.json"  # in the runs directory, beside the kept parity directories


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m mscodegen.tools.compat",
        description=__doc__.splitlines()[0] if __doc__ else None,
        epilog="\n".join(__doc__.splitlines()[2:]) if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    names = [e.name for e in EXAMPLES]
    p.add_argument(
        "--versions", nargs="+", default=list(VERSIONS), metavar="V", help=f"default: {' '.join(VERSIONS)}"
    )
    p.add_argument(
        "--examples",
        nargs="+",
        default=names,
        choices=names,
        metavar="NAME",
        help=f"default: {' '.join(names)}",
    )
    p.add_argument(
        "--dir", type=Path, help=f"environments and runs (default: {default_dir()}, or $MSCODEGEN_COMPAT_DIR)"
    )
    p.add_argument(
        "--envs",
        type=Path,
        help="the environments ms-<version> (default: DIR/envs): reuse ones built elsewhere",
    )
    p.add_argument(
        "--installer", choices=("auto", "uv", "pip"), default="auto", help="auto: uv if installed, else pip"
    )
    p.add_argument("--rebuild", action="store_true", help="build every selected environment afresh")
    p.add_argument(
        "--timeout", type=float, default=1800, help="seconds per parity run (default: %(default)s)"
    )
    p.add_argument("--page", type=Path, help="write the Markdown page here (make compat: docs/compat.md)")
    p.add_argument(
        "--report-only", action="store_true", help="run nothing: compare and report DIR/runs as last run"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    unknown = [v for v in args.versions if v not in VERSIONS]
    if unknown:
        print(f"warning: not in the supported list {VERSIONS}: {' '.join(unknown)}", file=sys.stderr)
    versions = sorted(set(args.versions) | {REFERENCE}, key=version_key)
    if REFERENCE not in args.versions:
        print(f"{REFERENCE} added: every version is compared with it", flush=True)
    root = args.dir or default_dir()
    envs, runs = args.envs or root / "envs", root / "runs"
    examples = [e for e in EXAMPLES if e.name in args.examples]
    if args.report_only:
        results: dict[str, Any] = json.loads((runs / RESULTS).read_text())
    else:
        results = _run_matrix(versions, examples, envs, runs, args)
    from mscodegen.tools.compat._apis import api_problems, used_apis
    from mscodegen.tools.compat._compare import compare_all
    from mscodegen.tools.compat._page import page, summary

    start = time.monotonic()
    cells = compare_all(results, envs)
    uses = used_apis(sorted((REPO / "generated").rglob("train_*.py")))
    apis = {
        v: api_problems(uses, envs / f"ms-{v}" / "bin" / "python")
        for v in results["versions"]
        if results["envs"].get(v, {}).get("how") != "failed"
    }
    results["report_s"] = round(time.monotonic() - start, 1)
    print(summary(results, cells, apis))
    if args.page:
        args.page.write_text(page(results, cells, len(uses), apis), encoding="utf-8")
        print(f"wrote {args.page}")
    return 1 if any(c.failed for c in cells) or any(apis.values()) else 0


def _run_matrix(
    versions: list[str], examples: list[Example], envs: Path, runs: Path, args: argparse.Namespace
) -> dict[str, Any]:
    """Build or reuse each environment, run each example there; the record (saved as it grows)."""
    os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # as the test suite runs them (tests/conftest.py)
    run = run_extra(REPO / "pyproject.toml")
    results: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA", ""),
        },
        "source": _git_describe(),
        "versions": versions,
        "examples": [e.name for e in examples],
        "envs": {},
        "runs": [],
        "load": [os.getloadavg()[0]],
    }
    runs.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    # the reference first: each later version is compared with it as soon as its runs are done
    for version in sorted(versions, key=lambda v: (v != REFERENCE, version_key(v))):
        env = ensure_env(
            version, envs, requirements(version, run), installer=args.installer, rebuild=args.rebuild,
            log=runs / f"build-{version}.log",
        )  # fmt: skip
        results["envs"][version] = _record(env)
        print(f"{version}: environment {env.how} in {env.seconds} s {env.error}".rstrip(), flush=True)
        for example in examples if env.how != "failed" else []:
            results["load"].append(os.getloadavg()[0])
            done = run_example(example, version, env.python, REPO, runs, args.timeout)
            results["runs"].append(_record(done))
            print(
                f"  {version} {example.name}: exit {done.returncode} in {done.seconds} s {done.failure}",
                flush=True,
            )
            results["wall_s"] = round(time.monotonic() - start, 1)
            (runs / RESULTS).write_text(json.dumps(results, indent=1))
    results["load"].append(os.getloadavg()[0])
    results["wall_s"] = round(time.monotonic() - start, 1)
    (runs / RESULTS).write_text(json.dumps(results, indent=1))
    return results


def _record(item: Env | Run) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(item).items()}


def _git_describe() -> str:
    """`<short commit>` of the checkout, `+` when it has uncommitted changes; '' outside git."""

    def git(*cmd: str) -> str:
        proc = subprocess.run(["git", "-C", str(REPO), *cmd], capture_output=True, text=True, check=False)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    return commit + (
        "+" if commit and git("status", "--porcelain", "--", "mscodegen", "templates", "examples") else ""
    )


if __name__ == "__main__":
    sys.exit(main())
