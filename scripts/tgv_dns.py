"""The 3-D Taylor-Green vortex at Re 1600: the pseudo-spectral DNS on 512^3 of the 1st
International Workshop on High-Order CFD Methods (2012), case C3.5 (file
spectral_Re1600_512.gdiag of its data, sampled every 0.01 of t* = t u0 / L up to 19.99):
K = <|u|^2/2> / u0^2 and eps = -dK/dt* at the times the comparisons use, and the
dissipation's peak (the largest eps of the file)."""

# t*: (K, eps)
POINTS = {
    0.0: (0.125, 0.000468743),
    5.0: (0.118435751, 0.004127097),
    8.0: (0.09828988, 0.010372895),
    8.97: (0.08678956, 0.012857528),
    10.0: (0.07447917, 0.011272054),
    19.99: (0.02156736, 0.001873496),
}
PEAK_EPS, PEAK_TIME = 0.012857528, 8.97
