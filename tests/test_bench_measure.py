"""bench's measuring arithmetic (steady rate, call/host split, paired ratios) and the paired
mode's turn-taking, on timestamps written by hand; no MindSpore and no timing assertions."""

from __future__ import annotations

import threading

import pytest

from bench.__main__ import paired_ratios, split_rows, steady
from bench.worker import Baton, Recorder


def test_steady_drops_warm_up_and_splits_each_step_into_call_and_host():
    # 8 steps (fewer than 20: the first 3 are warm-up). Step j begins at 1.0*j, its cell returns
    # 0.75 later; step ends (after the callbacks) 0.8 after the begin: gaps 1.0, call 0.75, host 0.25.
    begins = [1.0 * j for j in range(8)]
    call_ends = [b + 0.75 for b in begins]
    ends = [b + 0.8 for b in begins]
    out = steady(ends, begins, call_ends)
    assert out["timed_steps"] == 4  # gaps between ends[3..7]
    assert out["steps_per_s"] == pytest.approx(1.0)
    assert out["median_call_ms"] == pytest.approx(750.0)
    assert out["median_host_ms"] == pytest.approx(250.0)


def test_steady_without_begins_gives_no_split():
    out = steady([0.5 * j for j in range(10)])
    assert out["steps_per_s"] == pytest.approx(2.0)
    assert "median_call_ms" not in out


def test_split_rows_takes_the_host_difference_per_round():
    def run(call: float, host: float) -> dict:
        return {"median_call_ms": call, "median_host_ms": host}

    rounds = [
        {"floor": run(90, 0.0), "model": run(90, 0.5), "native": run(91, 0.7)},
        {"floor": run(80, 0.0), "model": run(81, 0.6), "native": run(80, 0.7)},
        {"floor": run(85, 0.0), "model": {"error": "exit 1"}, "native": run(85, 0.9)},
    ]
    out = split_rows(rounds, ("floor", "model", "native"))
    assert out["model"]["call"]["values"] == [90, 81]
    assert out["host native-model"]["values"] == pytest.approx([0.2, 0.1])  # round 3 has no model
    assert out["host native-model"]["median"] == pytest.approx(0.15)


def test_paired_ratios_compare_blocks_of_the_same_cycle_and_skip_the_first():
    # block of 3 steps: a block's rate is 2 gaps / (its last end - its first end)
    def ends(step_times: list[float]) -> dict:
        t, out = 0.0, []
        for dt in step_times:
            t += dt
            out.append(t)
        return {"ends": out}

    block = 3
    floor = ends([9.0] * 3 + [1.0] * 3 + [1.0] * 3)  # cycle 0 (compile) is left out
    model = ends([9.0] * 3 + [1.0] * 3 + [2.0] * 3)
    native = ends([9.0] * 3 + [0.5] * 3 + [2.0] * 3)
    out = paired_ratios({"floor": floor, "model": model, "native": native}, block)
    # cycle 1: rates f 1, m 1, n 2 -> native/model 2, model/floor 1; cycle 2: f 1, m .5, n .5 -> 1, .5
    assert out["native/model"] == pytest.approx(1.5)
    assert out["model/floor"] == pytest.approx(0.75)
    assert out["floor steps/s"] == pytest.approx(1.0)


def test_baton_lets_one_kind_step_at_a_time_in_turns_of_a_block():
    baton = Baton(["floor", "model", "native"], block=2)
    log: list[str] = []
    running: list[str] = []
    overlaps: list[tuple[str, ...]] = []

    def kind_loop(kind: str, steps: int) -> None:
        rec = Recorder(kind, baton)
        try:
            for _ in range(steps):
                rec.begin()
                running.append(kind)
                if len(running) > 1:
                    overlaps.append(tuple(running))
                log.append(kind)
                running.remove(kind)
                rec.end()
        finally:
            baton.finished(kind)

    # native has fewer steps: once it is done the others keep taking turns without it
    threads = [
        threading.Thread(target=kind_loop, args=(kind, n))
        for kind, n in (("native", 2), ("model", 4), ("floor", 4))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert overlaps == []
    assert log == ["floor"] * 2 + ["model"] * 2 + ["native"] * 2 + ["floor"] * 2 + ["model"] * 2


def test_a_cost_point_the_rows_measured_is_taken_from_them():
    from bench.__main__ import _from_row

    def run(sps: float, rss: float) -> dict:
        return {"steps_per_s": sps, "peak_rss_mb": rss}

    rows = [
        {
            "config": "bench_lenet_fp32",
            "input": "memory",
            "steps_per_s": {"floor": {"median": 15.0}, "model": {"median": 14.0}, "native": {"median": 14.5}},
            "rounds": [
                {"floor": run(15, 400), "model": run(14, 470)},
                {"floor": run(15, 420), "model": run(14, 480)},
            ],
        }
    ]
    # bench_lenet_fp32 trains with batch 32: that point is the row; batch 16 is not
    assert _from_row(rows, "bench_lenet_fp32", 32) == {
        "floor": {"steps_per_s": 15.0, "peak_rss_mb": 410.0},
        "model": {"steps_per_s": 14.0, "peak_rss_mb": 475.0},
    }
    assert _from_row(rows, "bench_lenet_fp32", 16) is None
    assert _from_row([], "bench_lenet_fp32", 32) is None
