"""Write assets/bvs/diabetes.csv: the diabetes regression data of Efron, Hastie, Johnstone & Tibshirani (2004).

Source: "Least Angle Regression", Annals of Statistics 32(2), 407–499 — 442
patients, 10 baseline predictors (age, sex, BMI, blood pressure, six blood
serum measurements) and a quantitative measure of disease progression one
year later. The copy used here is the one shipped with scikit-learn
(``sklearn.datasets.load_diabetes(scaled=False)``), distributed under
scikit-learn's BSD-3-Clause licence; the original data are published by the
authors for research use at https://hastie.su.domains/Papers/LARS/.

Run from the project root with the dev requirements installed:
    python assets/build_diabetes.py
"""

from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes

OUT = Path(__file__).resolve().parent / "bvs" / "diabetes.csv"


def main() -> None:
    data = load_diabetes(scaled=False)
    names = [*data.feature_names, "progression"]
    table = np.column_stack([data.data, data.target])
    OUT.parent.mkdir(exist_ok=True)
    np.savetxt(OUT, table, delimiter=",", header=",".join(names), comments="", fmt="%.6g")
    print(f"wrote {OUT}: {table.shape[0]} rows, columns {names}")


if __name__ == "__main__":
    main()
