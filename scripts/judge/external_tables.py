#!/usr/bin/python3
"""Judge whvi's defaults on real tables that are not in the repository.

For each table (from the Debian packages python3-sklearn and python3-statsmodels)
this script:

  1. writes the table as a CSV file into a scratch folder (never into the repository);
  2. writes a whvi config from configs/examples/csv-regression.yaml or
     csv-classification.yaml, changing only data.dataset, data.target,
     data.missing (impute, the program's default), data.categorical (only for
     columns the data set's documentation says are codes written as numbers),
     likelihood (classification: the example's softmax), output.dir/name and,
     for a second row, model.kind;
  3. runs `whvi --threads T train --config C --parallel 1` (one whvi process at a time),
     with a private copy of the binary (OUT_DIR/bin/whvi, its sha256 in the header) so a
     rebuild of build/whvi during the run cannot mix two programs in one table;
  4. for each split reads NAME/split-KK-test-rows.txt and fits scikit-learn peers on
     the complement rows with the same kind of preprocessing (median / most-frequent
     imputation with missing indicators, one-hot for text and declared categories,
     standardised inputs; regression: standardised target, undone for the metrics):
       regression:     GaussianProcessRegressor (ARD RBF x Constant + White, normalize_y,
                       3 restarts), BayesianRidge;
       classification: LogisticRegressionCV (C by 5-fold CV on the training rows only),
                       RandomForestClassifier (500 trees), HistGradientBoostingClassifier;
     and scores them on whvi's held-out rows: regression NLL per row (Gaussian
     predictive, target's units), RMSE, 95% interval coverage; classification NLL,
     accuracy, ECE (15 equal-width bins, top label);
  5. reads whvi's split records for the same metrics (`mnll`: the predictive NLL the
     log prints, -mean log of the Monte Carlo mixture; not `mnll_paper`);
  6. runs `whvi predict` with split 0's checkpoint on the whole CSV with `--keep TARGET`
     and checks it writes exactly one row per input row, in order, with the kept
     column copied unchanged;
  (The tables named *-uci are written instead as folders in the UCI layout, with 3
  stored random 90/10 splits, and trained from the regression example with
  data.dataset the folder and data.protocol standard: the diabetes table again, a
  Friedman #1 and a heteroscedastic problem generated here. Step 6 is skipped there.)
  7. writes RESULTS.md and results.json (default results/external/), headed with the
     command, git commit, machine, thread count and date.

Usage (from the repository root; needs the Debian python with scikit-learn 1.2,
pandas and statsmodels, i.e. /usr/bin/python3, not a pyenv python):

  /usr/bin/python3 scripts/judge/external_tables.py [--models whvi,mcd] [--tables NAMES]
      [--whvi build/whvi] [--threads 1] [--data-dir /tmp/whvi-external/data]
      [--out-dir /tmp/whvi-external/out] [--results results/external]

  --models   whvi model kinds, one row each; `default` keeps the example's own
             model.kind (the row reads "default (KIND)"; the default)
  --tables   comma-separated subset of: diabetes, grunfeld, star98, fertility,
             breast_cancer, wine, anes96, modechoice, and the UCI-layout folders
             diabetes-uci, friedman-uci, hetero-uci (default: the eight CSV tables)
  --threads  whvi's global --threads (default 1); the peers always use one thread
  --list     print the tables and their sources, then exit

Exit status 0 when every whvi run and check completed (whatever the verdicts), 1 otherwise.
"""

import os

# One thread for numpy / scikit-learn: the machine is shared.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse
import datetime
import gzip
import hashlib
import json
import math
import platform
import shlex
import shutil
import subprocess
import sys
import time
import warnings

# scikit-learn, pandas, numpy and PyYAML from Debian's packages (python3-sklearn,
# python3-statsmodels): missing, only -h and --list work, and main() says so.
_IMPORT_ERROR = None
try:
    import numpy as np
    import pandas as pd
    import yaml

    import sklearn
    import sklearn.datasets
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    from sklearn.impute import MissingIndicator, SimpleImputer
    from sklearn.linear_model import BayesianRidge, LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
except ImportError as _e:
    _IMPORT_ERROR = _e

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SK_DATA = "/usr/lib/python3/dist-packages/sklearn/datasets/data"
SM_DATA = "/usr/lib/python3/dist-packages/statsmodels/datasets"
Z95 = 1.959963984540054
CRITERION = {
    "regression": "NLL within 0.05 nats of the best scikit-learn peer, 95% coverage in [0.90, 0.98]",
    "classification": "NLL within 0.03 nats of the best scikit-learn peer, ECE <= 0.06",
}


# --------------------------------------------------------------------------- tables
# Each loader returns a DataFrame whose columns are the features and the target
# (the target last), exactly as written to the CSV file.

def load_diabetes():
    names = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
    with gzip.open(os.path.join(SK_DATA, "diabetes_data_raw.csv.gz"), "rt") as f:
        x = np.loadtxt(f)
    with gzip.open(os.path.join(SK_DATA, "diabetes_target.csv.gz"), "rt") as f:
        y = np.loadtxt(f)
    df = pd.DataFrame(x, columns=names)
    df["sex"] = df["sex"].astype(int)  # 1/2: a category written as a number
    df["age"] = df["age"].astype(int)
    df["progression"] = y
    return df


def load_diabetes_numbers():
    """The same diabetes table with every column a number (the UCI layout holds numbers only)."""
    return load_diabetes()


def load_friedman():
    """Friedman (1991) #1 by scikit-learn's make_friedman1: 400 rows, 10 inputs (5 unused), noise sd 1."""
    x, y = sklearn.datasets.make_friedman1(n_samples=400, n_features=10, noise=1.0, random_state=2026)
    df = pd.DataFrame(x, columns=[f"x{i + 1}" for i in range(10)])
    df["y"] = y
    return df


def load_hetero():
    """A heteroscedastic problem: 400 rows, 4 inputs ~ U[-2, 2], y = sin(2 x1) + x2 / 2 + e,
    e ~ N(0, (0.1 + 0.5 |x3|)^2): the noise sd varies fivefold with an input."""
    rng = np.random.RandomState(2026)
    x = rng.uniform(-2.0, 2.0, size=(400, 4))
    y = np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1] + (0.1 + 0.5 * np.abs(x[:, 2])) * rng.standard_normal(400)
    df = pd.DataFrame(x, columns=[f"x{i + 1}" for i in range(4)])
    df["y"] = y
    return df


def load_sklearn_headed(fname, names):
    # sklearn's format: first line "n_samples,n_features,class names...", then rows, label last
    with open(os.path.join(SK_DATA, fname)) as f:
        head = f.readline().strip().split(",")
        data = np.loadtxt(f, delimiter=",")
    n, d = int(head[0]), int(head[1])
    classes = head[2:]
    assert data.shape == (n, d + 1), (fname, data.shape)
    df = pd.DataFrame(data[:, :d], columns=names)
    return df, data[:, d].astype(int), classes


def load_breast_cancer():
    from sklearn.datasets import load_breast_cancer as _l
    names = [str(n).replace(" ", "_") for n in _l().feature_names]  # names only; values from the CSV
    df, y, classes = load_sklearn_headed("breast_cancer.csv", names)
    df["diagnosis"] = [classes[i] for i in y]  # text labels: malignant / benign
    return df


def load_wine():
    from sklearn.datasets import load_wine as _l
    names = [str(n).replace("/", "_") for n in _l().feature_names]
    df, y, classes = load_sklearn_headed("wine_data.csv", names)
    df["cultivar"] = y  # 0, 1, 2
    return df


def load_grunfeld():
    df = pd.read_csv(os.path.join(SM_DATA, "grunfeld", "grunfeld.csv"))
    df["year"] = df["year"].astype(int)
    return df[["value", "capital", "firm", "year", "invest"]]  # firm: text


def load_star98():
    df = pd.read_csv(os.path.join(SM_DATA, "star98", "star98.csv"))
    # data.py names the first two columns NABOVE, NBELOW (9th graders above / below the
    # national median in maths); the target is the percentage above. Interaction terms dropped.
    above, below = df.iloc[:, 0], df.iloc[:, 1]
    base = ["LOWINC", "PERASIAN", "PERBLACK", "PERHISP", "PERMINTE", "AVYRSEXP", "AVSALK",
            "PERSPENK", "PTRATIO", "PCTAF", "PCTCHRT", "PCTYRRND"]
    out = df[base].copy()
    out["pct_above_median"] = 100.0 * above / (above + below)
    return out


def load_fertility():
    df = pd.read_csv(os.path.join(SM_DATA, "fertility", "fertility.csv"))
    years = [str(y) for y in range(1960, 2001, 5)]
    out = df[years].copy()
    out.columns = ["tfr_" + y for y in years]
    out["tfr_2010"] = df["2010"]  # real gaps of the World Bank series, features and target
    return out


def load_anes96():
    df = pd.read_csv(os.path.join(SM_DATA, "anes96", "anes96.csv"), sep="\t")
    df.columns = [c.strip("'") for c in df.columns]
    cols = ["popul", "TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "age", "educ", "income", "vote"]
    out = df[cols].copy()
    for c in cols:
        if c != "popul" and (out[c] == out[c].round()).all():
            out[c] = out[c].astype(int)
    return out  # PID 0..6: party identification, a code written as a number


def load_modechoice():
    df = pd.read_csv(os.path.join(SM_DATA, "modechoice", "modechoice.csv"), sep=";")
    out = df[["mode", "ttme", "invc", "invt", "gc", "hinc", "psize", "choice"]].copy()
    # data.py: mode 1 air, 2 train, 3 bus, 4 car; written as text here (a text category)
    out["mode"] = out["mode"].map({1: "air", 2: "train", 3: "bus", 4: "car"})
    assert out["mode"].notna().all()
    out["choice"] = out["choice"].map({0: "no", 1: "yes"})
    assert out["choice"].notna().all()
    return out


TABLES = [
    dict(name="diabetes", task="regression", target="progression", categorical=["sex"],
         loader=load_diabetes, package="python3-sklearn",
         files=[SK_DATA + "/diabetes_data_raw.csv.gz", SK_DATA + "/diabetes_target.csv.gz"],
         about="Efron et al. (2004) diabetes: disease progression after one year from age, sex (1/2), BMI, "
               "blood pressure and six serum measurements (raw, unscaled)"),
    dict(name="grunfeld", task="regression", target="invest", categorical=[],
         loader=load_grunfeld, package="python3-statsmodels", files=[SM_DATA + "/grunfeld/grunfeld.csv"],
         about="Grunfeld (1950): gross investment of 11 US firms, 1935-1954, from market value, capital, "
               "firm (text) and year"),
    dict(name="star98", task="regression", target="pct_above_median", categorical=[],
         loader=load_star98, package="python3-statsmodels", files=[SM_DATA + "/star98/star98.csv"],
         about="California STAR 1998: percentage of a district's 9th graders above the national median "
               "in maths (NABOVE / (NABOVE + NBELOW)) from the 12 base district variables"),
    dict(name="fertility", task="regression", target="tfr_2010", categorical=[],
         loader=load_fertility, package="python3-statsmodels", files=[SM_DATA + "/fertility/fertility.csv"],
         about="World Bank total fertility rate per country / aggregate: 2010 from 1960, 1965, ..., 2000; "
               "the series' own gaps are the missing cells (rows missing 2010 are dropped by whvi and the peers)"),
    dict(name="breast_cancer", task="classification", target="diagnosis", categorical=[],
         loader=load_breast_cancer, package="python3-sklearn", files=[SK_DATA + "/breast_cancer.csv"],
         about="Wisconsin diagnostic breast cancer: malignant / benign (text labels) from 30 nucleus features"),
    dict(name="wine", task="classification", target="cultivar", categorical=[],
         loader=load_wine, package="python3-sklearn", files=[SK_DATA + "/wine_data.csv"],
         about="UCI wine recognition: one of 3 cultivars (0/1/2) from 13 chemical measurements"),
    dict(name="anes96", task="classification", target="vote", categorical=["PID"],
         loader=load_anes96, package="python3-statsmodels", files=[SM_DATA + "/anes96/anes96.csv"],
         about="American National Election Studies 1996: expected vote (0 Clinton, 1 Dole) from place "
               "population, TV news, left-right scales, party identification PID (code 0-6), age, "
               "education and income (ordinal codes)"),
    dict(name="modechoice", task="classification", target="choice", categorical=[],
         loader=load_modechoice, package="python3-statsmodels", files=[SM_DATA + "/modechoice/modechoice.csv"],
         about="Intercity travel mode choice (1987, 210 travellers x 4 modes): whether a mode (air/train/bus/car, "
               "written as text here) was chosen, from its waiting time, cost, travel time, generalised cost, "
               "household income and party size; the `individual` id column is left out"),
    # The UCI folder layout of the Bayesian-deep-learning benchmarks (data.txt, index files, the
    # stored splits): the same examples' config with data.dataset the folder, data.protocol
    # standard and its 3 stored random 90/10 splits (seed 0, written by this script).
    dict(name="diabetes-uci", task="regression", target="progression", categorical=[], layout="uci",
         loader=load_diabetes_numbers, package="python3-sklearn",
         files=[SK_DATA + "/diabetes_data_raw.csv.gz", SK_DATA + "/diabetes_target.csv.gz"],
         about="the diabetes table above in the UCI folder layout (numbers only: sex as 1/2)"),
    dict(name="friedman-uci", task="regression", target="y", categorical=[], layout="uci",
         loader=load_friedman, package="python3-sklearn", files=["sklearn.datasets.make_friedman1, seed 2026"],
         about="Friedman #1 (make_friedman1): 400 rows, 10 inputs of which 5 are unused, noise sd 1"),
    dict(name="hetero-uci", task="regression", target="y", categorical=[], layout="uci",
         loader=load_hetero, package="numpy", files=["numpy RandomState(2026), this script's load_hetero"],
         about="heteroscedastic: 400 rows, 4 inputs ~ U[-2, 2], y = sin(2 x1) + x2/2 + noise of sd 0.1 + 0.5 |x3|"),
]
UCI_SPLITS = 3


def write_uci_folder(df, target, folder):
    """df as a folder in the UCI layout: data.txt (the features, then the target), index files and
    UCI_SPLITS random 90/10 splits (numpy RandomState(k) for split k)."""
    os.makedirs(folder, exist_ok=True)
    feats = [c for c in df.columns if c != target]
    values = df[feats + [target]].to_numpy(dtype=float)
    np.savetxt(os.path.join(folder, "data.txt"), values, fmt="%.10g")
    with open(os.path.join(folder, "index_features.txt"), "w") as f:
        f.write("".join(f"{i}\n" for i in range(len(feats))))
    with open(os.path.join(folder, "index_target.txt"), "w") as f:
        f.write(f"{len(feats)}\n")
    with open(os.path.join(folder, "n_splits.txt"), "w") as f:
        f.write(f"{UCI_SPLITS}\n")
    n = len(df)
    for k in range(UCI_SPLITS):
        perm = np.random.RandomState(k).permutation(n)
        n_test = int(round(0.1 * n))
        for kind, rows in (("test", np.sort(perm[:n_test])), ("train", np.sort(perm[n_test:]))):
            with open(os.path.join(folder, f"index_{kind}_{k}.txt"), "w") as f:
                f.write("".join(f"{r}\n" for r in rows))


# --------------------------------------------------------------------------- helpers

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run_cmd(argv, log_path, timeout):
    """Runs argv (no shell); stdout+stderr to log_path. Returns (rc, seconds)."""
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        log.write("$ " + shlex.join(argv) + "\n")
        log.flush()
        try:
            p = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, cwd=REPO)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    return rc, time.monotonic() - t0


def last_lines(path, n=3):
    try:
        with open(path) as f:
            return [l.rstrip("\n") for l in f.readlines()[-n:]]
    except OSError:
        return []


def make_config(example_path, table, csv_path, out_dir, name, model):
    with open(example_path) as f:
        cfg = yaml.safe_load(f)
    if table.get("layout") == "uci":  # the folder: its own features, target and stored splits
        for key in ("target", "missing", "test_fraction"):
            cfg["data"].pop(key, None)
        cfg["data"].update(dataset=csv_path, protocol="standard", splits=UCI_SPLITS)
        if model != "default":
            cfg["model"]["kind"] = model
        cfg["output"].update(dir=out_dir, name=name)
        return cfg
    cfg["data"]["dataset"] = csv_path
    cfg["data"]["target"] = table["target"]
    cfg["data"]["missing"] = "impute"
    if table["categorical"]:
        cfg["data"]["categorical"] = list(table["categorical"])
    if table["task"] == "classification":
        assert cfg.get("likelihood", {}).get("kind") == "softmax", "the classification example is not softmax"
    else:
        assert "likelihood" not in cfg or cfg["likelihood"].get("kind", "gaussian") == "gaussian"
    if model != "default":  # default: the example's own model.kind
        cfg["model"]["kind"] = model
    cfg["output"]["dir"] = out_dir
    cfg["output"]["name"] = name
    return cfg


def mean_se(xs):
    xs = np.asarray([x for x in xs if x is not None], dtype=float)
    if len(xs) == 0:
        return None, None
    m = float(np.mean(xs))
    se = float(np.std(xs, ddof=1) / math.sqrt(len(xs))) if len(xs) > 1 else float("nan")
    return m, se


def ece_top_label(prob, y_idx, bins=15):
    conf = prob.max(axis=1)
    pred = prob.argmax(axis=1)
    correct = (pred == y_idx).astype(float)
    b = np.clip(np.ceil(conf * bins).astype(int) - 1, 0, bins - 1)  # (b/15, (b+1)/15]
    e = 0.0
    for k in range(bins):
        m = b == k
        if m.any():
            e += m.sum() / len(conf) * abs(correct[m].mean() - conf[m].mean())
    return float(e)


def build_preprocessor(num_cols, cat_cols):
    parts = []
    if num_cols:
        parts.append(("num", SimpleImputer(strategy="median", add_indicator=True), num_cols))
    if cat_cols:
        parts.append(("cat", Pipeline([("imp", SimpleImputer(strategy="most_frequent")),
                                       ("oh", OneHotEncoder(handle_unknown="ignore", sparse_output=False))]),
                      cat_cols))
        parts.append(("cat_missing", MissingIndicator(features="missing-only"), cat_cols))
    return Pipeline([("ct", ColumnTransformer(parts, sparse_threshold=0.0)), ("sc", StandardScaler())])


def regression_peers(Xtr, ytr, Xte, yte):
    my, sy = float(ytr.mean()), float(ytr.std())
    z = (ytr - my) / sy
    d = Xtr.shape[1]
    out = {}
    kernel = (ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.ones(d), (1e-2, 1e5))
              + WhiteKernel(0.1, (1e-6, 1e1)))
    peers = {
        "gp": GaussianProcessRegressor(kernel=kernel, normalize_y=True, n_restarts_optimizer=3, random_state=0),
        "bayesian_ridge": BayesianRidge(),
    }
    for name, est in peers.items():
        t0 = time.monotonic()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            est.fit(Xtr, z)
            mu_z, sd_z = est.predict(Xte, return_std=True)
        mu, sd = mu_z * sy + my, sd_z * sy
        sd = np.maximum(sd, 1e-12)
        nll = 0.5 * np.log(2 * np.pi * sd ** 2) + 0.5 * ((yte - mu) / sd) ** 2
        out[name] = dict(nll=float(nll.mean()), rmse=float(np.sqrt(np.mean((yte - mu) ** 2))),
                         coverage_95=float(np.mean(np.abs(yte - mu) <= Z95 * sd)),
                         seconds=time.monotonic() - t0, warnings=len(w))
    return out


def classification_peers(Xtr, ytr_idx, Xte, yte_idx, n_classes):
    out = {}
    peers = {
        "logistic_cv": LogisticRegressionCV(Cs=np.logspace(-4, 4, 17).tolist(),
                                            cv=StratifiedKFold(5, shuffle=True, random_state=0),
                                            scoring="neg_log_loss", max_iter=10000),
        "random_forest": RandomForestClassifier(n_estimators=500, random_state=0, n_jobs=1),
        "hist_gb": HistGradientBoostingClassifier(random_state=0),
    }
    for name, est in peers.items():
        t0 = time.monotonic()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            est.fit(Xtr, ytr_idx)
            p_fit = est.predict_proba(Xte)
        prob = np.zeros((len(Xte), n_classes))
        prob[:, est.classes_] = p_fit
        zero_true = int(np.sum(prob[np.arange(len(yte_idx)), yte_idx] < 1e-15))
        pc = np.clip(prob, 1e-15, 1.0)
        pc /= pc.sum(axis=1, keepdims=True)  # as sklearn.metrics.log_loss (eps 1e-15)
        nll = -np.log(pc[np.arange(len(yte_idx)), yte_idx])
        rec = dict(nll=float(nll.mean()), accuracy=float(np.mean(prob.argmax(axis=1) == yte_idx)),
                   ece=ece_top_label(prob, yte_idx), seconds=time.monotonic() - t0, warnings=len(w),
                   rows_true_class_prob_zero=zero_true)
        if name == "logistic_cv":
            rec["C"] = [float(c) for c in np.atleast_1d(est.C_)]
        out[name] = rec
    return out


def read_test_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                rows.append(int(line))
    return rows


def check_predict(pred_path, csv_path, keep_col, n_rows):
    """One output row per input row, `row` = 1..N, the kept column copied unchanged."""
    info = {}
    try:
        inp = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
        out = pd.read_csv(pred_path, dtype=str, keep_default_na=False)
    except Exception as e:  # noqa: BLE001
        return False, {"error": "cannot read: %s" % e}
    info["input_rows"] = len(inp)
    info["output_rows"] = len(out)
    info["output_columns"] = list(out.columns)
    ok = len(inp) == len(out) == n_rows
    if "row" in out.columns and len(out) == len(inp):
        info["row_is_1_to_N"] = bool((out["row"].astype(int).values == np.arange(1, len(inp) + 1)).all())
        ok = ok and info["row_is_1_to_N"]
    else:
        info["row_is_1_to_N"] = False
        ok = False
    if keep_col in out.columns and len(out) == len(inp):
        info["kept_column_equal"] = bool((out[keep_col].values == inp[keep_col].values).all())
        ok = ok and info["kept_column_equal"]
    else:
        info["kept_column_equal"] = False
        ok = False
    return bool(ok), info


def fmt(x, nd=3):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{nd}f}"


def fmt_pm(m, se, nd=3):
    if m is None:
        return "–"
    if se is None or not math.isfinite(se):
        return fmt(m, nd)
    return f"{m:.{nd}f} ± {se:.{nd}f}"


# --------------------------------------------------------------------------- main work

def describe_data(df, table):
    feats = [c for c in df.columns if c != table["target"]]
    text = [c for c in feats if df[c].dtype == object]
    declared = list(table["categorical"])
    cats = []
    for c in text + declared:
        cats.append(f"{c} ({df[c].nunique()} levels, {'text' if c in text else 'declared code'})")
    return dict(rows=int(len(df)), features=len(feats),
                missing_feature_cells=int(df[feats].isna().sum().sum()),
                missing_target_cells=int(df[table["target"]].isna().sum()),
                missing_feature_cells_target_present=int(df.loc[df[table["target"]].notna(), feats].isna().sum().sum()),
                rows_with_missing_feature=int(df[feats].isna().any(axis=1).sum()),
                rows_with_missing_feature_and_target_present=int(
                    (df[feats].isna().any(axis=1) & df[table["target"]].notna()).sum()),
                text_columns=text, declared_categorical=declared, categories=cats,
                classes=(sorted(map(str, df[table["target"]].dropna().unique()))
                         if table["task"] == "classification" else None))


def judge_table(table, args, log):
    name, task, target = table["name"], table["task"], table["target"]
    res = dict(name=name, task=task, target=target, package=table["package"], files=table["files"],
               about=table["about"], models={}, peers={}, problems=[])
    csv_path = os.path.join(args.data_dir, name + ".csv")
    df0 = table["loader"]()
    df0.to_csv(csv_path, index=False)  # NaN -> empty cell
    df = pd.read_csv(csv_path)  # exactly what whvi reads
    res["csv"] = csv_path
    uci = table.get("layout") == "uci"
    data_path = csv_path
    if uci:
        data_path = os.path.join(args.data_dir, name)
        write_uci_folder(df, target, data_path)
        res["uci_folder"] = data_path
    res["data"] = describe_data(df, table)
    log(f"[{name}] {res['data']['rows']} rows, {res['data']['features']} features, "
        f"{res['data']['missing_feature_cells']} missing feature cells, categories {res['data']['categories']}")

    example = os.path.join(REPO, "configs", "examples",
                           "csv-regression.yaml" if task == "regression" else "csv-classification.yaml")
    feats = [c for c in df.columns if c != target]
    cat_cols = res["data"]["text_columns"] + res["data"]["declared_categorical"]
    num_cols = [c for c in feats if c not in cat_cols]
    if task == "classification":
        classes = sorted(df[target].dropna().unique().tolist())
        cls_index = {c: i for i, c in enumerate(classes)}

    splits_rows = None
    for model in args.models:
        run_name = f"{name}-{model}"
        m = dict(model=model, run_name=run_name)
        res["models"][model] = m
        cfg = make_config(example, table, data_path, args.out_dir, run_name, model)
        cfg_path = os.path.join(args.out_dir, "configs", run_name + ".yaml")
        with open(cfg_path, "w") as f:
            f.write(f"# written by scripts/judge/external_tables.py from configs/examples/{os.path.basename(example)}\n")
            yaml.safe_dump(cfg, f, sort_keys=False)
        m["config"] = cfg_path
        if model == "default":
            m["default_kind"] = cfg["model"]["kind"]
        m["config_changes"] = {"data.dataset": csv_path, "data.target": target, "data.missing": "impute",
                               "data.categorical": table["categorical"] or None,
                               "model.kind": "unchanged" if model == "default" else model,
                               "output.dir": args.out_dir, "output.name": run_name}
        if uci:
            m["config_changes"] = {"data.dataset": data_path, "data.protocol": "standard", "data.splits": UCI_SPLITS,
                                   "data.target, data.missing, data.test_fraction": "removed",
                                   "model.kind": "unchanged" if model == "default" else model,
                                   "output.dir": args.out_dir, "output.name": run_name}
        argv = [args.whvi, "--threads", str(args.threads), "train", "--config", cfg_path, "--parallel", "1"]
        m["train_command"] = shlex.join(argv)
        log_path = os.path.join(args.out_dir, "logs", run_name + "-train.log")
        rc, secs = run_cmd(argv, log_path, args.timeout)
        args.whvi_seconds += secs
        m["train_rc"], m["train_seconds"], m["train_log"] = rc, round(secs, 2), log_path
        log(f"[{name}] whvi train {model}: rc {rc}, {secs:.1f} s")
        if rc != 0:
            m["error"] = last_lines(log_path)
            res["problems"].append(f"whvi train ({model}) exited {rc}: " + " | ".join(m["error"]))
            continue
        # model.kind auto: the kind it chose on validation rows, and every candidate's score
        if model == "auto" or m.get("default_kind") == "auto":
            with open(os.path.join(args.out_dir, run_name + ".json")) as f:
                a = json.load(f).get("auto", {})
            m["auto_chosen"] = a.get("chosen")
            m["auto_candidates"] = {c["kind"]: c.get("validation_mnll", "skipped: " + str(c.get("skipped", ""))[:120])
                                    for c in a.get("candidates", [])}
        # the data line the log prints (what was encoded, imputed and dropped)
        with open(log_path) as f:
            m["log_data_lines"] = [l.rstrip("\n").split("] ", 3)[-1] for l in f
                                   if l.split("] ", 3)[-1].startswith(csv_path + ":")
                                   or l.split("] ", 3)[-1].startswith("data ")][:6]
        splits = []
        k = 0
        while True:
            rec_path = os.path.join(args.out_dir, run_name, f"split-{k:02d}.json")
            if not os.path.exists(rec_path):
                break
            with open(rec_path) as f:
                rec = json.load(f)
            if uci:  # stored split k: the folder's own index file (whvi names none for these)
                rows = read_test_rows(os.path.join(data_path, f"index_test_{k}.txt"))
            else:
                rows = read_test_rows(os.path.join(args.out_dir, run_name, rec.get("test_rows_file",
                                                                                    f"split-{k:02d}-test-rows.txt")))
            s = dict(split=k, n_test=rec.get("n_test"), n_train=rec.get("n_train"), test_rows=rows,
                     nll=rec.get("mnll"), nll_paper=rec.get("mnll_paper"),
                     steps=rec.get("steps"), stopped_because=(rec.get("stopping") or {}).get("stopped_because"),
                     best_step=(rec.get("stopping") or {}).get("best_step"),
                     unseen_category_rows=rec.get("unseen_category_rows"))
            if task == "regression":
                s.update(rmse=rec.get("rmse"), coverage_95=rec.get("coverage_95"))
            else:
                err = rec.get("error")
                s.update(accuracy=(1.0 - err) if err is not None else None, ece=rec.get("ece"),
                         brier=rec.get("brier"))
            if rec.get("n_test") != len(rows):
                res["problems"].append(f"{run_name} split {k}: n_test {rec.get('n_test')} but "
                                       f"{len(rows)} rows in the test-rows file")
            splits.append(s)
            k += 1
        m["splits"] = splits
        with open(os.path.join(args.out_dir, run_name + ".json")) as f:
            m["whvi_commit"] = json.load(f).get("whvi_commit")
        for key in (["nll", "rmse", "coverage_95"] if task == "regression" else ["nll", "accuracy", "ece"]):
            mm, se = mean_se([s[key] for s in splits])
            m[key] = dict(mean=mm, se=se)
        these_rows = [s["test_rows"] for s in splits]
        if splits_rows is None:
            splits_rows = these_rows
        elif these_rows != splits_rows:
            res["problems"].append(f"{run_name}: its test rows differ from the first model's")

        if uci:  # a folder of numbers has no headed CSV to predict on; the records are the check
            m["predict_aligned"] = None
            log(f"[{name}] whvi predict {model}: not run (UCI layout)")
            continue
        # whvi predict on the whole CSV, split 0's checkpoint, keeping the target column
        ckpt = os.path.join(args.out_dir, run_name, "split-00.ckpt")
        pred_path = os.path.join(args.out_dir, run_name + "-predict.csv")
        pargv = [args.whvi, "--threads", str(args.threads), "predict", "--checkpoint", ckpt,
                 "--input", csv_path, "--out", pred_path, "--keep", target]
        plog = os.path.join(args.out_dir, "logs", run_name + "-predict.log")
        prc, psecs = run_cmd(pargv, plog, args.timeout)
        args.whvi_seconds += psecs
        m["predict_command"], m["predict_rc"], m["predict_seconds"] = shlex.join(pargv), prc, round(psecs, 2)
        if prc != 0:
            m["predict_aligned"] = False
            m["predict_check"] = {"error": last_lines(plog)}
            res["problems"].append(f"whvi predict ({model}) exited {prc}: " + " | ".join(last_lines(plog)))
        else:
            ok, info = check_predict(pred_path, csv_path, target, len(df))
            m["predict_aligned"], m["predict_check"] = ok, info
            if not ok:
                res["problems"].append(f"whvi predict ({model}) is not row-aligned: {info}")
            # predict on split 0's held-out rows against the record (agree within Monte Carlo error)
            try:
                pred = pd.read_csv(pred_path)
                r0 = splits[0]["test_rows"]
                if task == "regression":
                    yt = df[target].values[r0]
                    mu = pred["mean"].values[r0]
                    m["predict_split0"] = dict(rmse=float(np.sqrt(np.mean((yt - mu) ** 2))),
                                               record_rmse=splits[0]["rmse"],
                                               coverage_95=float(np.mean((yt >= pred["lower"].values[r0]) &
                                                                         (yt <= pred["upper"].values[r0]))),
                                               record_coverage_95=splits[0]["coverage_95"])
                else:
                    yt = df[target].astype(str).values[r0]
                    pr = pred["predicted"].astype(str).values[r0]
                    m["predict_split0"] = dict(accuracy=float(np.mean(yt == pr)),
                                               record_accuracy=splits[0]["accuracy"])
            except Exception as e:  # noqa: BLE001
                m["predict_split0"] = {"error": str(e)}
        log(f"[{name}] whvi predict {model}: rc {prc}, aligned {m.get('predict_aligned')}")

    if splits_rows is None:
        res["problems"].append("no whvi run finished: no held-out rows to score the peers on")
        return res

    # scikit-learn peers on exactly whvi's held-out rows
    all_rows = np.arange(len(df))
    has_y = df[target].notna().values
    peer_splits = []
    for k, rows in enumerate(splits_rows):
        test = np.asarray(rows, dtype=int)
        if (~has_y[test]).any():
            res["problems"].append(f"split {k}: a held-out row has no target")
        train = np.setdiff1d(all_rows, test)
        train = train[has_y[train]]
        pre = build_preprocessor(num_cols, cat_cols)
        Xtr = pre.fit_transform(df.iloc[train][feats])
        Xte = pre.transform(df.iloc[test][feats])
        if task == "regression":
            ytr, yte = df[target].values[train].astype(float), df[target].values[test].astype(float)
            r = regression_peers(Xtr, ytr, Xte, yte)
        else:
            ytr = np.array([cls_index[v] for v in df[target].values[train]])
            yte = np.array([cls_index[v] for v in df[target].values[test]])
            r = classification_peers(Xtr, ytr, Xte, yte, len(classes))
        peer_splits.append(dict(split=k, n_train=int(len(train)), n_test=int(len(test)),
                                inputs=int(Xtr.shape[1]), peers=r))
        log(f"[{name}] split {k}: peers " + ", ".join(f"{p} NLL {v['nll']:.3f}" for p, v in r.items()))
    res["peer_splits"] = peer_splits
    for p in peer_splits[0]["peers"]:
        keys = ["nll", "rmse", "coverage_95"] if task == "regression" else ["nll", "accuracy", "ece"]
        res["peers"][p] = {key: dict(zip(("mean", "se"), mean_se([ps["peers"][p][key] for ps in peer_splits])))
                           for key in keys}
    best = min(res["peers"], key=lambda p: res["peers"][p]["nll"]["mean"])
    res["best_peer"] = best
    for model, m in res["models"].items():
        if "nll" not in m or m["nll"]["mean"] is None:
            continue
        m["gap_nats"] = m["nll"]["mean"] - res["peers"][best]["nll"]["mean"]
        # per-split gap to the best peer (paired), mean and its standard error
        g = [s["nll"] - ps["peers"][best]["nll"] for s, ps in zip(m["splits"], peer_splits)]
        m["gap_paired"] = dict(zip(("mean", "se"), mean_se(g)))
        if task == "regression":
            cov = m["coverage_95"]["mean"]
            m["meets_criterion"] = bool(m["gap_nats"] <= 0.05 and 0.90 <= cov <= 0.98)
        else:
            m["meets_criterion"] = bool(m["gap_nats"] <= 0.03 and m["ece"]["mean"] <= 0.06)
    return res


# --------------------------------------------------------------------------- report

PEER_LABEL = {"gp": "GP (ARD RBF)", "bayesian_ridge": "BayesianRidge", "logistic_cv": "LogisticRegressionCV",
              "random_forest": "RandomForest (500)", "hist_gb": "HistGradientBoosting"}


def model_label(model, m):
    """A row's model: `auto (the kind it chose)`, `default (the example's kind)`, or the kind."""
    if m.get("auto_chosen") and not m.get("default_kind"):
        return f"auto ({m['auto_chosen']})"
    if m.get("default_kind"):
        chose = f": {m['auto_chosen']}" if m.get("auto_chosen") else ""
        return f"default ({m['default_kind']}{chose})"
    return model


def render_markdown(header, results, args):
    L = []
    L.append("# whvi's defaults on external tables against scikit-learn\n")
    L.append("Written by `scripts/judge/external_tables.py` from the runs below; every number comes from "
             "those runs (see results.json for each split). Do not edit by hand: rerun the command.\n")
    L.append("| | |\n|---|---|")
    for k in ("command", "git_commit", "whvi_version", "whvi_binary", "machine", "threads", "date", "scikit_learn",
              "whvi_seconds", "wall_seconds"):
        v = header[k]
        L.append(f"| {k.replace('_', ' ')} | `{v}` |" if k in ("command", "git_commit", "whvi_version")
                 else f"| {k.replace('_', ' ')} | {v} |")
    L.append("")
    L.append("Splits: whvi's own (the examples' `data.splits: 3`, 90/10, stratified for classes); the peers are "
             "fitted on each split's complement rows (all of them: whvi itself holds 10% of those out to stop "
             "training) and scored on exactly the rows in `NAME/split-KK-test-rows.txt`. NLL is per row, in the "
             "target's units (regression) or nats of the class probability; ± is the standard error over the "
             "splits (sample sd / √n). whvi's NLL is the record's `mnll` (−mean log of the Monte Carlo mixture, "
             "the number `train` logs), not `mnll_paper`. Gap = whvi's mean NLL − the best peer's mean NLL "
             "(best = lowest mean NLL); paired gap = the mean over splits of the per-split difference, ± its "
             "standard error.\n")
    uci = [r for r in results if r.get("uci_folder")]
    if uci:
        L.append("Tables named `*-uci` are folders in the UCI layout (`data.txt`, the index files, "
                 f"{UCI_SPLITS} stored random 90/10 splits written by this script, seed k for split k), trained with "
                 "the regression example changed to `data.dataset: <folder>`, `data.protocol: standard`, "
                 f"`data.splits: {UCI_SPLITS}` and without `data.target`, `data.missing`, `data.test_fraction`; "
                 "the peers see the same numbers (no declared categories). A folder of numbers has no headed "
                 "CSV, so `whvi predict` is not run on them.\n")
        L.append("**UCI layout: every model's 95% coverage at least 0.85** (the goal for any default model):\n")
        for r in uci:
            covs = []
            for k, m in r["models"].items():
                if "coverage_95" not in m:
                    continue
                label = model_label(k, m)
                c = m["coverage_95"]["mean"]
                covs.append(f"{label} {c:.3f}" + ("" if c >= 0.85 else " (below)"))
            L.append(f"- {r['name']}: " + ", ".join(covs))
        L.append("")
    for task in ("regression", "classification"):
        rs = [r for r in results if r["task"] == task]
        if not rs:
            continue
        L.append(f"## {task.capitalize()}\n")
        L.append(f"Criterion: {CRITERION[task]}.\n")
        if task == "regression":
            L.append("| data set | rows | features | missing cells | categories | whvi model | whvi NLL | "
                     "GP NLL | BayesianRidge NLL | best peer | gap (nats) | paired gap | whvi cov95 (best peer) | "
                     "whvi RMSE (best peer) | predict row-aligned | meets criterion |")
            L.append("|" + "---|" * 16)
        else:
            L.append("| data set | rows | features | missing cells | categories | whvi model | whvi NLL | "
                     "LogisticCV NLL | RF NLL | HistGB NLL | best peer | gap (nats) | paired gap | "
                     "whvi ECE (best peer) | whvi accuracy (best peer) | predict row-aligned | meets criterion |")
            L.append("|" + "---|" * 17)
        for r in rs:
            d = r.get("data", {})
            miss = d.get("missing_feature_cells", "–")
            if d.get("missing_feature_cells"):
                miss = f"{miss} ({d['missing_feature_cells_target_present']} in rows with a target)"
            if d.get("missing_target_cells"):
                miss = f"{miss} (+{d['missing_target_cells']} target)"
            cats = "; ".join(d.get("categories", [])) or "none"
            rows = d.get("rows", "–")
            if task == "classification" and d.get("classes"):
                cats += f"; {len(d['classes'])} classes"
            bp = r.get("best_peer")
            P = r.get("peers", {})
            for model, m in r["models"].items():
                if "nll" not in m:
                    cells = [r["name"], str(rows), str(d.get("features", "–")), str(miss), cats, model,
                             f"failed: {' '.join(m.get('error', []))[:200]}"]
                    L.append("| " + " | ".join(cells) + " |" + " – |" * (9 if task == "regression" else 10))
                    continue
                peer_nll = [fmt_pm(P[p]["nll"]["mean"], P[p]["nll"]["se"]) if p in P else "–"
                            for p in (["gp", "bayesian_ridge"] if task == "regression"
                                      else ["logistic_cv", "random_forest", "hist_gb"])]
                gp = m.get("gap_paired", {})
                if task == "regression":
                    cal = f"{fmt(m['coverage_95']['mean'])} ({fmt(P[bp]['coverage_95']['mean'])})" if bp else "–"
                    acc = f"{fmt(m['rmse']['mean'], 2)} ({fmt(P[bp]['rmse']['mean'], 2)})" if bp else "–"
                else:
                    cal = f"{fmt(m['ece']['mean'])} ({fmt(P[bp]['ece']['mean'])})" if bp else "–"
                    acc = f"{fmt(m['accuracy']['mean'])} ({fmt(P[bp]['accuracy']['mean'])})" if bp else "–"
                label = model_label(model, m)
                cells = [r["name"], str(rows), str(d.get("features", "–")), str(miss), cats, label,
                         fmt_pm(m["nll"]["mean"], m["nll"]["se"])] + peer_nll + [
                    PEER_LABEL.get(bp, "–"), f"{m['gap_nats']:+.3f}" if "gap_nats" in m else "–",
                    fmt_pm(gp.get("mean"), gp.get("se")) if gp else "–", cal, acc,
                    {True: "yes", False: "no"}.get(m.get("predict_aligned"), "–"),
                    {True: "yes", False: "no"}.get(m.get("meets_criterion"), "–")]
                L.append("| " + " | ".join(cells) + " |")
        L.append("")
    # per-split detail
    L.append("## Every split\n")
    L.append("| data set | split | train rows (whvi trains on / peers) | test rows | method | NLL | "
             "RMSE or accuracy | cov95 or ECE | whvi steps run; best step, whose parameters are kept (why stopped) |")
    L.append("|" + "---|" * 9)
    for r in results:
        ps_all = r.get("peer_splits", [])
        for model, m in r["models"].items():
            for s in m.get("splits", []):
                a = s.get("rmse") if r["task"] == "regression" else s.get("accuracy")
                c = s.get("coverage_95") if r["task"] == "regression" else s.get("ece")
                ntr = ps_all[s["split"]]["n_train"] if s["split"] < len(ps_all) else "–"
                L.append(f"| {r['name']} | {s['split']} | {s['n_train']} / {ntr} | {s['n_test']} | whvi ({model_label(model, m)}) | "
                         f"{fmt(s['nll'])} | {fmt(a)} | {fmt(c)} | {s.get('steps')}; {s.get('best_step')} ({s.get('stopped_because')}) |")
        for ps in ps_all:
            for p, v in ps["peers"].items():
                a = v.get("rmse") if r["task"] == "regression" else v.get("accuracy")
                c = v.get("coverage_95") if r["task"] == "regression" else v.get("ece")
                extra = ""
                if v.get("rows_true_class_prob_zero"):
                    extra = f" ({v['rows_true_class_prob_zero']} rows with p(true class) < 1e-15, clipped)"
                L.append(f"| {r['name']} | {ps['split']} | – / {ps['n_train']} | {ps['n_test']} | "
                         f"{PEER_LABEL[p]}{extra} | {fmt(v['nll'])} | {fmt(a)} | {fmt(c)} | |")
    L.append("")
    L.append("## whvi predict\n")
    L.append("`whvi predict` with split 0's checkpoint on the whole CSV file, `--keep` the target column: "
             "row-aligned = exactly one output row per input row, `row` = 1..N in order, the kept column "
             "identical to the input's. Split 0's held-out rows re-scored from the predict output beside the "
             "record (they agree within Monte Carlo error when the checkpoint matches the record).\n")
    L.append("| data set | whvi model | input rows | output rows | row-aligned | split 0 from predict | split 0 record |")
    L.append("|---|---|---|---|---|---|---|")
    for r in results:
        for model, m in r["models"].items():
            pc = m.get("predict_check", {})
            p0 = m.get("predict_split0", {})
            if r["task"] == "regression" and "rmse" in p0:
                a = f"RMSE {fmt(p0['rmse'])}, cov95 {fmt(p0['coverage_95'])}"
                b = f"RMSE {fmt(p0['record_rmse'])}, cov95 {fmt(p0['record_coverage_95'])}"
            elif "accuracy" in p0:
                a, b = f"accuracy {fmt(p0['accuracy'])}", f"accuracy {fmt(p0['record_accuracy'])}"
            else:
                a, b = "–", "–"
            L.append(f"| {r['name']} | {model} | {pc.get('input_rows', '–')} | {pc.get('output_rows', '–')} | "
                     f"{ {True: 'yes', False: 'no'}.get(m.get('predict_aligned'), '–') } | {a} | {b} |")
    L.append("")
    probs = [(r["name"], p) for r in results for p in r.get("problems", [])]
    L.append("## Problems found by the run\n")
    if probs:
        for n, p in probs:
            L.append(f"- {n}: {p}")
    else:
        L.append("None: every whvi train and predict exited 0, every record's n_test matched its test-rows file, "
                 "no held-out row lacked its target, and every predict output was row-aligned.")
    L.append("")
    L.append("## whvi's data lines\n")
    for r in results:
        for model, m in r["models"].items():
            for l in m.get("log_data_lines", []):
                L.append(f"- {r['name']} ({model}): `{l}`")
    L.append("")
    return "\n".join(L)


def machine_header(args, argv_full):
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=60).stdout.rstrip()
        except Exception:  # noqa: BLE001
            return ""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ncpu = os.cpu_count()
    commit = sh(["git", "rev-parse", "--short", "HEAD"])
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"])
    ver = sh([args.whvi, "--version"]).splitlines()
    mod = [l[3:] for l in dirty.splitlines() if l.strip()]
    # the files that make the binary are named; the rest are counted
    code = [f for f in mod if f.startswith(("src/", "kernels/", "cmake/", "CMakeLists.txt"))]
    note = ""
    if mod:
        note = f" ({len(mod)} tracked file(s) modified"
        note += f"; the binary's sources among them: {', '.join(code)})" if code else "; none of the binary's sources)"
    return dict(command=argv_full, git_commit=commit + note, git_modified=mod,
                whvi_version=ver[0] if ver else "", machine=f"{cpu}, {ncpu} cores, {platform.machine()}",
                threads=f"whvi --threads {args.threads}; scikit-learn / numpy one thread",
                date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
                scikit_learn=f"{sklearn.__version__}, pandas {pd.__version__}, numpy {np.__version__}, "
                             f"python {platform.python_version()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See the module docstring (head of this file) for the details.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 usage="/usr/bin/python3 scripts/judge/external_tables.py [-h] [--models whvi,mcd] "
                                       "[--tables NAMES] [--whvi PATH] [--threads N] [--data-dir DIR] "
                                       "[--out-dir DIR] [--results DIR] [--timeout S] [--list]")
    ap.add_argument("--models", default="default",
                    help="comma-separated whvi model.kind values, one row each; default = the example's own "
                         "model.kind (the default)")
    ap.add_argument("--tables", default="", help="comma-separated subset of: " + ", ".join(t["name"] for t in TABLES))
    ap.add_argument("--whvi", default=os.path.join(REPO, "build", "whvi"), help="the whvi binary (default build/whvi)")
    ap.add_argument("--threads", type=int, default=1, help="whvi's global --threads (default 1)")
    ap.add_argument("--data-dir", default="/tmp/whvi-external/data", help="where the CSV files are written")
    ap.add_argument("--out-dir", default="/tmp/whvi-external/out", help="whvi's output.dir, configs and logs")
    ap.add_argument("--results", default=os.path.join(REPO, "results", "external"),
                    help="where RESULTS.md and results.json go (default results/external)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per whvi command (default 1800)")
    ap.add_argument("--list", action="store_true", help="print the tables and their sources, then exit")
    args = ap.parse_args()
    if _IMPORT_ERROR is not None and not args.list:
        sys.exit(f"external_tables: {_IMPORT_ERROR}; install Debian's python3-sklearn and python3-statsmodels "
                 "(apt-get install python3-sklearn python3-statsmodels) and run it with /usr/bin/python3")

    if args.list:
        for t in TABLES:
            print(f"{t['name']:14s} {t['task']:14s} {t['package']}: {', '.join(t['files'])}\n{'':30s}{t['about']}")
        return 0
    argv_full = shlex.join([sys.executable] + sys.argv)
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    wanted = [s.strip() for s in args.tables.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in [t["name"] for t in TABLES]]
    if unknown:
        ap.error(f"unknown table(s) {unknown}; known: {[t['name'] for t in TABLES]}")
    # by default the CSV tables; the UCI-layout folders when named
    tables = [t for t in TABLES if t["name"] in wanted] if wanted else [t for t in TABLES if not t.get("layout")]
    args.whvi = os.path.abspath(args.whvi)
    args.data_dir, args.out_dir = os.path.abspath(args.data_dir), os.path.abspath(args.out_dir)
    if os.path.commonpath([args.data_dir, REPO]) == REPO or os.path.commonpath([args.out_dir, REPO]) == REPO:
        ap.error("--data-dir and --out-dir must be outside the repository (the tables are not to be copied into it)")
    for d in (args.data_dir, args.out_dir, os.path.join(args.out_dir, "configs"),
              os.path.join(args.out_dir, "logs"), args.results):
        os.makedirs(d, exist_ok=True)
    args.whvi_seconds = 0.0

    # Run a private copy of the binary: build/whvi may be relinked by someone else mid-run,
    # which would mix two programs in one table. Its checksum goes into the header.
    src_bin = args.whvi
    st = os.stat(src_bin)
    snap = os.path.join(args.out_dir, "bin", "whvi")
    os.makedirs(os.path.dirname(snap), exist_ok=True)
    shutil.copy2(src_bin, snap + ".tmp")
    os.replace(snap + ".tmp", snap)
    args.whvi = snap
    args.whvi_source = dict(path=src_bin, sha256=sha256_file(snap),
                            mtime=datetime.datetime.fromtimestamp(st.st_mtime, datetime.timezone.utc)
                            .strftime("%Y-%m-%d %H:%M:%S UTC"))

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    t0 = time.monotonic()
    header = machine_header(args, argv_full)
    header["whvi_binary"] = (f"copy of {args.whvi_source['path']} (built {args.whvi_source['mtime']}), "
                             f"sha256 {args.whvi_source['sha256'][:16]}")
    results = []
    for t in tables:
        try:
            results.append(judge_table(t, args, log))
        except Exception as e:  # noqa: BLE001  (a table's failure is reported, the others still run)
            import traceback
            traceback.print_exc()
            results.append(dict(name=t["name"], task=t["task"], models={}, problems=[f"script error: {e!r}"]))
    if sha256_file(args.whvi) != args.whvi_source["sha256"]:
        results.append(dict(name="(run)", task="", models={}, problems=["the whvi copy changed during the run"]))
    try:
        if sha256_file(args.whvi_source["path"]) != args.whvi_source["sha256"]:
            header["whvi_binary"] += f"; note: {args.whvi_source['path']} was rebuilt during the run (this run used the copy)"
    except OSError:
        pass
    header["whvi_seconds"] = round(args.whvi_seconds, 1)
    header["wall_seconds"] = round(time.monotonic() - t0, 1)
    header["criterion"] = CRITERION
    header["data_dir"], header["out_dir"] = args.data_dir, args.out_dir

    # No path of this machine in the committed files: the scratch folders and the binary are
    # named by their option (or, inside the repository, by the path relative to it).
    src = args.whvi_source["path"]
    where = {args.out_dir: "<out-dir>", args.data_dir: "<data-dir>",
             src: os.path.relpath(src, REPO) if os.path.commonpath([src, REPO]) == REPO else "<whvi>"}

    def portable(text):
        for path in sorted(where, key=len, reverse=True):
            text = text.replace(path, where[path])
        return text

    with open(os.path.join(args.results, "results.json"), "w") as f:
        f.write(portable(json.dumps(dict(header=header, tables=results), indent=1, default=str)) + "\n")
    with open(os.path.join(args.results, "RESULTS.md"), "w") as f:
        f.write(portable(render_markdown(header, results, args)))
    log(f"wrote {os.path.join(args.results, 'RESULTS.md')} and results.json "
        f"(whvi {header['whvi_seconds']} s, wall {header['wall_seconds']} s)")
    bad = [p for r in results for p in r.get("problems", [])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
