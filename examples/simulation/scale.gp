# The figure of the simulated scaling study (docs/simulation.md): simulated samples per second
# against hosts, log-log, one line per strategy; a panel per model and link (columns), without and
# with the slow host (rows). It reads the OUT/plot-*.dat files of examples/simulation/scale_table.py;
# a panel whose file is missing says so.
#
#   gnuplot -e "dir='docs/results/simulation/scaling'" examples/simulation/scale.gp
#
# Variables (-e): dir (OUT), output [docs/scaling.svg], slow [1_0.25, the SLOW of scale.sh with _
# for :], columns ["mlp-10Gbps mlp-1Gbps cnn-10Gbps"].
if (!exists("dir")) dir = 'scale'
if (!exists("output")) output = 'docs/scaling.svg'
if (!exists("slow")) slow = '1_0.25'
if (!exists("columns")) columns = 'mlp-10Gbps mlp-1Gbps cnn-10Gbps'

set terminal svg size 1350,820 dynamic font 'sans,12'
set output output
set datafile missing '?'
set logscale xy 2
set grid
set xrange [3:90]
set xtics (4, 8, 16, 32, 64)
set format y '%.0f'
set xlabel 'hosts'
set ylabel 'samples/s (simulated)'
set key top left font ',10' samplen 2
set multiplot layout 2, words(columns) title 'fashion\_mnist --simulate: one epoch, calibrated compute'
do for [row in 'none '.slow] {
  do for [column in columns] {
    file = dir.'/plot-'.column.'-'.row.'.dat'
    caption = column.(row eq 'none' ? ', no slow host' : ', host '.row[1:strstrt(row, '_') - 1].' at '.row[strstrt(row, '_') + 1:])
    set title caption
    if (system('test -e '.file.' && echo 1 || echo 0') + 0) {
      header = system('head -n 1 '.file)
      plot for [i = 2:words(header) - 1] file using 1:i with linespoints pointsize 0.6 title word(header, i + 1)
    } else {
      unset key
      set label 1 'not run' at graph 0.5, 0.5 center
      plot [] [1:2] NaN notitle
      unset label 1
      set key
    }
  }
}
unset multiplot
