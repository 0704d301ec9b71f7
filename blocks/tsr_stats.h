/* tsr_stats: the median of measured times and rates. */
#ifndef TSR_STATS_H
#define TSR_STATS_H

/* Sorts v[0..n-1] ascending (n >= 1) and returns its median (the mean of the middle two
 * for an even n). */
double tsr_sort_median(double *v, int n);

#endif
