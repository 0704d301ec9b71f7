#define _POSIX_C_SOURCE 200809L

#include "checkpoint.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char checkpoint_magic[16] = "tessera-ckpt";
enum { CHECKPOINT_BOM = 0x01020304 };

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): by table, eight bytes a step
 * (slicing by 8), or by the SSE4.2 instruction where the CPU has it. */
static uint32_t crc_table[8][256];

static void crc_make_table(void) {
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0x82F63B78u ^ (c >> 1) : c >> 1;
    crc_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i)
    for (int t = 1; t < 8; ++t)
      crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc_by_table(uint32_t crc, const uint8_t *p, size_t n) {
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                         (uint32_t)p[3] << 24);
    crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
          crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
          crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
  }
  for (; n > 0; --n, ++p) crc = crc_table[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc_by_instruction(uint32_t crc,
                                                                     const uint8_t *p, size_t n) {
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
  }
  crc = (uint32_t)c;
  for (; n > 0; --n, ++p) crc = __builtin_ia32_crc32qi(crc, *p);
  return crc;
}
#endif

static int crc_hardware = 0;

static void crc_init(void) {
  crc_make_table();
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  crc_hardware = __builtin_cpu_supports("sse4.2");
#endif
}

uint32_t checkpoint_crc32(uint32_t crc, const void *data, size_t n) {
  /* once, before any thread reads the table (checkpoints sum on several threads) */
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, crc_init);
  crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
  if (crc_hardware) return ~crc_by_instruction(crc, data, n);
#endif
  return ~crc_by_table(crc, data, n);
}

/* zeros(mat, vec): the 32x32 GF(2) matrix mat times vec; square: mat times itself. */
static uint32_t crc_gf2_times(const uint32_t *mat, uint32_t vec) {
  uint32_t sum = 0;
  for (; vec; vec >>= 1, ++mat)
    if (vec & 1) sum ^= *mat;
  return sum;
}

static void crc_gf2_square(uint32_t *square, const uint32_t *mat) {
  for (int n = 0; n < 32; ++n) square[n] = crc_gf2_times(mat, mat[n]);
}

uint32_t checkpoint_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2) {
  /* crc1 carried through len2 zero bytes (the operator for one zero bit squared up to
     each set bit of len2 in bytes), as zlib's crc32_combine, with the CRC-32C polynomial */
  uint32_t even[32], odd[32];
  if (len2 == 0) return crc1;
  odd[0] = 0x82F63B78u;
  for (int n = 1; n < 32; ++n) odd[n] = 1u << (n - 1);
  crc_gf2_square(even, odd); /* two zero bits */
  crc_gf2_square(odd, even); /* four */
  for (;;) {
    crc_gf2_square(even, odd); /* the first pass: one zero byte */
    if (len2 & 1) crc1 = crc_gf2_times(even, crc1);
    if (!(len2 >>= 1)) break;
    crc_gf2_square(odd, even);
    if (len2 & 1) crc1 = crc_gf2_times(odd, crc1);
    if (!(len2 >>= 1)) break;
  }
  return crc1 ^ crc2;
}

uint64_t checkpoint_header_size(uint32_t nfields, uint32_t nblocks, uint32_t nextras) {
  return CHECKPOINT_FIXED_BYTES + (uint64_t)nfields * CHECKPOINT_FIELD_BYTES +
         (uint64_t)nblocks * CHECKPOINT_BLOCK_BYTES +
         (uint64_t)nextras * CHECKPOINT_EXTRA_BYTES + 8;
}

uint64_t checkpoint_aligned(uint64_t n) {
  return (n + CHECKPOINT_ALIGN - 1) / CHECKPOINT_ALIGN * CHECKPOINT_ALIGN;
}

uint64_t checkpoint_data_offset(uint64_t header_bytes) {
  return checkpoint_aligned(header_bytes);
}

/* ---- little-endian fields ---- */

static void put_u(uint8_t **p, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) (*p)[k] = (uint8_t)(v >> (8 * k));
  *p += bytes;
}

static uint64_t get_u(const uint8_t **p, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v |= (uint64_t)(*p)[k] << (8 * k);
  *p += bytes;
  return v;
}

static void put_text(uint8_t **p, const char *s, size_t cap) {
  memset(*p, 0, cap);
  size_t n = strnlen(s, cap - 1);
  memcpy(*p, s, n);
  *p += cap;
}

/* A NUL-terminated text of at most cap - 1 bytes; false if the field has no NUL. */
static bool get_text(const uint8_t **p, char *s, size_t cap) {
  const void *nul = memchr(*p, 0, cap);
  if (nul) memcpy(s, *p, cap);
  *p += cap;
  return nul != NULL;
}

void checkpoint_header_encode(const checkpoint_header_t *h, uint8_t *out) {
  uint8_t *p = out;
  memcpy(p, checkpoint_magic, sizeof checkpoint_magic);
  p += sizeof checkpoint_magic;
  put_u(&p, h->version, 4);
  put_u(&p, CHECKPOINT_BOM, 4);
  put_u(&p, h->header_bytes, 8);
  put_u(&p, h->data_offset, 8);
  put_u(&p, h->step, 8);
  put_u(&p, h->config_hash, 8);
  for (int a = 0; a < 3; ++a) put_u(&p, (uint64_t)h->cells[a], 8);
  for (int a = 0; a < 3; ++a) put_u(&p, (uint32_t)h->blocks[a], 4);
  for (int a = 0; a < 3; ++a) put_u(&p, h->periodic[a] ? 1 : 0, 1);
  put_u(&p, 0, 1);
  put_text(&p, h->modules, CHECKPOINT_MODULES_MAX);
  put_u(&p, h->nfields, 4);
  put_u(&p, h->nblocks, 4);
  put_u(&p, h->nextras, 4);
  put_u(&p, 0, 4);
  for (uint32_t i = 0; i < h->nfields; ++i) {
    put_text(&p, h->fields[i].name, CHECKPOINT_NAME_MAX);
    put_u(&p, h->fields[i].components, 4);
    put_u(&p, h->fields[i].value_bytes, 4);
  }
  for (uint32_t i = 0; i < h->nblocks; ++i) {
    put_u(&p, (uint32_t)h->block[i].id, 4);
    put_u(&p, h->block[i].crc, 4);
    put_u(&p, h->block[i].offset, 8);
    put_u(&p, h->block[i].bytes, 8);
  }
  for (uint32_t i = 0; i < h->nextras; ++i) {
    put_text(&p, h->extras[i].name, CHECKPOINT_NAME_MAX);
    put_u(&p, h->extras[i].crc, 4);
    put_u(&p, 0, 4);
    put_u(&p, h->extras[i].offset, 8);
    put_u(&p, h->extras[i].bytes, 8);
  }
  put_u(&p, checkpoint_crc32(0, out, (size_t)(p - out)), 4);
  put_u(&p, 0, 4);
}

tsr_status checkpoint_header_length(const uint8_t *first, size_t len, const char *path,
                                    uint64_t *bytes, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  const uint8_t *p = first + sizeof checkpoint_magic;
  *bytes = 0;
  TSR_CHECK(len >= 32 && memcmp(first, checkpoint_magic, sizeof checkpoint_magic) == 0,
            TSR_ERR_CORRUPT, "%s: not a tessera checkpoint (no \"tessera-ckpt\" at its start)",
            path);
  uint32_t version = (uint32_t)get_u(&p, 4), bom = (uint32_t)get_u(&p, 4);
  TSR_CHECK(bom == CHECKPOINT_BOM, TSR_ERR_CORRUPT,
            "%s: byte-order mark 0x%08x, expected 0x%08x: not written in this format's "
            "little-endian order, or damaged", path, bom, (unsigned)CHECKPOINT_BOM);
  TSR_CHECK(version >= 1 && version <= CHECKPOINT_VERSION, TSR_ERR_CORRUPT,
            "%s: checkpoint format version %u; this tessera reads versions 1 to %d", path,
            version, CHECKPOINT_VERSION);
  *bytes = get_u(&p, 8);
  TSR_CHECK(*bytes >= checkpoint_header_size(0, 0, 0) && *bytes <= ((uint64_t)1 << 31),
            TSR_ERR_CORRUPT, "%s: a header of %llu bytes is not possible; the file is damaged",
            path, (unsigned long long)*bytes);
cleanup:
  return st;
}

/* Block records from *p into h->block (allocated), each checked to follow *end in the file. */
static tsr_status decode_blocks(const uint8_t **p, uint64_t file_bytes, const char *path,
                                checkpoint_header_t *h, uint64_t *end, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  h->block = calloc(h->nblocks ? h->nblocks : 1, sizeof *h->block);
  TSR_CHECK(h->block, TSR_ERR_NOMEM, "%s: out of memory for %u block records", path, h->nblocks);
  for (uint32_t i = 0; i < h->nblocks; ++i) {
    checkpoint_block_t *b = &h->block[i];
    b->id = (int32_t)(uint32_t)get_u(p, 4);
    b->crc = (uint32_t)get_u(p, 4);
    b->offset = get_u(p, 8);
    b->bytes = get_u(p, 8);
    TSR_CHECK(b->id == (int32_t)i, TSR_ERR_CORRUPT,
              "%s: block record %u holds BlockID %d; the file is damaged", path, i, (int)b->id);
    TSR_CHECK(b->offset == *end && b->bytes <= file_bytes && b->offset <= file_bytes - b->bytes,
              TSR_ERR_CORRUPT, "%s: BlockID %d's %llu bytes at %llu lie outside the file of "
              "%llu bytes (truncated?)", path, (int)b->id, (unsigned long long)b->bytes,
              (unsigned long long)b->offset, (unsigned long long)file_bytes);
    *end = b->offset + b->bytes;
    if (h->version >= 2) *end = checkpoint_aligned(*end); /* blocks start on whole pages */
  }
cleanup:
  return st;
}

/* Extra records from *p into h->extras, each checked to follow *end in the file. */
static tsr_status decode_extras(const uint8_t **p, uint64_t file_bytes, const char *path,
                                checkpoint_header_t *h, uint64_t *end, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  for (uint32_t i = 0; i < h->nextras; ++i) {
    checkpoint_extra_t *x = &h->extras[i];
    TSR_CHECK(get_text(p, x->name, sizeof x->name), TSR_ERR_CORRUPT,
              "%s: extra %u's name is not terminated; the file is damaged", path, i);
    x->crc = (uint32_t)get_u(p, 4);
    (void)get_u(p, 4);
    x->offset = get_u(p, 8);
    x->bytes = get_u(p, 8);
    TSR_CHECK(x->offset == *end && x->bytes <= file_bytes && x->offset <= file_bytes - x->bytes,
              TSR_ERR_CORRUPT, "%s: '%s' (%llu bytes at %llu) lies outside the file of %llu "
              "bytes (truncated?)", path, x->name, (unsigned long long)x->bytes,
              (unsigned long long)x->offset, (unsigned long long)file_bytes);
    *end = x->offset + x->bytes;
  }
cleanup:
  return st;
}

tsr_status checkpoint_header_decode(const uint8_t *in, size_t len, uint64_t file_bytes,
                                    const char *path, checkpoint_header_t *h, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  uint64_t header_bytes = 0;
  memset(h, 0, sizeof *h);
  TSR_TRY(checkpoint_header_length(in, len, path, &header_bytes, err));
  TSR_CHECK(len >= header_bytes, TSR_ERR_CORRUPT,
            "%s: truncated: the header needs %llu bytes, the file has %zu", path,
            (unsigned long long)header_bytes, len);
  const uint8_t *p = in + sizeof checkpoint_magic, *crc_at = in + header_bytes - 8;
  uint32_t crc = (uint32_t)(crc_at[0] | crc_at[1] << 8 | crc_at[2] << 16 | (uint32_t)crc_at[3] << 24);
  TSR_CHECK(crc == checkpoint_crc32(0, in, (size_t)header_bytes - 8), TSR_ERR_CORRUPT,
            "%s: the header's checksum does not match: the file is damaged", path);
  h->version = (uint32_t)get_u(&p, 4);
  (void)get_u(&p, 4);
  h->header_bytes = get_u(&p, 8);
  h->data_offset = get_u(&p, 8);
  h->step = get_u(&p, 8);
  h->config_hash = get_u(&p, 8);
  for (int a = 0; a < 3; ++a) h->cells[a] = (int64_t)get_u(&p, 8);
  for (int a = 0; a < 3; ++a) h->blocks[a] = (int32_t)(uint32_t)get_u(&p, 4);
  for (int a = 0; a < 3; ++a) h->periodic[a] = get_u(&p, 1) != 0;
  (void)get_u(&p, 1);
  TSR_CHECK(get_text(&p, h->modules, sizeof h->modules), TSR_ERR_CORRUPT,
            "%s: the modules' text is not terminated; the file is damaged", path);
  h->nfields = (uint32_t)get_u(&p, 4);
  h->nblocks = (uint32_t)get_u(&p, 4);
  h->nextras = (uint32_t)get_u(&p, 4);
  (void)get_u(&p, 4);
  TSR_CHECK(h->nfields <= CHECKPOINT_MAX_FIELDS && h->nextras <= CHECKPOINT_MAX_EXTRAS &&
                h->nblocks <= ((uint32_t)1 << 20) &&
                checkpoint_header_size(h->nfields, h->nblocks, h->nextras) == header_bytes &&
                h->data_offset == checkpoint_data_offset(header_bytes),
            TSR_ERR_CORRUPT, "%s: %u fields, %u blocks and %u extras do not fit the header of "
            "%llu bytes; the file is damaged", path, h->nfields, h->nblocks, h->nextras,
            (unsigned long long)header_bytes);
  for (uint32_t i = 0; i < h->nfields; ++i) {
    checkpoint_field_t *f = &h->fields[i];
    TSR_CHECK(get_text(&p, f->name, sizeof f->name), TSR_ERR_CORRUPT,
              "%s: field %u's name is not terminated; the file is damaged", path, i);
    f->components = (uint32_t)get_u(&p, 4);
    f->value_bytes = (uint32_t)get_u(&p, 4);
  }
  uint64_t end = h->data_offset; /* where the next block's data must start */
  TSR_TRY(decode_blocks(&p, file_bytes, path, h, &end, err));
  TSR_TRY(decode_extras(&p, file_bytes, path, h, &end, err));
  TSR_CHECK(end == file_bytes, TSR_ERR_CORRUPT,
            "%s: the file has %llu bytes, its header describes %llu", path,
            (unsigned long long)file_bytes, (unsigned long long)end);
cleanup:
  if (st != TSR_OK) checkpoint_header_free(h);
  return st;
}

void checkpoint_header_free(checkpoint_header_t *h) {
  free(h->block);
  h->block = NULL;
}
