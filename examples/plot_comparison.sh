#!/usr/bin/env bash
# Draws the CSV of examples/strategy_comparison as test accuracy against wall time, one curve per
# strategy, with gnuplot (Debian's gnuplot-nox). The output's extension picks PNG or SVG.
#
#   examples/plot_comparison.sh runs.csv docs/results.svg
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 RUNS.csv OUTPUT.svg|OUTPUT.png" >&2
  exit 2
fi
csv=$1 out=$2
[[ -r $csv ]] || { echo "$0: cannot read $csv" >&2; exit 1; }
case $out in
  *.svg) terminal="svg size 900,560 dynamic font 'sans,13'" ;;
  *.png) terminal="pngcairo size 900,560 font 'sans,11'" ;;
  *) echo "$0: $out: the output must end in .svg or .png" >&2; exit 1 ;;
esac
command -v gnuplot >/dev/null || { echo "$0: gnuplot is missing: apt-get install gnuplot-nox" >&2; exit 1; }
# The strategies in the order they first appear.
strategies=$(tail -n +2 "$csv" | cut -d, -f1 | awk '!seen[$0]++' | tr '\n' ' ')
gnuplot <<GNUPLOT
set terminal $terminal
set output '$out'
set datafile separator ','
set title 'Fashion-MNIST: test accuracy against wall time'
set xlabel 'wall time (s)'
set ylabel 'test accuracy (%)'
set key bottom right
set grid
plot for [s in "$strategies"] '$csv' skip 1 using 4:(strcol(1) eq s ? 100 * \$6 : NaN) with linespoints title s
GNUPLOT
echo "wrote $out"
