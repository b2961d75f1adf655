// ONNX Runtime (onnxruntime-node) on a whvi export, against `whvi predict`:
//   node ort_compare.js MODEL DATA.csv PREDICT.csv COLUMNS S_PREDICT S_EXPORT MODE
// COLUMNS: the model's input columns (comma-separated, numeric in DATA.csv);
// MODE: "sampled" (two calls must differ; each column within its Monte Carlo
// bound of predict's) or "exact" (a closed form: two calls equal, every
// column within float32 rounding of predict's). Exit 1 naming the first
// column and row out of bound.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function readCsv(path) {
  const lines = fs.readFileSync(path, 'utf8').trim().split('\n');
  const head = lines[0].split(',');
  return { head, rows: lines.slice(1).map((l) => l.split(',')) };
}

function fail(msg) {
  console.error('ort_compare: FAIL: ' + msg);
  process.exit(1);
}

async function main() {
  const [model, dataPath, predPath, cols, sPred, sExp, mode] = process.argv.slice(2);
  const data = readCsv(dataPath), pred = readCsv(predPath);
  const names = cols.split(',');
  const at = names.map((n) => data.head.indexOf(n));
  const N = data.rows.length, D = names.length;
  const x = new Float32Array(N * D);
  data.rows.forEach((r, i) => at.forEach((j, k) => { x[i * D + k] = r[j] === '' ? NaN : Number(r[j]); }));
  const session = await ort.InferenceSession.create(model);
  const feeds = { x: new ort.Tensor('float32', x, [N, D]) };
  const a = await session.run(feeds), b = await session.run(feeds);
  const col = (name) => pred.rows.map((r) => Number(r[pred.head.indexOf(name)]));
  const S1 = Number(sPred), S2 = Number(sExp);
  const mc = Math.sqrt(1 / S1 + 1 / S2);
  let differ = false;
  const check = (name, out, bound) => {
    const want = col(name);
    for (let i = 0; i < N; ++i) {
      const got = out[i];
      if (!Number.isFinite(got)) fail(`${name} row ${i + 1}: ${got}`);
      const tol = bound(i) + 1e-4 * Math.abs(want[i]) + 1e-5;
      if (Math.abs(got - want[i]) > tol) fail(`${name} row ${i + 1}: onnx ${got}, whvi predict ${want[i]}, bound ${tol}`);
    }
  };
  if ('mean' in a) {
    const sd = col('std'), epi = col('epistemic_std');
    for (let i = 0; i < N; ++i) differ = differ || a.mean.data[i] !== b.mean.data[i];
    const exact = mode === 'exact';
    // the mean of S draws has sd epi/√S; a sample sd's relative sd is about 1/√(2S) (√2 more for heavier
    // tails); a central interval's end, a quantile of the mixture, moves by at most about 2.7 sd/√S
    check('mean', a.mean.data, (i) => (exact ? 0 : 5 * epi[i] * mc));
    check('epistemic_std', a.epistemic_std.data, (i) => (exact ? 0 : 5 * epi[i] * Math.SQRT2 * mc));
    // the noise's sd: a constant, except for a log target's, whose sd scales with each sample's e^mu (about
    // 2 epi/mean of relative Monte Carlo error)
    const alea = col('aleatoric_std'), mean = col('mean');
    check('aleatoric_std', a.aleatoric_std.data, (i) => (exact ? 0 : 10 * epi[i] * mc * alea[i] / Math.abs(mean[i])));
    check('std', a.std.data, (i) => (exact ? 0 : 5 * epi[i] * Math.SQRT2 * mc));
    for (const side of ['lower', 'upper', 'conformal_lower', 'conformal_upper']) {
      if ((side in a) !== pred.head.includes(side)) fail(`${side}: in one output only`);
      if (side in a) check(side, a[side].data, (i) => (exact ? 1e-4 * sd[i] : 11 * sd[i] * mc));
    }
  } else {
    const C = a.probabilities.dims[1];
    const classes = pred.head.filter((h) => h.startsWith('p_'));
    if (classes.length !== C) fail(`${C} probabilities, predict wrote ${classes.length}`);
    for (let i = 0; i < N * C; ++i) differ = differ || a.probabilities.data[i] !== b.probabilities.data[i];
    classes.forEach((name, c) => {
      const p = Array.from({ length: N }, (_, i) => a.probabilities.data[i * C + c]);
      // a probability's draws lie in [0, 1]: their sd is at most 1/2
      check(name, p, () => (mode === 'exact' ? 0 : 5 * 0.5 * mc));
    });
  }
  if (('conformal_set' in a) !== pred.head.includes('conformal_set')) fail('conformal_set: in one output only');
  if ('conformal_set' in a) {
    // a class in one set and not the other: its probability must lie on that side in both (the threshold between)
    const C = a.probabilities.dims[1];
    const classes = pred.head.filter((h) => h.startsWith('p_')).map((h) => h.slice(2));
    const sets = pred.rows.map((r) => r[pred.head.indexOf('conformal_set')].split('|'));
    for (let i = 0; i < N; ++i)
      classes.forEach((name, c) => {
        const inOnnx = Boolean(a.conformal_set.data[i * C + c]), inWhvi = sets[i].includes(name);
        const po = a.probabilities.data[i * C + c], pw = col('p_' + name)[i];
        if (inOnnx !== inWhvi && (inOnnx ? po < pw : po > pw))
          fail(`conformal_set row ${i + 1} class ${name}: onnx ${inOnnx} (p ${po}), whvi predict ${inWhvi} (p ${pw})`);
      });
  }
  if (mode === 'exact' && differ) fail('two calls of a closed form differ');
  if (mode !== 'exact' && !differ) fail('two calls drew the same samples: the sampling is not in the graph');
  console.log(`ort_compare: ${N} rows agree with whvi predict (${mode}; two calls ${differ ? 'differ' : 'equal'})`);
}

main().catch((e) => fail(String(e)));
