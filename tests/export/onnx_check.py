#!/usr/bin/env python3
"""ONNX's own checker on a whvi export (python3-onnx, Debian's 1.12):
   onnx_check.py MODEL
Checks the model fully (types and shapes inferred), then prints its input
columns' names (metadata whvi.inputs), comma-separated, for the caller."""
import json
import sys

import onnx

model = onnx.load(sys.argv[1])
onnx.checker.check_model(model, full_check=True)
meta = {p.key: p.value for p in model.metadata_props}
assert model.opset_import[0].version == 17, model.opset_import
names = [c["name"] for c in json.loads(meta["whvi.inputs"])]
print(",".join(names))
