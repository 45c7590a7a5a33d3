/*
 * Times Mesa's MME simulators (mme_tu104_sim.c, mme_fermi_sim.c, as Mesa builds
 * them) on a macro binary, for scripts/bench-mme-vs-mesa: the macro is decoded once,
 * then run again and again with the same parameters against a shadow state held in an
 * array, as benches/src/bin/mme_rate.rs runs macroscope's simulators.
 *
 * usage: mme_mesa_rate tu104|fermi MACRO.bin PARAMS.bin SCRATCH_SLOT SCRATCH_VALUE RUNS
 * prints: runs, methods written a run, nanoseconds a run
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mme_fermi.h"
#include "mme_fermi_sim.h"
#include "mme_tu104.h"
#include "mme_tu104_sim.h"

struct bench_state {
   const uint32_t *params;
   uint32_t param_count;
   uint32_t next;
   uint32_t shadow[0x1000];
   uint64_t methods;
};

static uint32_t
bench_load(void *handler)
{
   struct bench_state *s = handler;
   return s->next < s->param_count ? s->params[s->next++] : 0;
}

static uint32_t
bench_state_read(void *handler, uint16_t addr)
{
   struct bench_state *s = handler;
   return s->shadow[(addr >> 2) & 0xfff];
}

static void
bench_mthd(void *handler, uint16_t addr, uint32_t data)
{
   struct bench_state *s = handler;
   s->shadow[(addr >> 2) & 0xfff] = data;
   s->methods++;
}

static const struct mme_sim_state_ops bench_ops = {
   .load = bench_load,
   .state = bench_state_read,
   .mthd = bench_mthd,
};

static uint32_t *
read_words(const char *path, uint32_t *count)
{
   FILE *f = fopen(path, "rb");
   if (!f) {
      perror(path);
      exit(2);
   }
   fseek(f, 0, SEEK_END);
   long size = ftell(f);
   fseek(f, 0, SEEK_SET);
   uint32_t *words = malloc(size > 0 ? size : 4);
   if (!words || fread(words, 1, size, f) != (size_t)size) {
      fprintf(stderr, "%s: cannot read\n", path);
      exit(2);
   }
   fclose(f);
   *count = size / 4;
   return words;
}

int
main(int argc, char **argv)
{
   if (argc != 7) {
      fprintf(stderr, "usage: %s tu104|fermi MACRO.bin PARAMS.bin SLOT VALUE RUNS\n", argv[0]);
      return 2;
   }
   int tu104 = strcmp(argv[1], "tu104") == 0;
   uint32_t word_count, param_count;
   uint32_t *words = read_words(argv[2], &word_count);
   uint32_t *params = read_words(argv[3], &param_count);
   uint32_t slot = strtoul(argv[4], NULL, 0), value = strtoul(argv[5], NULL, 0);
   long runs = strtol(argv[6], NULL, 0);

   uint32_t inst_count = tu104 ? word_count / 3 : word_count;
   void *insts = calloc(inst_count, tu104 ? sizeof(struct mme_tu104_inst)
                                          : sizeof(struct mme_fermi_inst));
   if (tu104)
      mme_tu104_decode(insts, words, inst_count);
   else
      mme_fermi_decode(insts, words, inst_count);

   static struct bench_state s;
   s.params = params;
   s.param_count = param_count;
   /* SET_MME_SHADOW_SCRATCH(slot): method 0x3400 + 4 * slot. */
   s.shadow[(0x3400 >> 2) + slot] = value;

   struct timespec t0, t1;
   clock_gettime(CLOCK_MONOTONIC, &t0);
   for (long r = 0; r < runs; r++) {
      s.next = 0;
      if (tu104)
         mme_tu104_sim_core(inst_count, insts, &bench_ops, &s);
      else
         mme_fermi_sim_core(inst_count, insts, &bench_ops, &s);
   }
   clock_gettime(CLOCK_MONOTONIC, &t1);
   double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
   printf("%ld %llu %.1f\n", runs, (unsigned long long)(s.methods / (runs > 0 ? runs : 1)),
          ns / runs);
   return 0;
}
