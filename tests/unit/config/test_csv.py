"""Tables from CSV files (issue 23): `data.*.kind: csv`, what `validate` reads of the file and reports at
its key, and the dataset functions the scripts get. The runs (parity, the data the scripts read) are in
test_csv_runs.py."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from mscodegen.config.errors import ConfigError
from mscodegen.config.load import load_config
from mscodegen.output.generate import generate
from mscodegen.schema import csv_files
from mscodegen.schema.csv_files import read_table
from mscodegen.schema.data import CsvData
from mscodegen.schema.sources import sample_count, split_sizes

from conftest import REPO, function_source

TABLE = """\
radius,texture,area,diagnosis
1.5,2.0,10,0
2.5,3.0,11,1
3.5,4.0,12,1
4.5,5.0,13,0
5.5,6.0,14,1
"""

CONFIG = """\
network: {kind: builtin, name: mlp, hidden: [8], num_classes: 2}
data:
  inputs: [features]
  train:
    kind: csv
    path: table.csv
    columns:
      features: [radius, texture, area]
      label: diagnosis
    batch_size: 2
optimizer: {name: adam}
"""


def write(tmp_path: Path, config: str = CONFIG, table: str = TABLE, name: str = "table.csv") -> Path:
    (tmp_path / name).write_text(table, encoding="utf-8")
    path = tmp_path / "cfg.yaml"
    path.write_text(config, encoding="utf-8")
    return path


def problems(tmp_path: Path, config: str = CONFIG, table: str = TABLE) -> list[tuple[str, int, int, str]]:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, config, table))
    return [(p.path, p.line, p.column, p.message) for p in info.value.problems]


def squash(text: str) -> str:
    """Python source without white space or black's trailing commas: compare calls however black wraps them."""
    return re.sub(r"\s+", "", text).replace(",)", ")")


def scripts(tmp_path: Path, config: str = CONFIG, table: str = TABLE) -> dict[str, str]:
    loaded = load_config(write(tmp_path, config, table))
    return generate(loaded, tmp_path / "out")


# --- the schema ------------------------------------------------------------------------------------------


def test_the_example_config_validates() -> None:
    loaded = load_config(REPO / "examples" / "diabetes_csv.yaml")
    train = loaded.config.data.train
    assert isinstance(train, CsvData)
    assert train.vectors() == {
        "features": ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"],
        "target": ["progression"],
    }


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("test_fraction: 0.3", "test_fraction applies to a split"),
        ("field_delim: '\"'", "field_delim cannot be '\"'"),
        ("field_delim: ';;'", "at most 1 character"),
        ("missing: skip", "'error' or 'drop'"),
    ],
)
def test_options_a_csv_source_rejects(tmp_path: Path, extra: str, message: str) -> None:
    found = problems(tmp_path, CONFIG.replace("    batch_size: 2\n", f"    batch_size: 2\n    {extra}\n"))
    assert any(message in m for _, _, _, m in found), found


# --- validate reads the header ------------------------------------------------------------------------------


def test_a_misspelled_column_is_located_with_did_you_mean(tmp_path: Path) -> None:
    found = problems(tmp_path, CONFIG.replace("[radius, texture, area]", "[radius, textur, area]"))
    assert found == [
        (
            "data.train.columns.features[1]",
            8,
            26,
            "'textur' is not a column of table.csv, whose header names 4: radius, texture, area, diagnosis; "
            "did you mean 'texture'?",
        )
    ]


def test_a_misspelled_class_column_is_located(tmp_path: Path) -> None:
    found = problems(tmp_path, CONFIG.replace("label: diagnosis", "label: Diagnosis"))
    assert [(p, line, m.split(";")[1]) for p, line, _, m in found] == [
        ("data.train.columns.label", 9, " did you mean 'diagnosis'?")
    ]


def test_a_missing_file_and_a_directory_are_located(tmp_path: Path) -> None:
    found = problems(tmp_path, CONFIG.replace("path: table.csv", "path: other.csv"))
    assert [(p, m.split(" (looked")[0]) for p, _, _, m in found] == [
        ("data.train.path", "file 'other.csv' does not exist")
    ]
    (tmp_path / "folder").mkdir()
    found = problems(tmp_path, CONFIG.replace("path: table.csv", "path: folder"))
    assert "is a directory, not a CSV file" in found[0][3]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("", "table.csv is empty: its first row must name the columns"),
        ("\n\n", "table.csv is empty: its first row must name the columns"),
        (
            "radius,texture,radius,area,diagnosis\n1,2,3,4,0\n",
            "table.csv names the column 'radius' twice in its header (CSVDataset cannot read it)",
        ),
        (
            TABLE + "6.5,7.0\n",
            "table.csv row 6 (line 7) has 2 cells but the header names 4 columns: CSVDataset stops at it",
        ),
    ],
)
def test_an_unreadable_table_is_located_at_its_path(tmp_path: Path, table: str, message: str) -> None:
    found = problems(tmp_path, table=table)
    assert ("data.train.path", 6, 11, message) in found


def test_a_byte_order_mark_is_named(tmp_path: Path) -> None:
    found = problems(tmp_path, table="\ufeff" + TABLE)
    assert [(p, m) for p, _, _, m in found] == [
        (
            "data.train.columns.features[0]",
            "table.csv starts with a byte-order mark, which CSVDataset keeps in the first column's name "
            "('\\ufeffradius'): save the file as UTF-8 without a BOM",
        )
    ]


def test_a_file_that_is_not_utf8_is_named_with_the_byte(tmp_path: Path) -> None:
    """Issue 30: a Latin-1 file was read with replacement characters and blamed on a cell ('caf\ufffd')."""
    path = write(tmp_path)
    lines = TABLE.splitlines()
    lines[2] = "caf\u00e9" + lines[2][lines[2].index(",") :]
    (tmp_path / "table.csv").write_bytes("\n".join(lines).encode("latin-1"))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    found = [(p.path, p.message) for p in info.value.problems]
    assert found == [
        ("data.train.path", "table.csv is not UTF-8 text (byte 0xe9 at line 3, column 4): save it as UTF-8")
    ]


def test_quoted_cells_and_blank_lines_read_as_csv_dataset_reads_them(tmp_path: Path) -> None:
    table = 'radius,"tex,ture",area,diagnosis\n\n1.5,"2.0",10,0\n"2.5",3.0,"1\n1",1\n\n'
    config = CONFIG.replace("[radius, texture, area]", "[radius, 'tex,ture']").replace(
        "batch_size: 2", "batch_size: 1"
    )
    path = write(tmp_path, config, table)
    read = read_table(path.parent / "table.csv", ",", ("radius", "tex,ture", "area"))
    assert read.header == ("radius", "tex,ture", "area", "diagnosis")
    assert read.rows == 2 and read.whole
    assert read.cells["area"].first_not_number == csv_files.Cell(2, 4, "1\n1")  # the row starts on line 4
    load_config(path)  # area is not read: the cell with a line break is none of the config's business


# --- cells that hold no number --------------------------------------------------------------------------------

HOLES = """\
radius,texture,area,diagnosis
1.5,,10,0
2.5,3.0,NA,1
3.5,4.0,12,1
4.5,5.0,13,
5.5,nan,14,1
6.5,7.0,inf,1
"""


def test_cells_without_a_number_are_errors_unless_the_config_says_what_to_do(tmp_path: Path) -> None:
    found = problems(tmp_path, table=HOLES)
    assert [(p, m) for p, _, _, m in found] == [
        (
            "data.train.columns.features[1]",
            "table.csv's column 'texture' has 2 cells holding no number, the first at row 1 (line 2): ''; the "
            "script would stop there: fix the file, or set data.train.missing: drop (drop those rows) or "
            "missing: {fill: 0.0}",
        ),
        (
            "data.train.columns.features[2]",
            "table.csv's column 'area' has 2 cells holding no number, the first at row 2 (line 3): 'NA'; the "
            "script would stop there: fix the file, or set data.train.missing: drop (drop those rows) or "
            "missing: {fill: 0.0}",
        ),
        (
            "data.train.columns.label",
            "table.csv's class column 'diagnosis' has 1 cell holding no number, the first at row 4 (line 5): ''; "
            "a class index cannot be filled in: fix the file, or set missing: drop",
        ),
    ]
    fill = CONFIG.replace("batch_size: 2", "batch_size: 2\n    missing: {fill: 0.0}")
    assert [p for p, _, _, _ in problems(tmp_path, fill, HOLES)] == ["data.train.columns.label"]
    drop = CONFIG.replace("batch_size: 2", "batch_size: 1\n    missing: drop")
    loaded = load_config(write(tmp_path, drop, HOLES))
    count = sample_count(loaded.config.data.train, tmp_path)
    assert count is not None and count.value == 1  # only row 3 holds a number in every column read
    assert count.why == "table.csv has 6 rows, 5 dropped by missing: drop"


def test_class_cells_must_be_class_indices(tmp_path: Path) -> None:
    table = TABLE.replace("3.5,4.0,12,1", "3.5,4.0,12,1.5").replace("4.5,5.0,13,0", "4.5,5.0,13,-1")
    found = problems(tmp_path, table=table.replace("5.5,6.0,14,1", "5.5,6.0,14,1.0"))
    assert [(p, m) for p, _, _, m in found] == [
        (
            "data.train.columns.label",
            "table.csv's class column 'diagnosis' has 2 cells not holding a class index (a whole number, 0 or "
            "more), the first at row 3 (line 4): '1.5'",
        )
    ]


def test_class_indices_beyond_num_classes_are_located_once_per_file(tmp_path: Path) -> None:
    config = CONFIG.replace("    batch_size: 2\n", "    batch_size: 2\n    split: train\n")
    config += "  eval: {kind: csv, path: table.csv, columns: {features: [radius, texture, area], label: diagnosis}, split: test, batch_size: 1}\n"
    config = config.replace("optimizer: {name: adam}\n", "") + "optimizer: {name: adam}\n"
    found = problems(tmp_path, config, TABLE.replace("5.5,6.0,14,1", "5.5,6.0,14,4"))
    assert found == [
        (
            "network.num_classes",
            1,
            63,
            "data.train has labels 0..4 (table.csv's column 'diagnosis', all 5 rows read) but the network has "
            "2 outputs: set network.num_classes to at least 5",
        )
    ]


def test_a_long_file_is_read_to_max_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """validate reads the header and MAX_ROWS rows: the checks say so, and the row count stays unknown."""
    monkeypatch.setattr(csv_files, "MAX_ROWS", 3)
    monkeypatch.setattr("mscodegen.schema.rules.tables.MAX_ROWS", 3)
    csv_files._read.cache_clear()
    table = TABLE.replace("2.5,3.0,11,1", "2.5,,11,7")
    found = problems(tmp_path, table=table)
    assert [m for _, _, _, m in found] == [
        "data.train has labels 0..7 (table.csv's column 'diagnosis' in its first 3 rows) but the network has 2 "
        "outputs: set network.num_classes to at least 8",
        "table.csv's column 'texture' has 1 cell holding no number in its first 3 rows, the first at row 2 "
        "(line 3): ''; the script would stop there: fix the file, or set data.train.missing: drop (drop those "
        "rows) or missing: {fill: 0.0}",
    ]
    read = read_table(tmp_path / "table.csv", ",", ("radius",))
    assert (read.rows, read.whole) == (3, False)
    spec = CsvData(kind="csv", path="table.csv", columns={"features": ["radius"]})
    assert sample_count(spec, tmp_path) is None  # more rows than were read: not counted
    capped = CsvData(kind="csv", path="table.csv", columns={"features": ["radius"]}, num_samples=2)
    count = sample_count(capped, tmp_path)
    assert count is not None and count.value == 2


# --- splits and empty epochs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "test_fraction", "sizes"),
    [(7, 0.5, (3, 4)), (3, 0.5, (1, 2)), (23, 0.1, (21, 2)), (10, 0.15, (8, 2)), (442, 0.2, (354, 88))],
)
def test_split_sizes_are_mindspores(rows: int, test_fraction: float, sizes: tuple[int, int]) -> None:
    """Measured with ds.CSVDataset(...).split([1 - f, f], randomize=False) on MindSpore 2.10."""
    assert split_sizes(rows, (round(1 - test_fraction, 10), test_fraction)) == sizes


def test_a_split_rounded_to_no_row_is_located(tmp_path: Path) -> None:
    config = CONFIG.replace(
        "    batch_size: 2\n", "    batch_size: 1\n    split: train\n    test_fraction: 0.05\n"
    )
    found = problems(tmp_path, config)
    assert found == [
        (
            "data.train.test_fraction",
            12,
            20,
            "test_fraction 0.05 of table.csv's 5 rows rounds a part of the split to 0 rows (Dataset.split "
            "raises 'Split percentage ... is too small'): add rows or change test_fraction",
        )
    ]


def test_an_empty_split_and_a_split_smaller_than_a_batch(tmp_path: Path) -> None:
    found = problems(tmp_path, table="radius,texture,area,diagnosis\n")
    assert [(p, m) for p, _, _, m in found] == [
        ("data.train", "data.train is empty: 0 samples (table.csv has 0 rows); the script trains 0 steps")
    ]
    config = CONFIG.replace("    batch_size: 2\n", "    batch_size: 8\n    split: train\n")
    found = problems(tmp_path, config)
    assert [(p, m) for p, _, _, m in found] == [
        (
            "data.train.batch_size",
            "4 samples (the train split of table.csv: 4 of its 5 rows) make no full batch of 8 with "
            "drop_remainder: the script trains 0 steps; lower batch_size or set drop_remainder: false",
        )
    ]


EVAL = (
    "  eval: {kind: csv, path: table.csv, columns: {features: [radius, texture, area], label: diagnosis}, "
    "batch_size: 1%s}\n"
)


@pytest.mark.parametrize(
    ("train", "evaluation", "key", "message"),
    [
        (
            "split: train",
            "",
            "data.eval",
            "data.eval all of it, the train split too; set data.eval.split: test",
        ),
        ("", ", split: test", "data.train", "the test split too; set data.train.split: train"),
        (
            "split: train",
            ", split: train",
            "data.eval.split",
            "table.csv's train split: evaluate on the other",
        ),
        (
            "split: train",
            ", split: test, test_fraction: 0.4",
            "data.eval.test_fraction",
            "the splits would overlap",
        ),
    ],
)
def test_train_and_eval_from_one_file_read_complementary_splits(
    tmp_path: Path, train: str, evaluation: str, key: str, message: str
) -> None:
    config = CONFIG.replace("    batch_size: 2\n", f"    batch_size: 1\n    {train}\n")
    config = config.replace("optimizer: {name: adam}\n", EVAL % evaluation + "optimizer: {name: adam}\n")
    found = problems(tmp_path, config)
    assert [p for p, _, _, _ in found] == [key]
    assert message in found[0][3]


def test_complementary_splits_and_two_files_are_accepted(tmp_path: Path) -> None:
    config = CONFIG.replace("    batch_size: 2\n", "    batch_size: 1\n    split: train\n")
    config = config.replace("optimizer: {name: adam}\n", EVAL % ", split: test" + "optimizer: {name: adam}\n")
    load_config(write(tmp_path, config))
    (tmp_path / "test.csv").write_text(TABLE, encoding="utf-8")
    two = CONFIG.replace("optimizer: {name: adam}\n", EVAL.replace("table.csv", "test.csv") % "")
    load_config(write(tmp_path, two + "optimizer: {name: adam}\n"))


# --- what the network and the loss take ---------------------------------------------------------------------


def test_network_and_loss_against_the_columns(tmp_path: Path) -> None:
    lenet = CONFIG.replace("mlp, hidden: [8]", "lenet5").replace("[radius, texture, area]", "area")
    found = problems(tmp_path, lenet)
    assert [(p, m) for p, _, _, m in found] == [
        (
            "network.name",
            "lenet5 takes images, but data.train (csv) yields float32 vectors: use the builtin mlp",
        ),
        ("data.train.columns.features", "the builtin lenet5 takes a float32 vector: write features: [area]"),
    ]
    regression = CONFIG.replace("optimizer:", "loss: {name: MSELoss}\noptimizer:")
    found = problems(tmp_path, regression)
    assert [(p, m) for p, _, _, m in found] == [
        (
            "data.train.columns.label",
            "MSELoss compares the network's output with a float target of the same shape, but 'diagnosis' gives "
            "a class index: write label: [diagnosis] (a float32 vector)",
        )
    ]
    found = problems(tmp_path, regression.replace("label: diagnosis", "label: [diagnosis]"))
    assert [(p, m) for p, _, _, m in found] == [
        (
            "network.num_classes",
            "the network has 2 outputs but data.train's target label has 1 value (data.train.columns.label): "
            "MSELoss needs the same shape; set network.num_classes: 1",
        )
    ]
    found = problems(tmp_path, CONFIG.replace("label: diagnosis", "label: [diagnosis]"))
    assert [(p, m) for p, _, _, m in found] == [
        (
            "data.train.columns.label",
            "SoftmaxCrossEntropyWithLogits takes class indices, but a list of columns gives a float32 vector: "
            "write label: diagnosis (one column of class indices)",
        )
    ]


def test_a_column_read_twice_and_data_parallel(tmp_path: Path) -> None:
    found = problems(tmp_path, CONFIG.replace("[radius, texture, area]", "[radius, texture, radius]"))
    assert [p for p, _, _, _ in found] == ["data.train.columns.features[2]"]
    config = CONFIG.replace("batch_size: 2", "batch_size: 2\n    split: train\n    missing: drop")
    found = problems(tmp_path, config + "parallel: {mode: data_parallel, workers: 2}\n")
    assert [p for p, _, _, _ in found] == ["data.train.split", "data.train.missing"]


# --- the generated dataset functions ------------------------------------------------------------------------


def test_the_whole_file_with_class_labels(tmp_path: Path) -> None:
    texts = scripts(tmp_path)
    model = texts["train_model.py"]
    assert (
        function_source(model, "create_train_dataset")
        == """\
def create_train_dataset(data_dir):
    # the header row names the columns; every cell is read as text and converted below
    dataset = ds.CSVDataset(str(data_dir / "table.csv"), shuffle=True)
    dataset = dataset.map(
        to_vector, input_columns=["radius", "texture", "area"], output_columns=["features"]
    )
    dataset = dataset.map(
        text.ToNumber(ms.int32), input_columns="diagnosis", output_columns=["label"]
    )
    dataset = dataset.project(["features", "label"])  # the network's inputs, then the labels
    return dataset.batch(2, drop_remainder=True)"""
    )
    assert "from mindspore.dataset import text" in model and "import numpy as np" in model
    assert "def to_number" not in model  # nothing drops or fills
    assert "network = MLP(num_classes=2, in_features=3)" in model
    for text in texts.values():
        ast.parse(text)


def test_drop_and_fill(tmp_path: Path) -> None:
    drop = CONFIG.replace("batch_size: 2", "batch_size: 2\n    missing: drop\n    num_workers: 2")
    model = scripts(tmp_path, drop)["train_model.py"]
    source = function_source(model, "create_train_dataset")
    assert (
        '    dataset = dataset.filter(\n        is_complete,\n        input_columns=["radius", "texture", "area", '
        '"diagnosis"],\n        num_parallel_workers=workers,\n    )' in source
    )
    assert [
        name
        for name in ("to_vector", "to_vector_filled", "to_number", "is_complete")
        if f"def {name}(" in model
    ] == [
        "to_vector",
        "to_number",
        "is_complete",
    ]
    assert "import math" in model
    fill = CONFIG.replace("batch_size: 2", "batch_size: 2\n    missing: {fill: -1.0}")
    model = scripts(tmp_path, fill)["train_model.py"]
    assert "lambda *cells: to_vector_filled(cells, -1.0)," in function_source(model, "create_train_dataset")
    assert "def to_vector(" not in model and "def is_complete(" not in model


def test_a_split_shuffles_after_it_and_a_buffer_after_the_maps(tmp_path: Path) -> None:
    config = CONFIG.replace(
        "    batch_size: 2\n", "    batch_size: 2\n    split: train\n    test_fraction: 0.3\n"
    )
    source = function_source(scripts(tmp_path, config)["train_native.py"], "create_train_dataset")
    lines = [line.strip() for line in source.splitlines()]
    assert lines[2:5] == [
        'dataset = ds.CSVDataset(str(data_dir / "table.csv"), shuffle=False)',
        "dataset = dataset.split([0.7, 0.3], randomize=False)[0]  # the first 70% of the rows",
        "dataset = dataset.shuffle(buffer_size=dataset.get_dataset_size())",
    ]
    buffered = config.replace("batch_size: 2\n", "batch_size: 2\n    shuffle: {buffer_size: 4}\n")
    source = function_source(scripts(tmp_path, buffered)["train_native.py"], "create_train_dataset")
    assert "get_dataset_size" not in source
    assert source.index("dataset.project(") < source.index("dataset.shuffle(buffer_size=4)")


def test_two_files_share_one_function_and_data_dir(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.csv").write_text(TABLE, encoding="utf-8")
    (tmp_path / "data" / "train.csv").write_text(TABLE, encoding="utf-8")
    config = CONFIG.replace("path: table.csv", "path: data/train.csv").replace("optimizer:", "optimizer:")
    config = config.replace(
        "optimizer: {name: adam}\n",
        "  eval: {kind: csv, path: data/test.csv, columns: {features: [radius, texture, area], label: diagnosis}, "
        "batch_size: 2, shuffle: true, field_delim: ',', num_samples: 4}\noptimizer: {name: adam}\n",
    )
    config = config.replace("    batch_size: 2\n", "    batch_size: 2\n    num_samples: 4\n")
    model = scripts(tmp_path, config)["train_model.py"]
    assert 'DATA_DIR = Path(__file__).parent / "../data"' in model
    assert "def create_train_dataset" not in model
    assert "dataset=ds.CSVDataset(str(path),shuffle=True,num_samples=4)" in squash(
        function_source(model, "create_dataset")
    )
    assert 'train_dataset = create_dataset(args.data_dir / "train.csv", drop_remainder=True)' in model
    tabs = config.replace("field_delim: ','", 'field_delim: "\\t"')
    (tmp_path / "data" / "test.csv").write_text(TABLE.replace(",", "\t"), encoding="utf-8")
    model = scripts(tmp_path, tabs)["train_model.py"]
    assert 'ds.CSVDataset(str(data_dir/"test.csv"),field_delim="\\t",shuffle=True,num_samples=4)' in squash(
        model
    )


def test_data_parallel_shards_the_file(tmp_path: Path) -> None:
    config = CONFIG + "parallel: {mode: data_parallel, workers: 2}\n"
    model = scripts(tmp_path, config)["train_model.py"]
    assert (
        'ds.CSVDataset(str(data_dir/"table.csv"),shuffle=True,num_shards=num_shards,shard_id=shard_id)'
        in (squash(function_source(model, "create_train_dataset")))
    )


# --- the example's data file --------------------------------------------------------------------------------


def test_the_committed_csv_is_what_the_helper_writes(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "examples"))
    try:
        from make_diabetes_csv import write_diabetes_csv
    finally:
        sys.path.remove(str(REPO / "examples"))
    written = write_diabetes_csv(tmp_path / "diabetes.csv")
    committed = REPO / "examples" / "data" / "diabetes.csv"
    assert written.read_bytes() == committed.read_bytes(), "run: python examples/make_diabetes_csv.py"
    assert committed.stat().st_size < 60_000


def test_columns_data_inputs_and_labels_do_not_name_are_located_at_columns(tmp_path: Path) -> None:
    extra = CONFIG.replace("[radius, texture, area]", "[radius, texture]\n      area: [area]")
    found = problems(tmp_path, extra)
    assert [p for p, _, _, _ in found] == ["data.train.columns"]
    assert "area would feed neither the network nor the loss" in found[0][3]
    swapped = CONFIG.replace(
        "features: [radius, texture, area]\n      label: diagnosis",
        "label: diagnosis\n      features: [radius, texture, area]",
    )
    found = problems(tmp_path, swapped)
    assert [p for p, _, _, _ in found] == ["data.train.columns"]
    assert "yields its columns in the order label, features" in found[0][3]


def test_the_default_network_input_is_named_with_the_way_out(tmp_path: Path) -> None:
    found = problems(tmp_path, CONFIG.replace("  inputs: [features]\n", ""))
    assert [(p, m) for p, _, _, m in found] == [
        (
            "data.inputs[0]",
            "'image' is not a column of data.train (csv), whose columns are features, label; data.inputs is "
            "[image] unless the config says otherwise, e.g. data.inputs: [features]",
        )
    ]
