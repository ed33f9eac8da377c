"""What `mscodegen validate` reads of a CSV file: its header and at most MAX_ROWS rows, never MindSpore.

ds.CSVDataset names the columns from the first row, skips blank lines and reads a quoted cell (`"4,5"`,
or one with a line break) as one cell: Python's csv module reads a file the same way. A cell holds a
number when float() reads it as a finite number, as the scripts' conversion (numpy) does. A class index
is a whole number >= 0 in digits: text.ToNumber(ms.int32), which the scripts use for class columns,
would read "1.5" and "1e2" as 1.
"""

from __future__ import annotations

import csv
import math
import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MAX_ROWS = 100_000  # rows read after the header: the checks of a longer file cover these
BOM = "\ufeff"
_CLASS_INDEX = re.compile(r"\s*\+?[0-9]+(\.0*)?\s*")


class TableError(Exception):
    """The file cannot be read as a table with a header; the message says why."""


@dataclass(frozen=True)
class Cell:
    row: int  # 1-based, the header not counted
    line: int  # the line of the file the row starts on (the header is on line 1)
    text: str

    def where(self) -> str:
        return f"row {self.row} (line {self.line})"


@dataclass(slots=True)
class ColumnCells:
    """What the rows read hold in one column, counted cell by cell (`add`)."""

    classes: bool  # check for class indices
    not_numbers: int = 0  # empty, text, NaN or infinite
    first_not_number: Cell | None = None
    not_classes: int = 0  # numbers that are not class indices: 1.5, -1, 1e2
    first_not_class: Cell | None = None
    top_class: int | None = None  # the largest class index

    def add(self, text: str, row: int, line: int) -> bool:
        """Count the cell; False when it holds no number."""
        if not is_number(text):
            self.not_numbers += 1
            self.first_not_number = self.first_not_number or Cell(row, line, text)
            return False
        if not self.classes:
            return True
        if _CLASS_INDEX.fullmatch(text):
            value = int(float(text))
            self.top_class = value if self.top_class is None else max(self.top_class, value)
        else:
            self.not_classes += 1
            self.first_not_class = self.first_not_class or Cell(row, line, text)
        return True


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: int  # data rows read
    whole: bool  # every row of the file was read: `rows` is its row count
    cells: dict[str, ColumnCells]  # the columns asked for that the header names
    incomplete: tuple[int, ...]  # 0-based rows, ascending, with a cell holding no number in an asked column
    ragged: Cell | None  # the first row whose cell count differs from the header's (text: that count);
    # such rows are counted but their cells are not looked at

    def complete_rows(self, start: int, stop: int) -> int:
        """Rows in [start, stop) whose asked cells all hold numbers."""
        dropped = bisect_left(self.incomplete, stop) - bisect_left(self.incomplete, start)
        return stop - start - dropped


def is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def read_table(path: Path, delimiter: str, columns: tuple[str, ...], classes: tuple[str, ...] = ()) -> Table:
    """The header and what the first MAX_ROWS rows hold in `columns` (in `classes`, class indices too);
    OSError or TableError when unreadable. Read once per file version and question: every rule that
    looks at the file shares the result."""
    stat = path.stat()
    return _read(path.resolve(), stat.st_size, stat.st_mtime_ns, delimiter, columns, classes)


@lru_cache(maxsize=16)
def _read(
    path: Path, _size: int, _mtime_ns: int, delimiter: str, columns: tuple[str, ...], classes: tuple[str, ...]
) -> Table:
    with open(path, encoding="utf-8", newline="") as file:
        reader = csv.reader(file, delimiter=delimiter)
        try:
            header = _header(reader)
            asked = {
                index: (name, ColumnCells(name in classes))
                for index, name in enumerate(header)
                if name in columns
            }
            incomplete: list[int] = []
            ragged: Cell | None = None
            rows, whole = 0, True
            while True:
                start = reader.line_num + 1
                row = next(reader, None)
                if row is None:
                    break
                if not row:
                    continue  # a blank line: CSVDataset skips it too
                if rows == MAX_ROWS:
                    whole = False
                    break
                rows += 1
                if len(row) != len(header):
                    ragged = ragged or Cell(rows, start, str(len(row)))
                    continue  # its cells are not where the header says
                complete = True
                for index, (_, column) in asked.items():
                    complete = column.add(row[index], rows, start) and complete
                if not complete:
                    incomplete.append(rows - 1)
        except csv.Error as exc:
            raise TableError(f"is not readable as CSV at line {reader.line_num}: {exc}") from None
        except UnicodeDecodeError:  # a Latin-1 or Windows-1252 file: MindSpore reads UTF-8
            raise TableError(f"is not UTF-8 text ({_first_undecodable(path)}): save it as UTF-8") from None
    cells = dict(asked.values())
    return Table(header, rows, whole, cells, tuple(incomplete), ragged)


def _header(reader: Iterable[list[str]]) -> tuple[str, ...]:
    row = next((row for row in reader if row), None)  # blank lines before the header are skipped
    if row is None:
        raise TableError("is empty: its first row must name the columns")
    for at, name in enumerate(row):
        if name in row[:at]:
            raise TableError(f"names the column {name!r} twice in its header (CSVDataset cannot read it)")
    return tuple(row)


def _first_undecodable(path: Path) -> str:
    """Where the first byte that is not UTF-8 sits (the decoder reads in blocks, so it cannot tell)."""
    with open(path, "rb") as file:
        for number, line in enumerate(file, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return f"byte 0x{line[exc.start]:02x} at line {number}, column {exc.start + 1}"
    return "a byte sequence cut at the end"
