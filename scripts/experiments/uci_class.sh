#!/usr/bin/env bash
# Table 13 of the WHVI paper: UCI classification (EEG, MAGIC, LETTER) with 2
# hidden layers of 64, 128, 256 and 512 units for MCD, MFG and WHVI
# (configs/uci-class/<dataset>-<model>-w<NF>.yaml, results in
# results/uci-class/<dataset>-<model>-w<NF>.json with a reliability diagram
# <name>-reliability.png beside each), then the tables:
#
#   scripts/experiments/uci_class.sh [-j JOBS] [--set KEY=VALUE]... [PATTERN]
#
# PATTERN selects configs by glob on the file stem (default '*-w*': all 36;
# e.g. '*-w128' for the width compared in results/uci-class). Runs scripts/sweep/sweep.sh (GNU
# parallel, each run resumes its finished splits), then
# scripts/render/uci_class.sh (--render-only: only that). On a Slurm cluster instead:
#   ls configs/uci-class/*-w*.yaml > class.txt
#   sbatch --array=0-35 scripts/sweep/slurm.sbatch class.txt
#   scripts/render/uci_class.sh        # when the array is done
. "$(dirname "$0")/../help.sh"
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash scripts/sweep/grid.sh uci_class configs/uci-class '*-w*' scripts/experiments/uci_class.sh bash scripts/render/uci_class.sh -- "$@"
