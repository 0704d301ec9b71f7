/* part.cl: the part of an overlapped step a work item computes, for the modules' OpenCL
 * programs (Shan-Chen's and d2q37's embed it before their own source; lbm.cl keeps its
 * own LBM_PART_CELL, since hardware.kernel_sources replaces exactly its three files).
 * GPU_PART_RETURN returns from a work item whose cell (x, y, z) of block b is not in the
 * part: part 1 the cells of the block's box boxes[6 b .. 6 b + 5] (lo x, y, z, hi x, y, z
 * of its interior cells: the inner part), part 2 the others, part 0 every cell (boxes
 * unused). AXES: how many of x, y, z decide (1: the column x alone). */
#define GPU_PART_RETURN(boxes, part, b, x, y, z, AXES)                                 \
  if (part) {                                                                          \
    __global const int *bx_ = (boxes) + 6 * (b);                                       \
    const int in_ = (x) >= bx_[0] && (x) < bx_[3] &&                                   \
                    ((AXES) < 2 || ((y) >= bx_[1] && (y) < bx_[4])) &&                 \
                    ((AXES) < 3 || ((z) >= bx_[2] && (z) < bx_[5]));                   \
    if (in_ != ((part) == 1)) return;                                                  \
  }
