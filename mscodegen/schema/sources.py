"""What the config alone (plus a cheap look at data files) tells about a dataset: classes, samples.

Nothing here reads more than a file header, a directory listing or (CSV) the first csv_files.MAX_ROWS
rows, and nothing imports MindSpore:
`mscodegen validate` uses these counts to catch empty epochs and out-of-range labels statically.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mscodegen.schema.csv_files import TableError, read_table
from mscodegen.schema.data import (
    Cifar10Data,
    CsvData,
    DigitsData,
    ImageFolderData,
    MnistData,
    SyntheticData,
    split_fractions,
)

DIGITS_TOTAL = 1797  # sklearn.datasets.load_digits
CIFAR10_RECORD = 1 + 32 * 32 * 3  # one label byte, then the 3x32x32 image
MNIST_LABEL_MAGIC = 0x00000801
MAX_LISTED = 200_000  # directory entries an image_folder count may look at before it gives up
MNIST_LABELS = {"train": "train-labels-idx1-ubyte", "test": "t10k-labels-idx1-ubyte"}
CIFAR10_BATCHES = {"train": "data_batch", "test": "test_batch"}
TEN_CLASSES = {DigitsData: "digits", MnistData: "MNIST", Cifar10Data: "CIFAR-10"}


@dataclass(frozen=True)
class Count:
    """A number known about a dataset, and where it comes from (for the message)."""

    value: int
    why: str


def class_count(spec: object, config_dir: Path) -> Count | None:
    """Number of label values the source yields (labels are 0 .. n-1), when known."""
    if isinstance(spec, SyntheticData):
        return Count(spec.num_classes, f"data's num_classes is {spec.num_classes}")
    if isinstance(spec, DigitsData | MnistData | Cifar10Data):
        return Count(10, f"{TEN_CLASSES[type(spec)]} has 10 classes")
    if isinstance(spec, ImageFolderData):
        classes = _class_dirs(config_dir / spec.path)
        if not classes:
            return None
        return Count(len(classes), f"{spec.path} has {len(classes)} class sub-directories")
    return None


def sample_count(spec: object, config_dir: Path) -> Count | None:
    """Samples per epoch of the source (after its num_samples cap), when cheaply known."""
    count = _source_samples(spec, config_dir)
    cap = getattr(spec, "num_samples", None)
    if count is not None and cap is not None and cap < count.value:  # synthetic: count == cap
        return Count(cap, f"num_samples caps it at {cap}")
    return count


def _source_samples(spec: object, config_dir: Path) -> Count | None:
    if isinstance(spec, SyntheticData):
        return Count(spec.num_samples, f"num_samples is {spec.num_samples}")
    if isinstance(spec, DigitsData):
        test = int(DIGITS_TOTAL * spec.test_fraction)
        n = DIGITS_TOTAL - test if spec.split == "train" else test
        return Count(n, f"the digits {spec.split} split has {n} images")
    if isinstance(spec, MnistData):
        return _mnist_samples(spec, config_dir / spec.path)
    if isinstance(spec, Cifar10Data):
        return _cifar10_samples(spec, config_dir / spec.path)
    if isinstance(spec, ImageFolderData):
        return _image_folder_samples(config_dir / spec.path)
    if isinstance(spec, CsvData):
        return _csv_samples(spec, config_dir)
    return None


def split_sizes(rows: int, fractions: tuple[float, float]) -> tuple[int, int] | None:
    """The rows Dataset.split(fractions) gives each part, or None where it raises (a part rounds to 0 rows).

    As mindspore/dataset/engine/datasets.py `_get_absolute_split_sizes` computes them: round each part,
    then give the first part what is missing, or take the surplus from the first part that keeps a row.
    """
    sizes = [int(round(f * rows)) for f in fractions]
    if rows <= 0 or 0 in sizes:
        return None
    difference = rows - sum(sizes)
    if difference > 0:
        sizes[0] += difference
    else:
        for i, size in enumerate(sizes):
            if size + difference > 0:
                sizes[i] += difference
                break
    return sizes[0], sizes[1]


def csv_rows(spec: CsvData, rows: int) -> tuple[int, int] | None:
    """The [start, stop) of the file's first `rows` rows that spec reads, or None: its split is empty."""
    if spec.num_samples is not None:
        rows = min(rows, spec.num_samples)
    if spec.split is None or rows == 0:
        return 0, rows
    sizes = split_sizes(rows, split_fractions(spec.test_fraction))
    if sizes is None:
        return None
    return (0, sizes[0]) if spec.split == "train" else (sizes[0], rows)


def _csv_samples(spec: CsvData, config_dir: Path) -> Count | None:
    """The rows of the split, less those `missing: drop` drops; known when the file was read to its end
    (or num_samples caps the rows read)."""
    try:
        table = read_table(config_dir / spec.path, spec.field_delim, spec.csv_columns(), spec.class_columns())
    except (OSError, TableError):
        return None
    if not table.whole and (spec.num_samples is None or spec.num_samples > table.rows):
        return None
    span = csv_rows(spec, table.rows)
    if span is None:
        return None  # Dataset.split raises: rules/tables.py reports it at test_fraction
    start, stop = span
    rows = min(table.rows, spec.num_samples or table.rows)
    capped = rows < table.rows
    if spec.split:
        first, cap = ("first ", " (num_samples)") if capped else ("", "")
        why = f"the {spec.split} split of {spec.path}: {stop - start} of its {first}{rows} rows{cap}"
    else:
        why = f"{spec.path} has {table.rows} rows" + (f", num_samples reads {rows}" if capped else "")
    if spec.missing != "drop":
        return Count(stop - start, why)
    kept = table.complete_rows(start, stop)
    return Count(kept, f"{why}, {stop - start - kept} dropped by missing: drop")


def _usages(usage: str) -> tuple[str, ...]:
    return ("train", "test") if usage == "all" else (usage,)


def _mnist_samples(spec: MnistData, directory: Path) -> Count | None:
    """The item count in each labels file's idx header (magic 0x801, then a big-endian count)."""
    total, found = 0, 0
    for usage in _usages(spec.usage):
        path = directory / MNIST_LABELS[usage]
        if spec.usage == "all" and not path.exists():
            continue  # usage all reads the pairs that are there
        try:
            with open(path, "rb") as file:
                header = file.read(8)
        except OSError:
            return None
        if len(header) < 8 or int.from_bytes(header[:4], "big") != MNIST_LABEL_MAGIC:
            return None
        total += int.from_bytes(header[4:], "big")
        found += 1
    if not found:
        return None
    return Count(total, f"the MNIST {spec.usage} label files hold {total} samples")


def _cifar10_samples(spec: Cifar10Data, directory: Path) -> Count | None:
    """Sizes of the binary batches: one 3073-byte record per image."""
    total = 0
    try:
        files = [p for p in directory.iterdir() if p.suffix == ".bin"]
    except OSError:
        return None
    for usage in _usages(spec.usage):
        batches = [path for path in files if CIFAR10_BATCHES[usage] in path.name]
        if not batches:
            return None  # a missing batch file is file_problems' to report
        for path in batches:
            size = path.stat().st_size
            if size % CIFAR10_RECORD:
                return None
            total += size // CIFAR10_RECORD
    return Count(total, f"the CIFAR-10 {spec.usage} batches hold {total} images")


def _class_dirs(directory: Path) -> list[Path] | None:
    """The class sub-directories, or None when the directory cannot be read."""
    try:
        with os.scandir(directory) as entries:
            dirs = [Path(e.path) for e in entries if e.is_dir()]
    except OSError:
        return None
    return dirs


def _image_folder_samples(directory: Path) -> Count | None:
    """Files in the class sub-directories (ImageFolderDataset reads every file without `extensions`)."""
    classes = _class_dirs(directory)
    if not classes:
        return None  # no class sub-directory is file_problems' to report
    total = seen = 0
    for class_dir in classes:
        try:
            with os.scandir(class_dir) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_LISTED:
                        return None
                    if entry.is_dir():
                        return None  # nested folders become classes of their own: do not guess
                    total += entry.is_file()
        except OSError:
            return None
    return Count(total, f"{directory.name}/ holds {total} image files in {len(classes)} classes")


# Image sizes from file headers: builtin networks need [C, H, W], and image_folder does not state it.
# A few lines per format instead of a dependency (PIL is not one of the generator's).
_HEADER_BYTES = 64 * 1024  # a JPEG's frame header follows its EXIF/ICC segments; larger ones are not read
_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


@dataclass(frozen=True)
class ImageSize:
    """The first image of an image_folder and its size in pixels, read from its header."""

    path: Path
    width: int
    height: int


def first_image_size(directory: Path) -> ImageSize | None:
    """The size of the first file (by name) of the first class (by name), if its header gives one.

    ImageFolderDataset decodes every image to RGB; a folder of differently sized images still
    needs a resize, which the caller says.
    """
    classes = _class_dirs(directory)
    for class_dir in sorted(classes or []):
        try:
            with os.scandir(class_dir) as entries:
                files = sorted(Path(e.path) for e in entries if e.is_file())
        except OSError:
            return None
        if files:
            size = image_size(files[0])
            return ImageSize(files[0], *size) if size else None
    return None


def image_size(path: Path) -> tuple[int, int] | None:
    """(width, height) from a PNG, JPEG, GIF or BMP header; None for anything else or a truncated file."""
    try:
        with open(path, "rb") as file:
            head = file.read(_HEADER_BYTES)
    except OSError:
        return None
    size: tuple[int, int] | None = None
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR" and len(head) >= 24:
        size = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    elif head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        size = int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    elif head.startswith(b"BM") and len(head) >= 26:
        width = int.from_bytes(head[18:22], "little", signed=True)
        height = int.from_bytes(head[22:26], "little", signed=True)
        size = width, abs(height)  # a negative height stores the rows top-down
    elif head.startswith(b"\xff\xd8"):
        size = _jpeg_size(head)
    return size if size and min(size) > 0 else None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    """The frame header's size: walk the segments (marker, 2-byte length) up to the first SOFn."""
    at = 2
    while at + 4 <= len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _JPEG_FRAMES:
            if at + 9 > len(head):
                return None
            return int.from_bytes(head[at + 7 : at + 9], "big"), int.from_bytes(head[at + 5 : at + 7], "big")
        if 0xD0 <= marker <= 0xD9 or marker == 0x01:  # markers without a length
            at += 2
            continue
        at += 2 + int.from_bytes(head[at + 2 : at + 4], "big")
    return None
