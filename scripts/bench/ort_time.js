// ONNX Runtime's time for a whvi export on a CSV file's rows (used by
// scripts/bench/export_vs_predict.sh; needs tests/export/node_modules):
//   node scripts/bench/ort_time.js MODEL ROWS.csv COLUMNS THREADS [CHUNK=250]
// Runs the model on the rows CHUNK at a time with THREADS intra-op threads and
// prints one JSON line: rows, seconds (session.run calls only), load seconds.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '../../tests/export/node_modules/onnxruntime-node'));

async function main() {
  const [model, csv, cols, threads, chunkArg] = process.argv.slice(2);
  const lines = fs.readFileSync(csv, 'utf8').trim().split('\n');
  const head = lines[0].split(',');
  const at = cols.split(',').map((n) => head.indexOf(n));
  const D = at.length, N = lines.length - 1, chunk = Number(chunkArg || 250);
  const x = new Float32Array(N * D);
  for (let i = 0; i < N; ++i) {
    const r = lines[i + 1].split(',');
    at.forEach((j, k) => { x[i * D + k] = r[j] === '' ? NaN : Number(r[j]); });
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential' });
  const t1 = process.hrtime.bigint();
  for (let i = 0; i < N; i += chunk) {
    const n = Math.min(chunk, N - i);
    await session.run({ x: new ort.Tensor('float32', x.subarray(i * D, (i + n) * D), [n, D]) });
  }
  const t2 = process.hrtime.bigint();
  console.log(JSON.stringify({ rows: N, chunk, threads: Number(threads), load_seconds: Number(t1 - t0) / 1e9,
                               seconds: Number(t2 - t1) / 1e9, onnxruntime: require(path.join(__dirname,
                                 '../../tests/export/node_modules/onnxruntime-node/package.json')).version }));
}
main().catch((e) => { console.error('ort_time: ' + e); process.exit(1); });
