/* A kernel source folder whose lbm.cl does not compile: the build log must reach the
 * user. */
