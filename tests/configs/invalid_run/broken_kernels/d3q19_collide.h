/* A kernel source folder whose d3q19.cl does not compile: the build log must reach the
 * user. */
