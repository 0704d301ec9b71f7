#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "vtk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

void vtk_block_path(char *out, size_t cap, const char *folder, const char *name, int64_t step,
                    int32_t block_id) {
  int n = snprintf(out, cap, "%s/%s_%06lld/block_%d.vti", folder, name, (long long)step, (int)block_id);
  (void)n;
}

tsr_status vtk_make_step_folder(const char *folder, const char *name, int64_t step, tsr_error_t *err) {
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/%s_%06lld", folder, name, (long long)step);
  if (n < 0 || (size_t)n >= sizeof path)
    return tsr_error_set(err, TSR_ERR_INVALID, __FILE__, __LINE__, "output path too long: %.200s", folder);
  return output_make_folder(path, err);
}

size_t vtk_type_size(vtk_type_t t) { return t == VTK_FLOAT64 ? 8 : t == VTK_FLOAT32 ? 4 : 1; }
static const char *vtk_type_name(vtk_type_t t) {
  return t == VTK_FLOAT64 ? "Float64" : t == VTK_FLOAT32 ? "Float32" : "UInt8";
}

/* The XML of an ImageData file up to its appended data's "_": whole extent and piece
 * extent alike (lo .. lo + size in points), the arrays' offsets in the appended data
 * (each array: an 8-byte size, then its bytes). */
static void vtk_write_head(FILE *f, const int64_t lo[3], const int64_t size[3], double spacing,
                           const vtk_array_t *arrays, int narrays) {
  const uint64_t cells = (uint64_t)size[0] * (uint64_t)size[1] * (uint64_t)size[2];
  char extent[160];
  snprintf(extent, sizeof extent, "%lld %lld %lld %lld %lld %lld", (long long)lo[0],
           (long long)(lo[0] + size[0]), (long long)lo[1], (long long)(lo[1] + size[1]),
           (long long)lo[2], (long long)(lo[2] + size[2]));
  fprintf(f, "<?xml version=\"1.0\"?>\n"
             "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" "
             "header_type=\"UInt64\">\n");
  fprintf(f, "  <ImageData WholeExtent=\"%s\" Origin=\"0 0 0\" Spacing=\"%.17g %.17g %.17g\">\n",
          extent, spacing, spacing, spacing);
  fprintf(f, "    <Piece Extent=\"%s\">\n      <CellData>\n", extent);
  uint64_t offset = 0;
  for (int i = 0; i < narrays; ++i) {
    const vtk_array_t *a = &arrays[i];
    fprintf(f, "        <DataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\" "
               "format=\"appended\" offset=\"%llu\"/>\n",
            vtk_type_name(a->type), a->name, a->components, (unsigned long long)offset);
    offset += 8 + cells * (uint64_t)a->components * vtk_type_size(a->type);
  }
  fprintf(f, "      </CellData>\n    </Piece>\n  </ImageData>\n  <AppendedData encoding=\"raw\">\n   _");
}

const char vtk_tail[] = "\n  </AppendedData>\n</VTKFile>\n";

tsr_status vtk_head(const int64_t lo[3], const int64_t size[3], double spacing,
                    const vtk_array_t *arrays, int narrays, char **text, size_t *len,
                    tsr_error_t *err) {
  tsr_status st = TSR_OK;
  *text = NULL;
  FILE *f = open_memstream(text, len);
  TSR_CHECK(f, TSR_ERR_NOMEM, "out of memory for a VTK header");
  vtk_write_head(f, lo, size, spacing, arrays, narrays);
  TSR_CHECK(fclose(f) == 0, TSR_ERR_NOMEM, "out of memory for a VTK header");
cleanup:
  return st;
}

tsr_status vtk_write_block(const char *path, const vtk_block_t *b, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_file_t o = {.f = NULL};
  TSR_TRY(output_file_open(&o, path, err));
  FILE *f = o.f;
  const int64_t size[3] = {b->size[0], b->size[1], b->size[2]};
  const uint64_t cells = (uint64_t)size[0] * (uint64_t)size[1] * (uint64_t)size[2];
  vtk_write_head(f, b->lo, size, b->spacing, b->arrays, b->narrays);
  for (int i = 0; i < b->narrays; ++i) {
    const vtk_array_t *a = &b->arrays[i];
    uint64_t bytes = cells * (uint64_t)a->components * vtk_type_size(a->type);
    uint8_t head[8];
    for (int k = 0; k < 8; ++k) head[k] = (uint8_t)(bytes >> (8 * k));
    TSR_CHECK(fwrite(head, 1, 8, f) == 8 && fwrite(a->data, 1, (size_t)bytes, f) == bytes,
              TSR_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  }
  fputs(vtk_tail, f);
  TSR_TRY(output_file_commit(&o, err));
cleanup:
  output_file_discard(&o);
  return st;
}

/* An appended array: its 8-byte size, then its bytes. */
static bool vtk_append(FILE *f, const void *data, uint64_t bytes) {
  uint8_t head[8];
  for (int k = 0; k < 8; ++k) head[k] = (uint8_t)(bytes >> (8 * k));
  return fwrite(head, 1, 8, f) == 8 && fwrite(data, 1, (size_t)bytes, f) == bytes;
}

tsr_status vtk_write_polydata(const char *path, const double *xyz, int64_t npoints,
                              const int64_t *tri, int64_t ntriangles, const vtk_array_t *arrays,
                              int narrays, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  output_file_t o = {.f = NULL};
  const bool verts = ntriangles == 0;
  const int64_t ncells = verts ? npoints : ntriangles, per = verts ? 1 : 3;
  int64_t *conn = malloc((size_t)(per * ncells + 1) * sizeof *conn);
  int64_t *offsets = malloc((size_t)(ncells + 1) * sizeof *offsets);
  TSR_CHECK(conn && offsets, TSR_ERR_NOMEM, "out of memory writing %s", path);
  for (int64_t k = 0; k < per * ncells; ++k) conn[k] = verts ? k : tri[k];
  for (int64_t k = 0; k < ncells; ++k) offsets[k] = per * (k + 1);
  TSR_TRY(output_file_open(&o, path, err));
  FILE *f = o.f;
  fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" "
             "byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <PolyData>\n"
             "    <Piece NumberOfPoints=\"%lld\" NumberOfVerts=\"%lld\" NumberOfLines=\"0\" "
             "NumberOfStrips=\"0\" NumberOfPolys=\"%lld\">\n      <%s>\n",
          (long long)npoints, (long long)(verts ? ncells : 0), (long long)(verts ? 0 : ncells),
          verts ? "PointData" : "CellData");
  uint64_t offset = 0;
  for (int i = 0; i < narrays; ++i) {
    fprintf(f, "        <DataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\" "
               "format=\"appended\" offset=\"%llu\"/>\n",
            vtk_type_name(arrays[i].type), arrays[i].name, arrays[i].components,
            (unsigned long long)offset);
    offset += 8 + (uint64_t)ncells * (uint64_t)arrays[i].components * vtk_type_size(arrays[i].type);
  }
  fprintf(f, "      </%s>\n      <Points>\n        <DataArray type=\"Float64\" "
             "NumberOfComponents=\"3\" format=\"appended\" offset=\"%llu\"/>\n"
             "      </Points>\n      <%s>\n",
          verts ? "PointData" : "CellData", (unsigned long long)offset, verts ? "Verts" : "Polys");
  offset += 8 + 24 * (uint64_t)npoints;
  fprintf(f, "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"appended\" "
             "offset=\"%llu\"/>\n", (unsigned long long)offset);
  offset += 8 + 8 * (uint64_t)(per * ncells);
  fprintf(f, "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"appended\" "
             "offset=\"%llu\"/>\n      </%s>\n    </Piece>\n  </PolyData>\n"
             "  <AppendedData encoding=\"raw\">\n   _",
          (unsigned long long)offset, verts ? "Verts" : "Polys");
  bool ok = true;
  for (int i = 0; i < narrays && ok; ++i)
    ok = vtk_append(f, arrays[i].data, (uint64_t)ncells * (uint64_t)arrays[i].components *
                                           vtk_type_size(arrays[i].type));
  ok = ok && vtk_append(f, xyz, 24 * (uint64_t)npoints) &&
       vtk_append(f, conn, 8 * (uint64_t)(per * ncells)) &&
       vtk_append(f, offsets, 8 * (uint64_t)ncells);
  TSR_CHECK(ok, TSR_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  fputs(vtk_tail, f);
  TSR_TRY(output_file_commit(&o, err));
cleanup:
  output_file_discard(&o);
  free(conn);
  free(offsets);
  return st;
}

tsr_status vtk_write_pvti(const char *folder, const char *name, int64_t step,
                          const int64_t cells[3], const vtk_array_t *arrays, int narrays,
                          const vtk_piece_t *pieces, int32_t npieces, double spacing,
                          tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char path[OUTPUT_PATH_MAX];
  output_file_t o = {.f = NULL};
  int n = snprintf(path, sizeof path, "%s/%s_%06lld.pvti", folder, name, (long long)step);
  TSR_CHECK(n > 0 && (size_t)n < sizeof path, TSR_ERR_INVALID, "output path too long: %.200s", folder);
  TSR_TRY(output_file_open(&o, path, err));
  fprintf(o.f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"PImageData\" version=\"1.0\" "
               "byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
               "  <PImageData WholeExtent=\"0 %lld 0 %lld 0 %lld\" GhostLevel=\"0\" "
               "Origin=\"0 0 0\" Spacing=\"%.17g %.17g %.17g\">\n    <PCellData>\n",
          (long long)cells[0], (long long)cells[1], (long long)cells[2], spacing, spacing, spacing);
  for (int i = 0; i < narrays; ++i)
    fprintf(o.f, "      <PDataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\"/>\n",
            vtk_type_name(arrays[i].type), arrays[i].name, arrays[i].components);
  fprintf(o.f, "    </PCellData>\n");
  for (int32_t i = 0; i < npieces; ++i) {
    const vtk_piece_t *p = &pieces[i];
    fprintf(o.f, "    <Piece Extent=\"%lld %lld %lld %lld %lld %lld\" "
                 "Source=\"%s_%06lld/block_%d.vti\"/>\n",
            (long long)p->lo[0], (long long)(p->lo[0] + p->size[0]), (long long)p->lo[1],
            (long long)(p->lo[1] + p->size[1]), (long long)p->lo[2],
            (long long)(p->lo[2] + p->size[2]), name, (long long)step, (int)p->id);
  }
  fprintf(o.f, "  </PImageData>\n</VTKFile>\n");
  TSR_TRY(output_file_commit(&o, err));
cleanup:
  output_file_discard(&o);
  return st;
}

tsr_status vtk_write_pvd(const char *folder, const char *name, const int64_t *steps,
                         int64_t nsteps, double step_time, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  char path[OUTPUT_PATH_MAX];
  output_file_t o = {.f = NULL};
  int n = snprintf(path, sizeof path, "%s/%s.pvd", folder, name);
  TSR_CHECK(n > 0 && (size_t)n < sizeof path, TSR_ERR_INVALID, "output path too long: %.200s", folder);
  TSR_TRY(output_file_open(&o, path, err));
  fprintf(o.f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" "
               "byte_order=\"LittleEndian\">\n  <Collection>\n");
  for (int64_t i = 0; i < nsteps; ++i) {
    /* a step's one image, else its index of block files (a restart may change
     * output.vtk_files); neither: the step is not in this folder (a restart into
     * another folder, files removed by hand), and the collection does not list it */
    const char *ext = NULL;
    for (int k = 0; k < 2 && !ext; ++k) {
      char file[OUTPUT_PATH_MAX];
      snprintf(file, sizeof file, "%s/%s_%06lld.%s", folder, name, (long long)steps[i],
               k == 0 ? "vti" : "pvti");
      if (access(file, F_OK) == 0) ext = k == 0 ? "vti" : "pvti";
    }
    if (!ext) continue;
    fprintf(o.f, "    <DataSet timestep=\"%.17g\" file=\"%s_%06lld.%s\"/>\n",
            (double)steps[i] * step_time, name, (long long)steps[i], ext);
  }
  fprintf(o.f, "  </Collection>\n</VTKFile>\n");
  TSR_TRY(output_file_commit(&o, err));
cleanup:
  output_file_discard(&o);
  return st;
}
