"""Rules on CSV sources (kind: csv): the columns named, what the network and the loss take from them,
splits of one file, and (with the config's folder) what the file's header and first rows hold.

The file is read by schema/csv_files.py: the header and at most MAX_ROWS rows, once per file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mscodegen.catalog.suggest import did_you_mean
from mscodegen.schema import Config
from mscodegen.schema.csv_files import BOM, MAX_ROWS, ColumnCells, Table, TableError, read_table
from mscodegen.schema.data import CsvData
from mscodegen.schema.network import BuiltinNetwork, MindcvNetwork
from mscodegen.schema.optim import HeadsLoss, ImportedLoss
from mscodegen.schema.rules._registry import KeyPath, Violation, rule
from mscodegen.schema.rules.data import splits
from mscodegen.schema.rules.network import classes_of, classifies
from mscodegen.schema.sources import csv_rows
from mscodegen.schema.training import SAME_SHAPE_TARGET_LOSSES

SHOWN_COLUMNS = 12  # header names listed in a message about a column that is not there


def _csv_specs(cfg: Config) -> Iterator[tuple[str, CsvData]]:
    return ((split, spec) for split, spec in splits(cfg) if isinstance(spec, CsvData))


def _column_keys(split: str, spec: CsvData) -> Iterator[tuple[KeyPath, str]]:
    """Every CSV column the source reads, with the key that names it."""
    for name, value in spec.columns.items():
        if isinstance(value, str):
            yield ("data", split, "columns", name), value
        else:
            for i, column in enumerate(value):
                yield ("data", split, "columns", name, i), column


@rule("data")
def _csv_column_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """Each CSV column feeds one batch column (a map consumes the columns it reads)."""
    for split, spec in _csv_specs(cfg):
        seen: set[str] = set()
        for at, column in _column_keys(split, spec):
            if column in seen:
                yield (
                    at,
                    f"CSV column {column!r} is read twice: each feeds one column of data.{split}.columns",
                )
            seen.add(column)
        if spec.split is not None and getattr(spec.shuffle, "in_source", False):
            yield (
                ("data", split, "shuffle", "in_source"),
                "split reads the file in order: the rows of the split are shuffled after it (in_source: false)",
            )
        if spec.batch_transforms:
            yield ("data", split, "batch_transforms"), "batch_transforms mix images: a csv source has none"


@rule("data")
def _csv_split_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """data.train and data.eval from one file: complementary splits of the same rows."""
    train, evaluation = cfg.data.train, cfg.data.eval
    if not isinstance(train, CsvData) or not isinstance(evaluation, CsvData):
        return
    if Path(train.path) != Path(evaluation.path) or (train.split is None and evaluation.split is None):
        return
    same = f"data.train and data.eval both read {train.path}"
    if evaluation.split is None:
        yield ("data", "eval"), f"{same}: data.eval all of it, the train split too; set data.eval.split: test"
    elif train.split is None:
        yield (
            ("data", "train"),
            f"{same}: data.train all of it, the test split too; set data.train.split: train",
        )
    elif train.split == evaluation.split:
        yield (
            ("data", "eval", "split"),
            f"{same}'s {train.split} split: evaluate on the other (data.train.split: train, data.eval.split: test)",
        )
    elif train.test_fraction != evaluation.test_fraction:
        key = "test_fraction" if "test_fraction" in evaluation.model_fields_set else "split"
        yield (
            ("data", "eval", key),
            f"{same} split by test_fraction {evaluation.test_fraction} here and {train.test_fraction} in "
            "data.train: the splits would overlap or leave rows out; give both the same test_fraction",
        )


@rule("data", "parallel")
def _csv_parallel_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """Data parallel shards the rows in CSVDataset: every rank must get as many rows as the others."""
    train = cfg.data.train
    if cfg.parallel.mode != "data_parallel" or not isinstance(train, CsvData):
        return
    if train.split is not None:
        yield (
            ("data", "train", "split"),
            "a split of a sharded file is not supported yet (Dataset.split cannot follow sharding): write the "
            "training rows to a file of their own",
        )
    if train.missing == "drop":
        yield (
            ("data", "train", "missing"),
            "missing: drop under data parallel would leave the ranks different numbers of rows (and steps): "
            "drop the rows in the file, or use missing: {fill: ...}",
        )


@rule("data", "network", "loss")
def _csv_network_rules(cfg: Config, _config_dir: Path | None) -> Iterator[Violation]:
    """What the network and the loss take from a csv source: float32 vectors, class indices."""
    net, train = cfg.network, cfg.data.train
    if isinstance(train, CsvData):
        if isinstance(net, BuiltinNetwork) and net.name == "lenet5" or isinstance(net, MindcvNetwork):
            what = f"mindcv's {net.name}" if isinstance(net, MindcvNetwork) else "lenet5"
            yield (
                ("network", "name"),
                f"{what} takes images, but data.train (csv) yields float32 vectors: use the builtin mlp",
            )
        first = cfg.data.inputs[0]
        if isinstance(net, BuiltinNetwork) and isinstance(train.columns.get(first), str):
            yield (
                ("data", "train", "columns", first),
                f"the builtin {net.name} takes a float32 vector: write {first}: [{train.columns[first]}]",
            )
    if isinstance(cfg.loss, ImportedLoss | HeadsLoss):
        return
    loss, regression = cfg.loss.name, cfg.loss.name in SAME_SHAPE_TARGET_LOSSES
    known = classes_of(cfg.network, ("network",))
    for split, spec in _csv_specs(cfg):
        for label in cfg.data.labels:
            value = spec.columns.get(label)
            at: KeyPath = ("data", split, "columns", label)
            if isinstance(value, str) and regression:
                yield (
                    at,
                    f"{loss} compares the network's output with a float target of the same shape, but {value!r} "
                    f"gives a class index: write {label}: [{value}] (a float32 vector)",
                )
            elif isinstance(value, list) and not regression:
                hint = f"write {label}: {value[0]} (one column of class indices)" if len(value) == 1 else ""
                yield (
                    at,
                    f"{loss} takes class indices, but a list of columns gives a float32 vector"
                    + (f": {hint}" if hint else " (use a regression loss, or one column of class indices)"),
                )
            elif isinstance(value, list) and known is not None and len(value) != known[0]:
                classes, key = known
                yield (
                    key,
                    f"the network has {classes} outputs but data.{split}'s target {label} has "
                    f"{_count(len(value), 'value')} (data.{split}.columns.{label}): {loss} needs the same shape; set "
                    f"{'.'.join(map(str, key))}: {len(value)}",
                )


@rule("data", "network", "loss")
def _csv_file_rules(cfg: Config, config_dir: Path | None) -> Iterator[Violation]:
    """The header names every column; the cells read hold what the scripts convert them to; class
    indices fit the network; a split keeps rows. A problem of a file shared by data.train and
    data.eval is reported once, at data.train."""
    if config_dir is None:
        return
    reported: set[tuple[str, ...]] = set()
    for split, spec in _csv_specs(cfg):
        file = config_dir / spec.path
        try:
            table = read_table(file, spec.field_delim, spec.csv_columns(), spec.class_columns())
        except OSError:
            continue  # rules/modules.py reports a missing file
        except TableError as exc:
            yield ("data", split, "path"), f"{spec.path} {exc}"
            continue
        for about, key, message in _table_problems(cfg, split, spec, table):
            problem = (str(file.resolve()), *about)
            if problem not in reported:
                reported.add(problem)
                yield key, message


# What a problem is about (reported once per file), its key, and the message.
_TableProblem = tuple[tuple[str, ...], KeyPath, str]


def _table_problems(cfg: Config, split: str, spec: CsvData, table: Table) -> Iterator[_TableProblem]:
    header, path = table.header, spec.path
    if table.ragged is not None:
        yield (
            ("ragged",),
            ("data", split, "path"),
            f"{path} {table.ragged.where()} has {table.ragged.text} cells but the header names {len(header)} "
            "columns: CSVDataset stops at it",
        )
    scope = "" if table.whole else f" in its first {MAX_ROWS:,} rows"
    classes = [value for value in spec.columns.values() if isinstance(value, str)]
    for at, column in _column_keys(split, spec):
        cells = table.cells.get(column)
        if cells is None:
            yield ("header", column), at, _not_in_header(column, path, header)
        elif column in classes:
            yield from _class_cells(at, column, cells, spec, scope)
        elif spec.missing == "error" and cells.not_numbers:
            first = cells.first_not_number
            assert first is not None
            yield (
                ("numbers", column),
                at,
                f"{path}'s column {column!r} has {_cells(cells.not_numbers)} holding no number{scope}, the "
                f"first at {first.where()}: {first.text!r}; the script would stop there: fix the file, or set "
                f"data.{split}.missing: drop (drop those rows) or missing: {{fill: 0.0}}",
            )
    yield from _class_range(cfg, split, spec, table, scope)
    if csv_rows(spec, table.rows) is None and table.whole:
        key = "test_fraction" if "test_fraction" in spec.model_fields_set else "split"
        rows = min(table.rows, spec.num_samples or table.rows)
        yield (
            ("split", str(spec.test_fraction)),
            ("data", split, key),
            f"test_fraction {spec.test_fraction} of {path}'s {rows} rows rounds a part of the split to 0 rows "
            "(Dataset.split raises 'Split percentage ... is too small'): add rows or change test_fraction",
        )


def _not_in_header(column: str, path: str, header: tuple[str, ...]) -> str:
    if header and header[0].startswith(BOM) and header[0][1:] == column:
        return (
            f"{path} starts with a byte-order mark, which CSVDataset keeps in the first column's name "
            f"({header[0]!r}): save the file as UTF-8 without a BOM"
        )
    shown = ", ".join(header[:SHOWN_COLUMNS]) + (", ..." if len(header) > SHOWN_COLUMNS else "")
    names = f"{column!r} is not a column of {path}, whose header names {len(header)}: {shown}"
    return names + did_you_mean(column, header)


def _class_cells(
    at: KeyPath, column: str, cells: ColumnCells, spec: CsvData, scope: str
) -> Iterator[_TableProblem]:
    """A class-index column: whole numbers >= 0 (missing: drop drops the rows that hold no number)."""
    if cells.not_numbers and spec.missing != "drop":
        first = cells.first_not_number
        assert first is not None
        yield (
            ("numbers", column),
            at,
            f"{spec.path}'s class column {column!r} has {_cells(cells.not_numbers)} holding no number{scope}, "
            f"the first at {first.where()}: {first.text!r}; a class index cannot be filled in: fix the file, "
            "or set missing: drop",
        )
    if cells.not_classes:
        first = cells.first_not_class
        assert first is not None
        yield (
            ("classes", column),
            at,
            f"{spec.path}'s class column {column!r} has {_cells(cells.not_classes)} not holding a class index "
            f"(a whole number, 0 or more){scope}, the first at {first.where()}: {first.text!r}",
        )


def _class_range(cfg: Config, split: str, spec: CsvData, table: Table, scope: str) -> Iterator[_TableProblem]:
    """Class indices beyond the network's outputs: an error, or an inf loss (as rules/network.py says)."""
    known = classes_of(cfg.network, ("network",))
    if known is None or not classifies(cfg):
        return
    classes, key = known
    for label in cfg.data.labels:
        column = spec.columns.get(label)
        cells = table.cells.get(column) if isinstance(column, str) else None
        if cells is not None and cells.top_class is not None and cells.top_class >= classes:
            read = scope or f", all {table.rows:,} rows read"
            yield (
                ("range", str(column)),
                key,
                f"data.{split} has labels 0..{cells.top_class} ({spec.path}'s column {column!r}{read}) but the "
                f"network has {classes} outputs: set {'.'.join(map(str, key))} to at least {cells.top_class + 1}",
            )


def _cells(count: int) -> str:
    return _count(count, "cell")


def _count(count: int, noun: str) -> str:
    return f"1 {noun}" if count == 1 else f"{count:,} {noun}s"
