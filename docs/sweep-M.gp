# sweep-M.gp: written by fasim; draws sweep-M.svg from sweep-M.dat.
# Run it from this directory: gnuplot sweep-M.gp
# Restyle freely: the data columns are named in the first lines of sweep-M.dat.

set terminal svg size 900,600 dynamic enhanced font 'Helvetica,14' background rgb 'white'
set encoding utf8
set output 'sweep-M.svg'
set datafile missing '?'

set title 'fasim: HBM traffic against M (N = 65536, d = 64, fp16)'
set xlabel 'M, SRAM per thread block (KiB)'
set ylabel 'HBM traffic (bytes)'
set logscale x 2
set logscale y 10
set format x '%g'
set format y '10^{%L}'
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key bottom left Left reverse box opaque spacing 1.2
set offsets 0, 0, 0, graph 0.45

# Theorem 2's slopes as guides, over the in-regime range [lo, hi] of the data.
lo = 16
hi = 1024
g0(x) = (x >= lo && x <= hi) ? 1.317682545e+11 * (x / 16)**(0) : 1/0
g1(x) = (x >= lo && x <= hi) ? 3.436825805e+10 * (x / 16)**(-1) : 1/0

plot \
  'sweep-M.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#c0392b' title 'naive', \
  'sweep-M.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#2471a3' title 'fa1', \
  'sweep-M.dat' using 1:4 with linespoints lw 2 pt 7 ps 0.8 lc rgb '#1e8449' title 'fa2', \
  g0(x) with lines dt 2 lw 1.5 lc rgb '#c0392b' title 'slope 0: Theorem 2, standard Θ(Nd + N^2)', \
  g1(x) with lines dt 2 lw 1.5 lc rgb '#1e8449' title 'slope -1: Theorem 2, FlashAttention Θ(N^2d^2/M)', \
  'sweep-M.dat' using 1:5 with lines lw 2 dt 4 lc rgb '#555555' title 'lower bound Ω(N^2d^2/M), Prop. 3 (elements x 2 B)'
