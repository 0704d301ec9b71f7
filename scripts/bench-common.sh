# What the benchmark scripts share (sourced, not run): the median of their rounds.
# median_of_lines: of the numbers on standard input, one per line; median: of its arguments.
median_of_lines() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
median() { printf '%s\n' "$@" | median_of_lines; }
