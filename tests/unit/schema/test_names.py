"""Identifiers as Python reads them (NFKC) and user names that would collide with the scripts' own.

The reserved set (mscodegen/schema/names.py) is checked against the generated scripts themselves, so
it cannot silently fall behind the templates.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.schema.names import RESERVED_NAMES

from conftest import REPO

GENERATED = sorted((REPO / "generated").glob("*/*.py"))

Found = list[tuple[str, int | None, int | None, str]]


def problems(tmp_path: Path, text: str) -> Found:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return [(p.path, p.line, p.column, p.message) for p in info.value.problems]


def where(found: Found) -> list[tuple[str, int | None, int | None]]:
    return [(key, line, column) for key, line, column, _ in found]


NETS = "class Net:\n    pass\n\n\ndef make(**kwargs):\n    pass\n"


# --- NFKC ----------------------------------------------------------------------------------------


def test_ligature_key_duplicates_its_ascii_spelling(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    text = """\
network:
  kind: import
  factory: nets:Net
  kwargs:
    file: 1
    \ufb01le: 2
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
optimizer: {name: momentum}
"""
    found = problems(tmp_path, text)
    assert where(found) == [("network.kwargs.\ufb01le", 6, 10)]
    assert "'\ufb01le' and 'file' are the same keyword argument 'file'" in found[0][3]


def test_full_width_keyword_is_rejected_at_its_key(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    text = """\
network:
  kind: import
  factory: nets:Net
  kwargs: {\uff49\uff46: 1}
data:
  train: {kind: synthetic, image_shape: [1, 8, 8]}
optimizer: {name: momentum}
"""
    found = problems(tmp_path, text)
    assert where(found) == [("network.kwargs.\uff49\uff46", 4, 12)]
    assert "(which Python reads as 'if') is a Python keyword" in found[0][3]


def test_mathematical_bold_pretrained_is_mindcv_s_reserved_kwarg(tmp_path: Path) -> None:
    text = """\
network:
  kind: mindcv
  name: resnet18
  kwargs: {\U0001d429retrained: true}
data:
  train: {kind: synthetic, image_shape: [3, 32, 32]}
optimizer: {name: momentum}
"""
    found = problems(tmp_path, text)
    assert where(found) == [("network.kwargs", 4, 11)]
    assert "'pretrained' is set by mscodegen" in found[0][3]


def test_duplicates_in_data_and_metric_kwargs(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    text = """\
network: {kind: builtin, name: mlp}
data:
  train:
    kind: import
    factory: nets:make
    image_shape: [1, 8, 8]
    kwargs: {size: 1, \uff53\uff49\uff5a\uff45: 2}
optimizer: {name: momentum}
"""
    assert where(problems(tmp_path, text)) == [("data.train.kwargs.\uff53\uff49\uff5a\uff45", 7, 29)]


def test_import_path_is_normalized_as_python_imports_it(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    path = tmp_path / "ok.yaml"
    path.write_text(
        "network: {kind: import, factory: '\uff4eets:Net'}\n"
        "data:\n  train: {kind: synthetic, image_shape: [1, 8, 8]}\noptimizer: {name: momentum}\n",
        encoding="utf-8",
    )
    assert load_config(path).config.network.factory == "nets:Net"  # type: ignore[union-attr]


# --- user objects named like the scripts' own names ------------------------------------------------------


def bound_imports(text: str) -> dict[str, str]:
    """Every `from module import name [as alias]` of a script: the user object's name -> the name bound."""
    return {
        a.name: a.asname or a.name
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ImportFrom) and node.module in ("nets", "m")
        for a in node.names
    }


@pytest.mark.parametrize("name", ["sys", "train", "MLP"])
def test_factory_named_like_a_script_name_is_imported_under_another(tmp_path: Path, name: str) -> None:
    (tmp_path / "nets.py").write_text(f"def {name}():\n    pass\n")
    (tmp_path / "cfg.yaml").write_text(
        f"network: {{kind: import, factory: 'nets:{name}'}}\n"
        "data:\n  train: {kind: synthetic, image_shape: [1, 8, 8]}\noptimizer: {name: momentum}\n"
    )
    texts = generate(load_config(tmp_path / "cfg.yaml"), tmp_path / "out")
    alias = f"User{name}" if name[0].isupper() else f"user_{name}"
    for script in ("train_model.py", "train_native.py", "predict.py"):
        assert bound_imports(texts[script]) == {name: alias}, script
        assert f"network = {alias}()" in texts[script]


def test_every_import_site_binds_no_script_name(tmp_path: Path) -> None:
    """Builtins and script names at every import site: each bound under a name no script uses."""
    (tmp_path / "m.py").write_text(
        "def sys():\n    pass\n\n\ndef len():\n    pass\n\n\ndef np():\n    pass\n\n\n"
        "class create_dataset:\n    pass\n\n\ndef loss():\n    pass\n"
    )
    text = """\
network: {kind: builtin, name: mlp}
data:
  train: {kind: import, factory: 'm:sys', image_shape: [1, 8, 8]}
  eval: {kind: import, factory: 'm:len', image_shape: [1, 8, 8]}
optimizer: {name: momentum}
loss: {kind: import, path: 'm:loss'}
eval:
  metrics: [{name: import, class: 'm:create_dataset', key: acc}]
grad: {process: 'm:np'}
"""
    (tmp_path / "cfg.yaml").write_text(text)
    texts = generate(load_config(tmp_path / "cfg.yaml"), tmp_path / "out")
    for script in ("train_model.py", "train_native.py"):
        bound = bound_imports(texts[script])
        assert set(bound) == {"sys", "len", "np", "create_dataset", "loss"}, script
        assert not set(bound.values()) & RESERVED_NAMES, bound
        assert "return user_np" in texts[script] and "dataset = user_len()" in texts[script]
    assert 'metrics = {"acc": user_create_dataset()' in texts["train_native.py"]


def test_a_safe_name_is_imported_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    (tmp_path / "cfg.yaml").write_text(
        "network: {kind: import, factory: '\uff4eets:Net'}\n"
        "data:\n  train: {kind: synthetic, image_shape: [1, 8, 8]}\noptimizer: {name: momentum}\n"
    )
    texts = generate(load_config(tmp_path / "cfg.yaml"), tmp_path / "out")
    assert "    from nets import Net\n" in texts["train_native.py"]


# --- the reserved set against the templates ------------------------------------------------------------


def module_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def test_there_are_generated_scripts() -> None:
    assert len(GENERATED) >= 10


@pytest.mark.parametrize("script", GENERATED, ids=[str(p.relative_to(REPO)) for p in GENERATED])
def test_every_module_level_name_of_the_scripts_is_reserved(script: Path) -> None:
    names = module_level_names(ast.parse(script.read_text(encoding="utf-8")))
    assert names - {"__name__"} <= RESERVED_NAMES, sorted(names - RESERVED_NAMES)


ALL_IMPORTS = """\
network: {kind: import, factory: 'userlib:UserNet'}
data:
  train: {kind: import, factory: 'userlib:user_data', image_shape: [1, 8, 8]}
  eval: {kind: import, factory: 'userlib:user_data', image_shape: [1, 8, 8]}
optimizer: {name: momentum}
eval:
  metrics: [{name: import, class: 'userlib:UserMetric', key: acc}]
grad: {process: 'userlib:user_process', clip: {kind: norm}}
amp: {level: O2, fp32_cells: [Softmax]}
parallel: {mode: data_parallel, workers: 2}
"""


@pytest.mark.parametrize("variant", ["model", "native"])
def test_functions_that_import_a_user_object_use_only_reserved_names(tmp_path: Path, variant: str) -> None:
    """A user object imported into a function shadows every name that function uses."""
    (tmp_path / "userlib.py").write_text(
        "class UserNet:\n    pass\n\n\ndef user_data():\n    pass\n\n\n"
        "class UserMetric:\n    pass\n\n\ndef user_process(grads, weights):\n    return grads\n"
    )
    (tmp_path / "cfg.yaml").write_text(ALL_IMPORTS)
    loaded = load_config(tmp_path / "cfg.yaml")
    texts = generate(loaded, tmp_path / "out", (variant,))
    tree = ast.parse(next(text for name, text in texts.items() if name.endswith(".py")))
    user = {"UserNet", "user_data", "UserMetric", "user_process"}
    hosts = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and any(isinstance(n, ast.ImportFrom) and {a.name for a in n.names} & user for n in node.body)
    ]
    assert len(hosts) >= 4  # build_network, build_*_dataset, build_metrics, build_gradient_processor
    used: set[str] = set()
    for host in hosts:
        for node in ast.walk(host):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.arg):
                used.add(node.arg)
            elif isinstance(node, ast.FunctionDef) and node is not host:
                used.add(node.name)
    assert used - user <= RESERVED_NAMES, sorted(used - user - RESERVED_NAMES)


# --- named columns (data.inputs, data.labels) -------------------------------------------------------

COLUMN_HOSTS = ("train", "evaluate", "construct", "forward")


@pytest.mark.parametrize("script", GENERATED, ids=[str(p.relative_to(REPO)) for p in GENERATED])
def test_column_names_cannot_take_a_local_of_the_training_code(script: Path) -> None:
    """Columns are loop variables and cell arguments: every other local there is in COLUMN_LOCALS."""
    from mscodegen.schema.names import COLUMN_LOCALS

    if "def add_latent_noise" in script.read_text(encoding="utf-8"):
        pytest.skip("a GAN script names its batch (image, noise) whatever the columns are called")
    columns = {"image", "label"}  # the built-in sources' columns, and those the examples declare
    for example in (REPO / "examples").glob("*.yaml"):
        data = (yaml.safe_load(example.read_text(encoding="utf-8")) or {}).get("data") or {}
        for split in ("train", "eval"):
            columns.update((data.get(split) or {}).get("columns") or [])
    local: set[str] = set()
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and node.name in COLUMN_HOSTS:
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    local.add(n.id)
                elif isinstance(n, ast.arg):
                    local.add(n.arg)
    assert local - columns <= COLUMN_LOCALS, sorted(local - columns - COLUMN_LOCALS)


def test_a_column_named_like_a_local_is_located(tmp_path: Path) -> None:
    (tmp_path / "parts.py").write_text("def rows(**kwargs):\n    pass\n")
    text = """\
network: {kind: builtin, name: mlp, input_shape: [1, 1, 4]}
data:
  inputs: [loss]
  labels: [label]
  train: {kind: import, factory: 'parts:rows', columns: [loss, label]}
optimizer: {name: momentum}
"""
    found = problems(tmp_path, text)
    assert ("data.inputs[0]", 3, 12) in where(found)
    assert ("data.train.columns[0]", 5, 58) in where(found)
    assert all("the generated training code uses itself" in m for _, _, _, m in found)
