# Sourced by the render scripts that set one table per width NF beside the paper's
# (uci_class.sh, uci_width.sh); WHVI names the binary.
#   widths_prelude NAME DIR    exits 2 unless $WHVI is built and DIR holds <...>-w<NF>.json
#                              records, which it leaves in the array `all` (nullglob on)
#   width_sections DIR PAPER_STEM HINT
#                              one "## NF = w" section for w = 64, 128, 256, 512: `whvi table`
#                              of DIR's *-w<w>.json beside PAPER_STEM<w>.json where that file
#                              exists, or "No results yet<HINT>." with {w} in HINT replaced by w
widths_prelude() {
  [[ -x $WHVI ]] || { echo "render/$1: $WHVI not built (scripts/setup.sh)" >&2; exit 2; }
  shopt -s nullglob
  all=("$2"/*-w*.json)
  ((${#all[@]})) || { echo "render/$1: no results in $2" >&2; exit 2; }
}

width_sections() {
  local dir=$1 stem=$2 hint=$3 w paper files
  for w in 64 128 256 512; do
    files=("$dir"/*-w$w.json)
    ((${#files[@]})) || { echo "## NF = $w"; echo; echo "No results yet${hint//\{w\}/$w}."; echo; continue; }
    paper=''
    [[ -n $stem && -f $stem$w.json ]] && paper=$stem$w.json
    "$WHVI" table "${files[@]}" --paper "$paper" --title "NF = $w" | sed 's/^# /## /; s/^## /### /; s/^### NF/## NF/'
    echo
  done
}
