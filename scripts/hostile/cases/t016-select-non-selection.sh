#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x select out/r.json
