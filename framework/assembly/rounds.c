/* rounds: the exchange rounds of a step (rounds.h). */
#include "rounds.h"

#include <stdlib.h>
#include <string.h>

bool rounds_due(const module_sweep_t *const *sweeps, int n, int s, const char *field) {
  bool written = false;
  for (int k = 0; k < n; ++k) written = written || module_name_in(sweeps[k]->writes, sweeps[k]->nwrites, field);
  if (!written) return true;
  for (int k = 1; k <= n; ++k) {
    const module_sweep_t *t = sweeps[((s - k) % n + n) % n];
    if (module_name_in(t->writes, t->nwrites, field)) return true;
    if (module_name_in(t->reads_ghosts, t->nreads_ghosts, field)) return false;
  }
  return true;
}

int rounds_round(const module_sweep_t *const *sweeps, int s, const char *field) {
  int j = s;
  while (j > 0 && !module_name_in(sweeps[j - 1]->writes, sweeps[j - 1]->nwrites, field)) --j;
  return j;
}



tsr_status rounds_plan(const module_decl_t *decls, int nmodules, bool merged,
                                  rounds_t *r, tsr_error_t *err) {
  tsr_status st = TSR_OK;
  memset(r, 0, sizeof *r);
  for (int m = 0; m < nmodules; ++m)
    for (int k = 0; k < decls[m].nsweeps; ++k) r->all[r->n++] = &decls[m].sweeps[k];
  for (int k = 0; k < r->n; ++k)
    for (int i = 0; i < r->all[k]->nreads_ghosts; ++i) {
      const char *name = r->all[k]->reads_ghosts[i];
      if (!rounds_due(r->all, r->n, k, name)) continue;
      const int j = merged ? rounds_round(r->all, k, name) : k;
      int m = 0, f = 0;
      (void)module_field_index(decls, nmodules, name, &m, &f);
      bool there = false;
      for (int t = 0; t < r->nf[j]; ++t)
        there = there || (r->field[j][t][0] == m && r->field[j][t][1] == f);
      if (there) continue;
      TSR_CHECK(r->nf[j] < COMM_MAX_FIELDS, TSR_ERR_INVALID,
                "the exchange round of sweep \"%s\" carries more than %d fields",
                r->all[j]->name, COMM_MAX_FIELDS);
      r->field[j][r->nf[j]][0] = m;
      r->field[j][r->nf[j]][1] = f;
      ++r->nf[j];
    }
cleanup:
  return st;
}

tsr_status rounds_count(const module_decl_t *decls, int nmodules, bool merged, int *rounds,
                               tsr_error_t *err) {
  tsr_status st = TSR_OK;
  rounds_t *r = malloc(sizeof *r);
  *rounds = 0;
  TSR_CHECK(r, TSR_ERR_NOMEM, "out of memory planning the exchange rounds");
  TSR_TRY(rounds_plan(decls, nmodules, merged, r, err));
  for (int j = 0; j < r->n; ++j) *rounds += r->nf[j] > 0;
cleanup:
  free(r);
  return st;
}
