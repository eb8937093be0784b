/* Times CPFloat's cpfloat() (float64 in, float64 out: the operation of
 * mwmm's format.RoundSlice) on 2^20 values uniform in [-2, 2], one thread,
 * for the formats and modes of scripts/format-rounding-compare.py. Built by
 * that script against a CPFloat source tree (header-only use, its src/ on
 * the include path); prints one line per case:
 *
 *     cpfloat FORMAT/MODE VALUES_PER_SECOND   (or "unsupported")
 *
 * Usage: cpfloat_bench [REPS]  (the median of REPS timed calls, 20 by
 * default, after one untimed call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpfloat_binary64.h"

#define N (1 << 20)

struct fmt {
  const char *name;
  cpfloat_precision_t p;
  cpfloat_exponent_t emin, emax;
  cpfloat_infinity_t inf;
};

/* The formats' parameters as mwmm defines them (e4m3, e2m1 and e2m3 have
 * no infinity). CPFloat's e4m3 keeps 1.875*2^8 as its largest value where
 * OCP's e4m3fn stops at 448: the same work per value. */
static const struct fmt fmts[] = {
    {"fp16", 11, -14, 15, CPFLOAT_INF_USE}, {"bf16", 8, -126, 127, CPFLOAT_INF_USE},
    {"e4m3", 4, -6, 8, CPFLOAT_INF_NO},     {"e5m2", 3, -14, 15, CPFLOAT_INF_USE},
    {"e2m1", 2, 0, 2, CPFLOAT_INF_NO},      {"e2m3", 4, 0, 2, CPFLOAT_INF_NO},
};

struct mode {
  const char *name;
  cpfloat_rounding_t round;
};

static const struct mode modes[] = {
    {"rne", CPFLOAT_RND_NE}, {"rz", CPFLOAT_RND_TZ}, {"sr", CPFLOAT_RND_SP}};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
  if (reps < 1)
    reps = 1;
  double *src = malloc(N * sizeof *src), *dst = malloc(N * sizeof *dst);
  double *times = malloc(reps * sizeof *times);
  srand(1);
  for (size_t i = 0; i < N; i++) {
    src[i] = 4.0 * rand() / ((double)RAND_MAX + 1) - 2;
    dst[i] = 0;
  }
  for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
      optstruct *o = init_optstruct();
      o->format[0] = 'c';
      o->format[1] = 0;
      o->precision = fmts[f].p;
      o->emin = fmts[f].emin;
      o->emax = fmts[f].emax;
      o->explim = CPFLOAT_EXPRANGE_TARG;
      o->infinity = fmts[f].inf;
      o->round = modes[m].round;
      o->saturation = CPFLOAT_SAT_NO;
      o->subnormal = CPFLOAT_SUBN_USE;
      o->flip = CPFLOAT_SOFTERR_NO;
      o->p = 0;
      /* Positive: refused (CPFloat needs emin < 0: not e2m1, e2m3);
       * negative values are warnings. */
      if (cpfloat_validate_optstruct(o) > 0) {
        printf("cpfloat %s/%s unsupported\n", fmts[f].name, modes[m].name);
        free_optstruct(o);
        continue;
      }
      cpfloat(dst, src, N, o); /* untimed: faults the pages in, seeds */
      for (int r = 0; r < reps; r++) {
        double t0 = now();
        cpfloat(dst, src, N, o);
        times[r] = now() - t0;
      }
      qsort(times, reps, sizeof *times, cmp);
      printf("cpfloat %s/%s %.6e\n", fmts[f].name, modes[m].name, N / times[reps / 2]);
      fflush(stdout);
      free_optstruct(o);
    }
  }
  free(src);
  free(dst);
  free(times);
  return 0;
}
