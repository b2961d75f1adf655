# Shared helpers for the hostile cases. Each case runs in a fresh empty temp dir.
WHVI=${WHVI:?set WHVI to the whvi binary}
FIX="$HOSTILE/fixtures"
export WHVI_DATA_DIR=${WHVI_DATA_DIR:-$HOSTILE/../../../shared/data}
FAST=(--set training.steps=20 --set training.steps_fixed_noise=5 --set data.splits=1 --set evaluation.mc_samples=4 --set model.width=16 --set training.batch_size=16 --set training.log_every=1000)
# x ARGS...: run whvi (60 s timeout), keep stdout/stderr in last.out/last.err, show them trimmed and the rc
x() {
  timeout 60 "$WHVI" "$@" >last.out 2>last.err
  local rc=$?
  echo "\$ whvi $(printf '%q ' "$@" | cut -c1-300)"
  echo "  stdout($(wc -c <last.out)B): $(head -c 600 last.out | head -6 | tr '\n' '|')"
  echo "  stderr: $(grep -v '\] \[info\]' last.err | tail -c 1200 | tail -6 | tr '\n' '|')"
  echo "  rc=$rc"
  LASTRC=$rc
  return $rc
}
# xin FILE ARGS...: as x with stdin from FILE
xin() { local f=$1; shift; x "$@" <"$f"; }
cfg() { # cfg DATASET [extra yaml lines...] -> c.yaml
  { echo "data: {dataset: $1}"; echo "output: {dir: out, name: r}"; shift; for l in "$@"; do echo "$l"; done; } > c.yaml
}
fcsv() { cp "$FIX/f.csv" "${1:-f.csv}"; chmod u+w "${1:-f.csv}"; }
ccsv() { cp "$FIX/fc.csv" "${1:-fc.csv}"; chmod u+w "${1:-fc.csv}"; }
# trained: a small regression model on f.csv -> out/r/split-00.ckpt
trained() { fcsv; cfg f.csv; timeout 60 "$WHVI" train --config c.yaml "${FAST[@]}" "$@" >/dev/null 2>train.err || { echo "SETUP TRAIN FAILED"; tail -2 train.err; }; }
trainedc() { ccsv; cfg fc.csv "likelihood: {kind: softmax}"; timeout 60 "$WHVI" train --config c.yaml "${FAST[@]}" "$@" >/dev/null 2>train.err || { echo "SETUP TRAIN FAILED"; tail -2 train.err; }; }
note() { echo "NOTE: $*"; }
# small numeric CSV: a,b,y with N rows (default 60)
mini() { awk -v n=${1:-60} 'BEGIN{print "a,b,y"; srand(1); for(i=1;i<=n;i++){a=rand();b=rand(); printf "%.4f,%.4f,%.4f\n",a,b,3*a-b+0.1*rand()}}'; }
trainx() { timeout 60 "$WHVI" train --config c.yaml "${FAST[@]}" "$@"; }
# uci FOLDER: a small valid UCI-layout folder (40 rows, 3 cols: 2 features, target col 2, 2 stored splits)
uci() {
  local d=${1:-u}; mkdir -p $d
  awk 'BEGIN{srand(3); for(i=0;i<40;i++){a=rand();b=rand(); printf "%.4f %.4f %.4f\n",a,b,2*a+b}}' > $d/data.txt
  printf '0\n1\n' > $d/index_features.txt; printf '2\n' > $d/index_target.txt; printf '2\n' > $d/n_splits.txt
  for k in 0 1; do seq 0 35 > $d/index_train_$k.txt; seq 36 39 > $d/index_test_$k.txt; done
  printf 'data: {dataset: %s, protocol: standard}\noutput: {dir: out, name: r}\n' "$d" > c.yaml
}
# asnobody CMD...: run as uid 65534 (root ignores permissions); the case dir is opened up first
asnobody() { chmod 755 "$PWD" 2>/dev/null; setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent WHVI_DATA_DIR=$WHVI_DATA_DIR "$@"; }
# subset_check CKPT INPUT [extra predict args]: full-file vs odd rows vs reversed order, row by row
subset_check() {
  local ck=$1 in=$2; shift 2
  timeout 60 "$WHVI" predict --checkpoint "$ck" --input "$in" --out full.csv "$@" 2>pe1 || { echo "full predict failed: $(grep -v info pe1|tail -1)"; return; }
  python3 - "$in" <<'PY'
import sys
lines=open(sys.argv[1]).read().splitlines()
h,rows=lines[0],lines[1:]
open('odd.csv','w').write('\n'.join([h]+rows[1::2])+'\n')
open('rev.csv','w').write('\n'.join([h]+rows[::-1])+'\n')
open('one.csv','w').write('\n'.join([h]+rows[5:6])+'\n')
PY
  timeout 60 "$WHVI" predict --checkpoint "$ck" --input odd.csv --out odd.out "$@" 2>/dev/null
  timeout 60 "$WHVI" predict --checkpoint "$ck" --input rev.csv --out rev.out "$@" 2>/dev/null
  timeout 60 "$WHVI" predict --checkpoint "$ck" --input one.csv --out one.out "$@" 2>/dev/null
  python3 - <<'PY'
f=open('full.csv').read().splitlines(); h,f=f[0],f[1:]
o=open('odd.out').read().splitlines()[1:]; r=open('rev.out').read().splitlines()[1:][::-1]; one=open('one.out').read().splitlines()[1:]
bad=sum(a!=b for a,b in zip(f[1::2],o)) + sum(a!=b for a,b in zip(f,r)) + (one[0]!=f[5])
print("rows", len(f), "subset/order mismatches:", bad, "| nan/inf cells:", sum(('nan' in l.lower() or 'inf' in l.lower()) for l in f))
if bad: print(" full row1:", f[1]); print(" odd  row1:", o[0])
PY
}
