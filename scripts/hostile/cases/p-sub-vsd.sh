#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
fcsv; cfg f.csv; trainx --set model.kind=vsd --set model.sghmc.samples=4 --set ensemble.members=2 --set model.nng.particles=2 2>train.err || tail -1 train.err
subset_check out/r/split-00.ckpt f.csv --mc-samples 8
