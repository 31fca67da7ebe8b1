# The figure of the simulated scaling study (docs/simulation.md): simulated samples per second
# against hosts, log-log, one line per strategy; a panel per model and link (columns), without and
# with the slow host (rows). It reads the OUT/plot-*.dat files of examples/simulation/scale_table.py;
# a panel whose file is missing says so.
#
#   gnuplot -e "dir='docs/results/simulation/scaling'" examples/simulation/scale.gp
#
# Variables (-e): dir (OUT), output [docs/scaling.svg], slow [1_0.25, the SLOW of scale.sh with _
# for :], columns ["mlp-10Gbps mlp-1Gbps cnn-10Gbps cnn-1Gbps"].
if (!exists("dir")) dir = 'scale'
if (!exists("output")) output = 'docs/scaling.svg'
if (!exists("slow")) slow = '1_0.25'
if (!exists("columns")) columns = 'mlp-10Gbps mlp-1Gbps cnn-10Gbps cnn-1Gbps'

set terminal svg size 1700,820 dynamic font 'sans,12'
set output output
set datafile missing '?'
set logscale x 2
set logscale y 10
set grid
set xrange [3:1400]
set xtics (4, 16, 64, 256, 1024)
set format y '%g'
set xlabel 'hosts'
set ylabel 'samples/s (simulated)'
# One style per strategy, whatever the columns present: all-reduce solid, servers dashed, switches dotted.
set linetype 1 lc rgb '#1f77b4' dt 1 pt 1 lw 1.5
set linetype 2 lc rgb '#17becf' dt 1 pt 2 lw 1.5
set linetype 3 lc rgb '#08306b' dt 1 pt 7 lw 2.5
set linetype 4 lc rgb '#d62728' dt 2 pt 4 lw 1.5
set linetype 5 lc rgb '#ff7f0e' dt 2 pt 5 lw 1.5
set linetype 6 lc rgb '#2ca02c' dt 2 pt 6 lw 2
set linetype 7 lc rgb '#9467bd' dt 3 pt 8 lw 2
set linetype 8 lc rgb '#8c564b' dt 3 pt 9 lw 2
set linetype 9 lc rgb '#e377c2' dt 1 pt 13 lw 2
set linetype 10 lc rgb '#7f7f7f' dt 4 pt 3 lw 1.5
set linetype 11 lc rgb '#9467bd' dt 3 pt 10 lw 1
set linetype 12 lc rgb '#8c564b' dt 3 pt 11 lw 1
set linetype 13 lc rgb '#e377c2' dt 1 pt 14 lw 1
style(s) = s eq 'ring' ? 1 : s eq 'rd' ? 2 : s eq 'automatic' ? 3 : s eq 'ps1' ? 4 : s eq 'psN8' ? 5 : \
           s eq 'colocated' ? 6 : s eq 'ps-ar' ? 7 : s eq 'ar-ps' ? 8 : s eq 'adaptive' ? 9 : \
           s eq 'psN8-ar' ? 11 : s eq 'ar-psN8' ? 12 : s eq 'adaptiveN8' ? 13 : 10
# Panels by hand, with a strip for the legend across the top.
set multiplot title "fashion\\_mnist --simulate: one epoch, calibrated compute"
width = 0.98 / words(columns)
set size width, 0.42
set key noautotitle
row = 0
do for [slowness in 'none '.slow] {
  column = 0
  do for [panel in columns] {
    set origin 0.01 + column * width, 0.45 - row * 0.44
    file = dir.'/plot-'.panel.'-'.slowness.'.dat'
    factor = slowness[strstrt(slowness, '_') + 1:]
    set title panel.(slowness eq 'none' ? ', no slow host' : ', host '.slowness[1:strstrt(slowness, '_') - 1].' at '.factor)
    if (system('test -e '.file.' && echo 1 || echo 0') + 0) {
      header = system('head -n 1 '.file)
      plot for [i = 2:words(header) - 1] file using 1:i with linespoints lt style(word(header, i + 1)) pointsize 0.7
    } else {
      set label 1 'not run' at graph 0.5, 0.5 center
      plot [] [1:2] NaN
      unset label 1
    }
    column = column + 1
  }
  row = row + 1
}
# The legend: every strategy's style, once.
set origin 0, 0.88
set size 1, 0.08
unset border
unset tics
unset xlabel
unset ylabel
unset title
unset grid
set key center center horizontal maxrows 1 samplen 3 font ',11'
set yrange [1:2]
plot for [s in 'ring rd automatic ps1 psN8 colocated ps-ar ar-ps adaptive psN8-ar ar-psN8 adaptiveN8'] NaN with linespoints lt style(s) pointsize 0.7 title s
unset multiplot
