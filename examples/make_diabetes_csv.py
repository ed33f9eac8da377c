"""Write scikit-learn's diabetes data (442 patients, no download) as a CSV file with a header row.

    python examples/make_diabetes_csv.py [OUT_FILE] [--exact]

Columns: the ten features as scikit-learn ships them (age, sex, bmi, bp, s1..s6, each centred and
scaled), then `progression`, the disease progression one year later, standardised (mean 0, std 1) so
that MSELoss starts near 1, as examples/diabetes_data.py does. Values have 6 significant digits;
--exact writes each float32 value in full (the shortest text that reads back as the same float32).
examples/data/diabetes.csv (read by examples/diabetes_csv.yaml) was made with the defaults.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes

OUT = Path(__file__).parent / "data" / "diabetes.csv"


def _text(value: np.float32, exact: bool) -> str:
    if exact:
        return np.format_float_positional(value, unique=True, trim="-")
    return f"{float(value):.6g}"


def write_diabetes_csv(out: Path = OUT, exact: bool = False) -> Path:
    data = load_diabetes()
    features = data.data.astype(np.float32)
    target = ((data.target - data.target.mean()) / data.target.std()).astype(np.float32)
    lines = [",".join([*data.feature_names, "progression"])]
    lines += [",".join(_text(v, exact) for v in (*row, y)) for row, y in zip(features, target, strict=True)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", default=OUT)
    parser.add_argument("--exact", action="store_true", help="every float32 value in full")
    args = parser.parse_args()
    print(write_diabetes_csv(args.out, args.exact))


if __name__ == "__main__":
    main()
