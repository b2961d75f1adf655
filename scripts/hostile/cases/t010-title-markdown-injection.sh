#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
trained; x table out/r.json --paper '' --title $'T\n# injected\n<script>alert(1)</script>\e[31m'
head -5 last.out | cat -A | head -5
