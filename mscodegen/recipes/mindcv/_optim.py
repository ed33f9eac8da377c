"""Rules for the optimizer and the learning-rate schedule: `opt` and its arguments (`lr`, `momentum`,
`use_nesterov`, `weight_decay`, `weight_decay_filter`, ...) -> optimizer; `scheduler` and its
arguments -> lr_schedule (mindcv's warm-up, cosine (with decay_epochs and restarts), step, multi-step,
exponential, polynomial and one-cycle schedules, per step or with lr_epoch_stair per epoch, are the formulas
mscodegen writes; tests/unit/recipes/test_mindcv_schedules_equal.py compares them with mindcv's
create_scheduler).
"""

from __future__ import annotations

from typing import Any

from mscodegen.catalog.mindcv_names import no_weight_decay
from mscodegen.recipes.mindcv._converter import Converter, RecipeError


def optimizer(c: Converter) -> None:
    opt = c.str_("opt").lower()
    momentum, nesterov = c.float_("momentum"), c.bool_("use_nesterov")
    mindcv_only, unused = "mindcv does not pass it to this optimizer", f"not used by opt {opt}"
    c.put("optimizer.name", None)  # keeps its place; each branch names the optimizer
    c.put("optimizer.lr", c.float_("lr"), c.default_mark("lr"))
    c.mapped("lr")
    if opt in ("momentum", "nesterov", "sgd"):
        # create_optimizer: nn.Momentum for momentum and nesterov (use_nesterov decides), nn.SGD for sgd
        name = "sgd" if opt == "sgd" else "momentum"
        c.put("optimizer.name", name, "opt" if opt == name else f"opt {opt}: nn.Momentum")
        c.put("optimizer.momentum", momentum, c.source("momentum", "momentum"))
        c.put("optimizer.nesterov", nesterov, c.src("use_nesterov"))
        c.mapped("opt", "momentum", "use_nesterov")
        c.ignored("eps", mindcv_only)
    elif opt in ("adam", "adamw"):
        # create_optimizer: nn.Adam, or mindcv's own AdamW (bias-corrected moments, which nn.AdamWeightDecay
        # lacks): mscodegen's adamw with bias_correction is that class
        c.put("optimizer.name", opt, None if c.given("opt") else "opt (mindcv default)")
        c.put("optimizer.beta1", 0.9)
        c.put("optimizer.beta2", 0.999)
        c.put("optimizer.eps", 1.0e-8, "mindcv's eps argument is not passed to Adam/AdamW: 1e-8")
        if opt == "adamw":
            c.put("optimizer.bias_correction", True, "mindcv's AdamW (mindcv.optim.adamw.AdamW)")
        c.mapped("opt")
        c.ignored("momentum", unused)
        c.ignored("eps", mindcv_only)
        if nesterov and opt == "adam":
            c.unconverted("use_nesterov", "mscodegen's adam has no nesterov option")
        else:
            c.ignored("use_nesterov", unused)
    elif opt == "rmsprop":
        # create_optimizer: nn.RMSProp(params, learning_rate=lr, momentum=momentum, epsilon=eps, weight_decay,
        # loss_scale); decay and centered keep nn.RMSProp's defaults, which mscodegen's rmsprop writes out
        c.put("optimizer.name", "rmsprop", "opt")
        c.put("optimizer.decay", 0.9, "nn.RMSProp's default (create_optimizer passes no decay)")
        c.put("optimizer.momentum", momentum, c.default_mark("momentum"))
        c.put("optimizer.epsilon", c.float_("eps"), c.src("eps"))
        c.put("optimizer.centered", False, "nn.RMSProp's default")
        c.mapped("opt", "momentum", "eps")
        c.ignored("use_nesterov", unused)
    elif opt == "lion":
        # create_optimizer: mindcv.optim.Lion with its default betas (the same class mscodegen's lion uses)
        c.put("optimizer.name", "lion", "opt")
        c.put("optimizer.beta1", 0.9, "mindcv's Lion default (create_optimizer passes no betas)")
        c.put("optimizer.beta2", 0.99, "mindcv's Lion default (create_optimizer passes no betas)")
        c.mapped("opt")
        c.ignored(("momentum", "use_nesterov", "eps"), unused)
    else:
        c.put("optimizer.name", "momentum", f"placeholder: mindcv opt {opt!r} has no mscodegen equivalent")
        c.unconverted("opt", "mscodegen has momentum, sgd, adam, adamw, rmsprop and lion for mindcv recipes")
        c.mapped("momentum", "use_nesterov", "eps")
    c.put("optimizer.weight_decay", c.float_("weight_decay"), c.default_mark("weight_decay"))
    c.mapped("weight_decay")
    _decay_filter(c)
    if c.opt_float("layer_decay") is not None:
        # Measured with mindcv 0.3.0: param_groups_layer_decay puts every parameter in layer 0 (no model
        # defines group_matcher or pretrained_cfg), so every LR scale is 1 -- unlike optimizer.layer_decay.
        c.unconverted(
            "layer_decay",
            "mindcv 0.3.0 scales no LR with it (its layer map puts every parameter in layer 0); unless "
            "weight_decay_filter is auto it only zeroes the weight decay of 1-D parameters. mscodegen's "
            "optimizer.layer_decay would scale the LRs",
        )
    else:
        c.mapped("layer_decay")


def _decay_filter(c: Converter) -> None:
    decays = c.float_("weight_decay") > 0
    if c.given("filter_bias_and_bn"):  # mindcv 0.2: true filters norm and bias parameters
        legacy = c.bool_("filter_bias_and_bn")
        c.done.add("filter_bias_and_bn")
        if legacy and decays:
            _norm_and_bias(c, "filter_bias_and_bn (mindcv 0.2)")
        else:
            c.put("optimizer.decay_filter", "mindspore_default", "filter_bias_and_bn (mindcv 0.2)")
        c.ignored("weight_decay_filter", "filter_bias_and_bn (mindcv 0.2) is set")
        return
    wd_filter = c.str_("weight_decay_filter")
    if wd_filter == "norm_and_bias" and decays:
        _norm_and_bias(c, "weight_decay_filter norm_and_bias")
    elif wd_filter in ("auto", "norm_and_bias") or not decays:
        # auto: weight_decay goes to the optimizer, whose default filter skips norm gamma/beta
        c.put("optimizer.decay_filter", "mindspore_default", c.source("weight_decay_filter", "decay_filter"))
    elif wd_filter == "disable":
        # mindcv's init_group_params: one parameter group {"params": all, "weight_decay": wd}, so every
        # parameter is decayed; decay_filter every_parameter writes the same group
        c.put("optimizer.decay_filter", "every_parameter", c.source("weight_decay_filter", "decay_filter"))
    else:
        c.put("optimizer.decay_filter", "mindspore_default")
        c.unconverted("weight_decay_filter", "mindcv knows disable, auto and norm_and_bias")
        return
    c.mapped("weight_decay_filter")


def _norm_and_bias(c: Converter, source: str) -> None:
    """mindcv's init_group_params: no weight decay for the parameters whose names contain beta, gamma or
    bias anywhere (also swin's relative_position_bias_table, cait's gamma_1, ...), nor for the model's
    no_weight_decay() (a ViT's pos_embed and cls_token); every other parameter decays. Written exactly as
    one group of those patterns without decay, over decay_filter every_parameter."""
    exempt = ["*beta*", "*gamma*", "*bias*", *no_weight_decay(c.str_("model"))]
    c.put("optimizer.decay_filter", "every_parameter", f"{source}: every parameter but the group below")
    c.put("optimizer.groups", [{"params": exempt, "weight_decay": 0.0}])
    c.comments[("optimizer", "groups")] = (
        f"{source}: mindcv decays no name containing beta, gamma or bias"
        + (f", nor the model's no_weight_decay() {', '.join(exempt[3:])}" if exempt[3:] else "")
    )


def lr_schedule(c: Converter) -> None:
    scheduler = c.str_("scheduler").lower()
    epochs = c.int_("epoch_size")
    warmup = c.int_("warmup_epochs")
    stair = c.bool_("lr_epoch_stair")
    unused = f"not used by scheduler {scheduler}"
    _check_epochs(c, epochs, warmup)
    if scheduler in ("cosine_decay", "warmup_cosine_decay"):
        _cosine(c, scheduler, warmup, epochs - warmup, stair)
        return
    c.ignored(("num_cycles", "cycle_decay"), unused)
    if scheduler == "one_cycle":
        _one_cycle(c, warmup, stair)
        return
    c.ignored("min_lr", unused)
    if scheduler in ("multi_step_decay", "step_decay"):
        _piecewise(c, scheduler, warmup, epochs)
    elif scheduler in ("exponential_decay", "polynomial_decay"):
        _decay(c, scheduler)
    elif scheduler == "constant":
        c.put("lr_schedule", {"kind": "constant"}, "scheduler")
        c.mapped("scheduler")
        c.ignored(("decay_epochs", "decay_rate", "multi_step_decay_milestones"), unused)
    else:
        c.put("lr_schedule", {"kind": "constant"}, f"placeholder: scheduler {scheduler!r}")
        c.unconverted(
            "scheduler",
            "mscodegen has constant, step, multi-step, exponential, polynomial, one-cycle and cosine decays",
        )
        c.mapped("decay_epochs", "decay_rate", "multi_step_decay_milestones")
    _warmup(c, warmup, stair)


def _check_epochs(c: Converter, epochs: int, warmup: int) -> None:
    """Numbers of the recipe that contradict each other, or that mindcv cannot train: refused (exit 2),
    naming the keys. mindcv's create_scheduler concatenates warmup_epochs of warm-up and the epochs after
    it, so a warm-up as long as the training never reaches lr's schedule."""
    if epochs < 1:
        raise c.bad("epoch_size", "a positive number of epochs")
    if warmup < 0:
        raise c.bad("warmup_epochs", "0 or more epochs")
    default = "" if c.given("warmup_epochs") else " (mindcv's default)"
    if warmup > epochs:
        raise RecipeError(
            f"warmup_epochs {warmup}{default} > epoch_size {epochs}: the recipe's warm-up is longer than its "
            f"training (mindcv would train {epochs} epochs of warm-up and never reach lr); lower "
            "warmup_epochs or raise epoch_size"
        )
    if warmup == epochs:
        raise RecipeError(
            f"warmup_epochs {warmup}{default} = epoch_size {epochs}: the whole training is warm-up and the "
            f"scheduler never runs; mscodegen's warm-up leads into a schedule: lower warmup_epochs "
            "or raise epoch_size"
        )


def _warmup(c: Converter, warmup: int, stair: bool) -> None:
    """The warm-up before the schedule written (other than cosine): mindcv's linear_refined_lr from
    lr x warmup_factor to lr, which is mscodegen's per-step warm-up; lr_epoch_stair makes it linear_lr,
    which rises once per epoch: the exponential and polynomial decays' epoch_stair (warm-up included).
    The piecewise schedules move at epoch boundaries anyway; their warm-up has no epoch_stair."""
    schedule = c.result.config["lr_schedule"]
    if warmup == 0:
        c.mapped("warmup_epochs")
        c.ignored("warmup_factor", "no warm-up (warmup_epochs 0)")
        if "epoch_stair" in schedule or not stair:
            c.mapped("lr_epoch_stair")
        else:
            c.ignored("lr_epoch_stair", "the schedule changes the LR at epoch boundaries anyway")
        return
    if schedule["kind"] in ("piecewise", "exponential", "polynomial"):
        schedule["warmup_epochs"] = warmup
        schedule["warmup_start_lr"] = c.float_("lr") * c.float_("warmup_factor")
        c.comments[("lr_schedule", "warmup_start_lr")] = "lr x warmup_factor"
        c.mapped("warmup_epochs", "warmup_factor")
    else:  # constant: mscodegen's constant schedule has no warm-up
        c.unconverted("warmup_epochs", f"mscodegen's {schedule['kind']} schedule has no warm-up")
        c.unconverted("warmup_factor", "belongs to the warm-up that was not converted")
    if stair and "epoch_stair" not in schedule:
        c.unconverted("lr_epoch_stair", "mindcv's warm-up then rises once per epoch, mscodegen's every step")
    else:
        c.mapped("lr_epoch_stair")


def _decay(c: Converter, scheduler: str) -> None:
    """exponential_decay: lr x decay_rate ** (epochs after the warm-up), per step (exponential_refined_lr)
    or, with lr_epoch_stair, per epoch (exponential_lr); polynomial_decay: lr x (1 - epochs after the
    warm-up / epochs after the warm-up in all) ** decay_rate (polynomial_refined_lr / polynomial_lr).
    mscodegen's exponential and polynomial (end_lr 0) compute them, epoch_stair as lr_epoch_stair."""
    rate = c.float_("decay_rate")
    c.ignored(("decay_epochs", "multi_step_decay_milestones"), f"not used by scheduler {scheduler}")
    schedule: dict[str, Any]
    if scheduler == "exponential_decay" and 0 < rate < 1:
        schedule = {"kind": "exponential", "gamma": rate}
    elif scheduler == "polynomial_decay" and rate > 0:
        schedule = {"kind": "polynomial", "power": rate, "end_lr": 0.0}
        c.comments[("lr_schedule", "end_lr")] = "mindcv's polynomial decay ends at 0"
    else:
        c.put("lr_schedule", {"kind": "constant"}, f"placeholder: scheduler {scheduler}")
        needs = "0 < decay_rate < 1" if scheduler == "exponential_decay" else "decay_rate > 0"
        c.unconverted("scheduler", f"mscodegen's {scheduler.split('_')[0]} decay needs {needs}")
        c.mapped("decay_rate")
        return
    if c.bool_("lr_epoch_stair"):
        schedule["epoch_stair"] = True
        c.comments[("lr_schedule", "epoch_stair")] = "lr_epoch_stair"
    c.put("lr_schedule", schedule, f"scheduler {scheduler}")
    c.comments[("lr_schedule", "gamma" if "gamma" in schedule else "power")] = "decay_rate"
    c.mapped("scheduler", "decay_rate")


def _one_cycle(c: Converter, warmup: int, stair: bool) -> None:
    """one_cycle: create_scheduler calls one_cycle_lr(max_lr=lr, final_div_factor=(lr / 25) / min_lr) with its
    defaults pct_start 0.3, cos, div_factor 25; it raises ValueError with a warm-up or lr_epoch_stair."""
    if warmup > 0 or stair:
        given = [f"warmup_epochs {warmup}"] * (warmup > 0) + ["lr_epoch_stair true"] * stair
        raise RecipeError(
            f"scheduler one_cycle with {' and '.join(given)}: mindcv's create_scheduler raises ValueError "
            "(one_cycle takes neither; set warmup_epochs: 0, which is not mindcv's default)"
        )
    min_lr = c.float_("min_lr")
    if min_lr <= 0:
        raise RecipeError(
            f"scheduler one_cycle with min_lr {min_lr}: mindcv's create_scheduler divides by it"
        )
    schedule: dict[str, Any] = {"kind": "one_cycle", "pct_start": 0.3, "anneal": "cos", "div_factor": 25.0}
    schedule["final_div_factor"] = c.float_("lr") / 25.0 / min_lr
    c.put("lr_schedule", schedule, "scheduler one_cycle: mindcv's one_cycle_lr with its defaults")
    c.comments[("lr_schedule", "final_div_factor")] = "(lr / div_factor) / min_lr"
    c.mapped("scheduler", "min_lr", "warmup_epochs", "lr_epoch_stair")
    c.ignored(
        ("warmup_factor", "decay_epochs", "decay_rate", "multi_step_decay_milestones"),
        "not used by scheduler one_cycle",
    )


def _cosine(c: Converter, scheduler: str, warmup: int, main_epochs: int, stair: bool) -> None:
    """cosine_decay / warmup_cosine_decay: after the warm-up (if any), num_cycles cosines of decay_epochs
    each (the c-th from lr x cycle_decay**c), then min_lr, cut at the end of the training
    (cosine_decay_refined_lr; cosine_decay_lr with lr_epoch_stair, which also makes the warm-up linear_lr)."""
    schedule: dict[str, Any] = {"kind": "warmup_cosine" if warmup > 0 else "cosine"}
    if warmup > 0:
        schedule["warmup_epochs"] = warmup
        schedule["warmup_start_lr"] = c.float_("lr") * c.float_("warmup_factor")
        c.comments[("lr_schedule", "warmup_start_lr")] = "lr x warmup_factor"
    schedule["min_lr"] = c.float_("min_lr")
    schedule.update(_cosine_length(c, main_epochs))
    if stair:
        schedule["epoch_stair"] = True
        c.comments[("lr_schedule", "epoch_stair")] = "lr_epoch_stair"
    c.mapped("scheduler", "min_lr", "warmup_epochs", "warmup_factor", "lr_epoch_stair")
    c.ignored(("decay_rate", "multi_step_decay_milestones"), f"not used by scheduler {scheduler}")
    default = "" if c.given("scheduler") else " (mindcv default)"
    c.put("lr_schedule", schedule, f"scheduler {scheduler}{default}")


def _cosine_length(c: Converter, main_epochs: int) -> dict[str, Any]:
    """decay_epochs, num_cycles and cycle_decay as the cosine's keys, written only where they are not
    the default (one cosine over the epochs after the warm-up), with their comments."""
    decay, cycles, cycle_decay = c.int_("decay_epochs"), c.int_("num_cycles"), c.float_("cycle_decay")
    if decay < 1:
        raise c.bad("decay_epochs", "a positive number of epochs (the cosine's length)")
    if cycles < 1:
        raise c.bad("num_cycles", "1 or more cosines")
    if cycles > 1 and cycle_decay <= 0:
        raise c.bad("cycle_decay", "a factor > 0")
    c.mapped("decay_epochs", "num_cycles")
    starts = -(-main_epochs // decay)  # the cosines that start within the training: mindcv drops the others
    dropped = f"num_cycles {cycles}: only {starts} start within the training" if cycles > starts else ""
    cycles = min(cycles, starts)
    if cycles == 1:
        c.ignored("cycle_decay", f"one cosine cycle ({dropped or 'num_cycles 1'})")
    else:
        c.mapped("cycle_decay")
    if decay == main_epochs and cycles == 1:
        return {}
    keys: dict[str, Any] = {"decay_epochs": decay}
    left = main_epochs - cycles * decay
    after = f": then min_lr for the last {left} epochs" if left > 0 else ""
    cut = f": runs {-left} epochs past the training, cut there as mindcv's" if left < 0 else ""
    c.comments[("lr_schedule", "decay_epochs")] = f"decay_epochs{after}{cut}" + (
        f"; {dropped}" if dropped and cycles == 1 else ""
    )
    if cycles > 1:
        keys["cycles"] = cycles
        c.comments[("lr_schedule", "cycles")] = dropped or "num_cycles"
    if cycles > 1 and cycle_decay != 1.0:
        keys["cycle_decay"] = cycle_decay
        c.comments[("lr_schedule", "cycle_decay")] = "cycle_decay"
    return keys


def _piecewise(c: Converter, scheduler: str, warmup: int, epochs: int) -> None:
    """multi_step_lr / step_lr: lr * gamma**(milestones passed), 0-based epochs after the warm-up."""
    gamma = c.float_("decay_rate")
    if scheduler == "step_decay":
        step = c.int_("decay_epochs")
        relative = list(range(step, epochs - warmup, step)) if step > 0 else []
        c.mapped("decay_epochs")
        c.ignored("multi_step_decay_milestones", "not used by scheduler step_decay")
        source = "scheduler step_decay: every decay_epochs"
    else:
        raw = c.raw("multi_step_decay_milestones")
        if not isinstance(raw, list):
            raise c.bad("multi_step_decay_milestones", "a list of epochs")
        relative = sorted(c.int_list("multi_step_decay_milestones"))
        c.ignored("decay_epochs", "not used by scheduler multi_step_decay")
        source = "multi_step_decay_milestones"
    milestones = [warmup + m for m in relative if m < epochs - warmup]  # later ones never apply
    if not 0 < gamma < 1 or any(m <= 0 for m in relative) or len(set(relative)) != len(relative):
        c.put("lr_schedule", {"kind": "constant"}, f"placeholder: scheduler {scheduler}")
        c.unconverted("scheduler", "piecewise needs distinct milestones > 0 and 0 < decay_rate < 1")
        c.mapped("decay_rate", "multi_step_decay_milestones")
        return
    c.mapped("scheduler", "decay_rate", "multi_step_decay_milestones")
    if not milestones:
        c.put("lr_schedule", {"kind": "constant"}, f"scheduler {scheduler}: no milestone within epoch_size")
        return
    c.put("lr_schedule", {"kind": "piecewise", "milestones": milestones, "gamma": gamma})
    c.comments[("lr_schedule", "kind")] = f"scheduler {scheduler}"
    c.comments[("lr_schedule", "milestones")] = source
    c.comments[("lr_schedule", "gamma")] = "decay_rate"
