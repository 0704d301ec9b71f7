__kernel void lbm_stream_collide(__global const REAL *src) {
  this is not OpenCL C;
}
