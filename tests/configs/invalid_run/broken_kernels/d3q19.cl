__kernel void d3q19_stream_collide(__global const REAL *src) {
  this is not OpenCL C;
}
