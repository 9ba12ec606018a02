# sweep-N.gp: written by fasim; draws sweep-N.svg from sweep-N.dat.
# Run it from this directory: gnuplot sweep-N.gp
# Restyle freely: the data columns are named in the first lines of sweep-N.dat.

set terminal svg size 900,600 dynamic enhanced font 'Helvetica,14' background rgb 'white'
set encoding utf8
set output 'sweep-N.svg'
set datafile missing '?'

set title 'fasim: HBM traffic against N (d = 64, M = 96 KiB, fp16)'
set xlabel 'N, sequence length (rows)'
set ylabel 'HBM traffic (bytes)'
set logscale x 2
set logscale y 10
set format x '2^{%L}'
set format y '10^{%L}'
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left Left reverse box opaque spacing 1.2
set offsets 0, 0, graph 0.45, 0

# Theorem 2's slopes as guides, over the in-regime range [lo, hi] of the data.
lo = 1024
hi = 1048576
g0(x) = (x >= lo && x <= hi) ? 19398656 * (x / 1024)**(2) : 1/0
g1(x) = (x >= lo && x <= hi) ? 919552 * (x / 1024)**(2) : 1/0

plot \
  'sweep-N.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#c0392b' title 'naive', \
  'sweep-N.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#2471a3' title 'fa1', \
  'sweep-N.dat' using 1:4 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#1e8449' title 'fa2', \
  g0(x) with lines dt 2 lw 1.5 lc rgb '#c0392b' title 'slope 2: Theorem 2, standard Θ(Nd + N^2)', \
  g1(x) with lines dt 2 lw 1.5 lc rgb '#1e8449' title 'slope 2: Theorem 2, FlashAttention Θ(N^2d^2/M)', \
  'sweep-N.dat' using 1:5 with lines lw 2 dt 4 lc rgb '#555555' title 'lower bound Ω(N^2d^2/M), Prop. 3 (elements x 2 B)'
