#!/usr/bin/env bash
# Writes every selection stage's generated configs (results/selection/configs*/,
# not tracked: scripts/experiments/select_defaults.sh --configs-only makes them
# byte for byte) before the tests that read them (the ctest fixture
# selection_configs; Fingerprint.SelectionConfigsStillGiveTheirRecords).
set -euo pipefail
cd "$(dirname "$0")/../.."
s=scripts/experiments/select_defaults.sh
bash "$s" --configs-only >/dev/null
n=1
for stage in $(bash "$s" --stages); do
  bash "$s" --stage "$stage" --configs-only >/dev/null
  n=$((n + 1))
done
echo "selection configs written for $n stages: $(find results/selection -path '*/configs*' -name '*.yaml' | wc -l) configs"
